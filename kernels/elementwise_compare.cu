// elementwise_compare.cu: comparisons (every dtype, bool included) and logic ops
// (bool), all with a bool (uint8 0/1) output. Comparisons with NaN are false.
#include "elementwise_impl.cuh"

#define K_CMP(sname, EXPR)                                                          \
  struct sname {                                                                    \
    static constexpr bool to_bool = true;                                           \
    template <int CAT> static constexpr bool ok() { return true; }                  \
    template <int CAT, typename C> static __device__ __forceinline__ bool f(C x, C y) { \
      return EXPR;                                                                  \
    }                                                                               \
  };
K_CMP(cmp_eq, x == y)
K_CMP(cmp_lt, x < y)
K_CMP(cmp_gt, x > y)
K_CMP(cmp_le, x <= y)
K_CMP(cmp_ge, x >= y)
#undef K_CMP

#define K_LOGIC(sname, EXPR)                                                        \
  struct sname {                                                                    \
    static constexpr bool to_bool = true;                                           \
    template <int CAT> static constexpr bool ok() { return CAT == KC_B; }           \
    template <int CAT, typename C> static __device__ __forceinline__ bool f(C x, C y) { \
      return EXPR;                                                                  \
    }                                                                               \
  };
K_LOGIC(logic_and, (x != 0) && (y != 0))
K_LOGIC(logic_or, (x != 0) || (y != 0))
K_LOGIC(logic_xor, (x != 0) != (y != 0))
#undef K_LOGIC

#define K_COMPARE_OPS(X)                                                                  \
  X(K_BIN_EQ, cmp_eq) X(K_BIN_LT, cmp_lt) X(K_BIN_GT, cmp_gt) X(K_BIN_LE, cmp_le)          \
  X(K_BIN_GE, cmp_ge) X(K_BIN_AND, logic_and) X(K_BIN_OR, logic_or) X(K_BIN_XOR, logic_xor)

int k_ew_compare_supported(int op, int dtype) {
  switch (op) {
#define K_CASE(code, sname) case code: return bin_ok<sname>(dtype);
    K_COMPARE_OPS(K_CASE)
#undef K_CASE
    default: return 0;
  }
}

cudaError_t k_ew_compare(int op, int dtype, const void *a, const void *b, void *y,
                         const k_ew_geom *g, cudaStream_t stream) {
  switch (op) {
#define K_CASE(code, sname) case code: return bin_run<sname>(dtype, a, b, y, g, stream);
    K_COMPARE_OPS(K_CASE)
#undef K_CASE
    default: return cudaErrorInvalidValue;
  }
}
