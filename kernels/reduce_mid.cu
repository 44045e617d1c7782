// reduce_mid.cu: reductions over the middle axis of [outer, r, inner] with inner > 1,
// i.e. NHWC data over H and W (outer = N, r = H*W, inner = C): the squeeze of
// squeeze-excitation, and global pooling on channels-last data.
//
// Columns are (outer, channel vector) pairs, a vector being V consecutive channels
// (16 bytes where inner and x's alignment allow). A block is bx columns by by row
// lanes: thread (tx, ty) accumulates rows ty, ty + by, ... of one chunk of r for its
// column in fp32 registers, V accumulators, reading 16 bytes per row; then the block
// combines its row lanes in shared memory, a fixed tree over ty. With one chunk the
// block writes the outputs; with several, it writes the chunk's partials to the
// workspace ([chunks, outer * inner] floats) and a second kernel combines them in chunk
// order. No atomics: the combination order depends only on the shapes, the chunk
// count and V, so results repeat run to run.
#include "k_reduce_ops.cuh"
#include "k_rows.cuh"

namespace {

#define K_MID_THREADS 256

struct mid_geom {
  int bx, by;      // block: columns x row lanes (by a power of two)
  int64_t tiles;   // blocks along the columns
};

// bx0 columns (a whole row of vectors when cv < 32, so a warp reads whole rows of
// consecutive pixels; else 32) by as many row lanes as fit, but no more than r needs;
// where few row lanes are needed the block takes more columns instead.
mid_geom mid_block(int64_t cols, int64_t cv, int64_t r) {
  const int bx0 = cv < 32 ? (int)cv : 32;
  int by = 1;
  while (by * 2 * bx0 <= K_MID_THREADS) by *= 2;
  int rc = 1;
  while (rc < r && rc < by) rc *= 2;
  by = rc;
  int k = K_MID_THREADS / (by * bx0);
  if (k < 1) k = 1;
  mid_geom g;
  g.bx = bx0 * k;
  g.by = by;
  g.tiles = (cols + g.bx - 1) / g.bx;
  return g;
}

template <int OP, typename T, int V>
__device__ __forceinline__ void mid_acc(float (&acc)[V], const k_vec<T, V> &v) {
#pragma unroll
  for (int e = 0; e < V; e++)
    acc[e] = r_comb<OP, float>(acc[e], r_pre<OP, float>(k_load_as<float>(v.v[e]), 0.f));
}

template <typename T, int V, int OP>
__global__ void __launch_bounds__(K_MID_THREADS)
    red_mid_kernel(const T *__restrict__ x, T *__restrict__ y, float *__restrict__ part,
                   int64_t cols, int64_t cv, int64_t r, int64_t crows, float init, int fin) {
  typedef k_vec<T, V> vec;
  __shared__ float sh[K_MID_THREADS * V];
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int64_t j = (int64_t)blockIdx.x * bx + tx;
  const bool live = j < cols;
  const int64_t n = live ? j / cv : 0;  // once per thread, not per element
  const int64_t cvec = j - n * cv;
  const int64_t r0 = (int64_t)blockIdx.y * crows;
  const int64_t r1 = r0 + crows < r ? r0 + crows : r;
  float acc[V];
#pragma unroll
  for (int e = 0; e < V; e++) acc[e] = init;
  int64_t i = r0 + ty;
  if (live && i < r1) {
    const int64_t step = (int64_t)by * cv;  // vectors between one thread's rows
    const vec *p = (const vec *)x + (n * r + i) * cv + cvec;
    for (; i + 3 * by < r1; i += 4 * by, p += 4 * step) {
      const vec a0 = p[0], a1 = p[step], a2 = p[2 * step], a3 = p[3 * step];
      mid_acc<OP, T, V>(acc, a0);
      mid_acc<OP, T, V>(acc, a1);
      mid_acc<OP, T, V>(acc, a2);
      mid_acc<OP, T, V>(acc, a3);
    }
    for (; i < r1; i += by, p += step) mid_acc<OP, T, V>(acc, p[0]);
  }
  // Row lanes combine pairwise, lane ty with ty + s for s = by/2, ..., 1: a fixed tree.
  float *mine = sh + ((int64_t)ty * bx + tx) * V;
#pragma unroll
  for (int e = 0; e < V; e++) mine[e] = acc[e];
  for (int s = by / 2; s > 0; s >>= 1) {
    __syncthreads();
    if (ty < s) {
      const float *o = sh + ((int64_t)(ty + s) * bx + tx) * V;
#pragma unroll
      for (int e = 0; e < V; e++) {
        acc[e] = r_comb<OP, float>(acc[e], o[e]);
        mine[e] = acc[e];
      }
    }
  }
  if (ty != 0 || !live) return;
  const int64_t out = j * V;  // = n * inner + cvec * V
  if (part) {
    float *q = part + (int64_t)blockIdx.y * cols * V + out;
#pragma unroll
    for (int e = 0; e < V; e++) q[e] = acc[e];
  } else {
#pragma unroll
    for (int e = 0; e < V; e++) y[out + e] = r_finish<T, float>(acc[e], fin, r, 0.f);
  }
}

// Second pass: output o combines the chunks' partials part[k * n_out + o], k in order.
template <typename T, int OP>
__global__ void red_mid_final(const float *__restrict__ part, T *__restrict__ y, int64_t n_out,
                              int64_t chunks, int64_t r, float init, int fin) {
  K_GRID_STRIDE(o, n_out) {
    float acc = init;
    for (int64_t k = 0; k < chunks; k++) acc = r_comb<OP, float>(acc, part[k * n_out + o]);
    y[o] = r_finish<T, float>(acc, fin, r, 0.f);
  }
}

// Vector widths instantiated per element size (bit v: width v; 1 always).
constexpr unsigned mid_widths(int esize) { return esize == 2 ? (1u << 8 | 1u << 2) : (1u << 4); }

int mid_esize(int dtype) { return dtype == K_F16 ? 2 : 4; }

// A chunk count normalized so that no chunk is empty (idempotent).
int64_t mid_norm_chunks(int64_t chunks, int64_t r) {
  if (chunks < 1) chunks = 1;
  if (chunks > r) chunks = r;
  const int64_t crows = (r + chunks - 1) / chunks;
  return (r + crows - 1) / crows;
}

struct mid_args {
  const void *x;
  void *y, *ws;
  int64_t outer, r, inner, chunks;
  float init;
  int fin;
  cudaStream_t s;
};

template <typename T, int V, int OP>
cudaError_t mid_go(const mid_args &a) {
  const int64_t cv = a.inner / V, cols = a.outer * cv;
  const mid_geom g = mid_block(cols, cv, a.r);
  const int64_t chunks = mid_norm_chunks(a.chunks, a.r);
  if (g.tiles > 0x7fffffff || chunks > 65535 || (chunks > 1 && !a.ws)) return cudaErrorInvalidValue;
  const int64_t crows = (a.r + chunks - 1) / chunks;
  float *part = chunks > 1 ? (float *)a.ws : NULL;
  red_mid_kernel<T, V, OP><<<dim3((unsigned)g.tiles, (unsigned)chunks, 1), dim3(g.bx, g.by, 1), 0,
                             a.s>>>((const T *)a.x, (T *)a.y, part, cols, cv, a.r, crows, a.init,
                                    a.fin);
  if (part) {
    const int64_t n_out = a.outer * a.inner;
    red_mid_final<T, OP><<<k_blocks(n_out, 256), 256, 0, a.s>>>(part, (T *)a.y, n_out, chunks,
                                                               a.r, a.init, a.fin);
  }
  return cudaGetLastError();
}

template <typename T, int OP>
cudaError_t mid_go_v(int v, const mid_args &a) {
  switch (v) {
    case 8:
      if constexpr (sizeof(T) == 2) return mid_go<T, 8, OP>(a);
      break;
    case 4:
      if constexpr (sizeof(T) == 4) return mid_go<T, 4, OP>(a);
      break;
    case 2:
      if constexpr (sizeof(T) == 2) return mid_go<T, 2, OP>(a);
      break;
    case 1: return mid_go<T, 1, OP>(a);
    default: break;
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t mid_go_op(int op, int v, const mid_args &a) {
  switch (op) {
    case R_ADD: return mid_go_v<T, R_ADD>(v, a);
    case R_ADDSQ: return mid_go_v<T, R_ADDSQ>(v, a);
    case R_ADDABS: return mid_go_v<T, R_ADDABS>(v, a);
    case R_MUL: return mid_go_v<T, R_MUL>(v, a);
    case R_MAX: return mid_go_v<T, R_MAX>(v, a);
    case R_MIN: return mid_go_v<T, R_MIN>(v, a);
    default: return cudaErrorInvalidValue;
  }
}

// Blocks of `threads` threads one multiprocessor holds for the summing kernel of width
// v (registers and shared memory decide); an estimate when the query fails.
int mid_blocks_per_sm(int dtype, int v, int threads) {
  int nb = 0;
  cudaError_t e = cudaErrorInvalidValue;
  if (dtype == K_F16 && v == 8)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, red_mid_kernel<__half, 8, R_ADD>,
                                                      threads, 0);
  else if (dtype == K_F16 && v == 2)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, red_mid_kernel<__half, 2, R_ADD>,
                                                      threads, 0);
  else if (dtype == K_F16)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, red_mid_kernel<__half, 1, R_ADD>,
                                                      threads, 0);
  else if (v == 4)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, red_mid_kernel<float, 4, R_ADD>,
                                                      threads, 0);
  else
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, red_mid_kernel<float, 1, R_ADD>,
                                                      threads, 0);
  if (e != cudaSuccess || nb < 1) {
    cudaGetLastError();
    nb = 2048 / threads;
    if (nb > 32) nb = 32;
    if (nb < 1) nb = 1;
  }
  return nb;
}

}  // namespace

