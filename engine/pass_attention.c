/* pass_attention.c: scaled dot-product attention as one FusedAttention (domain infer,
 * ops/attention_fused.h). The exporters write it as
 *
 *   S = MatMul([scale *] Q', [scale *] K'^T) [* or / scale]  ->  Softmax(last axis)
 *   O = MatMul(softmax, V')
 *
 * where Q', K'^T and V' come out of Transposes, Reshapes and Slices of the projections
 * (heads split, K transposed, a fused QKV sliced), and O goes through more of them
 * (heads merged) before the output projection. All of those move bytes only: the pass
 * folds each operand's chain into a strided view of the value before it (engine/view.c)
 * and the output's into a strided view of the chain's last value, which the fused op
 * writes directly. The movement nodes before the products are left to remove-dead (other
 * readers may keep them); the products, the scales, the softmax and the output chain go.
 *
 * Taken when: the softmax's axis is the last; every intermediate has one reader; Q, K, V
 * have the same batch dims (rank 3 or 4, no broadcast); each view reads its last (head)
 * dim contiguously, as a kernel reading rows needs; and the sizes are fixed (not a
 * flexible batch, whose views would change per run). An additive mask is not taken yet. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/attention_fused.h"
#include "../ops/op.h"
#include "passes.h"
#include "view.h"

/* One-element float constant. */
static bool scalar_const(const graph *g, int v, double *out) {
  if (v < 0 || g->values[v].kind != VALUE_CONSTANT || !g->values[v].t.data ||
      dims_count(g->values[v].t.rank, g->values[v].t.dims) != 1 ||
      !dtype_is_float(g->values[v].t.dtype))
    return false;
  *out = tensor_get_f64(&g->values[v].t, 0);
  return true;
}

/* If v is x * c, c * x or x / c (c a scalar constant) with v read once: x, and *scale
 * multiplied by c (or 1/c); else v. `nodes` collects the node. */
static int strip_scale(const graph *g, int v, const int *readers, double *scale, int *nodes,
                       int *n_nodes) {
  int p = pass_producer(g, v);
  if (p < 0 || readers[v] != 1 || pass_is_graph_output(g, v)) return v;
  const node *n = &g->nodes[p];
  double c;
  bool mul = pass_node_is(n, "Mul"), div = pass_node_is(n, "Div");
  if ((!mul && !div) || n->n_inputs != 2) return v;
  int x = -1;
  if (scalar_const(g, n->inputs[1], &c)) x = n->inputs[0];
  else if (mul && scalar_const(g, n->inputs[0], &c)) x = n->inputs[1];
  if (x < 0 || (div && c == 0) || !dims_equal(g->values[x].t.rank, g->values[x].t.dims,
                                              g->values[v].t.rank, g->values[v].t.dims))
    return v;
  *scale *= div ? 1 / c : c;
  nodes[(*n_nodes)++] = p;
  return x;
}

/* The operand of a product as a view of the value holding its bytes; false when not
 * of rank 3 or 4. */
static bool operand_view(const graph *g, int v, const int *readers, double *scale, int *nodes,
                         int *n_nodes, view *w) {
  v = strip_scale(g, v, readers, scale, nodes, n_nodes);
  view_of(g, v, 16, w);
  /* a scale before the movement ops: positions do not change, so the view holds */
  int before = w->base;
  double s = 1;
  int dropped[1], nd = 0;
  int x = strip_scale(g, before, readers, &s, dropped, &nd);
  if (x != before) {
    w->base = x;
    *scale *= s;
    nodes[(*n_nodes)++] = dropped[0];
  }
  return w->rank == 3 || w->rank == 4;
}

/* The batch atoms of a view (its dims before the last two), size-1 ones dropped. */
static int batch_atoms(const view *w, view_atom *out) {
  int n = 0;
  for (int i = 0; i < w->rank - 2; i++)
    for (int a = 0; a < w->n_atoms[i]; a++)
      if (w->atoms[i][a].size != 1 && n < VIEW_MAX_ATOMS) out[n++] = w->atoms[i][a];
  return n;
}

/* Splits the atoms (outermost first) at the inner products in cuts[] (each a product of
 * the innermost sizes); false when a cut falls inside an atom it does not divide. */
