// k_mma.cuh: the tensor-core and asynchronous-copy instructions our own fp16 kernels
// (flash attention, the streaming pointwise convolution) are written with: mma.sync
// m16n8k16 with fp32 accumulators, ldmatrix, cp.async. All need sm_80: under an older
// target they are not defined, and the kernels that use them compile to empty bodies
// that their host side refuses to launch (cudaFuncAttributes::binaryVersion < 80).
#pragma once

#include <cuda_fp16.h>
#include <stdint.h>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define K_MMA_AVAILABLE 1

// c (16x8, fp32) += a (16x16, row-major fragment) * b (16x8, column-major fragment).
__device__ __forceinline__ void k_mma16816(float *c, const uint32_t *a, const uint32_t *b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Four 8x8 b16 matrices from shared memory; lane i gives the address of row i % 8 of
// matrix i / 8.
__device__ __forceinline__ void k_ldsm_x4(uint32_t *r, const __half *p) {
  uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

__device__ __forceinline__ void k_ldsm_x4_trans(uint32_t *r, const __half *p) {
  uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// 16 bytes global -> shared without passing through registers; !valid zero-fills them
// and reads nothing (src must still be a valid address).
__device__ __forceinline__ void k_cp_async16(void *dst, const void *src, bool valid) {
  const uint32_t s = (uint32_t)__cvta_generic_to_shared(dst);
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(n));
}
__device__ __forceinline__ void k_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most N committed groups are still in flight.
template <int N> __device__ __forceinline__ void k_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
#endif
