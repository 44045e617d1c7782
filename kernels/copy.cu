// copy.cu: the strided N-D view copy (by element size), a tiled transpose for
// views whose input unit-stride dim is not the output's last, and small fills.
#include "copy.h"
#include "k_common.cuh"

// ---- element types by size -------------------------------------------------------

struct __align__(16) k_b16 {
  uint4 v;
};

// ---- host-side view preparation ---------------------------------------------------------

typedef struct host_view {
  int rank;  // outermost first
  int64_t es;
  int64_t d[K_VIEW_MAX_RANK + 1], is[K_VIEW_MAX_RANK + 1], os[K_VIEW_MAX_RANK + 1];
} host_view;

// Drops 1-dims and merges a dim into its outer neighbour when both the input and
// the output strides are contiguous across them. Returns false for an empty view.
static bool view_simplify(host_view *v) {
  int r = 0;
  for (int i = 0; i < v->rank; i++) {
    int64_t d = v->d[i], s = v->is[i], o = v->os[i];
    if (d == 0) return false;
    if (d == 1) continue;
    if (r > 0 && v->is[r - 1] == s * d && v->os[r - 1] == o * d) {
      v->d[r - 1] *= d;
      v->is[r - 1] = s;
      v->os[r - 1] = o;
      continue;
    }
    v->d[r] = d;
    v->is[r] = s;
    v->os[r] = o;
    r++;
  }
  v->rank = r;
  return true;
}

// Reads contiguous rows (last dim unit stride on both sides) as wider words when
// every row start is aligned to the word.
static void view_widen(host_view *v, uintptr_t src, uintptr_t dst) {
  int L = v->rank - 1;
  if (L < 0 || v->is[L] != 1 || v->os[L] != 1) return;
  for (int64_t w = 16; w > v->es; w /= 2) {
    if (w % v->es) continue;
    int64_t f = w / v->es;
    bool ok = v->d[L] % f == 0 && src % (uintptr_t)w == 0 && dst % (uintptr_t)w == 0;
    for (int k = 0; ok && k < L; k++) ok = v->is[k] % f == 0 && v->os[k] % f == 0;
    if (!ok) continue;
    v->d[L] /= f;
    for (int k = 0; k < L; k++) {
      v->is[k] /= f;
      v->os[k] /= f;
    }
    v->es = w;
    return;
  }
}

// ---- the generic kernel: one thread per element, index math in I/S --------------------------

template <typename I, typename S> struct view_args {
  int rank;  // innermost first
  I d[K_VIEW_MAX_RANK];
  S is[K_VIEW_MAX_RANK], os[K_VIEW_MAX_RANK];
};

template <typename T, typename I, typename S, bool OUT_CONTIG>
__global__ void copy_view_kernel(view_args<I, S> v, const T *__restrict__ src, T *__restrict__ dst,
                                 I n) {
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    I rem = i;
    S si = 0, so = 0;
#pragma unroll
    for (int k = 0; k < K_VIEW_MAX_RANK; k++) {
      if (k >= v.rank) break;
      I c;
      if (k == v.rank - 1) {
        c = rem;
      } else {
        I q = rem / v.d[k];
        c = rem - q * v.d[k];
        rem = q;
      }
      si += (S)c * v.is[k];
      if (!OUT_CONTIG) so += (S)c * v.os[k];
    }
    dst[OUT_CONTIG ? (S)i : so] = src[si];
  }
}

template <typename T, typename I, typename S>
static cudaError_t launch_generic(const host_view *hv, int64_t n, const void *src, void *dst,
                                  bool out_contig, cudaStream_t st) {
  view_args<I, S> a;
  a.rank = hv->rank;
  for (int k = 0; k < hv->rank; k++) {
    int j = hv->rank - 1 - k;
    a.d[k] = (I)hv->d[j];
    a.is[k] = (S)hv->is[j];
    a.os[k] = (S)hv->os[j];
  }
  unsigned b = k_blocks(n, 256);
  if (out_contig)
    copy_view_kernel<T, I, S, true><<<b, 256, 0, st>>>(a, (const T *)src, (T *)dst, (I)n);
  else
    copy_view_kernel<T, I, S, false><<<b, 256, 0, st>>>(a, (const T *)src, (T *)dst, (I)n);
  return cudaGetLastError();
}

