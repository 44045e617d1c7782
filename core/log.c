/* log.c: log lines to the caller's callback or stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

static void log_line(const log_sink *s, const char *line) {
  if (s && s->fn)
    s->fn(s->user, line);
  else
    fprintf(stderr, "infer: %s\n", line);
}

void log_info(const log_sink *s, const char *fmt, ...) {
  if (!s || s->verbose <= 0) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  log_line(s, line);
}

void log_warn(const log_sink *s, const char *fmt, ...) {
  char line[1024];
  int n = snprintf(line, sizeof line, "warning: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  log_line(s, line);
}
