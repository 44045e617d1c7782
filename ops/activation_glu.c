/* activation_glu.c: SwiGLU (opset 28): Y = Swish_alpha(A) * B, A and B of one
 * shape (no broadcasting). Computed as the function body defines it: Swish into
 * Y, then Y *= B, so float16 rounds where the reference rounds. */
#include <stdlib.h>

#include "elementwise.h"

static infer_status swiglu_parse(const node *n, void **params) {
  ew_unary_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  infer_status s = attr_get_float(n, "alpha", 1.0f, &p->alpha);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

static infer_status swiglu_infer(const node *n, const void *p, const tensor *const *in,
                                 tensor *const *out) {
  TRY(ew_same_dtypes("SwiGLU", 2, in));
  if (!dims_equal(in[0]->rank, in[0]->dims, in[1]->rank, in[1]->dims)) {
    char a[128], b[128];
    return infer_fail(INFER_ERR_INVALID_MODEL, "SwiGLU: A of shape %s and B of shape %s differ",
                      dims_format(in[0]->rank, in[0]->dims, a, sizeof a),
                      dims_format(in[1]->rank, in[1]->dims, b, sizeof b));
  }
  return ew_unary_infer(&ew_swish_impl, in, out);
}

static infer_status swiglu_run(const node *n, const void *p, const tensor *const *in,
                               tensor *const *out, void *ws) {
  TRY(ew_unary_run(&ew_swish_impl, p, in, out));
  return ew_run_binary(ew_mul_table, "SwiGLU", out[0], in[1], out[0]);
}

static const char *const swiglu_attrs[] = {"alpha", NULL};

const op_desc op_swiglu = {.name = "SwiGLU", .domain = "", .since = 28, .until = OP_OPSET_MAX,
                           .min_inputs = 2, .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                           .attrs = swiglu_attrs, .parse = swiglu_parse, .infer = swiglu_infer,
                           .run = swiglu_run};
