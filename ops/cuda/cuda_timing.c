/* cuda_timing.c: see cuda_timing.h. */
#include "cuda_timing.h"

#include <cuda_runtime.h>

float cuda_time_runs(void *stream, bool (*run)(void *ctx), void *ctx) {
  cudaStream_t st = (cudaStream_t)stream;
  cudaEvent_t e[2];
  if (cudaEventCreate(&e[0]) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (cudaEventCreate(&e[1]) != cudaSuccess) {
    cudaEventDestroy(e[0]);
    cudaGetLastError();
    return -1;
  }
  bool ok = true;
  float ms = -1;
  for (int r = 0; r < 4 && ok; r++) {
    if (r == 1) ok = cudaEventRecord(e[0], st) == cudaSuccess;
    if (ok) ok = run(ctx);
  }
  if (ok && cudaEventRecord(e[1], st) == cudaSuccess && cudaEventSynchronize(e[1]) == cudaSuccess &&
      cudaEventElapsedTime(&ms, e[0], e[1]) == cudaSuccess)
    ms /= 3;
  else
    ms = -1;
  cudaEventDestroy(e[0]);
  cudaEventDestroy(e[1]);
  cudaGetLastError();
  return ms;
}
