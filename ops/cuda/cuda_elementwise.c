/* cuda_elementwise.c: the GPU side of the elementwise and activation families
 * (ops/elementwise*.c, ops/activation*.c): one table maps each op to a kernel of
 * kernels/elementwise.h (or Cast's k_cast); prepare takes the attributes from the
 * CPU op's params (ops/elementwise_params.h, ops/activation_params.h), checks the
 * dtypes and computes the broadcast geometry once, run only launches.
 *
 * Variadic Sum / Mean / Max / Min accumulate pairwise into the output
 * (out = in0 op in1, then out = out op in_k), as the CPU op does; Mean then
 * divides by the input count.
 *
 * BitCast is a device copy, except under fp16 storage where one side of a
 * float32 <-> 4-byte integer reinterpretation is stored as float16: the float
 * then goes through k_cast between float16 and the float32 bits. */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/cast.h"
#include "../../kernels/elementwise.h"
#include "../activation_params.h"
#include "../cuda_op.h"

typedef enum ew_kind {
  EW_UNARY,    /* kop: k_ew_unary_op */
  EW_BINARY,   /* kop: k_ew_binary_op */
  EW_MOD,      /* binary, fmod attribute picks MOD / FMOD */
  EW_SHIFT,    /* binary, direction attribute picks SHL / SHR */
  EW_POW,      /* binary POW, or the mixed-dtype kernel */
  EW_VARIADIC, /* kop: binary op folded over the inputs */
  EW_MEAN,     /* ADD folded, then a division */
  EW_CLIP,
  EW_WHERE,
  EW_CAST,    /* Cast and CastLike: the output's dtype */
  EW_BITCAST, /* the bits as attribute `to`'s dtype */
  EW_SWIGLU   /* swish(in0) * in1, same shapes */
} ew_kind;

typedef struct ew_entry {
  const char *name;
  ew_kind kind;
  int kop;
} ew_entry;

/* id, ONNX name, kind, kernel op. Attribute values (and their defaults) come from
 * the CPU op's params (ops/elementwise_params.h, ops/activation_params.h). */
