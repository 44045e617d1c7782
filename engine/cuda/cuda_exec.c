/* cuda_exec.c: the devices this process sees, and a stream with the library handles bound
 * to it (cuda_exec), which the build and every context open. */
#include <string.h>

#include "cuda_internal.h"

int cuda_visible_devices(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

infer_status cuda_exec_open(cuda_exec *x, int device, infer_precision p, unsigned needs) {
  memset(x, 0, sizeof *x);
  x->precision = p;
  CUDA_TRY(cudaSetDevice(device));
  CUDA_TRY(cudaDeviceGetAttribute(&x->sm_count, cudaDevAttrMultiProcessorCount, device));
  cudaStream_t s;
  CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  x->stream = s;
  if (needs & CUDA_NEEDS_CUDNN) {
    cudnnHandle_t dnn;
    CUDNN_TRY(cudnnCreate(&dnn));
    x->cudnn = dnn;
    CUDNN_TRY(cudnnSetStream(dnn, s));
  }
  if (!(needs & CUDA_NEEDS_CUBLAS)) return INFER_OK;
  cublasHandle_t blas;
  CUBLAS_TRY(cublasCreate(&blas));
  x->cublas = blas;
  CUBLAS_TRY(cublasSetStream(blas, s));
  /* TF32 only when asked: fp32 means IEEE fp32 products */
  CUBLAS_TRY(cublasSetMathMode(blas, p == INFER_PRECISION_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                : CUBLAS_DEFAULT_MATH));
  return INFER_OK;
}

void cuda_exec_close(cuda_exec *x) {
  if (x->cublas) cublasDestroy((cublasHandle_t)x->cublas);
  if (x->cudnn) cudnnDestroy((cudnnHandle_t)x->cudnn);
  if (x->stream) cudaStreamDestroy((cudaStream_t)x->stream);
  memset(x, 0, sizeof *x);
}
