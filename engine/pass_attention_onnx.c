/* pass_attention_onnx.c: ONNX's own Attention op (opset 23, 24; ops/attention_onnx.c, a
 * CPU reference only) as one FusedAttention (ops/attention_fused.h), which the GPU runs
 * as its flash-attention kernel.
 *
 * Taken when the node is the form FusedAttention computes: inputs Q, K and V only (no
 * attn_mask, past_key / past_value or nonpad_kv_seqlen); Y the only output used
 * (present_key, present_value and qk_matmul_output absent, or unread and not graph
 * outputs); no softcap; float32 or float16; fixed shapes, none of them empty (the views
 * fix every size: not a flexible batch, as in fuse-attention); q_heads a multiple of
 * kv_heads. Each of Q, K, V and Y is then a view [B, heads, S, head size] of itself:
 *
 *   4-D [B, H, S, D]:    dims {B, H, S, D}, strides {H*S*D, S*D, D, 1}
 *   3-D [B, S, H * D]:   dims {B, H, S, D}, strides {S*H*D, D, H*D, 1}
 *
 * (Y is [B, Sq, Hq * Dv] for a 3-D Q, [B, Hq, Sq, Dv] for a 4-D one); the scale is the
 * attribute, else 1/sqrt(D) (0 counts as absent, as in the CPU reference); kv_group =
 * q_heads / kv_heads; causal = is_causal with offset 0: without a past or
 * nonpad_kv_seqlen ONNX's causal mask lets query i see keys j <= i. The node is rewritten
 * in place and reads what it read: no reader count changes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/attention_fused.h"
#include "../ops/op.h"
#include "passes.h"

/* Heads and sizes of one Attention node, as attention_onnx.c defines them. */
typedef struct onnx_attn_shape {
  int64_t b, qh, kvh, sq, sk, d, dv;
} onnx_attn_shape;

/* Known at build, fixed for every run, of dtype dt. */
static bool fixed(const value *v, infer_dtype dt) {
  return v->has_type && v->shape_known && !v->shape_dep && !v->data_dep && v->t.dtype == dt;
}

/* Q, K and V given; attn_mask, past_key, past_value and nonpad_kv_seqlen absent. */
static bool reads_qkv_only(const node *n) {
  if (n->n_inputs < 3 || n->n_captures != 0) return false;
  for (int k = 0; k < n->n_inputs; k++)
    if ((k < 3) != (n->inputs[k] >= 0)) return false;
  return true;
}

/* Y written; present_key, present_value and qk_matmul_output unused. */
static bool writes_y_only(const graph *g, const node *n, const int *readers) {
  if (n->n_outputs < 1 || n->outputs[0] < 0) return false;
  for (int k = 1; k < n->n_outputs; k++) {
    int v = n->outputs[k];
    if (v >= 0 && (readers[v] > 0 || pass_is_graph_output(g, v))) return false;
  }
  return true;
}

/* The heads and sizes from Q, K, V's shapes (and the head counts of 3-D inputs); false
 * when they do not fit together, some size is 0, or the query heads are not groups of
 * key heads. Shape inference has checked most of this; the views must not rely on it. */
static bool attn_shape(const node *n, const tensor *q, const tensor *k, const tensor *v,
                       onnx_attn_shape *s) {
  if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4)) return false;
  if (q->rank == 4) {
    *s = (onnx_attn_shape){q->dims[0], q->dims[1], k->dims[1], q->dims[2], k->dims[2],
                           q->dims[3], v->dims[3]};
    if (k->dims[3] != s->d || v->dims[1] != s->kvh || v->dims[2] != s->sk) return false;
  } else {
    int64_t qh = 0, kvh = 0;
    if (attr_get_int(n, "q_num_heads", 0, &qh) != INFER_OK ||
        attr_get_int(n, "kv_num_heads", 0, &kvh) != INFER_OK || qh < 1 || kvh < 1 ||
        q->dims[2] % qh || k->dims[2] % kvh || v->dims[2] % kvh)
      return false;
    *s = (onnx_attn_shape){q->dims[0], qh, kvh, q->dims[1], k->dims[1], q->dims[2] / qh,
                           v->dims[2] / kvh};
    if (k->dims[2] / kvh != s->d || v->dims[1] != s->sk) return false;
  }
  if (k->dims[0] != s->b || v->dims[0] != s->b) return false;
  const int64_t all[7] = {s->b, s->qh, s->kvh, s->sq, s->sk, s->d, s->dv};
  for (int i = 0; i < 7; i++)
    if (all[i] < 1) return false;
  return s->qh % s->kvh == 0;
}

