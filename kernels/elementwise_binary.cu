// elementwise_binary.cu: two-input arithmetic (Add, Sub, Mul, Div, Mod, Pow, Max,
// Min, PRelu, BitShift, BitwiseAnd / Or / Xor) and the binary entry points. Semantics follow
// ops/elementwise_arith.c: integer + - * wrap (computed in a wide unsigned type),
// Div truncates toward zero, division or modulo by zero gives 0, INT_MIN / -1
// wraps; Max / Min propagate NaN.
#include "elementwise_impl.cuh"
#include "k_rows.cuh"

#define K_W typename k_wide<C>::type

#define K_NUMERIC_OK \
  template <int CAT> static constexpr bool ok() { return CAT != KC_B; }

struct bin_add {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return x + y;
    else return (C)((K_W)x + (K_W)y);
  }
};
struct bin_sub {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return x - y;
    else return (C)((K_W)x - (K_W)y);
  }
};
struct bin_mul {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return x * y;
    else return (C)((K_W)x * (K_W)y);
  }
};
struct bin_div {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return x / y;
    else if constexpr (CAT == KC_S)
      return y == (C)0 ? (C)0 : y == (C)-1 ? (C)((K_W)0 - (K_W)x) : (C)(x / y);
    else return y == (C)0 ? (C)0 : (C)(x / y);
  }
};
// fmod is exact, so computing it in double is exact for every float type.
struct bin_mod {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) {
      double yd = (double)y, r = fmod((double)x, yd);
      return (C)((r != 0 && ((r < 0) != (yd < 0))) ? r + yd : r);
    } else if constexpr (CAT == KC_S) {
      int64_t a = x, b = y;
      if (b == 0 || b == -1) return (C)0;
      int64_t r = a % b;
      return (C)((r != 0 && ((r < 0) != (b < 0))) ? r + b : r);
    } else {
      return y == (C)0 ? (C)0 : (C)(x % y);
    }
  }
};
struct bin_fmod {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) {
      return (C)fmod((double)x, (double)y);
    } else if constexpr (CAT == KC_S) {
      int64_t a = x, b = y;
      return (b == 0 || b == -1) ? (C)0 : (C)(a % b);
    } else {
      return y == (C)0 ? (C)0 : (C)(x % y);
    }
  }
};
struct bin_pow {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) {
      if constexpr (sizeof(C) == 4) return powf(x, y);
      else return pow(x, y);
    } else if constexpr (CAT == KC_S) {
      return (C)k_ipow_s((int64_t)x, (int64_t)y);
    } else {
      return (C)k_ipow_u((uint64_t)x, (uint64_t)y);
    }
  }
};
struct bin_max {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return K_NAN_MAX(x, y);
    else return x > y ? x : y;
  }
};
struct bin_min {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return K_NAN_MIN(x, y);
    else return x < y ? x : y;
  }
};
struct bin_prelu {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return x < (C)0 ? x * y : x;
    else if constexpr (CAT == KC_S) return x < (C)0 ? (C)((K_W)x * (K_W)y) : x;
    else return x; // never negative
  }
};
// shifting by the width or more gives 0 (numpy)
struct bin_shl {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_U; }
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    return y >= (C)(sizeof(C) * 8) ? (C)0 : (C)((K_W)x << y);
  }
};
struct bin_shr {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_U; }
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    return y >= (C)(sizeof(C) * 8) ? (C)0 : (C)(x >> y);
  }
};

// BitwiseAnd / Or / Xor (ops/elementwise_bitwise.c): every integer dtype, on the
// unsigned bits so no operation touches a sign bit
#define K_BITWISE(sname, OPR)                                                       \
  struct sname {                                                                    \
    static constexpr bool to_bool = false;                                          \
    template <int CAT> static constexpr bool ok() { return CAT == KC_S || CAT == KC_U; } \
    template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {    \
      return (C)((K_W)x OPR (K_W)y);                                                \
    }                                                                               \
  };
K_BITWISE(bin_bitand, &)
K_BITWISE(bin_bitor, |)
K_BITWISE(bin_bitxor, ^)
#undef K_BITWISE