static int split_at(view_atom *at, int n, const int64_t *cuts, int n_cuts, view_atom *out) {
  int m = 0;
  int64_t inner = 1;
  view_atom rev[2 * VIEW_MAX_ATOMS];
  for (int a = n - 1; a >= 0; a--) {
    view_atom t = at[a];
    for (int c = 0; c < n_cuts; c++) {
      int64_t cut = cuts[c];
      if (cut <= inner || cut >= inner * t.size) continue;
      int64_t f = cut / inner;
      if (cut % inner || t.size % f || m == 2 * VIEW_MAX_ATOMS) return -1;
      rev[m++] = (view_atom){f, t.stride};
      t.stride *= f;
      t.size /= f;
      inner = cut;
    }
    if (m == 2 * VIEW_MAX_ATOMS) return -1;
    rev[m++] = t;
    inner *= t.size;
  }
  for (int a = 0; a < m; a++) out[a] = rev[m - 1 - a];
  return m;
}

/* The four views (Q, K, V, O) as [b1, b2, rows, cols] with one batch factorization for
 * all: false when a rows or cols dim has no single stride or the batches need more than
 * two dims. */
static bool canonical(const view *w, attn_view *out) {
  view_atom at[4][VIEW_MAX_ATOMS];
  int n[4];
  int64_t cuts[4 * VIEW_MAX_ATOMS];
  int n_cuts = 0;
  for (int k = 0; k < 4; k++) {
    n[k] = batch_atoms(&w[k], at[k]);
    int64_t inner = 1;
    for (int a = n[k] - 1; a > 0; a--) cuts[n_cuts++] = inner *= at[k][a].size;
  }
  for (int k = 0; k < 4; k++) {
    view_atom split[2 * VIEW_MAX_ATOMS];
    int m = split_at(at[k], n[k], cuts, n_cuts, split);
    if (m < 0 || m > 2) return false;
    int64_t rs, cs;
    if (!view_dim_stride(&w[k], w[k].rank - 2, &rs) || !view_dim_stride(&w[k], w[k].rank - 1, &cs))
      return false;
    attn_view *o = &out[k];
    o->offset = w[k].offset;
    o->dims[0] = m == 2 ? split[0].size : 1;
    o->strides[0] = m == 2 ? split[0].stride : 0;
    o->dims[1] = m >= 1 ? split[m - 1].size : 1;
    o->strides[1] = m >= 1 ? split[m - 1].stride : 0;
    o->dims[2] = view_dim(&w[k], w[k].rank - 2);
    o->strides[2] = rs;
    o->dims[3] = view_dim(&w[k], w[k].rank - 1);
    o->strides[3] = cs;
  }
  return true;
}

static void swap_last(view *w) {
  int64_t perm[INFER_MAX_RANK];
  for (int i = 0; i < w->rank; i++) perm[i] = i;
  perm[w->rank - 2] = w->rank - 1;
  perm[w->rank - 1] = w->rank - 2;
  view_transpose(w, perm);
}