#define EW_OPS(X) \
  X(add, "Add", EW_BINARY, K_BIN_ADD)                                                     \
  X(sub, "Sub", EW_BINARY, K_BIN_SUB)                                                     \
  X(mul, "Mul", EW_BINARY, K_BIN_MUL)                                                     \
  X(div, "Div", EW_BINARY, K_BIN_DIV)                                                     \
  X(pow, "Pow", EW_POW, K_BIN_POW)                                                        \
  X(mod, "Mod", EW_MOD, K_BIN_MOD)                                                        \
  X(bitshift, "BitShift", EW_SHIFT, K_BIN_SHL)                                            \
  X(max, "Max", EW_VARIADIC, K_BIN_MAX)                                                   \
  X(min, "Min", EW_VARIADIC, K_BIN_MIN)                                                   \
  X(sum, "Sum", EW_VARIADIC, K_BIN_ADD)                                                   \
  X(mean, "Mean", EW_MEAN, K_BIN_ADD)                                                     \
  X(equal, "Equal", EW_BINARY, K_BIN_EQ)                                                  \
  X(less, "Less", EW_BINARY, K_BIN_LT)                                                    \
  X(greater, "Greater", EW_BINARY, K_BIN_GT)                                              \
  X(less_equal, "LessOrEqual", EW_BINARY, K_BIN_LE)                                       \
  X(greater_equal, "GreaterOrEqual", EW_BINARY, K_BIN_GE)                                 \
  X(and, "And", EW_BINARY, K_BIN_AND)                                                     \
  X(or, "Or", EW_BINARY, K_BIN_OR)                                                        \
  X(xor, "Xor", EW_BINARY, K_BIN_XOR)                                                     \
  X(not, "Not", EW_UNARY, K_UN_NOT)                                                       \
  X(where, "Where", EW_WHERE, 0)                                                          \
  X(sqrt, "Sqrt", EW_UNARY, K_UN_SQRT)                                                    \
  X(exp, "Exp", EW_UNARY, K_UN_EXP)                                                       \
  X(log, "Log", EW_UNARY, K_UN_LOG)                                                       \
  X(neg, "Neg", EW_UNARY, K_UN_NEG)                                                       \
  X(abs, "Abs", EW_UNARY, K_UN_ABS)                                                       \
  X(reciprocal, "Reciprocal", EW_UNARY, K_UN_RECIPROCAL)                                  \
  X(erf, "Erf", EW_UNARY, K_UN_ERF)                                                       \
  X(floor, "Floor", EW_UNARY, K_UN_FLOOR)                                                 \
  X(ceil, "Ceil", EW_UNARY, K_UN_CEIL)                                                    \
  X(round, "Round", EW_UNARY, K_UN_ROUND)                                                 \
  X(sign, "Sign", EW_UNARY, K_UN_SIGN)                                                    \
  X(sin, "Sin", EW_UNARY, K_UN_SIN)                                                       \
  X(cos, "Cos", EW_UNARY, K_UN_COS)                                                       \
  X(tan, "Tan", EW_UNARY, K_UN_TAN)                                                       \
  X(asin, "Asin", EW_UNARY, K_UN_ASIN)                                                    \
  X(acos, "Acos", EW_UNARY, K_UN_ACOS)                                                    \
  X(atan, "Atan", EW_UNARY, K_UN_ATAN)                                                    \
  X(sinh, "Sinh", EW_UNARY, K_UN_SINH)                                                    \
  X(cosh, "Cosh", EW_UNARY, K_UN_COSH)                                                    \
  X(asinh, "Asinh", EW_UNARY, K_UN_ASINH)                                                 \
  X(acosh, "Acosh", EW_UNARY, K_UN_ACOSH)                                                 \
  X(atanh, "Atanh", EW_UNARY, K_UN_ATANH)                                                 \
  X(isnan, "IsNaN", EW_UNARY, K_UN_ISNAN)                                                 \
  X(isinf, "IsInf", EW_UNARY, K_UN_ISINF)                                                 \
  X(cast, "Cast", EW_CAST, 0)                                                             \
  X(castlike, "CastLike", EW_CAST, 0)                                                     \
  X(relu, "Relu", EW_UNARY, K_UN_RELU)                                                    \
  X(leaky_relu, "LeakyRelu", EW_UNARY, K_UN_LEAKY_RELU)                                   \
  X(prelu, "PRelu", EW_BINARY, K_BIN_PRELU)                                               \
  X(clip, "Clip", EW_CLIP, 0)                                                             \
  X(sigmoid, "Sigmoid", EW_UNARY, K_UN_SIGMOID)                                           \
  X(hard_sigmoid, "HardSigmoid", EW_UNARY, K_UN_HARD_SIGMOID)                             \
  X(hard_swish, "HardSwish", EW_UNARY, K_UN_HARD_SWISH)                                   \
  X(tanh, "Tanh", EW_UNARY, K_UN_TANH)                                                    \
  X(gelu, "Gelu", EW_UNARY, K_UN_GELU)                                                    \
  X(softplus, "Softplus", EW_UNARY, K_UN_SOFTPLUS)                                        \
  X(elu, "Elu", EW_UNARY, K_UN_ELU)                                                       \
  X(selu, "Selu", EW_UNARY, K_UN_SELU)                                                    \
  X(celu, "Celu", EW_UNARY, K_UN_CELU)                                                    \
  X(softsign, "Softsign", EW_UNARY, K_UN_SOFTSIGN)                                        \
  X(mish, "Mish", EW_UNARY, K_UN_MISH)                                                    \
  X(thresholded_relu, "ThresholdedRelu", EW_UNARY, K_UN_THRESHOLDED_RELU)                 \
  X(swish, "Swish", EW_UNARY, K_UN_SWISH)                                                 \
  X(shrink, "Shrink", EW_UNARY, K_UN_SHRINK)                                              \
  X(swiglu, "SwiGLU", EW_SWIGLU, 0)                                                       \
  X(bitwise_and, "BitwiseAnd", EW_BINARY, K_BIN_BITAND)                                   \
  X(bitwise_or, "BitwiseOr", EW_BINARY, K_BIN_BITOR)                                      \
  X(bitwise_xor, "BitwiseXor", EW_BINARY, K_BIN_BITXOR)                                   \
  X(bitwise_not, "BitwiseNot", EW_UNARY, K_UN_BITNOT)                                     \
  X(bitcast, "BitCast", EW_BITCAST, 0)

