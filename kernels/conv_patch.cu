// conv_patch.cu: patches of a non-overlapping convolution (conv_patch.h). Each patch row
// is kh runs of kw * c contiguous elements of x (one input row each), so the copy moves
// whole 16-byte pieces wherever a run holds them, and one element per thread otherwise.
#include "conv_patch.h"
#include "k_common.cuh"

namespace {

template <typename V>
__global__ void patch_kernel(const V *__restrict__ x, V *__restrict__ p, int64_t runs, int64_t run,
                             int64_t ho, int64_t wo, int64_t kh, int64_t w_row) {
  // one V per thread: which run (b, i, j, y) and where in it
  const int64_t total = runs * run;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = t / run, e = t - r * run;
    int64_t rest = r;
    const int64_t y = rest % kh;
    rest /= kh;
    const int64_t j = rest % wo;
    rest /= wo;
    const int64_t i = rest % ho, b = rest / ho;
    // input row (b, i * kh + y), columns from j * kw: offset in V units
    const int64_t src = ((b * ho + i) * kh + y) * w_row + j * run + e;
    p[t] = x[src];
  }
}

} // namespace

extern "C" cudaError_t k_conv_patches(int elem_size, const void *x, int64_t n, int64_t h, int64_t w,
                                      int64_t c, int64_t kh, int64_t kw, void *p,
                                      cudaStream_t stream) {
  if (kh < 1 || kw < 1 || h % kh || w % kw || (elem_size != 2 && elem_size != 4))
    return cudaErrorInvalidValue;
  const int64_t ho = h / kh, wo = w / kw, runs = n * ho * wo * kh;
  int64_t run = kw * c, w_row = w * c; // in elements
  if (runs == 0 || run == 0) return cudaSuccess;
  const int64_t bytes_run = run * elem_size, bytes_row = w_row * elem_size;
  if (bytes_run % 16 == 0 && bytes_row % 16 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)p % 16 == 0) {
    run = bytes_run / 16;
    w_row = bytes_row / 16;
    patch_kernel<uint4><<<k_blocks(runs * run, 256), 256, 0, stream>>>(
        (const uint4 *)x, (uint4 *)p, runs, run, ho, wo, kh, w_row);
  } else if (elem_size == 2) {
    patch_kernel<uint16_t><<<k_blocks(runs * run, 256), 256, 0, stream>>>(
        (const uint16_t *)x, (uint16_t *)p, runs, run, ho, wo, kh, w_row);
  } else {
    patch_kernel<uint32_t><<<k_blocks(runs * run, 256), 256, 0, stream>>>(
        (const uint32_t *)x, (uint32_t *)p, runs, run, ho, wo, kh, w_row);
  }
  return cudaGetLastError();
}
