/* attention_onnx.c: ONNX's Attention (opset 23, 24: nonpad_kv_seqlen), CPU reference.
 * Per batch, query head and query row, in double:
 *   s_j = scale * q . k_j                 (scale: the attribute, else 1 / sqrt(head size))
 *   s_j = softcap * tanh(s_j / softcap)    (softcap > 0)
 *   w_j = s_j + mask_j + causal_j + pad_j  (each 0 or -inf, a float mask its value)
 *   p = softmax(w) (a row with every w_j = -inf gives p = 0), y = sum_j p_j v_j
 * over the keys of past_key then K (present_key, present_value: that concatenation).
 * Inputs are [B, heads, S, D] or [B, S, heads * D] (q_num_heads, kv_num_heads say how
 * many); query heads share key heads in groups (GQA: head h reads key head
 * h / (q_heads / kv_heads)). The mask broadcasts to [B, q_heads, Sq, T] from the right;
 * keys past its last dim are masked. Causal masking is bottom-right aligned: query i sees
 * key j when j <= i + offset, the offset being past_key's length, or without a past
 * nonpad_kv_seqlen[b] - Sq, else 0; nonpad_kv_seqlen also masks keys j >= it.
 * qk_matmul_output: s (modes 0, 1), w (2) or p (3). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct onnx_attn_params {
  int64_t causal, q_heads, kv_heads, qk_mode;
  float scale; /* 0: 1 / sqrt(head size) */
  float softcap;
} onnx_attn_params;

static const char *const attn_attrs[] = {"is_causal", "kv_num_heads", "q_num_heads",
                                         "qk_matmul_output_mode", "scale", "softcap",
                                         "softmax_precision", NULL};

static infer_status attn_parse(const node *n, void **params) {
  onnx_attn_params v;
  TRY(attr_get_int(n, "is_causal", 0, &v.causal));
  TRY(attr_get_int(n, "q_num_heads", 0, &v.q_heads));
  TRY(attr_get_int(n, "kv_num_heads", 0, &v.kv_heads));
  TRY(attr_get_int(n, "qk_matmul_output_mode", 0, &v.qk_mode));
  TRY(attr_get_float(n, "scale", 0, &v.scale));
  TRY(attr_get_float(n, "softcap", 0, &v.softcap));
  if (v.qk_mode < 0 || v.qk_mode > 3)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: qk_matmul_output_mode %lld (0..3)",
                      (long long)v.qk_mode);
  if (v.q_heads < 0 || v.kv_heads < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: negative head counts");
  onnx_attn_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Attention: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

/* The node's inputs and outputs padded with NULL to every slot the op defines. */
typedef struct attn_io {
  const tensor *q, *k, *v, *mask, *past_k, *past_v, *nonpad;
  tensor *y, *present_k, *present_v, *qk;
} attn_io;

static attn_io attn_io_of(const node *n, const tensor *const *in, tensor *const *out) {
  const tensor *i[7] = {0};
  tensor *o[4] = {0};
  for (int k = 0; k < n->n_inputs && k < 7; k++) i[k] = in[k];
  for (int k = 0; k < n->n_outputs && k < 4; k++) o[k] = out[k];
  attn_io io = {i[0], i[1], i[2], i[3], i[4], i[5], i[6], o[0], o[1], o[2], o[3]};
  return io;
}

typedef struct attn_dims {
  bool three_d;
  int64_t b, qh, kvh, sq, skv, sp, t, d, dv;
  int mask_rank;
  int64_t mask_dims[4]; /* right-aligned to [B, qH, Sq, Tm], 1 where it broadcasts */
} attn_dims;

static infer_status attn_dims_of(const onnx_attn_params *p, const attn_io *io, attn_dims *a) {
  const tensor *q = io->q, *k = io->k, *v = io->v;
  memset(a, 0, sizeof *a);
  if (!dtype_is_float(q->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Attention: Q of dtype %s", infer_dtype_name(q->dtype));
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: Q, K and V differ in dtype");
  if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: Q, K, V must all have rank 3 or 4");
  a->three_d = q->rank == 3;
  a->b = q->dims[0];
  if (a->three_d) {
    if (p->q_heads < 1 || p->kv_heads < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Attention: 3-D inputs need q_num_heads and kv_num_heads");
    a->qh = p->q_heads;
    a->kvh = p->kv_heads;
    if (q->dims[2] % a->qh || k->dims[2] % a->kvh || v->dims[2] % a->kvh)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: hidden sizes not divisible by the "
                        "head counts");
    a->sq = q->dims[1];
    a->skv = k->dims[1];
    a->d = q->dims[2] / a->qh;
    a->dv = v->dims[2] / a->kvh;
    if (k->dims[2] / a->kvh != a->d || k->dims[0] != a->b || v->dims[0] != a->b ||
        v->dims[1] != a->skv)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: Q, K, V shapes disagree");
  } else {
    a->qh = q->dims[1];
    a->sq = q->dims[2];
    a->d = q->dims[3];
    a->kvh = k->dims[1];
    a->skv = k->dims[2];
    a->dv = v->dims[3];
    if (k->dims[0] != a->b || k->dims[3] != a->d || v->dims[0] != a->b || v->dims[1] != a->kvh ||
        v->dims[2] != a->skv)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: Q, K, V shapes disagree");
  }
  if (a->kvh < 1 || a->qh % a->kvh)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: %lld query heads are not a multiple "
                      "of %lld key heads", (long long)a->qh, (long long)a->kvh);
  if ((io->past_k == NULL) != (io->past_v == NULL))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: past_key and past_value go together");
  if (io->past_k) {
    const tensor *pk = io->past_k, *pv = io->past_v;
    if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != a->b || pk->dims[1] != a->kvh ||
        pk->dims[3] != a->d || pv->dims[0] != a->b || pv->dims[1] != a->kvh ||
        pv->dims[2] != pk->dims[2] || pv->dims[3] != a->dv || pk->dtype != q->dtype ||
        pv->dtype != q->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: past_key / past_value must be "
                        "[%lld, %lld, past, %lld / %lld]", (long long)a->b, (long long)a->kvh,
                        (long long)a->d, (long long)a->dv);
    a->sp = pk->dims[2];
  }
  a->t = a->sp + a->skv;
  if (io->mask) {
    const tensor *m = io->mask;
    if (m->dtype != INFER_DTYPE_BOOL && !dtype_is_float(m->dtype))
      return infer_fail(INFER_ERR_UNSUPPORTED, "Attention: attn_mask of dtype %s",
                        infer_dtype_name(m->dtype));
    if (m->rank < 1 || m->rank > 4)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: attn_mask of rank %d", m->rank);
    const int64_t full[4] = {a->b, a->qh, a->sq, a->t};
    a->mask_rank = m->rank;
    for (int k = 0; k < 4; k++) a->mask_dims[k] = 1;
    for (int k = 0; k < m->rank; k++) {
      int64_t md = m->dims[m->rank - 1 - k], fd = full[3 - k];
      bool ok = k == 0 ? md >= 1 && md <= fd : md == 1 || md == fd;
      if (!ok)
        return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: attn_mask does not broadcast to "
                          "[%lld, %lld, %lld, %lld]", (long long)full[0], (long long)full[1],
                          (long long)full[2], (long long)full[3]);
      a->mask_dims[3 - k] = md;
    }
  }
  if (io->nonpad && (io->nonpad->rank != 1 || io->nonpad->dims[0] != a->b ||
                     (io->nonpad->dtype != INFER_DTYPE_INT64 && io->nonpad->dtype != INFER_DTYPE_INT32)))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: nonpad_kv_seqlen must be int64 [%lld]",
                      (long long)a->b);
  return INFER_OK;
}

