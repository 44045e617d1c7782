/* attention_fused.c: FusedAttention's attributes, shapes and CPU reference
 * (attention_fused.h): per query row, the scores, their softmax in double and the
 * weighted sum of V. Query head b2 reads key/value head b2 / kv_group (GQA). With
 * causal, row i reads only the keys j <= i + causal_offset: the others are not read at
 * all (probability 0, as a flash kernel skips them), and a row that sees no key is 0
 * (ONNX Attention's fully masked row), not the NaN of an empty softmax. */
#include "attention_fused.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *const attn_view_attr[4] = {"q_view", "k_view", "v_view", "o_view"};

static infer_status fa_parse(const node *n, void **params) {
  fused_attention_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *params = p;
  for (int k = 0; k < 4; k++) {
    const int64_t *v;
    int c = -1;
    TRY(attr_get_ints(n, attn_view_attr[k], &v, &c));
    if (c != 9)
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: %s needs 9 ints", attn_view_attr[k]);
    p->view[k].offset = v[0];
    for (int i = 0; i < 4; i++) {
      p->view[k].dims[i] = v[1 + i];
      p->view[k].strides[i] = v[5 + i];
      if (v[1 + i] < 0 || v[5 + i] < 0 || v[0] < 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: %s is negative", attn_view_attr[k]);
    }
  }
  const int64_t *od;
  int orank = -1;
  TRY(attr_get_ints(n, "out_shape", &od, &orank));
  if (orank < 0 || orank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: out_shape is missing");
  p->out_rank = orank;
  memcpy(p->out_dims, od, sizeof(int64_t) * (size_t)orank);
  TRY(attr_get_float(n, "scale", 1.0f, &p->scale));
  int64_t causal = 0;
  TRY(attr_get_int(n, "kv_group", 1, &p->kv_group));
  TRY(attr_get_int(n, "causal", 0, &causal));
  TRY(attr_get_int(n, "causal_offset", 0, &p->causal_offset));
  p->causal = causal != 0;
  if (p->kv_group < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: kv_group %lld (at least 1)",
                      (long long)p->kv_group);
  const attn_view *q = &p->view[ATTN_Q], *k = &p->view[ATTN_K], *v = &p->view[ATTN_V],
                  *o = &p->view[ATTN_O];
  if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || o->dims[0] != q->dims[0] ||
      o->dims[1] != q->dims[1])
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: batch dims differ");
  /* GQA: kv_group query heads per key/value head (divided, not multiplied: the dims come
   * from attributes and may be anything) */
  if (q->dims[1] % p->kv_group || k->dims[1] != q->dims[1] / p->kv_group ||
      v->dims[1] != k->dims[1])
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: %lld query heads do not read "
                      "%lld key and %lld value heads in groups of %lld", (long long)q->dims[1],
                      (long long)k->dims[1], (long long)v->dims[1], (long long)p->kv_group);
  if (k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2] || o->dims[2] != q->dims[2] ||
      o->dims[3] != v->dims[3])
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: Q, K, V and O do not fit");
  return INFER_OK;
}

/* The largest element index a view reaches, +1 (0 when empty). */
static int64_t view_span(const attn_view *w) {
  int64_t last = w->offset;
  for (int i = 0; i < 4; i++) {
    if (w->dims[i] == 0) return 0;
    last += (w->dims[i] - 1) * w->strides[i];
  }
  return last + 1;
}

static infer_status fa_infer(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  const fused_attention_params *p = params;
  infer_dtype dt = in[0]->dtype;
  for (int k = 0; k < 3; k++) {
    if (in[k]->dtype != dt || !dtype_is_float(dt))
      return infer_fail(INFER_ERR_UNSUPPORTED, "FusedAttention: inputs of dtype %s",
                        infer_dtype_name(in[k]->dtype));
    if (view_span(&p->view[k]) > dims_count(in[k]->rank, in[k]->dims))
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: %s reaches past its input",
                        attn_view_attr[k]);
  }
  tensor *y = out[0];
  y->dtype = dt;
  y->rank = p->out_rank;
  memcpy(y->dims, p->out_dims, sizeof(int64_t) * (size_t)p->out_rank);
  const attn_view *o = &p->view[ATTN_O];
  if (view_span(o) > dims_count(y->rank, y->dims) ||
      o->dims[0] * o->dims[1] * o->dims[2] * o->dims[3] != dims_count(y->rank, y->dims))
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedAttention: o_view does not cover the output");
  return INFER_OK;
}

/* one row of scores (Sk doubles) and its Dv sums */
static int64_t fa_workspace(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out) {
  const fused_attention_params *p = params;
  return (p->view[ATTN_K].dims[2] + p->view[ATTN_V].dims[3]) * (int64_t)sizeof(double);
}