#define EW_ENTRY(id, NAME, KIND, KOP) {NAME, KIND, KOP},
static const ew_entry ew_entries[] = {EW_OPS(EW_ENTRY)};
#undef EW_ENTRY

typedef struct ew_state {
  ew_kind kind;
  int kop;           /* kernel op actually launched */
  bool mixed;        /* Pow with two dtypes */
  int dtype, dtype_b; /* kernel dtype of input 0 (and input 1 for Pow / Cast's output) */
  int64_t n;         /* output elements */
  int64_t bytes;     /* output bytes (copies) */
  bool copy;         /* the run is one device copy (Cast to the same dtype, 1-input variadic) */
  k_ew_params p;
  /* Clip: bounds from inputs 1 / 2 (opset 11+) or attribute values (6-10) */
  bool lo_input, hi_input;
  int has_lo, has_hi;
  double lo, hi;
  int elem_size; /* Where */
  int n_geom;
  k_ew_geom geom[]; /* binary / Where: 1; variadic: n_inputs - 1 */
} ew_state;

static const ew_entry *ew_find(const char *name) {
  for (size_t i = 0; i < sizeof ew_entries / sizeof ew_entries[0]; i++)
    if (strcmp(ew_entries[i].name, name) == 0) return &ew_entries[i];
  return NULL;
}

/* The dtypes the kernels (and k_cast) know. */
static bool known_dtype(infer_dtype dt) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32: case INFER_DTYPE_FLOAT16: case INFER_DTYPE_BFLOAT16:
    case INFER_DTYPE_FLOAT64: case INFER_DTYPE_INT8: case INFER_DTYPE_INT16:
    case INFER_DTYPE_INT32: case INFER_DTYPE_INT64: case INFER_DTYPE_UINT8:
    case INFER_DTYPE_UINT16: case INFER_DTYPE_UINT32: case INFER_DTYPE_UINT64:
    case INFER_DTYPE_BOOL:
      return true;
    default:
      return false;
  }
}

static infer_status unsupported_dtype(const char *op, infer_dtype dt) {
  return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                    infer_dtype_name(dt));
}

/* geometry of inputs a (and b, c) broadcast to out */
static infer_status geom_init(const char *op, k_ew_geom *g, const tensor *out, int n_in,
                              const tensor *const *in) {
  int ranks[K_EW_MAX_IN];
  const int64_t *dims[K_EW_MAX_IN];
  for (int k = 0; k < n_in; k++) {
    ranks[k] = in[k]->rank;
    dims[k] = in[k]->dims;
  }
  if (k_ew_geom_init(g, out->rank, out->dims, n_in, ranks, dims) != 0) {
    char b[128];
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s on the GPU: the inputs do not broadcast to the output shape %s", op,
                      dims_format(out->rank, out->dims, b, sizeof b));
  }
  return INFER_OK;
}

static infer_status same_dtypes(const char *op, int n_in, const tensor *const *in) {
  for (int k = 1; k < n_in; k++)
    if (in[k]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: input %d is %s but input 0 is %s",
                        op, k, infer_dtype_name(in[k]->dtype), infer_dtype_name(in[0]->dtype));
  return INFER_OK;
}

static infer_status check_out(const char *op, const tensor *out, int dtype) {
  if ((int)out->dtype != dtype)
    return infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: output is %s, the kernel writes %s", op,
                      infer_dtype_name(out->dtype), infer_dtype_name((infer_dtype)dtype));
  return INFER_OK;
}

/* ---- prepare per kind ------------------------------------------------------------------ */

