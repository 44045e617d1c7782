/* elementwise_variadic.c: Max, Min, Sum, Mean over 1..N inputs with numpy
 * broadcasting. The output accumulates pairwise: out = in0 op in1, then
 * out = out op in_k, so no scratch memory is needed. Max and Min propagate NaN
 * (numpy maximum/minimum, which the ONNX reference uses). */
#include <string.h>

#include "../kernels/k_nan.h"
#include "elementwise.h"

EW_FLOAT_TYPES(EW_ARITH_X, max, K_NAN_MAX(x, y))
EW_SINT_TYPES(EW_ARITH_X, max, x > y ? x : y)
EW_UINT_TYPES(EW_ARITH_X, max, x > y ? x : y)
static const ew_binary_fn max_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, max, 0) EW_SINT_TYPES(EW_ENTRY_X, max, 0)
        EW_UINT_TYPES(EW_ENTRY_X, max, 0)};

EW_FLOAT_TYPES(EW_ARITH_X, min, K_NAN_MIN(x, y))
EW_SINT_TYPES(EW_ARITH_X, min, x < y ? x : y)
EW_UINT_TYPES(EW_ARITH_X, min, x < y ? x : y)
static const ew_binary_fn min_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, min, 0) EW_SINT_TYPES(EW_ENTRY_X, min, 0)
        EW_UINT_TYPES(EW_ENTRY_X, min, 0)};

static infer_status variadic_infer(const char *op, unsigned mask, int n_in,
                                   const tensor *const *in, tensor *const *out) {
  for (int i = 0; i < n_in; i++)
    if (!in[i]) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %d is missing", op, i);
  TRY(ew_same_dtypes(op, n_in, in));
  TRY(ew_check_dtype(op, "input", in[0]->dtype, mask));
  TRY(ew_broadcast_all(op, n_in, in, out[0]));
  out[0]->dtype = in[0]->dtype;
  return INFER_OK;
}

/* out /= count for Mean. */
static void divide_by(tensor *out, int count) {
  int64_t n = dims_count(out->rank, out->dims);
  void *p = out->data;
  switch (out->dtype) {
    case INFER_DTYPE_FLOAT32: {
      float *o = p, c = (float)count;
      for (int64_t i = 0; i < n; i++) o[i] /= c;
      break;
    }
    case INFER_DTYPE_FLOAT64: {
      double *o = p;
      for (int64_t i = 0; i < n; i++) o[i] /= count;
      break;
    }
    case INFER_DTYPE_FLOAT16: {
      uint16_t *o = p;
      for (int64_t i = 0; i < n; i++) o[i] = float_to_half(half_to_float(o[i]) / (float)count);
      break;
    }
    case INFER_DTYPE_BFLOAT16: {
      uint16_t *o = p;
      for (int64_t i = 0; i < n; i++) o[i] = float_to_bf16(bf16_to_float(o[i]) / (float)count);
      break;
    }
    default: break;
  }
}

static infer_status variadic_run(const char *op, const ew_binary_fn *table, bool mean,
                                 int n_in, const tensor *const *in, tensor *out) {
  if (n_in == 1) {
    int64_t nb = tensor_nbytes(out);
    if (nb > 0) memcpy(out->data, in[0]->data, (size_t)nb);
  } else {
    TRY(ew_run_binary(table, op, in[0], in[1], out));
    for (int k = 2; k < n_in; k++) TRY(ew_run_binary(table, op, out, in[k], out));
  }
  if (mean) divide_by(out, n_in);
  return INFER_OK;
}

#define VARIADIC_OP(var, NAME, SINCE, TABLE, MASK, MEAN)                                     \
  static infer_status var##_infer(const node *n, const void *p, const tensor *const *in,     \
                                  tensor *const *out) {                                      \
    return variadic_infer(NAME, MASK, n->n_inputs, in, out);                                 \
  }                                                                                          \
  static infer_status var##_run(const node *n, const void *p, const tensor *const *in,       \
                                tensor *const *out, void *ws) {                              \
    return variadic_run(NAME, TABLE, MEAN, n->n_inputs, in, out[0]);                         \
  }                                                                                          \
  const op_desc var = {.name = NAME, .domain = "", .since = SINCE, .until = OP_OPSET_MAX,    \
                       .min_inputs = 1, .max_inputs = 1 << 20, .min_outputs = 1,             \
                       .max_outputs = 1, .infer = var##_infer, .run = var##_run}

/* Opset 6-7 required equal shapes, which broadcasting covers; opset 1 had the
 * consumed_inputs attribute. */
VARIADIC_OP(op_max, "Max", 6, max_table, EW_NUMERIC, false);
VARIADIC_OP(op_min, "Min", 6, min_table, EW_NUMERIC, false);
VARIADIC_OP(op_sum, "Sum", 6, ew_add_table, EW_NUMERIC, false);
VARIADIC_OP(op_mean, "Mean", 6, ew_add_table, EW_FLOATS, true);
