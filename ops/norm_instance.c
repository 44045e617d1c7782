/* norm_instance.c: InstanceNormalization and GroupNormalization. Both normalize x
 * (N x C x D1 ... Dn) over groups of channels and their spatial extent, then apply a
 * per-channel affine transform:
 *   y = (x - mean) / sqrt(var + epsilon) * scale + bias
 * InstanceNormalization is the case of one channel per group. Statistics use double
 * accumulators and two passes (mean, then the mean squared deviation). */
#include <stdlib.h>

#include "norm_params.h"
#include "norm_util.h"
#include "reduce_util.h"

/* Normalizes one group: `len` contiguous elements from `base`, made of `chans`
 * channels of `s` elements each, channel k using affine index aff0 + k*aff_step. */
static void group_normalize(const tensor *x, const tensor *scale, const tensor *bias, tensor *y,
                            int64_t base, int64_t chans, int64_t s, int64_t aff0,
                            int64_t aff_step, double eps) {
  int64_t len = chans * s;
  double sum = 0.0, sq = 0.0;
  if (x->dtype == INFER_DTYPE_FLOAT32) {
    const float *xs = (const float *)x->data + base;
    for (int64_t i = 0; i < len; i++) sum += xs[i];
    double mean = len ? sum / (double)len : 0.0;
    for (int64_t i = 0; i < len; i++) {
      double d = xs[i] - mean;
      sq += d * d;
    }
    double inv = 1.0 / sqrt((len ? sq / (double)len : 0.0) + eps);
    float *ys = (float *)y->data + base;
    for (int64_t k = 0; k < chans; k++) {
      double a = nr_load(scale, aff0 + k * aff_step) * inv;
      double b = nr_load(bias, aff0 + k * aff_step);
      for (int64_t i = k * s; i < (k + 1) * s; i++) ys[i] = (float)((xs[i] - mean) * a + b);
    }
    return;
  }
  for (int64_t i = 0; i < len; i++) sum += tensor_get_f64(x, base + i);
  double mean = len ? sum / (double)len : 0.0;
  for (int64_t i = 0; i < len; i++) {
    double d = tensor_get_f64(x, base + i) - mean;
    sq += d * d;
  }
  double inv = 1.0 / sqrt((len ? sq / (double)len : 0.0) + eps);
  for (int64_t k = 0; k < chans; k++) {
    double a = nr_load(scale, aff0 + k * aff_step) * inv;
    double b = nr_load(bias, aff0 + k * aff_step);
    for (int64_t i = k * s; i < (k + 1) * s; i++)
      tensor_set_f64(y, base + i, (tensor_get_f64(x, base + i) - mean) * a + b);
  }
}

static infer_status groupnorm_common_infer(const char *op, const tensor *const *in,
                                           tensor *const *out, int64_t affine_len) {
  const tensor *x = in[0];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input dtype %s is not supported", op,
                      infer_dtype_name(x->dtype));
  TRY(norm_check_vector(in[1], affine_len, op, "scale"));
  TRY(norm_check_vector(in[2], affine_len, op, "B"));
  out[0]->dtype = x->dtype;
  nr_copy_shape(out[0], x);
  return INFER_OK;
}

static infer_status check_x(const char *op, const tensor *x) {
  TRY(nr_require(x, op, "X"));
  if (x->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: input must have rank >= 2 (N x C x ...), got %d", op, x->rank);
  return nr_check_count(x, op);
}

/* ---- InstanceNormalization ---------------------------------------------------- */

static const char *const instancenorm_attrs[] = {"epsilon", NULL};

static infer_status instancenorm_parse(const node *n, void **params) {
  float eps;
  TRY(attr_get_float(n, "epsilon", 1e-5f, &eps));
  if (!(eps >= 0.0f))
    return infer_fail(INFER_ERR_INVALID_MODEL, "InstanceNormalization: epsilon %g is negative",
                      (double)eps);
  groupnorm_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "InstanceNormalization: out of memory");
  p->epsilon = eps;
  p->groups = 0;
  *params = p;
  return INFER_OK;
}

