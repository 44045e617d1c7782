/* diagnose.c: the text report of infer_diagnose; the CUDA part lives in
 * engine/cuda/cuda_diagnose.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "../core/status.h"

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

infer_status infer_diagnose(char **out) {
  if (!out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_diagnose: NULL argument");
  *out = NULL;
  report r = {0};
  report_add(&r, "infer %s\n", infer_version());
#ifdef INFER_HAVE_CBLAS
  report_add(&r, "CPU backend: GEMM through CBLAS (OpenBLAS)\n");
#else
  report_add(&r, "CPU backend: built-in GEMM (no OpenBLAS found at build: install "
                 "libopenblas-dev and rebuild for faster CPU runs)\n");
#endif
#ifdef INFER_HAVE_CUDA
  cuda_diagnose(&r);
#else
  report_add(&r, "CUDA backend: not in this build (a problem for INFER_DEVICE_CUDA engines: install "
                 "the CUDA toolkit and cuDNN, then rebuild with -DINFER_CUDA=ON)\n");
#endif
  if (r.failed) {
    free(r.buf);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory writing the report");
  }
  *out = r.buf;
  return INFER_OK;
}