template <typename T>
static cudaError_t launch_generic_t(const host_view *hv, int64_t n, const void *src, void *dst,
                                    cudaStream_t st) {
  // 32-bit math when every index and offset fits
  int64_t in_span = 0, out_span = 0, run = 1;
  bool out_contig = true;
  for (int k = hv->rank - 1; k >= 0; k--) {
    int64_t di = hv->d[k] - 1;
    in_span += (hv->is[k] < 0 ? -hv->is[k] : hv->is[k]) * di;
    out_span += (hv->os[k] < 0 ? -hv->os[k] : hv->os[k]) * di;
    if (hv->os[k] != run) out_contig = false;
    run *= hv->d[k];
  }
  if (n <= INT32_MAX && in_span <= INT32_MAX && out_span <= INT32_MAX)
    return launch_generic<T, uint32_t, int32_t>(hv, n, src, dst, out_contig, st);
  return launch_generic<T, uint64_t, int64_t>(hv, n, src, dst, out_contig, st);
}

// ---- the tiled transpose: 32x32 tiles over (a, L) where a has input stride 1 and L
// (the last dim) output stride 1; reads and writes are both coalesced. --------------------------

struct tile_args {
  int64_t da, dl;  // sizes of dims a and L
  int64_t sl;      // input stride of L
  int64_t oa;      // output stride of a
  int brank;       // the other dims, outermost first
  int64_t batch;
  int64_t bd[K_VIEW_MAX_RANK], bs[K_VIEW_MAX_RANK], bo[K_VIEW_MAX_RANK];
};