static infer_status instancenorm_infer(const node *n, const void *params,
                                       const tensor *const *in, tensor *const *out) {
  TRY(check_x("InstanceNormalization", in[0]));
  return groupnorm_common_infer("InstanceNormalization", in, out, in[0]->dims[1]);
}

static infer_status instancenorm_run(const node *n, const void *params, const tensor *const *in,
                                     tensor *const *out, void *ws) {
  const groupnorm_params *p = params;
  const tensor *x = in[0];
  int64_t nb = x->dims[0], c = x->dims[1], s = nr_span(x->dims, 2, x->rank);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t ch = 0; ch < c; ch++)
      group_normalize(x, in[1], in[2], out[0], (b * c + ch) * s, 1, s, ch, 0, p->epsilon);
  return INFER_OK;
}

const op_desc op_instancenorm = {.name = "InstanceNormalization",
                                 .domain = "",
                                 .since = 6,
                                 .until = OP_OPSET_MAX,
                                 .min_inputs = 3,
                                 .max_inputs = 3,
                                 .min_outputs = 1,
                                 .max_outputs = 1,
                                 .attrs = instancenorm_attrs,
                                 .parse = instancenorm_parse,
                                 .infer = instancenorm_infer,
                                 .run = instancenorm_run};

/* ---- GroupNormalization (18-20: scale/bias per group; 21+: per channel) -------- */

static const char *const groupnorm_attrs[] = {"epsilon", "num_groups", "stash_type", NULL};

static infer_status groupnorm_parse(const node *n, void **params) {
  float eps;
  int64_t groups, stash;
  TRY(attr_get_float(n, "epsilon", 1e-5f, &eps));
  TRY(attr_get_int(n, "num_groups", -1, &groups));
  TRY(attr_get_int(n, "stash_type", 1, &stash));
  if (!node_attr(n, "num_groups") || groups <= 0)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GroupNormalization: attribute 'num_groups' must be given and positive");
  if (node_attr(n, "stash_type") && n->opset < 21)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GroupNormalization: attribute 'stash_type' does not exist at opset %lld",
                      (long long)n->opset);
  /* Statistics are always computed in double, at least the requested precision. */
  if (stash != INFER_DTYPE_FLOAT32 && stash != INFER_DTYPE_FLOAT64 &&
      stash != INFER_DTYPE_FLOAT16 && stash != INFER_DTYPE_BFLOAT16)
    return infer_fail(INFER_ERR_INVALID_MODEL, "GroupNormalization: stash_type %lld is invalid",
                      (long long)stash);
  if (!(eps >= 0.0f))
    return infer_fail(INFER_ERR_INVALID_MODEL, "GroupNormalization: epsilon %g is negative",
                      (double)eps);
  groupnorm_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "GroupNormalization: out of memory");
  p->epsilon = eps;
  p->groups = groups;
  *params = p;
  return INFER_OK;
}

static infer_status groupnorm_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  const groupnorm_params *p = params;
  TRY(check_x("GroupNormalization", in[0]));
  int64_t c = in[0]->dims[1];
  if (c % p->groups != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GroupNormalization: %lld channels are not divisible into %lld groups",
                      (long long)c, (long long)p->groups);
  return groupnorm_common_infer("GroupNormalization", in, out, n->opset >= 21 ? c : p->groups);
}

static infer_status groupnorm_run(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws) {
  const groupnorm_params *p = params;
  const tensor *x = in[0];
  int64_t nb = x->dims[0], c = x->dims[1], s = nr_span(x->dims, 2, x->rank);
  int64_t g = p->groups, cpg = c / g;
  bool per_channel = n->opset >= 21;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k = 0; k < g; k++)
      group_normalize(x, in[1], in[2], out[0], (b * c + k * cpg) * s, cpg, s,
                      per_channel ? k * cpg : k, per_channel ? 1 : 0, p->epsilon);
  return INFER_OK;
}

const op_desc op_groupnorm = {.name = "GroupNormalization",
                              .domain = "",
                              .since = 18,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .min_outputs = 1,
                              .max_outputs = 1,
                              .attrs = groupnorm_attrs,
                              .parse = groupnorm_parse,
                              .infer = groupnorm_infer,
                              .run = groupnorm_run};
