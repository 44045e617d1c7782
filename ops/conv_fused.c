/* conv_fused.c: FusedConv (domain com.microsoft, as ONNX Runtime writes it):
 * Y = activation(Conv(X, W, B) + Z). The pass fuse-conv-epilogue turns Conv ->
 * [Add] -> [Relu | Clip] chains into it, so that the GPU runs one cuDNN call (or one
 * convolution and one epilogue kernel) instead of three passes over the output.
 * On the CPU it is Conv followed by the epilogue in place. */
#include <stdlib.h>
#include <string.h>

#include "conv_fused.h"

static const char *const fused_attr_names[] = {
    "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides",
    "activation", "activation_params", "channels_last", "input_max", NULL};

static const struct {
  const char *name;
  conv_act act;
  int n_params; /* activation_params it takes */
  float alpha, beta; /* defaults when activation_params is absent */
} acts[] = {
    {"Relu", CONV_ACT_RELU, 0, 0, 0},
    {"Clip", CONV_ACT_CLIP, 2, -INFINITY, INFINITY},
    {"LeakyRelu", CONV_ACT_LEAKY_RELU, 1, 0.01f, 0},
    {"Sigmoid", CONV_ACT_SIGMOID, 0, 0, 0},
    {"Tanh", CONV_ACT_TANH, 0, 0, 0},
    {"HardSigmoid", CONV_ACT_HARD_SIGMOID, 2, 0.2f, 0.5f},
    /* ours (ONNX Runtime's FusedConv has none of these): written by fuse-conv-epilogue */
    {"Swish", CONV_ACT_SWISH, 1, 1.0f, 0},
    {"HardSwish", CONV_ACT_HARD_SWISH, 0, 0, 0},
    {"Gelu", CONV_ACT_GELU, 0, 0, 0},
};

infer_status fused_conv_parse_as(const node *n, const char *op, void **params) {
  TRY(conv_parse_common(n, op, false, sizeof(fused_conv_params), params));
  fused_conv_params *p = *params;
  const char *name;
  const float *v;
  int count;
  infer_status s = attr_get_string(n, "activation", "", &name);
  if (s == INFER_OK) s = attr_get_floats(n, "activation_params", &v, &count);
  if (s == INFER_OK && name[0]) {
    size_t k = 0;
    while (k < sizeof acts / sizeof acts[0] && strcmp(acts[k].name, name) != 0) k++;
    if (k == sizeof acts / sizeof acts[0])
      s = infer_fail(INFER_ERR_UNSUPPORTED, "%s: activation '%s' is not supported", op, name);
    else if (count >= 0 && count != acts[k].n_params)
      s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: activation %s takes %d "
                     "activation_params, %d given", op, name, acts[k].n_params, count);
    else {
      p->act = acts[k].act;
      p->alpha = count > 0 ? v[0] : acts[k].alpha;
      p->beta = count > 1 ? v[1] : acts[k].beta;
    }
  }
  int64_t cl = 0;
  if (s == INFER_OK) s = attr_get_int(n, "channels_last", 0, &cl);
  p->channels_last = cl != 0;
  if (s == INFER_OK) s = attr_get_float(n, "input_max", INFINITY, &p->input_max);
  if (s == INFER_OK && !isinf(p->input_max) && (!p->channels_last || !(p->input_max > 0)))
    s = infer_fail(INFER_ERR_INVALID_MODEL,
                   "%s: input_max (internal) needs channels_last and a bound above 0", op);
  if (s != INFER_OK) {
    free(p);
    *params = NULL;
  }
  return s;
}

/* ---- channels_last = 1 on the CPU: a reference for the GPU pass (tests force the
 * pass with INFER_CHANNELS_LAST=1), not a fast path: the data is transposed to NCHW,
 * convolved, and written back channels-last. ---- */

/* NCHW views of X, W (and Y) of a channels-last node, data unset. */
static void nchw_views(const tensor *const *in, const tensor *y, tensor *x, tensor *w, tensor *yn) {
  *x = *in[0];
  *w = *in[1];
  *yn = *y;
  for (int i = 0; i < 4; i++) {
    x->dims[i] = in[0]->dims[perm_nhwc_to_nchw[i]];
    w->dims[i] = in[1]->dims[perm_nhwc_to_nchw[i]];
    yn->dims[i] = y->dims[perm_nhwc_to_nchw[i]];
  }
}

static int64_t cl_workspace(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out) {
  tensor x, w, y;
  nchw_views(in, out[0], &x, &w, &y);
  const tensor *ins[3] = {&x, &w, n->n_inputs > 2 ? in[2] : NULL};
  tensor *outs[1] = {&y};
  int64_t conv = conv_workspace(n, params, ins, outs), total = 0;
  if (conv < 0) return -1;
  size_t es = infer_dtype_size(x.dtype);
  ws_add(&total, dims_count(4, x.dims), (int64_t)es);
  ws_add(&total, dims_count(4, w.dims), (int64_t)es);
  ws_add(&total, dims_count(4, y.dims), (int64_t)es);
  ws_add(&total, conv, 1);
  return total;
}

