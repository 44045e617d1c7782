/* cuda_diagnose.c: the CUDA part of infer_diagnose: versions and whether they fit,
 * each GPU and whether this build has code for it, and a tensor-core matrix test. */
#include <stdio.h>
#include <string.h>

#include "cuda_backend.h"
#include "../../core/cuda_check.h"
#include "cuda_archs.h"

#ifndef INFER_CUDA_ARCHS /* the build's CMAKE_CUDA_ARCHITECTURES, ',' between entries */
#define INFER_CUDA_ARCHS ""
#endif

/* 4096^3 fp16 products with fp32 accumulation on random-ish data (never zeros). */
static void matrix_test(report *r, int device) {
  const int n = 4096;
  size_t bytes = (size_t)n * n * 2;
  void *a = NULL, *b = NULL, *c = NULL;
  cublasHandle_t h = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  float ms = 0;
  bool ok = cudaSetDevice(device) == cudaSuccess && cudaMalloc(&a, bytes) == cudaSuccess &&
            cudaMalloc(&b, bytes) == cudaSuccess && cudaMalloc(&c, bytes) == cudaSuccess &&
            cublasCreate(&h) == CUBLAS_STATUS_SUCCESS && cudaEventCreate(&e0) == cudaSuccess &&
            cudaEventCreate(&e1) == cudaSuccess;
  if (ok) {
    /* 0x3c00 is 1.0 in fp16; 0x2e66 about 0.1: mixed bytes, no zeros, no overflow */
    ok = cudaMemset(a, 0x2e, bytes) == cudaSuccess && cudaMemset(b, 0x3c, bytes) == cudaSuccess;
  }
  float alpha = 1, beta = 0;
  const int reps = 10;
  for (int i = 0; ok && i < reps + 2; i++) {
    if (i == 2) cudaEventRecord(e0, 0);
    ok = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16F, n, b,
                      CUDA_R_16F, n, &beta, c, CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
  }
  if (ok) {
    cudaEventRecord(e1, 0);
    ok = cudaEventSynchronize(e1) == cudaSuccess && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
  }
  if (ok && ms > 0)
    report_add(r, "  fp16 tensor-core matrix test (%d^3, %d reps): %.0f TFLOP/s\n", n, reps,
               2.0 * n * n * (double)n * reps / (ms * 1e-3) / 1e12);
  else
    report_add(r, "  PROBLEM: the fp16 matrix test failed (%s); the GPU may be busy, out of "
                  "memory or in a bad state: check nvidia-smi\n",
               cudaGetErrorString(cudaGetLastError()));
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (h) cublasDestroy(h);
  if (a) cudaFree(a);
  if (b) cudaFree(b);
  if (c) cudaFree(c);
}

void cuda_diagnose(report *r) {
  int driver = 0, runtime = 0, count = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  char archs[160];
  cuda_archs_describe(INFER_CUDA_ARCHS, archs, sizeof archs);
  report_add(r, "CUDA backend: built for %s; runtime %d.%d, driver supports %d.%d\n", archs,
             runtime / 1000, (runtime % 1000) / 10, driver / 1000, (driver % 1000) / 10);
  if (driver == 0)
    report_add(r, "  PROBLEM: no NVIDIA driver found: install the driver (nvidia-smi must work)\n");
  else if (driver < runtime)
    report_add(r, "  PROBLEM: the driver (CUDA %d.%d) is older than the runtime this build uses "
                  "(%d.%d): update the driver or build with an older toolkit\n",
               driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
  size_t dnn = cudnnGetVersion();
  report_add(r, "cuDNN: library %zu.%zu.%zu (headers %d.%d.%d)\n", dnn / 10000, (dnn % 10000) / 100,
             dnn % 100, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
  if (dnn / 10000 != CUDNN_MAJOR)
    report_add(r, "  PROBLEM: cuDNN library major version differs from the headers: put the "
                  "matching libcudnn first on LD_LIBRARY_PATH\n");
  int bl_major = 0, bl_minor = 0, bl_patch = 0;
  cublasGetProperty(MAJOR_VERSION, &bl_major);
  cublasGetProperty(MINOR_VERSION, &bl_minor);
  cublasGetProperty(PATCH_LEVEL, &bl_patch);
  report_add(r, "cuBLAS: %d.%d.%d\n", bl_major, bl_minor, bl_patch);
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    report_add(r, "GPUs: none visible (%s)\n  PROBLEM: no usable GPU: check nvidia-smi, "
                  "CUDA_VISIBLE_DEVICES and that the driver matches the kernel module\n",
               driver == 0 ? "no NVIDIA driver"
               : err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    cudaGetLastError();
    return;
  }
  for (int i = 0; i < count; i++) {
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    int used = 0;
    cuda_arch_fit fit = cuda_archs_fit(INFER_CUDA_ARCHS, p.major, p.minor, &used);
    report_add(r, "GPU %d: %s, compute capability %d.%d, %.1f GiB, %d SMs, %.0f MiB L2\n", i,
               p.name, p.major, p.minor, p.totalGlobalMem / 1073741824.0, p.multiProcessorCount,
               p.l2CacheSize / 1048576.0);
    if (fit == CUDA_ARCH_NONE)
      report_add(r, "  PROBLEM: this build has no code for sm_%d%d (built for %s): rebuild with "
                    "-DCMAKE_CUDA_ARCHITECTURES=%d%d (or native)\n",
                 p.major, p.minor, archs, p.major, p.minor);
    else if (fit == CUDA_ARCH_PTX_JIT)
      report_add(r, "  WARNING: no sm_%d%d code in this build: the driver JIT-compiles its "
                    "compute_%d PTX at load (slower start, code not tuned for this GPU): "
                    "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d (or native)\n",
                 p.major, p.minor, used, p.major, p.minor);
    matrix_test(r, i);
  }
}