static int64_t at(const attn_view *w, int64_t b1, int64_t b2, int64_t r, int64_t c) {
  return w->offset + b1 * w->strides[0] + b2 * w->strides[1] + r * w->strides[2] + c * w->strides[3];
}

/* How many keys (the first ones) query row i sees: all of them, or under the causal mask
 * those j <= i + causal_offset, clamped to [0, sk]. An offset of sk or more sees all (and
 * cannot overflow i + offset); below that i + offset + 1 stays in range. */
static int64_t keys_seen(const fused_attention_params *p, int64_t i, int64_t sk) {
  if (!p->causal || p->causal_offset >= sk) return sk;
  int64_t n = i + p->causal_offset + 1;
  return n < 0 ? 0 : n > sk ? sk : n;
}

/* One query row: O[b1, b2, i] = softmax(scale * q . k_j, j < nk) . v_j, over the first nk
 * keys of key/value head g (nk >= 1). s: nk scores, acc: dv sums. */
static void fa_row(const fused_attention_params *p, const tensor *const *in, tensor *out,
                   int64_t b1, int64_t b2, int64_t g, int64_t i, int64_t nk, double *s,
                   double *acc) {
  const attn_view *q = &p->view[ATTN_Q], *k = &p->view[ATTN_K], *v = &p->view[ATTN_V],
                  *o = &p->view[ATTN_O];
  int64_t d = q->dims[3], dv = v->dims[3];
  bool f32 = in[0]->dtype == INFER_DTYPE_FLOAT32; /* direct reads (the common reference) */
  const float *qf = in[0]->data, *kf = in[1]->data, *vf = in[2]->data;
  double mx = -INFINITY;
  for (int64_t j = 0; j < nk; j++) {
    double dot = 0;
    if (f32) {
      const float *qr = qf + at(q, b1, b2, i, 0), *kr = kf + at(k, b1, g, j, 0);
      for (int64_t c = 0; c < d; c++) dot += (double)qr[c * q->strides[3]] * kr[c * k->strides[3]];
    } else {
      for (int64_t c = 0; c < d; c++)
        dot += tensor_get_f64(in[0], at(q, b1, b2, i, c)) * tensor_get_f64(in[1], at(k, b1, g, j, c));
    }
    s[j] = dot * p->scale;
    if (s[j] > mx || isnan(s[j])) mx = s[j];
  }
  double sum = 0;
  for (int64_t j = 0; j < nk; j++) sum += (s[j] = exp(s[j] - mx));
  for (int64_t c = 0; c < dv; c++) acc[c] = 0;
  for (int64_t j = 0; j < nk; j++) {
    if (f32) {
      const float *vr = vf + at(v, b1, g, j, 0);
      for (int64_t c = 0; c < dv; c++) acc[c] += s[j] * vr[c * v->strides[3]];
    } else {
      for (int64_t c = 0; c < dv; c++) acc[c] += s[j] * tensor_get_f64(in[2], at(v, b1, g, j, c));
    }
  }
  for (int64_t c = 0; c < dv; c++) tensor_set_f64(out, at(o, b1, b2, i, c), acc[c] / sum);
}

static infer_status fa_run(const node *n, const void *params, const tensor *const *in,
                           tensor *const *out, void *ws) {
  const fused_attention_params *p = params;
  const attn_view *q = &p->view[ATTN_Q], *o = &p->view[ATTN_O];
  int64_t sk = p->view[ATTN_K].dims[2], dv = p->view[ATTN_V].dims[3];
  double *s = ws, *acc = s + sk;
  for (int64_t b1 = 0; b1 < q->dims[0]; b1++)
    for (int64_t b2 = 0; b2 < q->dims[1]; b2++)
      for (int64_t i = 0; i < q->dims[2]; i++) {
        int64_t nk = keys_seen(p, i, sk);
        if (nk > 0) {
          fa_row(p, in, out[0], b1, b2, b2 / p->kv_group, i, nk, s, acc);
        } else { /* every key masked: 0, not the 0/0 of an empty softmax */
          for (int64_t c = 0; c < dv; c++) tensor_set_f64(out[0], at(o, b1, b2, i, c), 0);
        }
      }
  return INFER_OK;
}

static const char *const fa_attrs[] = {"q_view", "k_view", "v_view", "o_view", "scale",
                                       "out_shape", "kv_group", "causal", "causal_offset",
                                       NULL};
static const op_desc op_fused_attention = {
    .name = "FusedAttention", .domain = "infer", .since = 1, .until = 1,
    .min_inputs = 3, .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
    .attrs = fa_attrs, .parse = fa_parse, .infer = fa_infer, .run = fa_run,
    .workspace = fa_workspace};

const op_desc *const ops_attention_fused[] = {&op_fused_attention, NULL};
