// elementwise_unary.cu: one-input ops (math functions, activations, IsNaN /
// IsInf, Not, BitwiseNot), and SwiGLU (Swish of one input times the other).
// Each op is a struct: ok<CAT>() says which dtype categories it takes,
// f<CAT>(x, p) computes on the compute type (float for f32 / f16 / bf16, double
// for f64, the type itself for integers), to_bool gives a bool output.
// The expressions follow ops/elementwise_unary.c and ops/activation_unary.c.
#include "elementwise_impl.cuh"

// float / double overloads of the libm functions used below
#define KM1(name)                                                                  \
  __device__ __forceinline__ float km_##name(float x) { return name##f(x); }       \
  __device__ __forceinline__ double km_##name(double x) { return name(x); }
KM1(sqrt) KM1(exp) KM1(log) KM1(floor) KM1(ceil) KM1(erf) KM1(rint) KM1(sin) KM1(cos)
KM1(tan) KM1(asin) KM1(acos) KM1(atan) KM1(sinh) KM1(cosh) KM1(asinh) KM1(acosh) KM1(atanh)
KM1(tanh) KM1(expm1) KM1(log1p) KM1(fabs)
#undef KM1

#define K_HARD01(v) ((v) < (C)0 ? (C)0 : (v) > (C)1 ? (C)1 : (v))
#define K_SOFTPLUS(x) ((x) > (C)0 ? (x) + km_log1p(km_exp(-(x))) : km_log1p(km_exp(x)))

// A float-only op computing EXPR (sees x, p and the compute type C).
#define K_UN_FLOAT(sname, EXPR)                                                     \
  struct sname {                                                                    \
    static constexpr bool to_bool = false;                                          \
    template <int CAT> static constexpr bool ok() { return CAT == KC_F; }           \
    template <int CAT, typename C>                                                  \
    static __device__ __forceinline__ C f(C x, const k_ew_params &p) {              \
      return (C)(EXPR);                                                             \
    }                                                                               \
  };

K_UN_FLOAT(un_sqrt, km_sqrt(x))
K_UN_FLOAT(un_exp, km_exp(x))
K_UN_FLOAT(un_log, km_log(x))
K_UN_FLOAT(un_reciprocal, (C)1 / x)
K_UN_FLOAT(un_floor, km_floor(x))
K_UN_FLOAT(un_ceil, km_ceil(x))
K_UN_FLOAT(un_erf, km_erf(x))
K_UN_FLOAT(un_round, km_rint(x)) // halves to even, like numpy.round
K_UN_FLOAT(un_sin, km_sin(x))
K_UN_FLOAT(un_cos, km_cos(x))
K_UN_FLOAT(un_tan, km_tan(x))
K_UN_FLOAT(un_asin, km_asin(x))
K_UN_FLOAT(un_acos, km_acos(x))
K_UN_FLOAT(un_atan, km_atan(x))
K_UN_FLOAT(un_sinh, km_sinh(x))
K_UN_FLOAT(un_cosh, km_cosh(x))
K_UN_FLOAT(un_asinh, km_asinh(x))
K_UN_FLOAT(un_acosh, km_acosh(x))
K_UN_FLOAT(un_atanh, km_atanh(x))
K_UN_FLOAT(un_leaky_relu, x < (C)0 ? (C)p.alpha * x : x)
// when exp(-x) overflows, 1 / inf = 0 is the right limit
K_UN_FLOAT(un_sigmoid, (C)1 / ((C)1 + km_exp(-x)))
K_UN_FLOAT(un_tanh, km_tanh(x))
K_UN_FLOAT(un_hard_sigmoid, K_HARD01((C)p.alpha * x + (C)p.beta))
K_UN_FLOAT(un_hard_swish, x * K_HARD01(x * (C)(1.0 / 6.0) + (C)0.5))
K_UN_FLOAT(un_gelu, p.mode == 0
                        ? (C)0.5 * x * ((C)1 + km_erf(x * (C)0.70710678118654752440))
                        : (C)0.5 * x *
                              ((C)1 + km_tanh((C)0.79788456080286535588 *
                                              (x + (C)0.044715 * x * x * x))))
K_UN_FLOAT(un_softplus, K_SOFTPLUS(x))
K_UN_FLOAT(un_softsign, x / ((C)1 + km_fabs(x)))
K_UN_FLOAT(un_mish, x * km_tanh(K_SOFTPLUS(x)))
K_UN_FLOAT(un_elu, x < (C)0 ? (C)p.alpha * km_expm1(x) : x)
K_UN_FLOAT(un_selu, x <= (C)0 ? (C)p.gamma * ((C)p.alpha * km_exp(x) - (C)p.alpha)
                              : (C)p.gamma * x)
