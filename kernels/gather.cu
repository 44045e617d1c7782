// gather.cu: Gather (rows of `inner` elements, widened to 16/8/4-byte words when
// aligned) and GatherElements (one element per index).
#include "gather.h"
#include "k_common.cuh"

struct __align__(16) g_b16 {
  uint4 v;
};

template <typename X> __device__ __forceinline__ int64_t load_index(const X *p, int64_t j) {
  return (int64_t)p[j];
}

// ---- Gather ----------------------------------------------------------------------------

template <typename T, typename X, typename I>
__global__ void gather_kernel(const T *__restrict__ src, const X *__restrict__ idx,
                              T *__restrict__ dst, I outer, I dim, I count, I inner) {
  I n = outer * count * inner;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    I t = i / inner, u = i - t * inner;
    I o = t / count, j = t - o * count;
    int64_t v = load_index(idx, (int64_t)j);
    if (v < 0) v += (int64_t)dim;
    if (v < 0 || v >= (int64_t)dim) {
      dst[i] = T();
      continue;
    }
    dst[i] = src[(o * dim + (I)v) * inner + u];
  }
}

template <typename T, typename X>
static cudaError_t gather_typed(const void *data, const void *idx, void *dst, int64_t outer,
                                int64_t dim, int64_t count, int64_t inner, cudaStream_t st) {
  int64_t n = outer * count * inner, m = outer * dim * inner;
  unsigned b = k_blocks(n, 256);
  if (n <= INT32_MAX && m <= INT32_MAX)
    gather_kernel<T, X, uint32_t><<<b, 256, 0, st>>>((const T *)data, (const X *)idx, (T *)dst,
                                                     (uint32_t)outer, (uint32_t)dim,
                                                     (uint32_t)count, (uint32_t)inner);
  else
    gather_kernel<T, X, uint64_t><<<b, 256, 0, st>>>((const T *)data, (const X *)idx, (T *)dst,
                                                     (uint64_t)outer, (uint64_t)dim,
                                                     (uint64_t)count, (uint64_t)inner);
  return cudaGetLastError();
}

template <typename X>
static cudaError_t gather_by_word(int64_t w, const void *data, const void *idx, void *dst,
                                  int64_t outer, int64_t dim, int64_t count, int64_t inner,
                                  cudaStream_t st) {
  switch (w) {
    case 1: return gather_typed<uint8_t, X>(data, idx, dst, outer, dim, count, inner, st);
    case 2: return gather_typed<uint16_t, X>(data, idx, dst, outer, dim, count, inner, st);
    case 4: return gather_typed<uint32_t, X>(data, idx, dst, outer, dim, count, inner, st);
    case 8: return gather_typed<uint64_t, X>(data, idx, dst, outer, dim, count, inner, st);
    case 16: return gather_typed<g_b16, X>(data, idx, dst, outer, dim, count, inner, st);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_gather(int64_t elem_size, const void *data, int idx_dtype,
                                const void *idx, void *dst, int64_t outer, int64_t dim,
                                int64_t count, int64_t inner, cudaStream_t stream) {
  if (elem_size <= 0) return cudaErrorInvalidValue;
  if (outer <= 0 || count <= 0 || inner <= 0) return cudaSuccess;
  // rows of inner*elem_size bytes move as the widest word that divides them and
  // both base addresses (arena buffers are 256-byte aligned)
  int64_t bytes = inner * elem_size, w = 16;
  while (w > 1 && (bytes % w || (uintptr_t)data % (uintptr_t)w || (uintptr_t)dst % (uintptr_t)w))
    w /= 2;
  int64_t units = bytes / w;
  if (idx_dtype == K_I64)
    return gather_by_word<int64_t>(w, data, idx, dst, outer, dim, count, units, stream);
  if (idx_dtype == K_I32)
    return gather_by_word<int32_t>(w, data, idx, dst, outer, dim, count, units, stream);
  return cudaErrorInvalidValue;
}

// ---- GatherElements --------------------------------------------------------------------

struct ge_args {
  int rank, axis;
  int64_t idims[K_MAX_RANK];   // innermost first
  int64_t dstride[K_MAX_RANK]; // data strides, innermost first
  int64_t dim;                 // data size on the axis
};

template <typename T, typename X>
__global__ void gather_elements_kernel(ge_args g, const T *__restrict__ src,
                                       const X *__restrict__ idx, T *__restrict__ dst, int64_t n) {
  K_GRID_STRIDE(i, n) {
    int64_t rem = i, off = 0;
    for (int k = 0; k < g.rank; k++) {
      int64_t q = rem / g.idims[k], c = rem - q * g.idims[k];
      rem = q;
      if (k != g.axis) off += c * g.dstride[k];
    }
    int64_t v = load_index(idx, i);
    if (v < 0) v += g.dim;
    if (v < 0 || v >= g.dim) {
      dst[i] = T(0);
      continue;
    }
    dst[i] = src[off + v * g.dstride[g.axis]];
  }
}

template <typename T>
static cudaError_t gather_elements_typed(const ge_args &g, const void *data, int idx_dtype,
                                         const void *idx, void *dst, int64_t n, cudaStream_t st) {
  unsigned b = k_blocks(n, 256);
  if (idx_dtype == K_I64)
    gather_elements_kernel<T, int64_t><<<b, 256, 0, st>>>(g, (const T *)data, (const int64_t *)idx,
                                                          (T *)dst, n);
  else if (idx_dtype == K_I32)
    gather_elements_kernel<T, int32_t><<<b, 256, 0, st>>>(g, (const T *)data, (const int32_t *)idx,
                                                          (T *)dst, n);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t k_gather_elements(int elem_size, int rank, const int64_t *data_dims,
                                         const int64_t *idx_dims, int axis, const void *data,
                                         int idx_dtype, const void *idx, void *dst,
                                         cudaStream_t stream) {
  if (rank < 1 || rank > K_MAX_RANK || axis < 0 || axis >= rank) return cudaErrorInvalidValue;
  ge_args g;
  g.rank = rank;
  int64_t n = 1, s = 1;
  for (int k = 0; k < rank; k++) {
    int d = rank - 1 - k;  // outermost-first position of innermost-first slot k
    g.idims[k] = idx_dims[d];
    g.dstride[k] = s;
    s *= data_dims[d];
    n *= idx_dims[d];
  }
  g.axis = rank - 1 - axis;
  g.dim = data_dims[axis];
  if (n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return gather_elements_typed<uint8_t>(g, data, idx_dtype, idx, dst, n, stream);
    case 2: return gather_elements_typed<uint16_t>(g, data, idx_dtype, idx, dst, n, stream);
    case 4: return gather_elements_typed<uint32_t>(g, data, idx_dtype, idx, dst, n, stream);
    case 8: return gather_elements_typed<uint64_t>(g, data, idx_dtype, idx, dst, n, stream);
    default: return cudaErrorInvalidValue;
  }
}