template <typename T>
__global__ void __launch_bounds__(256) transpose_tile_kernel(tile_args g, const T *__restrict__ src,
                                                             T *__restrict__ dst) {
  __shared__ T tile[32][33];
  const int64_t l0 = (int64_t)blockIdx.x * 32, a0 = (int64_t)blockIdx.y * 32;
  for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
    int64_t rem = b, bi = 0, bo = 0;
    for (int k = g.brank - 1; k >= 0; k--) {
      int64_t c = rem % g.bd[k];
      rem /= g.bd[k];
      bi += c * g.bs[k];
      bo += c * g.bo[k];
    }
    for (int j = threadIdx.y; j < 32; j += 8) {
      int64_t a = a0 + threadIdx.x, l = l0 + j;
      if (a < g.da && l < g.dl) tile[j][threadIdx.x] = src[bi + a + l * g.sl];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {
      int64_t a = a0 + j, l = l0 + threadIdx.x;
      if (a < g.da && l < g.dl) dst[bo + a * g.oa + l] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// Returns true (and *err) when the tiled kernel took the view.
template <typename T>
static bool try_tiled(const host_view *hv, const void *src, void *dst, cudaStream_t st,
                      cudaError_t *err) {
  int L = hv->rank - 1, a = -1;
  if (L < 1 || hv->os[L] != 1 || hv->is[L] == 1 || hv->is[L] == 0) return false;
  for (int k = 0; k < L; k++)
    if (hv->is[k] == 1) a = k;
  if (a < 0 || hv->d[a] < 16 || hv->d[L] < 16) return false;
  int64_t ga = (hv->d[a] + 31) / 32, gl = (hv->d[L] + 31) / 32;
  if (ga > 65535 || gl > INT32_MAX) return false;
  tile_args g;
  g.da = hv->d[a];
  g.dl = hv->d[L];
  g.sl = hv->is[L];
  g.oa = hv->os[a];
  g.brank = 0;
  g.batch = 1;
  for (int k = 0; k < L; k++) {
    if (k == a) continue;
    g.bd[g.brank] = hv->d[k];
    g.bs[g.brank] = hv->is[k];
    g.bo[g.brank] = hv->os[k];
    g.batch *= hv->d[k];
    g.brank++;
  }
  dim3 grid((unsigned)gl, (unsigned)ga, (unsigned)(g.batch < 65535 ? g.batch : 65535));
  transpose_tile_kernel<T><<<grid, dim3(32, 8), 0, st>>>(g, (const T *)src, (T *)dst);
  *err = cudaGetLastError();
  return true;
}

// ---- permutations inside small contiguous blocks: each row of B elements is read whole
// (16-byte words), permuted through shared memory and written whole. ShuffleNet's channel
// shuffle on NHWC data is such a view ([pixels, 2, C/2] -> [pixels, C/2, 2]: inner dims
// too small for the 32x32 tiles, one 2-byte element per thread in the generic kernel). ---

#define K_ROWPERM_MAX_INNER 4
#define K_ROWPERM_SMEM 16384 /* bytes of rows a block holds */

struct rowperm_args {
  int64_t rows;                   // rows of B elements, B apart in the input and the output
  int b;                          // elements per row
  int rows_per_block;
  int inner;                      // permuted dims, innermost (output order) first
  int d[K_ROWPERM_MAX_INNER], is[K_ROWPERM_MAX_INNER];
};

template <typename T>
__global__ void __launch_bounds__(256) rowperm_kernel(rowperm_args g, const T *__restrict__ src,
                                                      T *__restrict__ dst) {
  extern __shared__ uint4 rowperm_smem[];
  T *buf = reinterpret_cast<T *>(rowperm_smem);
  for (int64_t r0 = (int64_t)blockIdx.x * g.rows_per_block; r0 < g.rows;
       r0 += (int64_t)gridDim.x * g.rows_per_block) {
    const int nr = (int)(g.rows - r0 < g.rows_per_block ? g.rows - r0 : g.rows_per_block);
    const int count = nr * g.b;
    // the rows are contiguous on both sides: copy them in as 16-byte words (a block's
    // rows start on a word: rows_per_block keeps them so), the tail of the last block
    // element by element
    const uint4 *src_w = reinterpret_cast<const uint4 *>(src + r0 * g.b);
    const int n_words = (int)((int64_t)count * sizeof(T) / 16);
    for (int i = threadIdx.x; i < n_words; i += blockDim.x) rowperm_smem[i] = src_w[i];
    for (int i = n_words * (int)(16 / sizeof(T)) + threadIdx.x; i < count; i += blockDim.x)
      buf[i] = src[r0 * g.b + i];
    __syncthreads();
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      const int r = i / g.b;
      int rem = i - r * g.b, off = 0;
#pragma unroll
      for (int k = 0; k < K_ROWPERM_MAX_INNER; k++) {
        if (k >= g.inner) break;
        const int q = rem / g.d[k];
        off += (rem - q * g.d[k]) * g.is[k];
        rem = q;
      }
      dst[r0 * g.b + i] = buf[r * g.b + off];
    }
    __syncthreads();
  }
}

// Returns true (and *err) when the view is rows of B contiguous elements permuted within
// each row: outer dims with equal input and output strides, multiples of B, the inner
// dims row-major in the output and a permutation of a row-major block in the input.
template <typename T>
static bool try_rowperm(const host_view *hv, const void *src, void *dst, cudaStream_t st,
                        cudaError_t *err) {
  if (sizeof(T) > 8 || (uintptr_t)src % 16 || (uintptr_t)dst % 16) return false;
  // inner dims: the longest suffix whose output strides are row-major from 1
  int L = hv->rank - 1, first = hv->rank;
  int64_t b = 1;
  for (int k = L; k >= 0 && hv->os[k] == b && L - k < K_ROWPERM_MAX_INNER; k--) {
    b *= hv->d[k];
    first = k;
    // stop at the smallest block that the input also holds whole
    int64_t lo = INT64_MAX, span = 0;
    for (int j = first; j <= L; j++) {
      if (hv->is[j] < lo) lo = hv->is[j];
      span += hv->is[j] * (hv->d[j] - 1);
    }
    if (lo == 1 && span == b - 1) break;
  }
  if (first > L - 1 || b * (int64_t)sizeof(T) > K_ROWPERM_SMEM) return false;
  // the input's inner strides must tile the block exactly: sorted, each the product of
  // the smaller ones' dims
  int order[K_ROWPERM_MAX_INNER], n_in = L - first + 1;
  for (int j = 0; j < n_in; j++) order[j] = first + j;
  for (int x = 1; x < n_in; x++)
    for (int y = x; y > 0 && hv->is[order[y]] < hv->is[order[y - 1]]; y--) {
      int t = order[y];
      order[y] = order[y - 1];
      order[y - 1] = t;
    }
  int64_t want = 1;
  for (int j = 0; j < n_in; j++) {
    if (hv->is[order[j]] != want) return false;
    want *= hv->d[order[j]];
  }
  // outer dims: the same stride on both sides, whole rows apart; rows counted in order
  int64_t rows = 1, stride = b;
  for (int k = first - 1; k >= 0; k--) {
    if (hv->is[k] != hv->os[k] || hv->os[k] != stride) return false;
    rows *= hv->d[k];
    stride *= hv->d[k];
  }
  if (rows > INT32_MAX) return false;
  rowperm_args g;
  g.rows = rows;
  g.b = (int)b;
  g.inner = n_in;
  for (int j = 0; j < n_in; j++) {
    g.d[j] = (int)hv->d[L - j];
    g.is[j] = (int)hv->is[L - j];
  }
  // whole 16-byte words per block of rows: a multiple of 16 / gcd(row bytes, 16) rows
  int64_t row_bytes = b * (int64_t)sizeof(T), m = 16;
  while (m > 1 && (row_bytes * m / 2) % 16 == 0) m /= 2;
  int64_t rpb = K_ROWPERM_SMEM / row_bytes;
  rpb -= rpb % m;
  if (rpb < 1) return false;
  g.rows_per_block = (int)rpb;
  int64_t blocks = (rows + g.rows_per_block - 1) / g.rows_per_block;
  if (blocks > 65535 * 32) blocks = 65535 * 32;
  size_t smem = (size_t)g.rows_per_block * (size_t)b * sizeof(T);
  rowperm_kernel<T><<<(unsigned)blocks, 256, smem, st>>>(g, (const T *)src, (T *)dst);
  *err = cudaGetLastError();
  return true;
}

template <typename T>
static cudaError_t copy_typed(const host_view *hv, int64_t n, const void *src, void *dst,
                              cudaStream_t st) {
  cudaError_t err;
  if (try_rowperm<T>(hv, src, dst, st, &err)) return err;
  if (try_tiled<T>(hv, src, dst, st, &err)) return err;
  return launch_generic_t<T>(hv, n, src, dst, st);
}

extern "C" cudaError_t k_copy_view(int64_t elem_size, int rank, const int64_t *dims,
                                   const int64_t *in_strides, const int64_t *out_strides,
                                   const void *src, void *dst, cudaStream_t stream) {
  if (rank < 0 || rank > K_VIEW_MAX_RANK || elem_size <= 0) return cudaErrorInvalidValue;
  host_view v;
  v.rank = rank;
  v.es = elem_size;
  int64_t run = 1;
  for (int k = rank - 1; k >= 0; k--) {
    v.d[k] = dims[k];
    v.is[k] = in_strides[k];
    v.os[k] = out_strides ? out_strides[k] : run;
    run *= dims[k];
  }
  if (!view_simplify(&v)) return cudaSuccess;
  // an element size that is no word size becomes an inner dim of smaller words
  if (v.es != 1 && v.es != 2 && v.es != 4 && v.es != 8 && v.es != 16) {
    if (v.rank == K_VIEW_MAX_RANK) return cudaErrorInvalidValue;
    int64_t u = 1;
    while (u < 16 && v.es % (2 * u) == 0) u *= 2;
    int64_t f = v.es / u;
    for (int k = 0; k < v.rank; k++) {
      v.is[k] *= f;
      v.os[k] *= f;
    }
    v.d[v.rank] = f;
    v.is[v.rank] = 1;
    v.os[v.rank] = 1;
    v.rank++;
    v.es = u;
    view_simplify(&v);
  }
  if (v.rank == 0) return cudaMemcpyAsync(dst, src, (size_t)v.es, cudaMemcpyDeviceToDevice, stream);
  if (v.rank == 1 && v.is[0] == 1 && v.os[0] == 1)
    return cudaMemcpyAsync(dst, src, (size_t)(v.d[0] * v.es), cudaMemcpyDeviceToDevice, stream);
  view_widen(&v, (uintptr_t)src, (uintptr_t)dst);
  int64_t n = 1;
  for (int k = 0; k < v.rank; k++) n *= v.d[k];
  switch (v.es) {
    case 1: return copy_typed<uint8_t>(&v, n, src, dst, stream);
    case 2: return copy_typed<uint16_t>(&v, n, src, dst, stream);
    case 4: return copy_typed<uint32_t>(&v, n, src, dst, stream);
    case 8: return copy_typed<uint64_t>(&v, n, src, dst, stream);
    case 16: return copy_typed<k_b16>(&v, n, src, dst, stream);
    default: return cudaErrorInvalidValue;
  }
}

// ---- fills -----------------------------------------------------------------------------------

template <typename T> __global__ void fill_kernel(T v, T *dst, int64_t n) {
  K_GRID_STRIDE(i, n) dst[i] = v;
}

template <typename T>
static cudaError_t fill_typed(const void *pattern, void *dst, int64_t n, cudaStream_t st) {
  T v;
  memcpy(&v, pattern, sizeof v);
  fill_kernel<T><<<k_blocks(n, 256), 256, 0, st>>>(v, (T *)dst, n);
  return cudaGetLastError();
}

extern "C" cudaError_t k_fill_pattern(int elem_size, const void *pattern, void *dst, int64_t n,
                                      cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return fill_typed<uint8_t>(pattern, dst, n, stream);
    case 2: return fill_typed<uint16_t>(pattern, dst, n, stream);
    case 4: return fill_typed<uint32_t>(pattern, dst, n, stream);
    case 8: return fill_typed<uint64_t>(pattern, dst, n, stream);
    case 16: return fill_typed<k_b16>(pattern, dst, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

struct i64x8 {
  int64_t v[8];
};

__global__ void write_i64_kernel(i64x8 v, int n, int64_t *dst) {
  int i = threadIdx.x;
  if (i < n) dst[i] = v.v[i];
}

extern "C" cudaError_t k_write_i64(const int64_t *v, int n, int64_t *dst, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (n > 8) return cudaErrorInvalidValue;
  i64x8 a;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < n; i++) a.v[i] = v[i];
  write_i64_kernel<<<1, 32, 0, stream>>>(a, n, dst);
  return cudaGetLastError();
}

// ---- Range ------------------------------------------------------------------------------------

template <typename T> struct range_math {  // integers: 64-bit wrap-around
  static __device__ T at(T s, T d, int64_t i) {
    return (T)(int64_t)((uint64_t)(int64_t)s + (uint64_t)i * (uint64_t)(int64_t)d);
  }
};
template <> struct range_math<double> {
  static __device__ double at(double s, double d, int64_t i) { return s + (double)i * d; }
};
template <> struct range_math<float> {
  static __device__ float at(float s, float d, int64_t i) {
    return (float)((double)s + (double)i * d);
  }
};
template <> struct range_math<__half> {
  static __device__ __half at(__half s, __half d, int64_t i) {
    return __float2half_rn((float)((double)__half2float(s) + (double)i * (double)__half2float(d)));
  }
};
template <> struct range_math<__nv_bfloat16> {
  static __device__ __nv_bfloat16 at(__nv_bfloat16 s, __nv_bfloat16 d, int64_t i) {
    return __float2bfloat16_rn(
        (float)((double)__bfloat162float(s) + (double)i * (double)__bfloat162float(d)));
  }
};

template <typename T>
__global__ void range_kernel(const T *start, const T *delta, T *dst, int64_t n) {
  const T s = *start, d = *delta;
  K_GRID_STRIDE(i, n) dst[i] = range_math<T>::at(s, d, i);
}

extern "C" cudaError_t k_range(int dtype, const void *start, const void *delta, void *dst,
                               int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  unsigned b = k_blocks(n, 256);
#define K_RANGE(T) \
  range_kernel<T><<<b, 256, 0, stream>>>((const T *)start, (const T *)delta, (T *)dst, n)
  K_DISPATCH_ALL(dtype, K_RANGE, return cudaErrorInvalidValue)
#undef K_RANGE
  return cudaGetLastError();
}

// ---- Trilu ------------------------------------------------------------------------------------

template <typename T>
__global__ void trilu_kernel(int upper, const int64_t *k_dev, const T *src, T *dst, int64_t total,
                             int64_t rows, int64_t cols) {
  int64_t k = k_dev ? *k_dev : 0;
  // beyond +-(rows + cols) every k means the same; clamping keeps j - i - k defined
  int64_t lim = rows + cols;
  k = k < -lim ? -lim : k > lim ? lim : k;
  K_GRID_STRIDE(i, total) {
    int64_t t = i / cols, j = i - t * cols, r = t % rows;
    bool keep = upper ? (j - r >= k) : (j - r <= k);
    dst[i] = keep ? src[i] : T(0);
  }
}

extern "C" cudaError_t k_trilu(int elem_size, int upper, const int64_t *k_dev, const void *src,
                               void *dst, int64_t batch, int64_t rows, int64_t cols,
                               cudaStream_t stream) {
  int64_t total = batch * rows * cols;
  if (total <= 0) return cudaSuccess;
  unsigned b = k_blocks(total, 256);
#define K_TRILU(T)                                                                             \
  trilu_kernel<T><<<b, 256, 0, stream>>>(upper, k_dev, (const T *)src, (T *)dst, total, rows, \
                                         cols)
  switch (elem_size) {
    case 1: K_TRILU(uint8_t); break;
    case 2: K_TRILU(uint16_t); break;
    case 4: K_TRILU(uint32_t); break;
    case 8: K_TRILU(uint64_t); break;
    default: return cudaErrorInvalidValue;
  }
#undef K_TRILU
  return cudaGetLastError();
}
