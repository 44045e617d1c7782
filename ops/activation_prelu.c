/* activation_prelu.c: PRelu: y = x < 0 ? slope * x : x, where slope broadcasts
 * to x's shape (unidirectionally: the output always has x's shape). */
#include "elementwise.h"

EW_FLOAT_TYPES(EW_ARITH_X, prelu, x < 0 ? x * y : x)
EW_SINT_TYPES(EW_ARITH_X, prelu, x < 0 ? (U)x * (U)y : (U)x)
EW_UINT_TYPES(EW_ARITH_X, prelu, ((void)y, x)) /* never negative */
static const ew_binary_fn prelu_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, prelu, 0) EW_SINT_TYPES(EW_ENTRY_X, prelu, 0)
        EW_UINT_TYPES(EW_ENTRY_X, prelu, 0)};

static infer_status prelu_infer(const node *n, const void *p, const tensor *const *in,
                                tensor *const *out) {
  TRY(ew_binary_infer("PRelu", EW_NUMERIC, INFER_DTYPE_UNDEFINED, in, out));
  if (!dims_equal(out[0]->rank, out[0]->dims, in[0]->rank, in[0]->dims)) {
    char a[128], b[128];
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "PRelu: slope of shape %s does not broadcast to the input's shape %s",
                      dims_format(in[1]->rank, in[1]->dims, a, sizeof a),
                      dims_format(in[0]->rank, in[0]->dims, b, sizeof b));
  }
  return INFER_OK;
}

static infer_status prelu_run(const node *n, const void *p, const tensor *const *in,
                              tensor *const *out, void *ws) {
  return ew_run_binary(prelu_table, "PRelu", in[0], in[1], out[0]);
}

/* Opset 7 introduced the unidirectional broadcast of slope. */
const op_desc op_prelu = {.name = "PRelu", .domain = "", .since = 7, .until = OP_OPSET_MAX,
                          .min_inputs = 2, .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                          .infer = prelu_infer, .run = prelu_run};