K_UN_FLOAT(un_celu, x < (C)0 ? (C)p.alpha * km_expm1(x / (C)p.alpha) : x)
K_UN_FLOAT(un_thresholded_relu, (x > (C)p.alpha || x != x) ? x : (C)0) // NaN passes
K_UN_FLOAT(un_div_scalar, x / (C)p.alpha)
K_UN_FLOAT(un_swish, x * ((C)1 / ((C)1 + km_exp(-((C)p.alpha * x)))))
// alpha: lambd, beta: bias; NaN gives 0, as on the CPU
K_UN_FLOAT(un_shrink, x < -(C)p.alpha  ? x + (C)p.beta
                      : x > (C)p.alpha ? x - (C)p.beta
                                       : (C)0)

// float -> bool
struct un_isnan {
  static constexpr bool to_bool = true;
  template <int CAT> static constexpr bool ok() { return CAT == KC_F; }
  template <int CAT, typename C>
  static __device__ __forceinline__ bool f(C x, const k_ew_params &p) { return x != x; }
};
struct un_isinf {
  static constexpr bool to_bool = true;
  template <int CAT> static constexpr bool ok() { return CAT == KC_F; }
  template <int CAT, typename C>
  static __device__ __forceinline__ bool f(C x, const k_ew_params &p) {
    return isinf(x) && (x > (C)0 ? (p.mode & 1) != 0 : (p.mode & 2) != 0);
  }
};

// Integer negation wraps (INT_MIN stays INT_MIN) through the wide unsigned type.
struct un_neg {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_F || CAT == KC_S; }
  template <int CAT, typename C>
  static __device__ __forceinline__ C f(C x, const k_ew_params &p) {
    if constexpr (CAT == KC_F) return -x;
    else return (C)((typename k_wide<C>::type)0 - (typename k_wide<C>::type)x);
  }
};
struct un_relu {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_F || CAT == KC_S; }
  template <int CAT, typename C>
  static __device__ __forceinline__ C f(C x, const k_ew_params &p) { return (C)K_NAN_RELU(x); }
};
struct un_abs {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_F || CAT == KC_S || CAT == KC_U; }
  template <int CAT, typename C>
  static __device__ __forceinline__ C f(C x, const k_ew_params &p) {
    if constexpr (CAT == KC_F) return km_fabs(x);
    else if constexpr (CAT == KC_S)
      return x < (C)0 ? (C)((typename k_wide<C>::type)0 - (typename k_wide<C>::type)x) : x;
    else return x;
  }
};
// NaN stays NaN (numpy.sign)
struct un_sign {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_F || CAT == KC_S || CAT == KC_U; }
  template <int CAT, typename C>
  static __device__ __forceinline__ C f(C x, const k_ew_params &p) {
    if constexpr (CAT == KC_F) return x != x ? x : (C)((x > (C)0) - (x < (C)0));
    else if constexpr (CAT == KC_S) return (C)((x > (C)0) - (x < (C)0));
    else return (C)(x > (C)0);
  }
};
// on the unsigned bits (ops/elementwise_bitwise.c)
struct un_bitnot {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_S || CAT == KC_U; }
  template <int CAT, typename C>
  static __device__ __forceinline__ C f(C x, const k_ew_params &p) {
    return (C)~(typename k_wide<C>::type)x;
  }
};
struct un_not {
  static constexpr bool to_bool = false;
  template <int CAT> static constexpr bool ok() { return CAT == KC_B; }
  template <int CAT, typename C>
  static __device__ __forceinline__ C f(C x, const k_ew_params &p) { return (C)(x == 0); }
};

// ---- functor, dispatch -------------------------------------------------------------------

template <class OP, typename T, int CAT> struct un_f {
  typedef typename std::conditional<OP::to_bool, uint8_t, T>::type O;
  k_ew_params p;
  __device__ __forceinline__ void init() {}
  __device__ __forceinline__ O operator()(T v) const {
    return k_store<O>::cv(OP::template f<CAT>(k_ld<T>(v), p));
  }
};

template <class OP, typename T, int CAT>
static cudaError_t un_typed(const void *x, void *y, int64_t n, const k_ew_params *p,
                            cudaStream_t s) {
  if constexpr (!OP::template ok<CAT>()) {
    return cudaErrorInvalidValue;
  } else {
    typedef un_f<OP, T, CAT> F;
    F f;
    f.p = *p;
    return k_ew_map_launch<F, T, typename F::O>(f, x, y, n, s);
  }
}

template <class OP> static int un_ok(int dt) {
#define K_OK(T, CAT) return OP::template ok<CAT>();
  K_EW_DISPATCH(dt, K_OK, return 0)
#undef K_OK
  return 0;
}

template <class OP>
static cudaError_t un_run(int dt, const void *x, void *y, int64_t n, const k_ew_params *p,
                          cudaStream_t s) {
#define K_RUN(T, CAT) return un_typed<OP, T, CAT>(x, y, n, p, s);
  K_EW_DISPATCH(dt, K_RUN, return cudaErrorInvalidValue)
#undef K_RUN
  return cudaErrorInvalidValue;
}

