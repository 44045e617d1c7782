/* algo_cache_env.c: the environment line of the algorithm cache. Apart from
 * algo_cache.c because it is the only part that calls CUDA, cuDNN and cuBLAS. */
#include <stdio.h>

#include "algo_cache.h"
#include "../../core/cuda_check.h"

/* Everything an algorithm choice (and its timing) depends on besides the op itself:
 * a different GPU model or SM count (MIG slices share the model name), driver,
 * runtime or library version can change which algorithms exist and which is
 * fastest. infer's version too, since an op may change what it stores. */
infer_status algo_cache_env(int device, char *buf, size_t cap) {
  int driver = 0, runtime = 0, bl_major = 0, bl_minor = 0, bl_patch = 0;
  struct cudaDeviceProp p;
  CUDA_TRY(cudaDriverGetVersion(&driver));
  CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  CUDA_TRY(cudaGetDeviceProperties(&p, device));
  CUBLAS_TRY(cublasGetProperty(MAJOR_VERSION, &bl_major));
  CUBLAS_TRY(cublasGetProperty(MINOR_VERSION, &bl_minor));
  CUBLAS_TRY(cublasGetProperty(PATCH_LEVEL, &bl_patch));
  int n = snprintf(buf, cap, "infer %s; gpu %s; sms %d; cc %d.%d; driver %d; runtime %d; cudnn %zu; "
                   "cublas %d.%d.%d", infer_version(), p.name, p.multiProcessorCount, p.major,
                   p.minor, driver, runtime, cudnnGetVersion(), bl_major, bl_minor, bl_patch);
  if (n < 0 || (size_t)n >= cap)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "algo_cache_env: %zu bytes are too few", cap);
  return INFER_OK;
}
