/* cuda_check.h: one checking macro per library status type. Each turns a failure
 * into an infer_status whose message holds the expression, its status text and
 * file:line, and returns it. */
#ifndef INFER_CUDA_CHECK_H
#define INFER_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "status.h"

#define CUDA_TRY(expr)                                                                       \
  do {                                                                                       \
    cudaError_t cuda_e_ = (expr);                                                            \
    if (cuda_e_ != cudaSuccess)                                                              \
      return infer_fail(cuda_e_ == cudaErrorMemoryAllocation ? INFER_ERR_OUT_OF_MEMORY      \
                                                             : INFER_ERR_DEVICE,             \
                        "%s failed: %s (%s:%d)", #expr, cudaGetErrorString(cuda_e_),         \
                        __FILE__, __LINE__);                                                 \
  } while (0)

#define CUDNN_TRY(expr)                                                                      \
  do {                                                                                       \
    cudnnStatus_t cudnn_s_ = (expr);                                                         \
    if (cudnn_s_ != CUDNN_STATUS_SUCCESS)                                                    \
      return infer_fail(cudnn_s_ == CUDNN_STATUS_NOT_SUPPORTED ? INFER_ERR_UNSUPPORTED       \
                                                               : INFER_ERR_DEVICE,           \
                        "%s failed: %s (%s:%d)", #expr, cudnnGetErrorString(cudnn_s_),       \
                        __FILE__, __LINE__);                                                 \
  } while (0)

#define CUBLAS_TRY(expr)                                                                     \
  do {                                                                                       \
    cublasStatus_t cublas_s_ = (expr);                                                       \
    if (cublas_s_ != CUBLAS_STATUS_SUCCESS)                                                  \
      return infer_fail(INFER_ERR_DEVICE, "%s failed: %s (%s:%d)", #expr,                    \
                        cublasGetStatusString(cublas_s_), __FILE__, __LINE__);               \
  } while (0)

/* After a kernel launch: launch-configuration errors surface here. */
#define CUDA_LAUNCH_TRY(expr) CUDA_TRY(expr)

#endif