#define K_UNARY_OPS(X)                                                                  \
  X(K_UN_SQRT, un_sqrt) X(K_UN_EXP, un_exp) X(K_UN_LOG, un_log)                         \
  X(K_UN_RECIPROCAL, un_reciprocal) X(K_UN_FLOOR, un_floor) X(K_UN_CEIL, un_ceil)       \
  X(K_UN_ERF, un_erf) X(K_UN_ROUND, un_round) X(K_UN_SIN, un_sin) X(K_UN_COS, un_cos)   \
  X(K_UN_TAN, un_tan) X(K_UN_ASIN, un_asin) X(K_UN_ACOS, un_acos) X(K_UN_ATAN, un_atan) \
  X(K_UN_SINH, un_sinh) X(K_UN_COSH, un_cosh) X(K_UN_ASINH, un_asinh)                   \
  X(K_UN_ACOSH, un_acosh) X(K_UN_ATANH, un_atanh) X(K_UN_LEAKY_RELU, un_leaky_relu)     \
  X(K_UN_SIGMOID, un_sigmoid) X(K_UN_TANH, un_tanh)                                     \
  X(K_UN_HARD_SIGMOID, un_hard_sigmoid) X(K_UN_HARD_SWISH, un_hard_swish)               \
  X(K_UN_GELU, un_gelu) X(K_UN_SOFTPLUS, un_softplus) X(K_UN_SOFTSIGN, un_softsign)     \
  X(K_UN_MISH, un_mish) X(K_UN_ELU, un_elu) X(K_UN_SELU, un_selu) X(K_UN_CELU, un_celu) \
  X(K_UN_THRESHOLDED_RELU, un_thresholded_relu) X(K_UN_DIV_SCALAR, un_div_scalar)       \
  X(K_UN_SWISH, un_swish) X(K_UN_SHRINK, un_shrink)                                     \
  X(K_UN_ISNAN, un_isnan) X(K_UN_ISINF, un_isinf) X(K_UN_NEG, un_neg)                   \
  X(K_UN_RELU, un_relu) X(K_UN_ABS, un_abs) X(K_UN_SIGN, un_sign)                       \
  X(K_UN_BITNOT, un_bitnot) X(K_UN_NOT, un_not)

extern "C" int k_ew_unary_supported(int op, int dtype) {
  switch (op) {
#define K_CASE(code, sname) case code: return un_ok<sname>(dtype);
    K_UNARY_OPS(K_CASE)
#undef K_CASE
    default: return 0;
  }
}

extern "C" int k_ew_unary_out_dtype(int op, int dtype) {
  switch (op) {
#define K_CASE(code, sname) case code: return sname::to_bool ? (int)K_BOOL : dtype;
    K_UNARY_OPS(K_CASE)
#undef K_CASE
    default: return dtype;
  }
}

extern "C" cudaError_t k_ew_unary(int op, int dtype, const void *x, void *y, int64_t n,
                                  const k_ew_params *p, cudaStream_t stream) {
  if (n <= 0) return k_ew_unary_supported(op, dtype) ? cudaSuccess : cudaErrorInvalidValue;
  switch (op) {
#define K_CASE(code, sname) case code: return un_run<sname>(dtype, x, y, n, p, stream);
    K_UNARY_OPS(K_CASE)
#undef K_CASE
    default: return cudaErrorInvalidValue;
  }
}

// ---- SwiGLU -------------------------------------------------------------------------------
// y = store(ld(store(swish(a))) * ld(b)): swish(a) rounds to T first, as the CPU op
// (Swish into y, then y *= b) and the ONNX function body do.

template <typename T> struct swiglu_f {
  typedef typename k_ct<T>::type C;
  k_ew_params p;
  __device__ __forceinline__ void init() {}
  __device__ __forceinline__ T operator()(T a, T b) const {
    T sw = k_store<T>::cv(un_swish::f<KC_F>(k_ld<T>(a), p));
    return k_store<T>::cv(k_ld<T>(sw) * k_ld<T>(b));
  }
};

extern "C" int k_ew_swiglu_supported(int dtype) { return un_ok<un_swish>(dtype); }

extern "C" cudaError_t k_ew_swiglu(int dtype, const void *a, const void *b, void *y, int64_t n,
                                   float alpha, cudaStream_t stream) {
  if (!k_ew_swiglu_supported(dtype)) return cudaErrorInvalidValue;
  if (n <= 0) return cudaSuccess;
#define K_RUN(T, CAT)                                                                      \
  {                                                                                        \
    swiglu_f<T> f;                                                                         \
    f.p = k_ew_params{alpha, 0.0f, 0.0f, 0};                                               \
    return k_ew_zip_flat_launch<swiglu_f<T>, T, T>(f, a, b, y, n, 0, 0, stream);           \
  }
  switch (dtype) {
    case K_F32: K_RUN(float, KC_F)
    case K_F16: K_RUN(__half, KC_F)
    case K_BF16: K_RUN(__nv_bfloat16, KC_F)
    case K_F64: K_RUN(double, KC_F)
    default: return cudaErrorInvalidValue;
  }
#undef K_RUN
}