static infer_status cl_run(const node *n, const void *params, const tensor *const *in,
                           tensor *const *out, void *ws) {
  tensor x, w, y;
  nchw_views(in, out[0], &x, &w, &y);
  size_t es = infer_dtype_size(x.dtype);
  char *cur = ws;
  x.data = ws_take(&cur, dims_count(4, x.dims), (int64_t)es);
  w.data = ws_take(&cur, dims_count(4, w.dims), (int64_t)es);
  y.data = ws_take(&cur, dims_count(4, y.dims), (int64_t)es);
  permute4(in[0]->data, in[0]->dims, perm_nhwc_to_nchw, x.data, es);
  permute4(in[1]->data, in[1]->dims, perm_nhwc_to_nchw, w.data, es);
  const fused_conv_params *p = params;
  if (!isinf(p->input_max)) { /* pass defer-clip: X read clamped */
    int64_t count = dims_count(4, x.dims);
    for (int64_t i = 0; i < count; i++)
      if (tensor_get_f64(&x, i) > p->input_max) tensor_set_f64(&x, i, p->input_max);
  }
  const tensor *ins[3] = {&x, &w, n->n_inputs > 2 ? in[2] : NULL};
  tensor *outs[1] = {&y};
  TRY(conv_run(n, params, ins, outs, cur));
  permute4(y.data, y.dims, perm_nchw_to_nhwc, out[0]->data, es);
  return INFER_OK;
}

static infer_status fused_parse(const node *n, void **params) {
  return fused_conv_parse_as(n, "FusedConv", params);
}

infer_status fused_conv_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  const fused_conv_params *p = params;
  if (p->channels_last) {
    /* Conv's shape rule on NCHW views (also re-run per batch by flexible-batch runs) */
    if (in[0]->rank != 4 || in[1]->rank != 4)
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedConv: channels_last needs 4-D X and W");
    tensor x, w, y;
    nchw_views(in, in[0], &x, &w, &y);
    const tensor *ins[3] = {&x, &w, n->n_inputs > 2 ? in[2] : NULL};
    tensor *outs[1] = {&y};
    TRY(conv_infer(n, params, ins, outs));
    out[0]->dtype = y.dtype;
    out[0]->rank = 4;
    for (int i = 0; i < 4; i++) out[0]->dims[i] = y.dims[perm_nchw_to_nhwc[i]];
  } else {
    TRY(conv_infer(n, params, in, out));
  }
  const tensor *z = n->n_inputs > 3 ? in[3] : NULL, *y = out[0];
  char s1[96], s2[96];
  if (z && (z->dtype != y->dtype || z->rank != y->rank ||
            memcmp(z->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0))
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedConv: Z %s %s must match Y %s %s",
                      infer_dtype_name(z->dtype), dims_format(z->rank, z->dims, s1, sizeof s1),
                      infer_dtype_name(y->dtype), dims_format(y->rank, y->dims, s2, sizeof s2));
  return INFER_OK;
}

infer_status fused_conv_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  const fused_conv_params *p = params;
  TRY(p->channels_last ? cl_run(n, params, in, out, ws) : conv_run(n, params, in, out, ws));
  const tensor *z = n->n_inputs > 3 ? in[3] : NULL;
  tensor *y = out[0];
  int64_t count = dims_count(y->rank, y->dims);
  if (y->dtype == INFER_DTYPE_FLOAT32) { /* the common case, without per-value dispatch */
    float *yd = y->data;
    const float *zd = z ? z->data : NULL;
    for (int64_t i = 0; i < count; i++)
      yd[i] = (float)conv_act_apply(p->act, p->alpha, p->beta, yd[i] + (zd ? zd[i] : 0.0f));
    return INFER_OK;
  }
  for (int64_t i = 0; i < count; i++) {
    double v = tensor_get_f64(y, i) + (z ? tensor_get_f64(z, i) : 0);
    tensor_set_f64(y, i, conv_act_apply(p->act, p->alpha, p->beta, v));
  }
  return INFER_OK;
}

int64_t fused_conv_workspace(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const fused_conv_params *p = params;
  return p->channels_last ? cl_workspace(n, params, in, out) : conv_workspace(n, params, in, out);
}

const op_desc op_fused_conv = {.name = "FusedConv",
                               .domain = "com.microsoft",
                               .since = 1,
                               .until = 1,
                               .min_inputs = 2,
                               .max_inputs = 4,
                               .min_outputs = 1,
                               .max_outputs = 1,
                               .attrs = fused_attr_names,
                               .parse = fused_parse,
                               .infer = fused_conv_infer,
                               .run = fused_conv_run,
                               .workspace = fused_conv_workspace};
