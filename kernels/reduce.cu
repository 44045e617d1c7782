// reduce.cu: the Reduce* family. Three layouts:
// - rows (x as [outer, r] with r >= 32): one warp per row, or one block per row
//   when rows are long and few;
// - columns ([outer, r, inner], inner > 1, or short rows): one thread per output,
//   coalesced across neighbouring outputs;
// - general strided (reduced axes not contiguous, and every integer type): one
//   thread per output walking the reduced index space.
// (Channels-last spatial reductions, [N, HW, C] over HW, are in reduce_mid.cu.)
#include "k_reduce_ops.cuh"

namespace {

// ---- rows: [rows, r], one warp per row ----------------------------------------
template <typename T, typename A, int OP>
__global__ void red_rows_warp(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t r,
                              A init, int fin) {
  const int lane = threadIdx.x & 31;
  const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows;
       row += nwarps) {
    const T *p = x + row * r;
    A shift = 0;
    if constexpr (OP == R_ADDEXP) {
      A m = (A)-INFINITY;
      for (int64_t i = lane; i < r; i += 32) m = r_comb<R_MAX, A>(m, k_load_as<A>(p[i]));
      shift = r_finite_or0(k_warp_reduce(m, r_comb_f<R_MAX>()));
    }
    A acc = init;
    for (int64_t i = lane; i < r; i += 32)
      acc = r_comb<OP, A>(acc, r_pre<OP, A>(k_load_as<A>(p[i]), shift));
    acc = k_warp_reduce(acc, r_comb_f<OP>());
    if (lane == 0) y[row] = r_finish<T, A>(acc, fin, r, shift);
  }
}

// ---- rows: [rows, r], one block per row -----------------------------------------
template <typename T, typename A, int OP>
__global__ void red_rows_block(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t r,
                               A init, int fin) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform per block
    const T *p = x + row * r;
    A shift = 0;
    if constexpr (OP == R_ADDEXP) {
      A m = (A)-INFINITY;
      for (int64_t i = threadIdx.x; i < r; i += blockDim.x)
        m = r_comb<R_MAX, A>(m, k_load_as<A>(p[i]));
      shift = r_finite_or0(k_block_reduce(m, r_comb_f<R_MAX>(), (A)-INFINITY));
    }
    A acc = init;
    for (int64_t i = threadIdx.x; i < r; i += blockDim.x)
      acc = r_comb<OP, A>(acc, r_pre<OP, A>(k_load_as<A>(p[i]), shift));
    acc = k_block_reduce(acc, r_comb_f<OP>(), init);
    if (threadIdx.x == 0) y[row] = r_finish<T, A>(acc, fin, r, shift);
  }
}

// ---- columns: [outer, r, inner], one thread per output ---------------------------
template <typename T, typename A, int OP>
__global__ void red_cols(const T *__restrict__ x, T *__restrict__ y, int64_t outer, int64_t r,
                         int64_t inner, A init, int fin) {
  K_GRID_STRIDE(o, outer * inner) {
    const int64_t a = o / inner, b = o - a * inner;
    const T *p = x + a * r * inner + b;
    A shift = 0;
    if constexpr (OP == R_ADDEXP) {
      A m = (A)-INFINITY;
      for (int64_t i = 0; i < r; i++) m = r_comb<R_MAX, A>(m, k_load_as<A>(p[i * inner]));
      shift = r_finite_or0(m);
    }
    A acc = init;
    for (int64_t i = 0; i < r; i++)
      acc = r_comb<OP, A>(acc, r_pre<OP, A>(k_load_as<A>(p[i * inner]), shift));
    y[o] = r_finish<T, A>(acc, fin, r, shift);
  }
}

// ---- general strided: one thread per output --------------------------------------
template <int OP, typename T, typename A>
__device__ A r_walk(const T *x, int64_t base, const k_reduce_geom &g, A acc, A shift) {
  const int last = g.nr - 1;  // nr >= 1 and no empty extent: the launcher sees to it
  const int64_t len = g.rd[last], st = g.rs[last];
  int64_t idx[K_MAX_RANK];
  for (int d = 0; d < K_MAX_RANK; d++) idx[d] = 0;
  for (;;) {
    int64_t off = base;
    for (int d = 0; d < last; d++) off += idx[d] * g.rs[d];
    for (int64_t i = 0; i < len; i++)
      acc = r_comb<OP, A>(acc, r_pre<OP, A>(k_load_as<A>(x[off + i * st]), shift));
    int d = last - 1;
    while (d >= 0 && ++idx[d] == g.rd[d]) idx[d--] = 0;
    if (d < 0) break;
  }
  return acc;
}

