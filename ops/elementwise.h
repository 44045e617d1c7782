/* elementwise.h: machinery shared by the elementwise and activation families:
 * the broadcast row iterator, per-dtype kernel tables, kernel-generating macros
 * and scalar dtype conversions. Internal to ops/.
 *
 * Kernels work on one "row": the innermost run of elements after broadcast dims
 * are coalesced. The output row is always contiguous; an input row has element
 * stride 1 (same shape), 0 (broadcast) or other (rare). So equal shapes give one
 * call over the whole tensor with no per-element index math. */
#ifndef INFER_OPS_ELEMENTWISE_H
#define INFER_OPS_ELEMENTWISE_H

#include "elementwise_params.h"
#include "op.h"

/* GCC at -O2 (the RelWithDebInfo default) uses the "very cheap" vectorizer cost
 * model, which never vectorizes a loop whose trip count is unknown, i.e. every
 * kernel here. These loops are the CPU backend's bandwidth-bound path, so the
 * files that include this header ask for the normal cost model. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* ---- dtype sets ------------------------------------------------------------ */

#define EW_DTYPE_SLOTS 17 /* kernel tables are indexed by infer_dtype (<= 16) */
#define EW_BIT(dt) (1u << (dt))
#define EW_FLOATS                                                         \
  (EW_BIT(INFER_DTYPE_FLOAT32) | EW_BIT(INFER_DTYPE_FLOAT64) |            \
   EW_BIT(INFER_DTYPE_FLOAT16) | EW_BIT(INFER_DTYPE_BFLOAT16))
#define EW_SINTS                                                        \
  (EW_BIT(INFER_DTYPE_INT8) | EW_BIT(INFER_DTYPE_INT16) | EW_BIT(INFER_DTYPE_INT32) | \
   EW_BIT(INFER_DTYPE_INT64))
#define EW_UINTS                                                          \
  (EW_BIT(INFER_DTYPE_UINT8) | EW_BIT(INFER_DTYPE_UINT16) | EW_BIT(INFER_DTYPE_UINT32) | \
   EW_BIT(INFER_DTYPE_UINT64))
#define EW_BOOL EW_BIT(INFER_DTYPE_BOOL)
#define EW_NUMERIC (EW_FLOATS | EW_SINTS | EW_UINTS)
#define EW_ALL (EW_NUMERIC | EW_BOOL)

/* Name of an ONNX element type this engine does not have ("float8e4m3fn", "int4",
 * ...; "unknown" otherwise), for messages (ops/elementwise_cast.c). */
const char *onnx_type_name(int64_t t);
/* True for the dtypes this family computes on (not string, not unknown). */
bool ew_dtype_known(infer_dtype dt);
/* INFER_ERR_UNSUPPORTED naming op, role ("input"...) and dtype unless dt is in mask. */
infer_status ew_check_dtype(const char *op, const char *role, infer_dtype dt, unsigned mask);

/* ---- the broadcast row iterator ------------------------------------------------ */

#define EW_MAX_OPERANDS 4 /* output + up to 3 inputs (Where) */

typedef struct ew_iter {
  int n_ops;  /* operands: [0] the output, then the inputs */
  int rank;   /* after dropping 1-dims and merging contiguous dims; >= 1 */
  int64_t dims[INFER_MAX_RANK];
  int64_t bstride[EW_MAX_OPERANDS][INFER_MAX_RANK]; /* bytes, per dim */
  int64_t idx[INFER_MAX_RANK];
  int64_t rows_left;
  /* the current row: */
  char *ptr[EW_MAX_OPERANDS];
  int64_t n;                      /* elements in the row */
  int64_t inner[EW_MAX_OPERANDS]; /* element stride within the row (ptr[0]: 1) */
} ew_iter;

/* Sets up iteration over out (C-ordered) with each input broadcast to out's shape
 * (the caller checked that they broadcast). Returns false when out is empty.
 * Usage: if (ew_iter_init(&it, out, 2, in)) do { ...row... } while (ew_iter_next(&it)); */
bool ew_iter_init(ew_iter *it, tensor *out, int n_in, const tensor *const *in);
bool ew_iter_next(ew_iter *it);

/* Broadcast shape of in[0..n) into out (rank, dims); INVALID_MODEL naming op if
 * they do not broadcast. */
