// gemm_bias.cu: broadcast of Gemm's C into the output before the GEMM adds to it.
#include "gemm_bias.h"
#include "k_common.cuh"

template <typename T>
__global__ void fill_kernel(const T *c, int64_t cm, int64_t cn, T *y, int64_t m, int64_t n) {
  K_GRID_STRIDE(i, m * n) {
    int64_t r = i / n, col = i % n;
    y[i] = c[(cm == 1 ? 0 : r) * cn + (cn == 1 ? 0 : col)];
  }
}

extern "C" cudaError_t k_fill_broadcast_2d(int elem_size, const void *c, int64_t cm, int64_t cn,
                                           void *y, int64_t m, int64_t n, cudaStream_t s) {
  if (m * n == 0) return cudaSuccess;
  unsigned b = k_blocks(m * n, 256);
  switch (elem_size) {
    case 2: fill_kernel<uint16_t><<<b, 256, 0, s>>>((const uint16_t *)c, cm, cn, (uint16_t *)y, m, n); break;
    case 4: fill_kernel<uint32_t><<<b, 256, 0, s>>>((const uint32_t *)c, cm, cn, (uint32_t *)y, m, n); break;
    case 8: fill_kernel<uint64_t><<<b, 256, 0, s>>>((const uint64_t *)c, cm, cn, (uint64_t *)y, m, n); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