static infer_status attn_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const attn_io io = attn_io_of(n, in, out);
  attn_dims a;
  TRY(attn_dims_of(params, &io, &a));
  tensor *o[4] = {io.y, io.present_k, io.present_v, io.qk};
  int64_t shapes[4][4] = {{a.b, a.qh, a.sq, a.dv}, {a.b, a.kvh, a.t, a.d},
                          {a.b, a.kvh, a.t, a.dv}, {a.b, a.qh, a.sq, a.t}};
  if (a.three_d) {
    shapes[0][1] = a.sq;
    shapes[0][2] = a.qh * a.dv;
  }
  for (int k = 0; k < 4; k++) {
    if (!o[k]) continue;
    o[k]->dtype = io.q->dtype;
    o[k]->rank = k == 0 && a.three_d ? 3 : 4;
    memcpy(o[k]->dims, shapes[k], sizeof shapes[k]);
    if (tensor_nbytes(o[k]) < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Attention: output size overflows");
  }
  return INFER_OK;
}

static int64_t attn_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const attn_io io = attn_io_of(n, in, out);
  attn_dims a;
  if (attn_dims_of(params, &io, &a) != INFER_OK) return 0;
  return (3 * a.t + a.dv) * (int64_t)sizeof(double); /* s, w, p a key; y */
}

/* Element (b, head, row s, column c) of Q, K or V in their layout (3-D: [B, S, H * D]). */
static int64_t at(const attn_dims *a, int64_t heads, int64_t seq, int64_t width, int64_t b,
                  int64_t h, int64_t s, int64_t c) {
  return a->three_d ? ((b * seq + s) * heads + h) * width + c : ((b * heads + h) * seq + s) * width + c;
}

/* Key (or value) j of kv head h: past first, then the new ones. */
static double kv_get(const attn_dims *a, const tensor *past, const tensor *cur, int64_t width,
                     int64_t b, int64_t h, int64_t j, int64_t c) {
  if (j < a->sp) return tensor_get_f64(past, ((b * a->kvh + h) * a->sp + j) * width + c);
  return tensor_get_f64(cur, at(a, a->kvh, a->skv, width, b, h, j - a->sp, c));
}