#define K_ARITH_OPS(X)                                                                   \
  X(K_BIN_ADD, bin_add) X(K_BIN_SUB, bin_sub) X(K_BIN_MUL, bin_mul) X(K_BIN_DIV, bin_div) \
  X(K_BIN_MOD, bin_mod) X(K_BIN_FMOD, bin_fmod) X(K_BIN_POW, bin_pow)                    \
  X(K_BIN_MAX, bin_max) X(K_BIN_MIN, bin_min) X(K_BIN_PRELU, bin_prelu)                  \
  X(K_BIN_SHL, bin_shl) X(K_BIN_SHR, bin_shr) X(K_BIN_BITAND, bin_bitand)                \
  X(K_BIN_BITOR, bin_bitor) X(K_BIN_BITXOR, bin_bitxor)

// ---- row broadcast: y [B, M, K] = a op b where one operand is laid out like y and the
// other is [B, 1, K] (or [1, K] against [M, K]): channels-last data times a per-image,
// per-channel vector (squeeze-excitation's [N, H, W, C] * [N, 1, 1, C]) or plus a
// per-channel constant ([1, 1, 1, C]). Through the 2-D launch of k_rows.cuh: 16-byte
// vectors where K and the pointers allow, the small operand's vector loaded once per
// thread, no division per element. The same functor as the general path, so the same
// bits.

template <class F, typename T, int V>
struct bin_rows_f {
  typedef k_vec<T, V> vec;
  typedef vec param;
  typedef vec item;
  F f;
  const T *big, *small;
  T *y;
  int64_t small_b; /* vectors between the small operand's batches (0: one for all) */
  int small_is_a;
  __device__ __forceinline__ param param_at(int64_t b, int c) const {
    return ((const vec *)small)[b * small_b + c];
  }
  __device__ __forceinline__ item load(int64_t i) const { return ((const vec *)big)[i]; }
  __device__ __forceinline__ void store(int64_t i, const item &v, const param &p) const {
    vec r;
#pragma unroll
    for (int e = 0; e < V; e++) {
      const T lhs = small_is_a ? p.v[e] : v.v[e], rhs = small_is_a ? v.v[e] : p.v[e];
      r.v[e] = f(lhs, rhs);
    }
    ((vec *)y)[i] = r;
  }
};

struct bin_rows_shape {
  int64_t nb, m, k;
  int big; /* 0: a is laid out like y, 1: b */
  int per_batch; /* the small operand has a vector per batch */
};

// Whether g is a row broadcast (see above).
static bool bin_rows_match(const k_ew_geom *g, bin_rows_shape *r) {
  if (g->n_in != 2 || g->flat || g->scalar[0] || g->scalar[1]) return false;
  for (int big = 0; big < 2; big++) {
    const int64_t *bs = g->strides[big], *ss = g->strides[1 - big];
    if (g->rank == 2) {
      const int64_t k = g->dims[1];
      if (bs[0] == k && bs[1] == 1 && ss[0] == 0 && ss[1] == 1) {
        *r = {1, g->dims[0], k, big, 0};
        return true;
      }
    } else if (g->rank == 3) {
      const int64_t m = g->dims[1], k = g->dims[2];
      if (bs[0] == m * k && bs[1] == k && bs[2] == 1 && ss[0] == k && ss[1] == 0 && ss[2] == 1) {
        *r = {g->dims[0], m, k, big, 1};
        return true;
      }
    }
  }
  return false;
}

template <class OP, typename T, int V>
static cudaError_t bin_rows_go(const void *a, const void *b, void *y, const bin_rows_shape &r,
                               cudaStream_t s) {
  bin_rows_f<bin_f<OP, T, KC_F>, T, V> f;
  f.big = (const T *)(r.big == 0 ? a : b);
  f.small = (const T *)(r.big == 0 ? b : a);
  f.y = (T *)y;
  f.small_b = r.per_batch ? r.k / V : 0;
  f.small_is_a = r.big == 1;
  return k_rows_run(f, r.nb, r.m, r.k / V, s);
}

