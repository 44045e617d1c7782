/* shape_eyelike.c: EyeLike (9, 22): a 2-D tensor of the input's shape with ones on
 * diagonal k (0 main, > 0 above, < 0 below) and zeros elsewhere; dtype from the
 * attribute `dtype`, else the input's. */
#include <stdlib.h>
#include <string.h>

#include "quant_util.h" /* quant_dtype_from_attr */

typedef struct eyelike_params {
  infer_dtype dtype; /* UNDEFINED: the input's */
  int64_t k;
} eyelike_params;

static const char *const eyelike_attrs[] = {"dtype", "k", NULL};

static infer_status eyelike_parse(const node *n, void **params) {
  eyelike_params t = {INFER_DTYPE_UNDEFINED, 0};
  int64_t dt;
  TRY(attr_get_int(n, "dtype", 0, &dt));
  TRY(attr_get_int(n, "k", 0, &t.k));
  if (node_attr(n, "dtype")) TRY(quant_dtype_from_attr("EyeLike", "dtype", dt, &t.dtype));
  eyelike_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "EyeLike: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

static infer_status eyelike_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const eyelike_params *p = params;
  const tensor *x = in[0];
  char buf[96];
  if (x->rank != 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "EyeLike: input %s must be 2-D",
                      dims_format(x->rank, x->dims, buf, sizeof buf));
  infer_dtype dt = p->dtype ? p->dtype : x->dtype;
  if (infer_dtype_size(dt) == 0 || dt == INFER_DTYPE_STRING)
    return infer_fail(INFER_ERR_UNSUPPORTED, "EyeLike: dtype %s is not supported",
                      infer_dtype_name(dt));
  tensor *y = out[0];
  *y = *x;
  y->data = NULL;
  y->dtype = dt;
  return INFER_OK;
}

static infer_status eyelike_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const eyelike_params *p = params;
  tensor *y = out[0];
  int64_t rows = y->dims[0], cols = y->dims[1];
  memset(y->data, 0, (size_t)tensor_nbytes(y));
  for (int64_t i = 0; i < rows; i++) {
    int64_t j = i + p->k;
    if (j >= 0 && j < cols) tensor_set_f64(y, i * cols + j, 1.0);
  }
  return INFER_OK;
}

const op_desc op_eyelike = {.name = "EyeLike",
                            .domain = "",
                            .since = 9,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 1,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = eyelike_attrs,
                            .parse = eyelike_parse,
                            .infer = eyelike_infer,
                            .run = eyelike_run};
