// elementwise_binary.cu: two-input arithmetic (Add, Sub, Mul, Div, Mod, Pow, Max,
// Min, PRelu, BitShift, BitwiseAnd / Or / Xor) and the binary entry points. Semantics follow
// ops/elementwise_arith.c: integer + - * wrap (computed in a wide unsigned type),
// Div truncates toward zero, division or modulo by zero gives 0, INT_MIN / -1
// wraps; Max / Min propagate NaN.
#include "elementwise_impl.cuh"

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
    if constexpr (CAT == KC_F) return (x > y || x != x) ? x : y;
    else return x > y ? x : y;
  }
};
struct bin_min {
  static constexpr bool to_bool = false;
  K_NUMERIC_OK
  template <int CAT, typename C> static __device__ __forceinline__ C f(C x, C y) {
    if constexpr (CAT == KC_F) return (x < y || x != x) ? x : y;
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
  switch (op) {
#define K_CASE(code, sname) case code: return bin_run<sname>(dtype, a, b, y, g, stream);
    K_ARITH_OPS(K_CASE)
#undef K_CASE
    default: return cudaErrorInvalidValue;
  }
}
