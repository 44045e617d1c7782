/* diagnose_report.c: the growing text buffer every section of infer_diagnose writes to. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "diagnose.h"

void report_add(report *r, const char *fmt, ...) {
  if (r->failed) return;
  va_list ap;
  for (;;) {
    size_t room = r->cap - r->len;
    va_start(ap, fmt);
    int n = r->buf ? vsnprintf(r->buf + r->len, room, fmt, ap) : -1;
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
      r->len += (size_t)n;
      return;
    }
    size_t cap = r->cap ? r->cap * 2 : 4096;
    while (n >= 0 && cap - r->len <= (size_t)n) cap *= 2;
    char *grown = realloc(r->buf, cap);
    if (!grown) {
      r->failed = true;
      return;
    }
    r->buf = grown;
    r->cap = cap;
  }
}
