/* backends.c: which backends this build has. The one conditional on the CUDA build. */
#include "backend.h"
#ifdef INFER_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

const backend *backend_for(infer_device d) {
  switch (d) {
    case INFER_DEVICE_CPU: return &cpu_backend;
    case INFER_DEVICE_CUDA:
#ifdef INFER_HAVE_CUDA
      return &cuda_backend;
#else
      return NULL;
#endif
  }
  return NULL;
}

int infer_device_count(infer_device d) {
  const backend *b = backend_for(d);
  return b ? b->device_count() : 0;
}
