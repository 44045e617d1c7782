/* log.h: where the library's log lines go (the caller's callback, else stderr).
 *
 * A sink is a small value the options own; passes, the planner, the backends and the
 * algorithm cache write through it, so nothing below the engine needs the options. */
#ifndef INFER_LOG_H
#define INFER_LOG_H

#include "../include/infer.h"

typedef struct log_sink {
  int verbose;       /* log_info writes only when > 0 */
  infer_log_fn fn;   /* NULL: stderr, "infer: " prefixed */
  void *user;
} log_sink;

/* One formatted line when the sink is verbose (s may be NULL: nothing). */
void log_info(const log_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "warning: " and one formatted line at every verbosity: for problems the build works
 * around, which a quiet caller still needs to hear about (s may be NULL: stderr). */
void log_warn(const log_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