infer_status ew_broadcast_all(const char *op, int n, const tensor *const *in, tensor *out);
/* Infer for a binary op with numpy broadcasting: both inputs of one dtype in
 * mask; the output has that dtype, or out_dt when it is not UNDEFINED. */
infer_status ew_binary_infer(const char *op, unsigned mask, infer_dtype out_dt,
                             const tensor *const *in, tensor *const *out);
/* Requires all present in[i] to share in[0]'s dtype. */
infer_status ew_same_dtypes(const char *op, int n, const tensor *const *in);
/* out gets in's dtype/rank/dims. */
void ew_copy_shape(tensor *out, const tensor *in, infer_dtype dt);

/* ---- kernels ----------------------------------------------------------------------- */

/* o[i] = f(a[i*sa], b[i*sb]) for i < n. */
typedef void (*ew_binary_fn)(void *o, const void *a, const void *b, int64_t n, int64_t sa,
                             int64_t sb);
/* Runs a binary kernel table over broadcast inputs a, b into out. */
infer_status ew_run_binary(const ew_binary_fn *table, const char *op, const tensor *a,
                           const tensor *b, tensor *out);

/* Descriptor boilerplate for a two-input op run by one kernel table. */
#define EW_BINARY_OP(var, NAME, SINCE, UNTIL, TABLE, MASK, OUT_DT)                          \
  static infer_status var##_infer(const node *n, const void *p, const tensor *const *in,   \
                                  tensor *const *out) {                                    \
    return ew_binary_infer(NAME, MASK, OUT_DT, in, out);                                   \
  }                                                                                        \
  static infer_status var##_run(const node *n, const void *p, const tensor *const *in,     \
                                tensor *const *out, void *ws) {                            \
    return ew_run_binary(TABLE, NAME, in[0], in[1], out[0]);                               \
  }                                                                                        \
  const op_desc var = {.name = NAME, .domain = "", .since = SINCE, .until = UNTIL,         \
                       .min_inputs = 2, .max_inputs = 2, .min_outputs = 1,                 \
                       .max_outputs = 1, .infer = var##_infer, .run = var##_run}

/* Kernels take the op's ew_unary_params (elementwise_params.h) as they are. */
/* o[i] = f(a[i]) for i < n, contiguous; o may equal a. */
typedef void (*ew_unary_fn)(void *o, const void *a, int64_t n, const ew_unary_params *p);

/* A unary op: per-dtype kernels; the output dtype is the input's, or out_dtype. */
typedef struct ew_unary_impl {
  const char *name;
  ew_unary_fn fn[EW_DTYPE_SLOTS];
  infer_dtype out_dtype; /* UNDEFINED: same as the input */
} ew_unary_impl;

infer_status ew_unary_infer(const ew_unary_impl *u, const tensor *const *in, tensor *const *out);
infer_status ew_unary_run(const ew_unary_impl *u, const void *params, const tensor *const *in,
                          tensor *const *out);
/* float16 / bfloat16 kernels: converts chunks to float, runs the float kernel. */
void ew_unary_via_f32(void *o, const void *a, int64_t n, const ew_unary_params *p,
                      infer_dtype dt, ew_unary_fn f32_fn);

/* Descriptor boilerplate for a unary op driven by an ew_unary_impl. */
#define EW_UNARY_OP(var, NAME, SINCE, UNTIL, IMPL, ATTRS, PARSE)                           \
  static infer_status var##_infer(const node *n, const void *p, const tensor *const *in,   \
                                  tensor *const *out) {                                    \
    return ew_unary_infer(&IMPL, in, out);                                                 \
  }                                                                                        \
  static infer_status var##_run(const node *n, const void *p, const tensor *const *in,     \
                                tensor *const *out, void *ws) {                            \
    return ew_unary_run(&IMPL, p, in, out);                                                \
  }                                                                                        \
  const op_desc var = {.name = NAME, .domain = "", .since = SINCE, .until = UNTIL,         \
                       .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,                 \
                       .max_outputs = 1, .attrs = ATTRS, .parse = PARSE,                   \
                       .infer = var##_infer, .run = var##_run}

/* ---- kernel generation -------------------------------------------------------------
 * Type lists call X(sfx, DT, T, U, C, LD, ST, ...): storage type T, wide unsigned U
 * for wrapping integer arithmetic (at least unsigned int, so no promotion to a
 * signed int can overflow), compute type C, load LD(v) -> C, store ST(T, v) -> T.
 * Expressions see x, y (type C) and the typedefs T, U. */

#define EW_LD_ID(v) (v)
#define EW_ST_CAST(T, v) ((T)(v))
#define EW_ST_HALF(T, v) float_to_half(v)
#define EW_ST_BF16(T, v) float_to_bf16(v)

#define EW_FLOAT_TYPES(X, ...)                                                          \
  X(f32, FLOAT32, float, float, float, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)              \
  X(f64, FLOAT64, double, double, double, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)           \
  X(f16, FLOAT16, uint16_t, float, float, half_to_float, EW_ST_HALF, __VA_ARGS__)      \
  X(bf16, BFLOAT16, uint16_t, float, float, bf16_to_float, EW_ST_BF16, __VA_ARGS__)
#define EW_SINT_TYPES(X, ...)                                                           \
  X(i8, INT8, int8_t, uint32_t, int8_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)             \
  X(i16, INT16, int16_t, uint32_t, int16_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)         \
  X(i32, INT32, int32_t, uint32_t, int32_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)         \
  X(i64, INT64, int64_t, uint64_t, int64_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)
#define EW_UINT_TYPES(X, ...)                                                           \
  X(u8, UINT8, uint8_t, uint32_t, uint8_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)          \
  X(u16, UINT16, uint16_t, uint32_t, uint16_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)      \
  X(u32, UINT32, uint32_t, uint32_t, uint32_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)      \
  X(u64, UINT64, uint64_t, uint64_t, uint64_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)
#define EW_BOOL_TYPES(X, ...) \
  X(b, BOOL, uint8_t, uint32_t, uint8_t, EW_LD_ID, EW_ST_CAST, __VA_ARGS__)

#define EW_UNUSED __attribute__((unused))

/* One binary kernel, specialized for the common stride patterns so the
 * equal-shape and scalar-broadcast loops are plain (vectorizable) loops. */
#define EW_BIN_KERNEL(kname, TT, UT, CT, LD, OT, ST, EXPR)                                \
  static void kname(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa,     \
                    int64_t sb) {                                                        \
    typedef TT T EW_UNUSED;                                                              \
    typedef UT U EW_UNUSED;                                                              \
    OT *o = o_;                                                                          \
    const TT *a = a_, *b = b_;                                                           \
    if (sa == 1 && sb == 1) {                                                            \
      for (int64_t i = 0; i < n; i++) {                                                  \
        CT x = LD(a[i]), y = LD(b[i]);                                                   \
        o[i] = ST(OT, EXPR);                                                             \
      }                                                                                  \
    } else if (sa == 1 && sb == 0) {                                                     \
      CT y = LD(b[0]);                                                                   \
      for (int64_t i = 0; i < n; i++) {                                                  \
        CT x = LD(a[i]);                                                                 \
        o[i] = ST(OT, EXPR);                                                             \
      }                                                                                  \
    } else if (sa == 0 && sb == 1) {                                                     \
      CT x = LD(a[0]);                                                                   \
      for (int64_t i = 0; i < n; i++) {                                                  \
        CT y = LD(b[i]);                                                                 \
        o[i] = ST(OT, EXPR);                                                             \
      }                                                                                  \
    } else {                                                                             \
      for (int64_t i = 0; i < n; i++) {                                                  \
        CT x = LD(a[i * sa]), y = LD(b[i * sb]);                                         \
        o[i] = ST(OT, EXPR);                                                             \
      }                                                                                  \
    }                                                                                    \
  }

/* X callbacks: arithmetic (output type = input type), comparison (bool output),
 * and the table entry. Usage:
 *   EW_FLOAT_TYPES(EW_ARITH_X, add, x + y)
 *   static const ew_binary_fn add_table[EW_DTYPE_SLOTS] = {EW_FLOAT_TYPES(EW_ENTRY_X, add, 0)}; */
#define EW_ARITH_X(sfx, DT, TT, UT, CT, LD, ST, name, EXPR) \
  EW_BIN_KERNEL(name##_##sfx, TT, UT, CT, LD, TT, ST, EXPR)
#define EW_CMP_X(sfx, DT, TT, UT, CT, LD, ST, name, EXPR) \
  EW_BIN_KERNEL(name##_##sfx, TT, UT, CT, LD, uint8_t, EW_ST_CAST, EXPR)
#define EW_ENTRY_X(sfx, DT, TT, UT, CT, LD, ST, name, unused) [INFER_DTYPE_##DT] = name##_##sfx,

/* Unary kernels. Float ones: the file includes <tgmath.h> so EXPR's math
 * functions follow the type (expf for float); f16/bf16 run the float kernel on
 * converted chunks. EXPR sees x (type T) and p (const ew_unary_params *). */
#define EW_UNARY_FLOAT_KERNELS(name, EXPR)                                                \
  static void name##_f32(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    typedef float T EW_UNUSED;                                                            \
    float *o = o_;                                                                        \
    const float *a = a_;                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                     \
      T x = a[i];                                                                         \
      o[i] = (T)(EXPR);                                                                   \
    }                                                                                     \
  }                                                                                       \
  static void name##_f64(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    typedef double T EW_UNUSED;                                                           \
    double *o = o_;                                                                       \
    const double *a = a_;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                     \
      T x = a[i];                                                                         \
      o[i] = (T)(EXPR);                                                                   \
    }                                                                                     \
  }                                                                                       \
  static void name##_f16(void *o, const void *a, int64_t n, const ew_unary_params *p) {   \
    ew_unary_via_f32(o, a, n, p, INFER_DTYPE_FLOAT16, name##_f32);                        \
  }                                                                                       \
  static void name##_bf16(void *o, const void *a, int64_t n, const ew_unary_params *p) {  \
    ew_unary_via_f32(o, a, n, p, INFER_DTYPE_BFLOAT16, name##_f32);                       \
  }
