/* diagnose.c: the text report of infer_diagnose, one section per backend. */
#include <stdlib.h>

#include "../core/status.h"
#include "backend.h"

infer_status infer_diagnose(char **out) {
  if (!out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_diagnose: NULL argument");
  *out = NULL;
  report r = {0};
  report_add(&r, "infer %s\n", infer_version());
  cpu_backend.diagnose(&r);
  const backend *cuda = backend_for(INFER_DEVICE_CUDA);
  if (cuda)
    cuda->diagnose(&r);
  else
    report_add(&r, "CUDA backend: not in this build (a problem for INFER_DEVICE_CUDA engines: install "
                 "the CUDA toolkit and cuDNN, then rebuild with -DINFER_CUDA=ON)\n");
  if (r.failed) {
    free(r.buf);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory writing the report");
  }
  *out = r.buf;
  return INFER_OK;
}
