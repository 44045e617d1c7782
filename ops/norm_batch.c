/* norm_batch.c: BatchNormalization in inference mode:
 *   y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c]
 * with c the channel (dim 1; a 1-D input of size N has one channel).
 * Opsets 7..: opset 7-8 `spatial` must be 1; opset 14+ `training_mode` must be 0.
 * Training (batch statistics, running-stat outputs) is not supported. */
#include <stdlib.h>

#include "norm_params.h"
#include "norm_util.h"
#include "reduce_util.h"

static const char *const batchnorm_attrs[] = {"epsilon", "momentum", "spatial", "training_mode",
                                              NULL};

static infer_status batchnorm_parse(const node *n, void **params) {
  float eps, momentum;
  int64_t spatial, training;
  TRY(attr_get_float(n, "epsilon", 1e-5f, &eps));
  TRY(attr_get_float(n, "momentum", 0.9f, &momentum)); /* training only: ignored */
  TRY(attr_get_int(n, "spatial", 1, &spatial));
  TRY(attr_get_int(n, "training_mode", 0, &training));
  if (node_attr(n, "spatial") && n->opset >= 9)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "BatchNormalization: attribute 'spatial' does not exist at opset %lld",
                      (long long)n->opset);
  if (spatial != 1)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "BatchNormalization: spatial=%lld (per-element statistics) is not "
                      "supported, only spatial=1",
                      (long long)spatial);
  if (node_attr(n, "training_mode") && n->opset < 14)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "BatchNormalization: attribute 'training_mode' does not exist at opset %lld",
                      (long long)n->opset);
  if (training != 0)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "BatchNormalization: training_mode=%lld is not supported (inference only)",
                      (long long)training);
  if (!(eps >= 0.0f))
    return infer_fail(INFER_ERR_INVALID_MODEL, "BatchNormalization: epsilon %g is negative",
                      (double)eps);
  batchnorm_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "BatchNormalization: out of memory");
  p->epsilon = eps;
  *params = p;
  return INFER_OK;
}

/* Batch (N), channel (C) and per-channel spatial (S) extents of x. */
static void batchnorm_extents(const tensor *x, int64_t *nb, int64_t *c, int64_t *s) {
  if (x->rank == 1) {
    *nb = x->dims[0];
    *c = 1;
    *s = 1;
    return;
  }
  *nb = x->dims[0];
  *c = x->dims[1];
  *s = nr_span(x->dims, 2, x->rank);
}

static infer_status batchnorm_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  const tensor *x = in[0];
  TRY(nr_require(x, "BatchNormalization", "X"));
  static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < n->n_outputs && i < 5; i++)
    if (out[i])
      return infer_fail(INFER_ERR_UNSUPPORTED,
                        "BatchNormalization: output %d (training statistics) is not supported",
                        i);
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "BatchNormalization: X dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  if (x->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "BatchNormalization: X must have rank >= 1");
  TRY(nr_check_count(x, "BatchNormalization X"));
  int64_t nb, c, s;
  batchnorm_extents(x, &nb, &c, &s);
  for (int i = 1; i < 5; i++) {
    TRY(norm_check_vector(in[i], c, "BatchNormalization", names[i]));
  }
  out[0]->dtype = x->dtype;
  nr_copy_shape(out[0], x);
  return INFER_OK;
}

static infer_status batchnorm_run(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws) {
  const batchnorm_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  int64_t nb, c, s;
  batchnorm_extents(x, &nb, &c, &s);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t ch = 0; ch < c; ch++) {
      double scale = nr_load(in[1], ch), bias = nr_load(in[2], ch);
      double mean = nr_load(in[3], ch), var = nr_load(in[4], ch);
      double a = scale / sqrt(var + (double)p->epsilon);
      int64_t base = (b * c + ch) * s;
      if (x->dtype == INFER_DTYPE_FLOAT32) {
        const float *xs = (const float *)x->data + base;
        float *ys = (float *)y->data + base;
        for (int64_t i = 0; i < s; i++) ys[i] = (float)(((double)xs[i] - mean) * a + bias);
      } else {
        for (int64_t i = 0; i < s; i++)
          tensor_set_f64(y, base + i, (tensor_get_f64(x, base + i) - mean) * a + bias);
      }
    }
  return INFER_OK;
}

const op_desc op_batchnorm = {.name = "BatchNormalization",
                              .domain = "",
                              .since = 7,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 5,
                              .max_inputs = 5,
                              .min_outputs = 1,
                              .max_outputs = 5,
                              .attrs = batchnorm_attrs,
                              .parse = batchnorm_parse,
                              .infer = batchnorm_infer,
                              .run = batchnorm_run};
