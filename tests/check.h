/* check.h: the checks the unit tests share. Include it once per test program: it
 * defines the program's failure counter, `failures`, which a test may also raise by
 * hand after printing its own "FAIL ..." line, and which main() turns into the exit
 * status. Every failed check prints one line on stdout:
 *   FAIL file:line: message [condition] (last error: infer_last_error())
 * (the message when given, the last library error when there is one). */
#ifndef INFER_TEST_CHECK_H
#define INFER_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "infer.h"

static int failures;

static inline void check_failed(const char *file, int line, const char *cond, const char *fmt,
                                ...) {
  printf("FAIL %s:%d: ", file, line);
  if (fmt[0]) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" [%s]", cond);
  } else {
    printf("%s", cond);
  }
  const char *last = infer_last_error();
  if (last && last[0]) printf(" (last error: %s)", last);
  printf("\n");
  fflush(stdout);
  failures++;
}

/* CHECK(cond) or CHECK(cond, "printf format", args...): counts a failure when cond is
 * false. The format, when given, must be a string literal. */
#define CHECK(cond, ...) \
  ((cond) ? (void)0 : check_failed(__FILE__, __LINE__, #cond, "" __VA_ARGS__))

static inline int check_status(infer_status got, infer_status want, const char *needle,
                               const char *call, const char *file, int line) {
  if (got != want) {
    printf("FAIL %s:%d: %s -> %s, expected %s (%s)\n", file, line, call, infer_status_name(got),
           infer_status_name(want), got != INFER_OK ? infer_last_error() : "");
    fflush(stdout);
    failures++;
    return 0;
  }
  if (got != INFER_OK && needle && !strstr(infer_last_error(), needle)) {
    printf("FAIL %s:%d: %s: message \"%s\" does not say \"%s\"\n", file, line, call,
           infer_last_error(), needle);
    fflush(stdout);
    failures++;
    return 0;
  }
  return 1;
}

/* EXPECT_STATUS(call, want): the call (an infer_status expression) must return want;
 * 1 when it did, else 0 and a failure with the status and message. */
#define EXPECT_STATUS(call, want) check_status((call), (want), NULL, #call, __FILE__, __LINE__)
/* EXPECT(call, want, needle): the same, and a failing status's message must contain
 * needle (NULL: any message). */
#define EXPECT(call, want, needle) \
  check_status((call), (want), (needle), #call, __FILE__, __LINE__)

/* The exit status of a test program: prints "NAME: N failure(s)" or "NAME: all passed". */
static inline int check_report(const char *name) {
  if (failures) printf("%s: %d failure(s)\n", name, failures);
  else printf("%s: all passed\n", name);
  return failures ? 1 : 0;
}

#endif