static infer_status fuse_at(graph *g, int sm, int *readers, int *removed) {
  const node *smn = &g->nodes[sm];
  if (smn->n_inputs != 1 || smn->n_outputs != 1 || smn->outputs[0] < 0) return INFER_OK;
  int x = smn->inputs[0], p_out = smn->outputs[0];
  const value *xv = &g->values[x];
  /* views fix every size: not for values whose batch changes from run to run (the CPU's
   * flexible batch) */
  if (xv->shape_dep || xv->data_dep) return INFER_OK;
  if (!xv->shape_known || xv->t.rank < 3 || xv->t.rank > 4 ||
      (xv->t.dtype != INFER_DTYPE_FLOAT32 && xv->t.dtype != INFER_DTYPE_FLOAT16))
    return INFER_OK;
  int64_t axis = -1; /* before opset 13 the default is 1, and the axis splits 2-D */
  if (attr_get_int(smn, "axis", smn->opset < 13 ? 1 : -1, &axis) != INFER_OK) return INFER_OK;
  if (axis != -1 && axis != xv->t.rank - 1) return INFER_OK;
  int nodes[16], n_nodes = 0;
  double scale = 1;
  int s = strip_scale(g, x, readers, &scale, nodes, &n_nodes);
  int mm1 = pass_producer(g, s);
  if (mm1 < 0 || !pass_node_is(&g->nodes[mm1], "MatMul") || readers[s] != 1 ||
      pass_is_graph_output(g, s) || readers[x] != 1 || pass_is_graph_output(g, x))
    return INFER_OK;
  int mm2 = pass_sole_reader(g, p_out, readers);
  if (mm2 < 0 || !pass_node_is(&g->nodes[mm2], "MatMul") || g->nodes[mm2].inputs[0] != p_out)
    return INFER_OK;
  nodes[n_nodes++] = mm1;
  view w[4]; /* Q, K, V, O */
  if (!operand_view(g, g->nodes[mm1].inputs[0], readers, &scale, nodes, &n_nodes, &w[ATTN_Q]) ||
      !operand_view(g, g->nodes[mm1].inputs[1], readers, &scale, nodes, &n_nodes, &w[ATTN_K]) ||
      !operand_view(g, g->nodes[mm2].inputs[1], readers, &scale, nodes, &n_nodes, &w[ATTN_V]))
    return INFER_OK;
  swap_last(&w[ATTN_K]); /* K [.., Sk, D] from K^T [.., D, Sk] */
  infer_dtype dt = xv->t.dtype;
  for (int k = 0; k < 3; k++)
    if (g->values[w[k].base].t.dtype != dt) return INFER_OK;
  /* the output: forward through movement nodes read once, then O's view in the last */
  int o = g->nodes[mm2].outputs[0], last = o, last_node = mm2, out_chain[16], n_out = 0;
  while (n_out < 16 && readers[last] == 1 && !pass_is_graph_output(g, last)) {
    int r = pass_sole_reader(g, last, readers);
    if (r < 0 || !view_invertible(g, &g->nodes[r])) break;
    out_chain[n_out++] = r;
    last = g->nodes[r].outputs[0];
    last_node = r;
  }
  while (!view_into(g, o, last, &w[ATTN_O])) { /* back off to the longest chain that inverts */
    last_node = --n_out > 0 ? out_chain[n_out - 1] : mm2;
    last = g->nodes[last_node].outputs[0];
  }
  attn_view cv[4];
  if (!canonical(w, cv)) return INFER_OK;
  const attn_view *q = &cv[ATTN_Q], *k = &cv[ATTN_K], *v = &cv[ATTN_V], *ov = &cv[ATTN_O];
  for (int i = 0; i < 2; i++)
    if (k->dims[i] != q->dims[i] || v->dims[i] != q->dims[i] || ov->dims[i] != q->dims[i])
      return INFER_OK;
  if (k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2] || ov->dims[2] != q->dims[2] ||
      ov->dims[3] != v->dims[3] || q->strides[3] != 1 || k->strides[3] != 1 ||
      v->strides[3] != 1 || ov->strides[3] != 1)
    return INFER_OK;
  /* rewrite: the chain's last node becomes the fused op, the rest go */
  int ins[3] = {w[ATTN_Q].base, w[ATTN_K].base, w[ATTN_V].base};
  for (int k = 0; k < n_nodes; k++) pass_remove_node(g, nodes[k], readers);
  pass_remove_node(g, sm, readers);
  if (last_node != mm2) pass_remove_node(g, mm2, readers);
  for (int k = 0; k < n_out - 1; k++) pass_remove_node(g, out_chain[k], readers);
  for (int k = 0; k < g->nodes[last_node].n_inputs; k++)
    if (g->nodes[last_node].inputs[k] >= 0) readers[g->nodes[last_node].inputs[k]]--;
  const value *lv = &g->values[last];
  fused_attention_params fp = {.scale = (float)scale, .kv_group = 1, .out_rank = lv->t.rank};
  memcpy(fp.view, cv, sizeof fp.view);
  memcpy(fp.out_dims, lv->t.dims, sizeof(int64_t) * (size_t)fp.out_rank);
  TRY(pass_rewrite_fused_attention(g, last_node, ins, &fp));
  for (int k = 0; k < 3; k++) readers[ins[k]]++;
  *removed += n_nodes + 1 + (n_out > 1 ? n_out - 1 : 0) + (n_out > 0);
  return INFER_OK;
}

infer_status pass_fuse_attention(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-attention: out of memory");
  infer_status st = INFER_OK;
  for (int i = 0; st == INFER_OK && i < g->n_nodes; i++)
    if (pass_node_is(&g->nodes[i], "Softmax")) st = fuse_at(g, i, readers, removed);
  free(readers);
  return st;
}