#define EW_UNARY_FLOAT_ENTRIES(name)                                       \
  [INFER_DTYPE_FLOAT32] = name##_f32, [INFER_DTYPE_FLOAT64] = name##_f64, \
  [INFER_DTYPE_FLOAT16] = name##_f16, [INFER_DTYPE_BFLOAT16] = name##_bf16
/* Integer unary kernels via the type lists: EXPR sees x (type T) and U. */
#define EW_UNARY_INT_X(sfx, DT, TT, UT, CT, LD, ST, name, EXPR)                             \
  static void name##_##sfx(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    typedef TT T EW_UNUSED;                                                                 \
    typedef UT U EW_UNUSED;                                                                 \
    TT *o = o_;                                                                             \
    const TT *a = a_;                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
      T x = a[i];                                                                           \
      o[i] = (T)(EXPR);                                                                     \
    }                                                                                       \
  }
#define EW_UNARY_ENTRY_X(sfx, DT, TT, UT, CT, LD, ST, name, unused) \
  [INFER_DTYPE_##DT] = name##_##sfx,

/* Kernels shared between files: Add (elementwise_arith.c; Sum uses it), Mul
 * (SwiGLU), Swish (activation_unary.c; SwiGLU). */
extern const ew_binary_fn ew_add_table[EW_DTYPE_SLOTS];
extern const ew_binary_fn ew_mul_table[EW_DTYPE_SLOTS];
extern const ew_unary_impl ew_swish_impl;

/* ---- scalar conversions (elementwise_convert.c) -------------------------------------- */

/* Element i of p (dtype dt) as double / as int64 (uint64 values keep their bits). */
double ew_load_f64(infer_dtype dt, const void *p, int64_t i);
int64_t ew_load_i64(infer_dtype dt, const void *p, int64_t i);
/* Stores v into element i: floats round to nearest (double -> half without double
 * rounding), integers saturate (NaN -> 0), bool is v != 0. */
void ew_store_f64(infer_dtype dt, void *p, int64_t i, double v);
/* Stores an integer value: floats convert, integers wrap (two's complement). */
void ew_store_i64(infer_dtype dt, void *p, int64_t i, int64_t v, bool is_unsigned);
/* double -> float16 with a single rounding. */
uint16_t ew_f64_to_half(double d);
uint16_t ew_f64_to_bf16(double d);
/* Copies n elements converting from dtype sdt to ddt (Cast semantics). */
void ew_convert(infer_dtype ddt, void *dst, infer_dtype sdt, const void *src, int64_t n);

#endif
