// conv_pad.cu: zero padding, one thread per output element; the widening of a
// channels-last half tensor's few channels to 8, one thread per pixel; and the folding
// of neighbouring pixels into channels, one thread per 8 output channels of a pixel.
#include "conv_pad.h"
#include "k_common.cuh"

struct pad_geom {
  int rank;
  int64_t in_dims[K_MAX_RANK], out_dims[K_MAX_RANK], begin[K_MAX_RANK];
};

template <typename T>
__global__ void pad_zero_kernel(pad_geom g, const T *src, T *dst, int64_t n) {
  K_GRID_STRIDE(i, n) {
    int64_t rem = i, src_index = 0, src_stride = 1;
    bool inside = true;
    for (int d = g.rank - 1; d >= 0; d--) {
      int64_t o = rem % g.out_dims[d];
      rem /= g.out_dims[d];
      int64_t s = o - g.begin[d];
      if (s < 0 || s >= g.in_dims[d]) inside = false;
      src_index += s * src_stride;
      src_stride *= g.in_dims[d];
    }
    dst[i] = inside ? src[src_index] : T(0);
  }
}

extern "C" cudaError_t k_pad_zero(int elem_size, int rank, const int64_t *in_dims,
                                  const int64_t *out_dims, const int64_t *begin, const void *src,
                                  void *dst, cudaStream_t stream) {
  if (rank < 1 || rank > K_MAX_RANK) return cudaErrorInvalidValue;
  pad_geom g;
  g.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; d++) {
    g.in_dims[d] = in_dims[d];
    g.out_dims[d] = out_dims[d];
    g.begin[d] = begin[d];
    n *= out_dims[d];
  }
  if (n == 0) return cudaSuccess;
  unsigned b = k_blocks(n, 256);
  switch (elem_size) {
    case 1: pad_zero_kernel<uint8_t><<<b, 256, 0, stream>>>(g, (const uint8_t *)src, (uint8_t *)dst, n); break;
    case 2: pad_zero_kernel<uint16_t><<<b, 256, 0, stream>>>(g, (const uint16_t *)src, (uint16_t *)dst, n); break;
    case 4: pad_zero_kernel<uint32_t><<<b, 256, 0, stream>>>(g, (const uint32_t *)src, (uint32_t *)dst, n); break;
    case 8: pad_zero_kernel<uint64_t><<<b, 256, 0, stream>>>(g, (const uint64_t *)src, (uint64_t *)dst, n); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// Each pixel's c halves (c < 8, not aligned) read one by one; the 8 written as one
// 16-byte store.
__global__ void pad_channels8_kernel(const __half *__restrict__ src, uint4 *__restrict__ dst,
                                     int64_t pixels, int c) {
  K_GRID_STRIDE(i, pixels) {
    __align__(16) __half v[8];
#pragma unroll
    for (int k = 0; k < 8; k++) v[k] = k < c ? src[i * c + k] : __float2half(0.f);
    dst[i] = *reinterpret_cast<const uint4 *>(v);
  }
}

extern "C" cudaError_t k_pad_channels8(const void *src, int64_t pixels, int c, void *dst,
                                       cudaStream_t stream) {
  if (c < 1 || c > 8 || ((uintptr_t)dst & 15)) return cudaErrorInvalidValue;
  if (pixels == 0) return cudaSuccess;
  pad_channels8_kernel<<<k_blocks(pixels, 256), 256, 0, stream>>>(
      (const __half *)src, (uint4 *)dst, pixels, c);
  return cudaGetLastError();
}

// The source pixels of one output pixel are fh x fw neighbours of few channels each, so
// the reads are unaligned halves (neighbouring threads read neighbouring pixels: they
// hit L1/L2); the 8 written as one store.
__global__ void fold_pixels8_kernel(const __half *__restrict__ src, uint4 *__restrict__ dst,
                                    int64_t chunks, int h, int w, int c, int fw, int step_h,
                                    int step_w, int ph, int pw, int hs, int ws, int used,
                                    int per_pixel) {
  K_GRID_STRIDE(i, chunks) {
    const int q = (int)(i % per_pixel);
    int64_t pix = i / per_pixel;
    const int j = (int)(pix % ws);
    pix /= ws;
    const int ii = (int)(pix % hs);
    const int64_t b = pix / hs;
    __align__(16) __half v[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const int e = q * 8 + k;
      __half val = __float2half(0.f);
      if (e < used) {
        const int blk = e / c, ch = e - blk * c, th = blk / fw, tw = blk - th * fw;
        const int y = step_h * ii + th - ph, x = step_w * j + tw - pw;
        if (y >= 0 && y < h && x >= 0 && x < w) val = src[((b * h + y) * w + x) * c + ch];
      }
      v[k] = val;
    }
    dst[i] = *reinterpret_cast<const uint4 *>(v);
  }
}

extern "C" cudaError_t k_fold_pixels8(const void *src, int n, int h, int w, int c, int fh,
                                      int fw, int step_h, int step_w, int ph, int pw, int hs,
                                      int ws, int c_out, void *dst, cudaStream_t stream) {
  if (c < 1 || fh < 1 || fw < 1 || c_out % 8 || c_out < fh * fw * c || ((uintptr_t)dst & 15))
    return cudaErrorInvalidValue;
  const int64_t chunks = (int64_t)n * hs * ws * (c_out / 8);
  if (chunks == 0) return cudaSuccess;
  fold_pixels8_kernel<<<k_blocks(chunks, 256), 256, 0, stream>>>(
      (const __half *)src, (uint4 *)dst, chunks, h, w, c, fw, step_h, step_w, ph, pw, hs, ws,
      fh * fw * c, c_out / 8);
  return cudaGetLastError();
}