/* up: the CPU op's ew_unary_params (elementwise_params.h), NULL for an op without
 * attributes (all zero then). The kernels read them as the CPU kernels do: Shrink's
 * lambd and bias in alpha and beta, Gelu's and IsInf's mode. */
static infer_status prep_unary(const ew_unary_params *up, const ew_entry *e, ew_state *s,
                               const tensor *const *in, tensor *const *out) {
  s->dtype = (int)in[0]->dtype;
  if (!k_ew_unary_supported(s->kop, s->dtype)) return unsupported_dtype(e->name, in[0]->dtype);
  TRY(check_out(e->name, out[0], k_ew_unary_out_dtype(s->kop, s->dtype)));
  if (up) {
    s->p.alpha = up->alpha;
    s->p.beta = up->beta;
    s->p.gamma = up->gamma;
    s->p.mode = up->mode;
  }
  return INFER_OK;
}

static infer_status prep_binary(const void *params, const ew_entry *e, ew_state *s,
                                const tensor *const *in, tensor *const *out) {
  if (e->kind == EW_MOD || e->kind == EW_SHIFT) {
    if (!params)
      return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", e->name);
    if (e->kind == EW_MOD)
      s->kop = ((const ew_mod_params *)params)->fmod ? K_BIN_FMOD : K_BIN_MOD;
    else
      s->kop = ((const ew_shift_params *)params)->left ? K_BIN_SHL : K_BIN_SHR;
  }
  s->dtype = (int)in[0]->dtype;
  s->dtype_b = (int)in[1]->dtype;
  TRY(geom_init(e->name, &s->geom[0], out[0], 2, in));
  s->n_geom = 1;
  if (e->kind == EW_POW && s->dtype != s->dtype_b) {
    /* opset 12+: the exponent has its own dtype; the result has the base's */
    if (!k_ew_pow_mixed_supported(s->dtype, s->dtype_b))
      return infer_fail(INFER_ERR_UNSUPPORTED, "Pow on the GPU: base %s with exponent %s",
                        infer_dtype_name(in[0]->dtype), infer_dtype_name(in[1]->dtype));
    s->mixed = true;
    return check_out(e->name, out[0], s->dtype);
  }
  TRY(same_dtypes(e->name, 2, in));
  if (!k_ew_binary_supported(s->kop, s->dtype)) return unsupported_dtype(e->name, in[0]->dtype);
  return check_out(e->name, out[0], k_ew_binary_out_dtype(s->kop, s->dtype));
}

static infer_status prep_variadic(const node *n, const ew_entry *e, ew_state *s,
                                  const tensor *const *in, tensor *const *out) {
  int n_in = n->n_inputs;
  for (int k = 0; k < n_in; k++)
    if (!in[k]) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %d is missing", e->name, k);
  TRY(same_dtypes(e->name, n_in, in));
  s->dtype = (int)in[0]->dtype;
  bool is_float = in[0]->dtype == INFER_DTYPE_FLOAT32 || in[0]->dtype == INFER_DTYPE_FLOAT16 ||
                  in[0]->dtype == INFER_DTYPE_BFLOAT16 || in[0]->dtype == INFER_DTYPE_FLOAT64;
  if (!k_ew_binary_supported(s->kop, s->dtype) || (e->kind == EW_MEAN && !is_float))
    return unsupported_dtype(e->name, in[0]->dtype);
  TRY(check_out(e->name, out[0], s->dtype));
  if (n_in == 1) {
    s->copy = true;
    return INFER_OK;
  }
  TRY(geom_init(e->name, &s->geom[0], out[0], 2, in));
  for (int k = 2; k < n_in; k++) {
    const tensor *pair[2] = {out[0], in[k]};
    TRY(geom_init(e->name, &s->geom[k - 1], out[0], 2, pair));
  }
  s->n_geom = n_in - 1;
  s->p.alpha = (float)n_in; /* Mean's divisor */
  return INFER_OK;
}