template <typename T, typename A, int OP>
__global__ void red_generic(const T *__restrict__ x, T *__restrict__ y, k_reduce_geom g,
                            int64_t n_out, int64_t count, A init, int fin) {
  K_GRID_STRIDE(o, n_out) {
    int64_t rem = o, base = 0;
    for (int d = g.nk - 1; d >= 0; d--) {
      const int64_t q = rem / g.kd[d];
      base += (rem - q * g.kd[d]) * g.ks[d];
      rem = q;
    }
    A shift = 0, acc = init;
    if (count > 0) {
      if constexpr (OP == R_ADDEXP)
        shift = r_finite_or0(r_walk<R_MAX, T, A>(x, base, g, (A)-INFINITY, (A)0));
      acc = r_walk<OP, T, A>(x, base, g, init, shift);
    }
    y[o] = r_finish<T, A>(acc, fin, count, shift);
  }
}

// ---- launch ------------------------------------------------------------------------
struct r_args {
  const void *x;
  void *y;
  bool strided;
  int64_t outer, r, inner;  // 3-D layout
  const k_reduce_geom *g;   // strided layout
  int64_t n_out, count;     // strided layout
  double init_d;            // identity for float accumulators
  int64_t init_i;           // identity for int64 accumulators
  int fin;
  cudaStream_t s;
};

template <typename T, typename A, int OP>
constexpr bool r_valid() {
  if constexpr (std::is_integral<T>::value) {
    if constexpr (std::is_integral<A>::value)
      return OP != R_ADDEXP;
    else
      return OP == R_ADD || OP == R_ADDSQ || OP == R_ADDEXP;
  } else {
    return true;
  }
}

template <typename T, typename A, int OP>
cudaError_t r_go(const r_args &a) {
  if constexpr (!r_valid<T, A, OP>()) {
    return cudaErrorInvalidValue;
  } else {
    const T *x = (const T *)a.x;
    T *y = (T *)a.y;
    A init;
    if constexpr (std::is_integral<A>::value)
      init = (A)a.init_i;
    else
      init = (A)a.init_d;
    if constexpr (!std::is_integral<T>::value) {
      if (!a.strided) {
        if (a.inner == 1 && a.r >= 32) {
          if (a.r > 1024 && a.outer < 8192) {
            const int threads = a.r >= 16384 ? 512 : 256;
            const unsigned blocks = (unsigned)(a.outer < 65535 * 32 ? a.outer : 65535 * 32);
            red_rows_block<T, A, OP><<<blocks, threads, 0, a.s>>>(x, y, a.outer, a.r, init, a.fin);
          } else {
            red_rows_warp<T, A, OP>
                <<<k_blocks(a.outer * 32, 256), 256, 0, a.s>>>(x, y, a.outer, a.r, init, a.fin);
          }
        } else {
          red_cols<T, A, OP><<<k_blocks(a.outer * a.inner, 256), 256, 0, a.s>>>(
              x, y, a.outer, a.r, a.inner, init, a.fin);
        }
        return cudaGetLastError();
      }
    }
    red_generic<T, A, OP>
        <<<k_blocks(a.n_out, 256), 256, 0, a.s>>>(x, y, *a.g, a.n_out, a.count, init, a.fin);
    return cudaGetLastError();
  }
}

template <typename T, typename A>
cudaError_t r_go_op(int op, const r_args &a) {
  switch (op) {
    case R_ADD: return r_go<T, A, R_ADD>(a);
    case R_ADDSQ: return r_go<T, A, R_ADDSQ>(a);
    case R_ADDABS: return r_go<T, A, R_ADDABS>(a);
    case R_ADDEXP: return r_go<T, A, R_ADDEXP>(a);
    case R_MUL: return r_go<T, A, R_MUL>(a);
    case R_MAX: return r_go<T, A, R_MAX>(a);
    case R_MIN: return r_go<T, A, R_MIN>(a);
    default: return cudaErrorInvalidValue;
  }
}