static infer_status attn_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  const onnx_attn_params *p = params;
  const attn_io io = attn_io_of(n, in, out);
  attn_dims a;
  TRY(attn_dims_of(p, &io, &a));
  const double scale = p->scale != 0 ? p->scale : 1 / sqrt((double)a.d);
  const int64_t group = a.qh / a.kvh;
  double *s = ws, *w = s + a.t, *pr = w + a.t, *y = pr + a.t;
  for (int64_t b = 0; b < a.b; b++) {
    int64_t offset = 0, valid = a.t;
    if (io.nonpad) {
      valid = tensor_get_i64(io.nonpad, b);
      if (!io.past_k) offset = valid - a.sq;
    }
    if (io.past_k) offset = a.sp;
    for (int64_t h = 0; h < a.qh; h++) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < a.sq; i++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < a.t; j++) {
          double dot = 0;
          for (int64_t c = 0; c < a.d; c++)
            dot += tensor_get_f64(io.q, at(&a, a.qh, a.sq, a.d, b, h, i, c)) *
                   kv_get(&a, io.past_k, io.k, a.d, b, kh, j, c);
          double sj = dot * scale;
          if (p->softcap > 0) sj = p->softcap * tanh(sj / p->softcap);
          double bias = 0;
          if (io.mask) {
            const int64_t *md = a.mask_dims;
            if (j >= md[3]) {
              bias = -INFINITY;
            } else {
              int64_t mi = (((md[0] > 1 ? b : 0) * md[1] + (md[1] > 1 ? h : 0)) * md[2] +
                            (md[2] > 1 ? i : 0)) * md[3] + j;
              double m = tensor_get_f64(io.mask, mi);
              bias = io.mask->dtype == INFER_DTYPE_BOOL ? (m != 0 ? 0 : -INFINITY) : m;
            }
          }
          if (p->causal && j > i + offset) bias = -INFINITY;
          if (io.nonpad && j >= valid) bias = -INFINITY;
          s[j] = sj;
          w[j] = sj + bias;
          if (w[j] > mx) mx = w[j];
        }
        double sum = 0;
        for (int64_t j = 0; j < a.t; j++) {
          pr[j] = mx == -INFINITY ? 0 : exp(w[j] - mx); /* a row masked whole: p = 0 */
          sum += pr[j];
        }
        for (int64_t j = 0; j < a.t; j++)
          if (sum > 0) pr[j] /= sum;
        for (int64_t c = 0; c < a.dv; c++) y[c] = 0;
        for (int64_t j = 0; j < a.t; j++)
          if (pr[j] != 0)
            for (int64_t c = 0; c < a.dv; c++)
              y[c] += pr[j] * kv_get(&a, io.past_v, io.v, a.dv, b, kh, j, c);
        for (int64_t c = 0; c < a.dv; c++)
          tensor_set_f64(io.y, a.three_d ? ((b * a.sq + i) * a.qh + h) * a.dv + c
                                         : ((b * a.qh + h) * a.sq + i) * a.dv + c,
                         y[c]);
        if (io.qk) {
          const double *src = p->qk_mode == 2 ? w : p->qk_mode == 3 ? pr : s;
          for (int64_t j = 0; j < a.t; j++)
            tensor_set_f64(io.qk, ((b * a.qh + h) * a.sq + i) * a.t + j, src[j]);
        }
      }
    }
  }
  /* present_key / present_value: past then the new keys, [B, kv heads, T, D] */
  for (int side = 0; side < 2; side++) {
    tensor *dst = side ? io.present_v : io.present_k;
    if (!dst) continue;
    const int64_t width = side ? a.dv : a.d;
    for (int64_t b = 0; b < a.b; b++)
      for (int64_t h = 0; h < a.kvh; h++)
        for (int64_t j = 0; j < a.t; j++)
          for (int64_t c = 0; c < width; c++)
            tensor_set_f64(dst, ((b * a.kvh + h) * a.t + j) * width + c,
                           kv_get(&a, side ? io.past_v : io.past_k, side ? io.v : io.k, width, b,
                                  h, j, c));
  }
  return INFER_OK;
}

static const op_desc attention_op = {.name = "Attention",
                                     .domain = "",
                                     .since = 23,
                                     .until = OP_OPSET_MAX,
                                     .min_inputs = 3,
                                     .max_inputs = 7,
                                     .min_outputs = 1,
                                     .max_outputs = 4,
                                     .attrs = attn_attrs,
                                     .parse = attn_parse,
                                     .infer = attn_infer,
                                     .run = attn_run,
                                     .workspace = attn_workspace};

extern const op_desc op_rotary_embedding; /* rotary_embedding.c */

const op_desc *const ops_attention_onnx[] = {&attention_op, &op_rotary_embedding, NULL};