static infer_status prep_clip(const node *n, const void *params, const ew_entry *e, ew_state *s,
                              const tensor *const *in, tensor *const *out) {
  s->dtype = (int)in[0]->dtype;
  if (!k_ew_clip_supported(s->dtype)) return unsupported_dtype("Clip", in[0]->dtype);
  TRY(check_out("Clip", out[0], s->dtype));
  if (n->opset < 11) {
    /* opsets 6-10: float attributes (activation_params.h), floats only */
    const clip6_params *cp = params;
    if (!cp) return infer_fail(INFER_ERR_INTERNAL, "Clip: attributes were not parsed");
    if (!dtype_is_float(in[0]->dtype)) return unsupported_dtype("Clip", in[0]->dtype);
    s->has_lo = s->has_hi = 1;
    s->lo = cp->lo;
    s->hi = cp->hi;
    return INFER_OK;
  }
  for (int k = 1; k < n->n_inputs && k < 3; k++) {
    if (!in[k]) continue;
    const char *what = k == 1 ? "min" : "max";
    if (in[k]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Clip: %s is %s but the input is %s", what,
                        infer_dtype_name(in[k]->dtype), infer_dtype_name(in[0]->dtype));
    if (dims_count(in[k]->rank, in[k]->dims) != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Clip: %s must be a scalar", what);
    if (k == 1) s->lo_input = true, s->has_lo = 1;
    else s->hi_input = true, s->has_hi = 1;
  }
  return INFER_OK;
}

static infer_status prep_where(const ew_entry *e, ew_state *s, const tensor *const *in,
                               tensor *const *out) {
  if (in[0]->dtype != INFER_DTYPE_BOOL)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Where: condition must be bool, not %s",
                      infer_dtype_name(in[0]->dtype));
  TRY(same_dtypes("Where", 2, in + 1));
  if (!known_dtype(in[1]->dtype)) return unsupported_dtype("Where", in[1]->dtype);
  TRY(check_out("Where", out[0], (int)in[1]->dtype));
  s->elem_size = (int)infer_dtype_size(in[1]->dtype);
  TRY(geom_init("Where", &s->geom[0], out[0], 3, in));
  s->n_geom = 1;
  return INFER_OK;
}

static infer_status prep_cast(const ew_entry *e, ew_state *s, const tensor *const *in,
                              tensor *const *out) {
  /* storage dtypes: with fp16 storage a cast to float32 writes float16 */
  s->dtype = (int)in[0]->dtype;
  s->dtype_b = (int)out[0]->dtype;
  if (!known_dtype(in[0]->dtype)) return unsupported_dtype(e->name, in[0]->dtype);
  if (!known_dtype(out[0]->dtype)) return unsupported_dtype(e->name, out[0]->dtype);
  s->copy = s->dtype == s->dtype_b && s->dtype != K_BOOL;
  return INFER_OK;
}

static infer_status prep_swiglu(const ew_unary_params *up, const ew_entry *e, ew_state *s,
                                const tensor *const *in, tensor *const *out) {
  TRY(same_dtypes(e->name, 2, in));
  if (!dims_equal(in[0]->rank, in[0]->dims, in[1]->rank, in[1]->dims)) {
    char a[128], b[128];
    return infer_fail(INFER_ERR_INVALID_MODEL, "SwiGLU: A of shape %s and B of shape %s differ",
                      dims_format(in[0]->rank, in[0]->dims, a, sizeof a),
                      dims_format(in[1]->rank, in[1]->dims, b, sizeof b));
  }
  s->dtype = (int)in[0]->dtype;
  if (!k_ew_swiglu_supported(s->dtype)) return unsupported_dtype(e->name, in[0]->dtype);
  TRY(check_out(e->name, out[0], s->dtype));
  if (s->n != dims_count(in[0]->rank, in[0]->dims))
    return infer_fail(INFER_ERR_INTERNAL, "SwiGLU on the GPU: output and input sizes differ");
  if (!up) return infer_fail(INFER_ERR_INTERNAL, "SwiGLU: attributes were not parsed");
  s->p.alpha = up->alpha;
  return INFER_OK;
}

