// k_rows.cuh: a 2-D launch over channels-last data for the memory-bound per-channel
// kernels (convolution epilogue, broadcast binary ops, BatchNormalization).
//
// The data is seen as [B, M, C]: B batches of M rows of C channels, C-contiguous, C
// split into cv = C / V vectors of V elements (V * sizeof(T) <= 16 bytes). threadIdx.x
// walks the vectors of a row, threadIdx.y and blockIdx.x the rows, blockIdx.y the
// batches. So a thread knows its channel vector and its batch without any division,
// loads what depends on them (a bias, a per-batch scale) once for all of its rows, and
// each warp touches one contiguous span per access: linear thread ids run along the
// vectors of consecutive rows, which are consecutive in memory.
//
// The functor F provides:
//   typedef ... param;                       what depends on (batch, vector) only
//   typedef ... item;                        what one row's vector loads
//   param param_at(int64_t b, int c) const;  c: vector index within the row
//   item load(int64_t v) const;              v: vector index into [B, M, cv]
//   void store(int64_t v, const item &, const param &) const;
// Each thread loads K_ROWS_UNROLL rows before it stores any (memory-level parallelism);
// a store only ever writes the vector its own thread loaded, so an output may alias an
// input.
#pragma once

#include "k_common.cuh"

#define K_ROWS_THREADS 256
#define K_ROWS_UNROLL 4

struct k_rows_launch {
  dim3 grid, block;
};

// The launch for B x M rows of cv vectors (cv >= 1).
static inline k_rows_launch k_rows_plan(int64_t nb, int64_t m, int64_t cv) {
  int64_t bx = cv;
  if (cv > K_ROWS_THREADS) {  // several passes over the row, each of whole warps
    const int64_t passes = (cv + K_ROWS_THREADS - 1) / K_ROWS_THREADS;
    bx = ((cv + passes - 1) / passes + 31) / 32 * 32;
  }
  int64_t by = K_ROWS_THREADS / bx;
  if (by < 1) by = 1;
  const int64_t gy = nb < 65535 ? (nb > 0 ? nb : 1) : 65535;
  const int64_t per_block = by * K_ROWS_UNROLL;
  int64_t gx = (m + per_block - 1) / per_block;
  const int64_t cap = (int64_t)65535 * 32 / gy;  // the grid-stride loops cover the rest
  if (gx > cap) gx = cap;
  if (gx < 1) gx = 1;
  k_rows_launch l;
  l.grid = dim3((unsigned)gx, (unsigned)gy, 1);
  l.block = dim3((unsigned)bx, (unsigned)by, 1);
  return l;
}

template <class F>
__global__ void __launch_bounds__(K_ROWS_THREADS)
    k_rows_kernel(F f, int64_t nb, int64_t m, int cv) {
  const int64_t step = (int64_t)gridDim.x * blockDim.y;
  for (int64_t b = blockIdx.y; b < nb; b += gridDim.y) {
    for (int c = threadIdx.x; c < cv; c += blockDim.x) {
      const typename F::param p = f.param_at(b, c);
      const int64_t base = b * m;
      for (int64_t r = (int64_t)blockIdx.x * blockDim.y + threadIdx.y; r < m;
           r += K_ROWS_UNROLL * step) {
        typename F::item v[K_ROWS_UNROLL];
#pragma unroll
        for (int u = 0; u < K_ROWS_UNROLL; u++)
          if (r + u * step < m) v[u] = f.load((base + r + u * step) * cv + c);
#pragma unroll
        for (int u = 0; u < K_ROWS_UNROLL; u++)
          if (r + u * step < m) f.store((base + r + u * step) * cv + c, v[u], p);
      }
    }
  }
}

template <class F>
static cudaError_t k_rows_run(const F &f, int64_t nb, int64_t m, int64_t cv, cudaStream_t s) {
  if (nb <= 0 || m <= 0 || cv <= 0) return cudaSuccess;
  const k_rows_launch l = k_rows_plan(nb, m, cv);
  k_rows_kernel<F><<<l.grid, l.block, 0, s>>>(f, nb, m, (int)cv);
  return cudaGetLastError();
}

// The widest vector (elements) for rows of c elements of esize bytes each at the given
// pointers (NULL ones ignored): 16 bytes when c and every pointer allow it, else
// smaller, down to 1. `widths`: the vector widths the caller instantiates, as a bit
// mask (bit v for width v; width 1 is always taken).
static inline int k_rows_vec(int64_t c, int esize, unsigned widths, const void *p0,
                             const void *p1, const void *p2) {
  for (int v = 16 / esize; v > 1; v /= 2) {
    const uintptr_t bytes = (uintptr_t)v * (uintptr_t)esize;
    if (!(widths & (1u << v)) || c % v != 0) continue;
    if ((uintptr_t)p0 % bytes || (uintptr_t)p1 % bytes || (uintptr_t)p2 % bytes) continue;
    return v;
  }
  return 1;
}
