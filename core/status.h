/* status.h: setting the thread-local error message that goes with a status. */
#ifndef INFER_STATUS_H
#define INFER_STATUS_H

#include "../include/infer.h"

/* Formats the message for the current thread and returns `code`, so failures read
 * `return infer_fail(INFER_ERR_INVALID_MODEL, "node '%s': ...", name);`. */
infer_status infer_fail(infer_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prepends "prefix: " to the current message (adds where a failure happened)
 * and returns `code`. */
infer_status infer_fail_prefix(infer_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Propagates a failing status. */
#define TRY(expr)                        \
  do {                                   \
    infer_status try_s_ = (expr);        \
    if (try_s_ != INFER_OK) return try_s_; \
  } while (0)

#endif