/* Storage dtypes: with fp16 storage a float32 side is float16 on the device
 * while the other side of a 4-byte BitCast keeps its 4-byte integer dtype. The
 * float32 bits are then made from / turned into float16 by k_cast, reading or
 * writing the integer buffer as float32 (dtype / dtype_b: k_cast's view). */
static infer_status prep_bitcast(const cast_params *cp, const ew_entry *e, ew_state *s,
                                 const tensor *const *in, tensor *const *out) {
  if (!cp) return infer_fail(INFER_ERR_INTERNAL, "BitCast: attributes were not parsed");
  infer_dtype to = cp->to;
  size_t in_size = infer_dtype_size(in[0]->dtype), out_size = infer_dtype_size(out[0]->dtype);
  if (!known_dtype(in[0]->dtype)) return unsupported_dtype(e->name, in[0]->dtype);
  if (!known_dtype(out[0]->dtype)) return unsupported_dtype(e->name, out[0]->dtype);
  if (in_size == out_size) {
    s->copy = true;
    return INFER_OK;
  }
  /* one side is float16 storage of a float32, the other a 4-byte integer */
  bool in_half = in[0]->dtype == INFER_DTYPE_FLOAT16 && out_size == 4 &&
                 out[0]->dtype != INFER_DTYPE_FLOAT32;
  bool out_half = out[0]->dtype == INFER_DTYPE_FLOAT16 && to == INFER_DTYPE_FLOAT32 &&
                  in_size == 4 && in[0]->dtype != INFER_DTYPE_FLOAT32;
  if (in_half) {
    s->dtype = K_F16;
    s->dtype_b = K_F32;
  } else if (out_half) {
    s->dtype = K_F32;
    s->dtype_b = K_F16;
  } else {
    return infer_fail(INFER_ERR_UNSUPPORTED, "BitCast on the GPU: %s stored as %s",
                      infer_dtype_name(in[0]->dtype), infer_dtype_name(out[0]->dtype));
  }
  return INFER_OK;
}

static infer_status ew_prepare(const cuda_exec *x, const node *n, const void *params,
                               const tensor *const *in, const tensor *const *host_in,
                               tensor *const *out, void **state, int64_t *ws_bytes) {
  *ws_bytes = 0;
  const ew_entry *e = ew_find(n->op_type);
  if (!e) return infer_fail(INFER_ERR_INTERNAL, "%s: not an elementwise op", n->op_type);
  int n_geom = e->kind == EW_VARIADIC || e->kind == EW_MEAN ? (n->n_inputs > 1 ? n->n_inputs - 1 : 0)
               : e->kind == EW_BINARY || e->kind == EW_MOD || e->kind == EW_SHIFT ||
                       e->kind == EW_POW || e->kind == EW_WHERE
                   ? 1
                   : 0;
  ew_state *s = calloc(1, sizeof *s + sizeof(k_ew_geom) * (size_t)n_geom);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  s->kind = e->kind;
  s->kop = e->kop;
  if (!out[0]) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: the output is omitted", e->name);
  int min_in = e->kind == EW_WHERE ? 3 : e->kind == EW_UNARY || e->kind == EW_CLIP ||
                                             e->kind == EW_CAST || e->kind == EW_VARIADIC ||
                                             e->kind == EW_MEAN || e->kind == EW_BITCAST
                                             ? 1
                                             : 2;
  if (n->n_inputs < min_in)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %d inputs, needs %d", e->name, n->n_inputs,
                      min_in);
  for (int k = 0; k < min_in; k++)
    if (!in[k]) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %d is missing", e->name, k);
  s->n = dims_count(out[0]->rank, out[0]->dims);
  s->bytes = tensor_nbytes(out[0]);
  if (s->n < 0 || s->bytes < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: the output is too large", e->name);
  switch (e->kind) {
    case EW_UNARY: return prep_unary(params, e, s, in, out);
    case EW_BINARY:
    case EW_MOD:
    case EW_SHIFT:
    case EW_POW: return prep_binary(params, e, s, in, out);
    case EW_VARIADIC:
    case EW_MEAN: return prep_variadic(n, e, s, in, out);
    case EW_CLIP: return prep_clip(n, params, e, s, in, out);
    case EW_WHERE: return prep_where(e, s, in, out);
    case EW_CAST: return prep_cast(e, s, in, out);
    case EW_BITCAST: return prep_bitcast(params, e, s, in, out);
    case EW_SWIGLU: return prep_swiglu(params, e, s, in, out);
  }
  return infer_fail(INFER_ERR_INTERNAL, "%s: unknown kind", e->name);
}