/* A [B, heads, S, w] (rank 4) or [B, S, heads * w] (rank 3) tensor as the view
 * [B, heads, S, w]. */
static attn_view head_view(const tensor *t, int64_t heads) {
  const int64_t *d = t->dims;
  if (t->rank == 4)
    return (attn_view){0, {d[0], d[1], d[2], d[3]}, {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}};
  int64_t w = d[2] / heads;
  return (attn_view){0, {d[0], heads, d[1], w}, {d[1] * d[2], w, d[2], 1}};
}

/* Node i as FusedAttention when it fits (see the top); *done when it was rewritten. */
static infer_status map_attention(graph *g, int i, const int *readers, bool *done) {
  *done = false;
  const node *n = &g->nodes[i];
  if (n->opset < 23 || n->opset > 24 || !reads_qkv_only(n) || !writes_y_only(g, n, readers))
    return INFER_OK;
  const value *q = &g->values[n->inputs[0]], *k = &g->values[n->inputs[1]],
              *v = &g->values[n->inputs[2]], *y = &g->values[n->outputs[0]];
  infer_dtype dt = q->t.dtype;
  if ((dt != INFER_DTYPE_FLOAT32 && dt != INFER_DTYPE_FLOAT16) || !fixed(q, dt) ||
      !fixed(k, dt) || !fixed(v, dt) || !fixed(y, dt))
    return INFER_OK;
  float softcap = 0, scale = 0;
  int64_t causal = 0;
  if (attr_get_float(n, "softcap", 0, &softcap) != INFER_OK || softcap != 0 ||
      attr_get_float(n, "scale", 0, &scale) != INFER_OK ||
      attr_get_int(n, "is_causal", 0, &causal) != INFER_OK)
    return INFER_OK;
  onnx_attn_shape s;
  if (!attn_shape(n, &q->t, &k->t, &v->t, &s)) return INFER_OK;
  /* Y as shape inference wrote it: [B, Sq, Hq * Dv] or [B, Hq, Sq, Dv] */
  const int64_t y3[3] = {s.b, s.sq, s.qh * s.dv}, y4[4] = {s.b, s.qh, s.sq, s.dv};
  if (!dims_equal(y->t.rank, y->t.dims, q->t.rank, q->t.rank == 3 ? y3 : y4)) return INFER_OK;
  fused_attention_params fp = {
      .view = {head_view(&q->t, s.qh), head_view(&k->t, s.kvh), head_view(&v->t, s.kvh),
               head_view(&y->t, s.qh)},
      .scale = scale != 0 ? scale : (float)(1 / sqrt((double)s.d)),
      .kv_group = s.qh / s.kvh,
      .causal = causal != 0,
      .causal_offset = 0,
      .out_rank = y->t.rank};
  memcpy(fp.out_dims, y->t.dims, sizeof(int64_t) * (size_t)y->t.rank);
  int ins[3] = {n->inputs[0], n->inputs[1], n->inputs[2]}, dropped[3] = {-1, -1, -1};
  for (int o = 1; o < n->n_outputs && o < 4; o++) dropped[o - 1] = n->outputs[o];
  TRY(pass_rewrite_fused_attention(g, i, ins, &fp));
  /* the outputs after Y went with the rewrite: no node writes them any more */
  for (int o = 0; o < 3; o++)
    if (dropped[o] >= 0) g->values[dropped[o]].producer = -1;
  *done = true;
  return INFER_OK;
}

infer_status pass_fuse_attention_op(graph *g, int *rewritten) {
  *rewritten = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-attention-op: out of memory");
  infer_status st = INFER_OK;
  for (int i = 0; st == INFER_OK && i < g->n_nodes; i++) {
    if (!pass_node_is(&g->nodes[i], "Attention")) continue;
    bool done = false;
    st = map_attention(g, i, readers, &done);
    *rewritten += done;
  }
  free(readers);
  return st;
}
