/* diagnose.h: a growing text buffer for infer_diagnose's report (engine/diagnose_report.c);
 * each backend appends its section (backend.h). */
#ifndef INFER_DIAGNOSE_H
#define INFER_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "../include/infer.h"

typedef struct report {
  char *buf;
  size_t len, cap;
  bool failed; /* out of memory: the report is dropped */
} report;

void report_add(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