// Widths instantiated: 8, 2, 1 halves; 4, 1 floats.
template <class OP, typename T>
static cudaError_t bin_rows_typed(const void *a, const void *b, void *y,
                                  const bin_rows_shape &r, cudaStream_t s) {
  const unsigned widths = sizeof(T) == 2 ? (1u << 8 | 1u << 2) : (1u << 4);
  switch (k_rows_vec(r.k, (int)sizeof(T), widths, a, b, y)) {
    case 8:
      if constexpr (sizeof(T) == 2) return bin_rows_go<OP, T, 8>(a, b, y, r, s);
      break;
    case 4:
      if constexpr (sizeof(T) == 4) return bin_rows_go<OP, T, 4>(a, b, y, r, s);
      break;
    case 2:
      if constexpr (sizeof(T) == 2) return bin_rows_go<OP, T, 2>(a, b, y, r, s);
      break;
    default: break;
  }
  return bin_rows_go<OP, T, 1>(a, b, y, r, s);
}

// The ops the row path has: every float arithmetic op.
template <class OP> static constexpr bool bin_rows_has() {
  return OP::template ok<KC_F>() && !OP::to_bool;
}

template <class OP>
static bool bin_rows_op(int dtype, const void *a, const void *b, void *y,
                        const bin_rows_shape &r, cudaStream_t s, cudaError_t *err) {
  if constexpr (!bin_rows_has<OP>()) {
    return false;
  } else {
    if (dtype == K_F16) *err = bin_rows_typed<OP, __half>(a, b, y, r, s);
    else if (dtype == K_F32) *err = bin_rows_typed<OP, float>(a, b, y, r, s);
    else return false;
    return true;
  }
}

// Runs the row-broadcast path when (op, dtype, g) is one for it: true, *err the launch
// status; false otherwise.
static bool bin_rows_try(int op, int dtype, const void *a, const void *b, void *y,
                         const k_ew_geom *g, cudaStream_t s, cudaError_t *err) {
  bin_rows_shape r;
  if ((dtype != K_F16 && dtype != K_F32) || !bin_rows_match(g, &r) || r.k > 0x7fffffff)
    return false;
  switch (op) {
#define K_CASE(code, sname) \
    case code: return bin_rows_op<sname>(dtype, a, b, y, r, s, err);
    K_ARITH_OPS(K_CASE)
#undef K_CASE
    default: return false;
  }
}

extern "C" int k_ew_binary_rows_applies(int op, int dtype, const k_ew_geom *g) {
  bin_rows_shape r;
  if ((dtype != K_F16 && dtype != K_F32) || !bin_rows_match(g, &r) || r.k > 0x7fffffff) return 0;
  switch (op) {
#define K_CASE(code, sname) \
    case code: return bin_rows_has<sname>();
    K_ARITH_OPS(K_CASE)
#undef K_CASE
    default: return 0;
  }
}

static bool is_compare(int op) { return op >= K_BIN_EQ && op < K_BIN_COUNT; }

extern "C" int k_ew_binary_supported(int op, int dtype) {
  if (is_compare(op)) return k_ew_compare_supported(op, dtype);
  switch (op) {
#define K_CASE(code, sname) case code: return bin_ok<sname>(dtype);
    K_ARITH_OPS(K_CASE)
#undef K_CASE
    default: return 0;
  }
}

extern "C" int k_ew_binary_out_dtype(int op, int dtype) {
  return is_compare(op) ? (int)K_BOOL : dtype;
}

extern "C" cudaError_t k_ew_binary(int op, int dtype, const void *a, const void *b, void *y,
                                   const k_ew_geom *g, cudaStream_t stream) {
  if (g->n_in != 2 || !k_ew_binary_supported(op, dtype)) return cudaErrorInvalidValue;
  if (g->n <= 0) return cudaSuccess;
  if (is_compare(op)) return k_ew_compare(op, dtype, a, b, y, g, stream);
  cudaError_t rows_err;
  if (bin_rows_try(op, dtype, a, b, y, g, stream, &rows_err)) return rows_err;
  switch (op) {
#define K_CASE(code, sname) case code: return bin_run<sname>(dtype, a, b, y, g, stream);
    K_ARITH_OPS(K_CASE)
#undef K_CASE
    default: return cudaErrorInvalidValue;
  }
}