bool r_is_int(int dt) {
  return dt == K_I8 || dt == K_U8 || dt == K_BOOL || dt == K_I32 || dt == K_I64;
}
bool r_is_float(int dt) { return dt == K_F32 || dt == K_F16 || dt == K_BF16 || dt == K_F64; }

void r_int_limits(int dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case K_I8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      break;
    case K_U8:
      *lo = 0;
      *hi = UINT8_MAX;
      break;
    case K_BOOL:
      *lo = 0;
      *hi = 1;
      break;
    case K_I32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      break;
    default:
      *lo = INT64_MIN;
      *hi = INT64_MAX;
      break;
  }
}

cudaError_t r_dispatch(int dtype, int kind, r_args &a) {
  if (!k_reduce_supported(dtype, kind)) return cudaErrorInvalidValue;
  const bool is_int = r_is_int(dtype);
  int op;
  bool dacc;
  r_plan(kind, is_int, &op, &a.fin, &dacc);
  a.init_d = op == R_MUL ? 1.0 : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0.0;
  int64_t lo, hi;
  r_int_limits(dtype, &lo, &hi);
  a.init_i = op == R_MUL ? 1 : op == R_MAX ? lo : op == R_MIN ? hi : 0;
  switch (dtype) {
    case K_F32: return r_go_op<float, float>(op, a);
    case K_F16: return r_go_op<__half, float>(op, a);
    case K_BF16: return r_go_op<__nv_bfloat16, float>(op, a);
    case K_F64: return r_go_op<double, double>(op, a);
    case K_I8: return dacc ? r_go_op<int8_t, double>(op, a) : r_go_op<int8_t, int64_t>(op, a);
    case K_U8:
    case K_BOOL: return dacc ? r_go_op<uint8_t, double>(op, a) : r_go_op<uint8_t, int64_t>(op, a);
    case K_I32: return dacc ? r_go_op<int32_t, double>(op, a) : r_go_op<int32_t, int64_t>(op, a);
    case K_I64: return dacc ? r_go_op<int64_t, double>(op, a) : r_go_op<int64_t, int64_t>(op, a);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

extern "C" int k_reduce_supported(int dtype, int kind) {
  if (kind < K_RED_SUM || kind > K_RED_LOGSUMEXP) return 0;
  if (r_is_float(dtype)) return 1;
  if (dtype == K_BOOL) return kind == K_RED_MAX || kind == K_RED_MIN;
  return r_is_int(dtype);
}

extern "C" cudaError_t k_reduce_strided(int dtype, int kind, const k_reduce_geom *g, const void *x,
                                        void *y, cudaStream_t stream) {
  if (g->nk < 0 || g->nk > K_MAX_RANK || g->nr < 0 || g->nr > K_MAX_RANK)
    return cudaErrorInvalidValue;
  k_reduce_geom h = *g;
  int64_t n_out = 1, count = 1;
  for (int d = 0; d < h.nk; d++) n_out *= h.kd[d];
  for (int d = 0; d < h.nr; d++) count *= h.rd[d];
  if (n_out <= 0) return cudaSuccess;
  if (h.nr == 0) {  // one element per output
    h.nr = 1;
    h.rd[0] = 1;
    h.rs[0] = 0;
  }
  r_args a = {};
  a.x = x;
  a.y = y;
  a.strided = true;
  a.g = &h;
  a.n_out = n_out;
  a.count = count;
  a.s = stream;
  return r_dispatch(dtype, kind, a);
}

extern "C" cudaError_t k_reduce_3d(int dtype, int kind, int64_t outer, int64_t r, int64_t inner,
                                   const void *x, void *y, cudaStream_t stream) {
  if (outer * inner <= 0) return cudaSuccess;
  if (r_is_int(dtype)) {  // integers take the general kernel only
    k_reduce_geom g = {};
    g.nk = 2;
    g.kd[0] = outer;
    g.ks[0] = r * inner;
    g.kd[1] = inner;
    g.ks[1] = 1;
    g.nr = 1;
    g.rd[0] = r;
    g.rs[0] = inner;
    return k_reduce_strided(dtype, kind, &g, x, y, stream);
  }
  r_args a = {};
  a.x = x;
  a.y = y;
  a.strided = false;
  a.outer = outer;
  a.r = r;
  a.inner = inner;
  a.s = stream;
  return r_dispatch(dtype, kind, a);
}