/* ---- run ------------------------------------------------------------------------------- */

static infer_status ew_run(const cuda_exec *x, const node *n, const void *params,
                           const void *state, const tensor *const *in, tensor *const *out) {
  const ew_state *s = state;
  cudaStream_t st = (cudaStream_t)x->stream;
  void *y = out[0]->data;
  if (s->n == 0) return INFER_OK;
  if (s->copy) {
    CUDA_TRY(cudaMemcpyAsync(y, in[0]->data, (size_t)s->bytes, cudaMemcpyDeviceToDevice, st));
    return INFER_OK;
  }
  switch (s->kind) {
    case EW_UNARY:
      CUDA_LAUNCH_TRY(k_ew_unary(s->kop, s->dtype, in[0]->data, y, s->n, &s->p, st));
      break;
    case EW_BINARY:
    case EW_MOD:
    case EW_SHIFT:
    case EW_POW:
      if (s->mixed)
        CUDA_LAUNCH_TRY(k_ew_pow_mixed(s->dtype, in[0]->data, s->dtype_b, in[1]->data, y,
                                       &s->geom[0], st));
      else
        CUDA_LAUNCH_TRY(k_ew_binary(s->kop, s->dtype, in[0]->data, in[1]->data, y, &s->geom[0], st));
      break;
    case EW_VARIADIC:
    case EW_MEAN:
      CUDA_LAUNCH_TRY(k_ew_binary(s->kop, s->dtype, in[0]->data, in[1]->data, y, &s->geom[0], st));
      for (int k = 2; k < n->n_inputs; k++)
        CUDA_LAUNCH_TRY(k_ew_binary(s->kop, s->dtype, y, in[k]->data, y, &s->geom[k - 1], st));
      if (s->kind == EW_MEAN)
        CUDA_LAUNCH_TRY(k_ew_unary(K_UN_DIV_SCALAR, s->dtype, y, y, s->n, &s->p, st));
      break;
    case EW_CLIP: {
      const void *lo = s->lo_input ? in[1]->data : NULL;
      const void *hi = s->hi_input ? in[2]->data : NULL;
      CUDA_LAUNCH_TRY(k_ew_clip(s->dtype, in[0]->data, y, s->n, lo, hi, s->has_lo, s->has_hi,
                                s->lo, s->hi, st));
      break;
    }
    case EW_WHERE:
      CUDA_LAUNCH_TRY(k_ew_where(s->elem_size, in[0]->data, in[1]->data, in[2]->data, y,
                                 &s->geom[0], st));
      break;
    case EW_CAST:
    case EW_BITCAST: /* (a copy unless fp16 storage is involved) */
      CUDA_LAUNCH_TRY(k_cast(s->dtype, in[0]->data, s->dtype_b, y, s->n, st));
      break;
    case EW_SWIGLU:
      CUDA_LAUNCH_TRY(k_ew_swiglu(s->dtype, in[0]->data, in[1]->data, y, s->n, s->p.alpha, st));
      break;
  }
  return INFER_OK;
}

/* ---- the family list -------------------------------------------------------------------- */

#define EW_CUDA_OP(id, NAME, KIND, KOP) \
  static const cuda_op cuda_ew_##id = {.name = NAME, .prepare = ew_prepare, .run = ew_run};
EW_OPS(EW_CUDA_OP)
#undef EW_CUDA_OP

#define EW_PTR(id, NAME, KIND, KOP) &cuda_ew_##id,
const cuda_op *const cuda_ops_elementwise[] = {EW_OPS(EW_PTR) NULL};
#undef EW_PTR