extern "C" int k_reduce_mid_supported(int dtype, int kind) {
  return (dtype == K_F32 || dtype == K_F16) && kind >= K_RED_SUM && kind < K_RED_LOGSUMEXP;
}

extern "C" int64_t k_reduce_mid_chunks(int dtype, int64_t outer, int64_t r, int64_t inner,
                                       int sm_count, int64_t *ws_bytes) {
  *ws_bytes = 0;
  if (!k_reduce_mid_supported(dtype, K_RED_SUM) || outer <= 0 || r <= 0 || inner <= 1 ||
      inner > 0x7fffffff)
    return 0;
  const int esize = mid_esize(dtype);
  // the width x's alignment will most likely allow (the arena aligns to 256 bytes)
  const int v = k_rows_vec(inner, esize, mid_widths(esize), NULL, NULL, NULL);
  const int64_t cv = inner / v, cols = outer * cv;
  const mid_geom g = mid_block(cols, cv, r);
  if (g.tiles > 0x7fffffff) return 0;
  // Enough chunks that the blocks fill whole waves of the GPU (at least 90% of the last
  // one), each thread still summing 8 rows or more.
  const int64_t resident = (int64_t)(sm_count > 0 ? sm_count : 1) *
                           mid_blocks_per_sm(dtype, v, g.bx * g.by);
  int64_t max_chunks = r / ((int64_t)g.by * 8);
  if (max_chunks < 1) max_chunks = 1;
  if (max_chunks > 65535) max_chunks = 65535;
  int64_t best = 1;
  double best_eff = 0;
  for (int64_t c = 1; c <= max_chunks; c++) {
    const int64_t blocks = g.tiles * c, waves = (blocks + resident - 1) / resident;
    const double eff = (double)blocks / (double)(waves * resident);
    if (eff > best_eff + 1e-9) {
      best = c;
      best_eff = eff;
    }
    if (eff >= 0.9 || blocks > 8 * resident) break;
  }
  best = mid_norm_chunks(best, r);
  if (best > 1) *ws_bytes = best * outer * inner * (int64_t)sizeof(float);
  return best;
}

extern "C" cudaError_t k_reduce_mid(int dtype, int kind, int64_t outer, int64_t r, int64_t inner,
                                    int64_t chunks, const void *x, void *y, void *ws,
                                    cudaStream_t stream) {
  if (!k_reduce_mid_supported(dtype, kind) || r <= 0 || inner <= 1 || inner > 0x7fffffff)
    return cudaErrorInvalidValue;
  if (outer <= 0) return cudaSuccess;
  int op, fin;
  bool dacc;
  r_plan(kind, false, &op, &fin, &dacc);
  mid_args a;
  a.x = x;
  a.y = y;
  a.ws = ws;
  a.outer = outer;
  a.r = r;
  a.inner = inner;
  a.chunks = chunks;
  a.init = op == R_MUL ? 1.f : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0.f;
  a.fin = fin;
  a.s = stream;
  const int esize = mid_esize(dtype);
  const int v = k_rows_vec(inner, esize, mid_widths(esize), x, NULL, NULL);
  return dtype == K_F16 ? mid_go_op<__half>(op, v, a) : mid_go_op<float>(op, v, a);
}
