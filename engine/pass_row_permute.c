/* pass_row_permute.c: move-row-transposes. Row-wise ops (a MatMul by a constant matrix,
 * Gemm, an elementwise op with a constant broadcast along the last axis, a unary op)
 * treat every row (all but the last axis) alike, so the order of the rows does not
 * matter to them; FusedAttention reads and writes through strided views, so it can
 * take any order. A Transpose of the leading axes (the last axis kept) that only such
 * ops read before FusedAttention, or that only such ops produce after it, moves bytes
 * for nothing.
 *
 * torch's nn.MultiheadAttention(batch_first=True) is the case (ViT's encoder blocks):
 *
 *   x [B,S,E] -> Transpose(1,0,2) -> MatMul W_qkv -> Add b -> FusedAttention (views)
 *   FusedAttention -> [S*B,E] -> Gemm W_o -> Reshape [S,B,E] -> Transpose(1,0,2) -> [B,S,E]
 *
 * Before: the projections read the transposed copy; the attention's views are rewritten
 * for the untransposed rows and the Transpose goes. After: the attention writes its rows
 * in the order of the Transpose's output, the ops between keep working row by row (their
 * rank-3 dims, and a Reshape's target, take the permuted order), and the Transpose goes.
 * A whole encoder block then runs without a transpose, and the residual Add after it
 * reads the product directly. Runs after fuse-attention, before the epilogue fusions
 * (which then see the row-wise ops next to their readers). */
#include <stdlib.h>
#include <string.h>

#include "../ops/attention_fused.h"
#include "../ops/op.h"
#include "passes.h"

#define MAX_CHAIN 16

/* Transpose node n of known perm and rank >= 3 that keeps the last axis and moves
 * another. */
static bool leading_transpose(const graph *g, const node *n, int *rank, int *perm) {
  if (!pass_node_is(n, "Transpose") || !pass_transpose_perm(g, n, rank, perm) || *rank < 3 ||
      perm[*rank - 1] != *rank - 1)
    return false;
  for (int i = 0; i < *rank; i++)
    if (perm[i] != i) return true;
  return false;
}

/* A constant that broadcasts along the rows only: every dim but the last is 1. */
static bool row_constant(const graph *g, int v) {
  if (!pass_is_constant(g, v)) return false;
  const tensor *t = &g->values[v].t;
  for (int i = 0; i + 1 < t->rank; i++)
    if (t->dims[i] != 1) return false;
  return true;
}

static bool same_leading(const value *a, const value *b) {
  if (!a->shape_known || !b->shape_known || a->t.rank != b->t.rank) return false;
  for (int i = 0; i + 1 < a->t.rank; i++)
    if (a->t.dims[i] != b->t.dims[i]) return false;
  return true;
}

static int64_t rows_of(const value *v) {
  int64_t r = 1;
  for (int i = 0; i + 1 < v->t.rank; i++) r *= v->t.dims[i];
  return r;
}

/* Node n computes each row of its output from the same row of v alone: its output, or
 * -1. The output keeps v's rank and rows (Gemm: 2-D, as its A). */
static int row_wise_output(const graph *g, const node *n, int v) {
  if (n->removed || n->n_outputs < 1 || n->outputs[0] < 0) return -1;
  for (int k = 1; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0) return -1;
  int y = n->outputs[0];
  const value *yv = &g->values[y], *vv = &g->values[v];
  if (!yv->shape_known || !vv->shape_known || yv->t.rank != vv->t.rank || rows_of(yv) != rows_of(vv))
    return -1;
  bool ok = false;
  if (pass_node_is(n, "MatMul")) {
    ok = n->n_inputs == 2 && n->inputs[0] == v && pass_is_constant(g, n->inputs[1]) &&
         g->values[n->inputs[1]].t.rank == 2;
  } else if (pass_node_is(n, "Gemm")) {
    int64_t ta = 0;
    ok = n->n_inputs >= 2 && n->inputs[0] == v && pass_is_constant(g, n->inputs[1]) &&
         (n->n_inputs < 3 || n->inputs[2] < 0 || row_constant(g, n->inputs[2])) &&
         attr_get_int(n, "transA", 0, &ta) == INFER_OK && ta == 0;
  } else if (pass_node_is(n, "Add") || pass_node_is(n, "Sub") || pass_node_is(n, "Mul") ||
             pass_node_is(n, "Div")) {
    ok = n->n_inputs == 2 && n->inputs[0] != n->inputs[1] &&
         (n->inputs[0] == v ? row_constant(g, n->inputs[1]) : row_constant(g, n->inputs[0]));
  } else if (pass_node_is(n, "Relu") || pass_node_is(n, "Gelu") || pass_node_is(n, "Sigmoid") ||
             pass_node_is(n, "Tanh") || pass_node_is(n, "Erf")) {
    ok = n->n_inputs == 1 && n->inputs[0] == v;
  }
  return ok ? y : -1;
}

/* Node r computes nothing anyone reads (the movement nodes fuse-attention folded into
 * its views stay until remove-dead): every output unread, or read only by such nodes. */
static bool dead_node(const graph *g, int r, int depth) {
  const node *n = &g->nodes[r];
  if (depth > 8) return false;
  for (int k = 0; k < n->n_outputs; k++) {
    int y = n->outputs[k];
    if (y < 0) continue;
    if (pass_is_graph_output(g, y)) return false;
    for (int j = 0; j < g->n_nodes; j++) {
      const node *m = &g->nodes[j];
      if (m->removed) continue;
      for (int q = 0; q < m->n_inputs; q++)
        if (m->inputs[q] == y && !dead_node(g, j, depth + 1)) return false;
    }
  }
  return true;
}

/* Marks dead node r (dead_node) and the nodes reading its outputs removed (how many it
 * marked): they would
 * read the values this pass reshapes with the dims they had, and later passes (the
 * row gathers of fuse-row-gather) must not build on them. */
static int remove_dead(graph *g, int r, int *readers) {
  const node *n = &g->nodes[r];
  int count = 0;
  for (int k = 0; k < n->n_outputs; k++) {
    int y = n->outputs[k];
    for (int j = 0; y >= 0 && j < g->n_nodes; j++) {
      if (g->nodes[j].removed) continue;
      for (int q = 0; q < g->nodes[j].n_inputs; q++)
        if (g->nodes[j].inputs[q] == y) {
          count += remove_dead(g, j, readers);
          break;
        }
    }
  }
  if (g->nodes[r].removed) return count;
  pass_remove_node(g, r, readers);
  return count + 1;
}

/* View v of a row-major tensor of `rank` dims `dims`, seen in the tensor holding the
 * same elements with its axes permuted: new axis i is old axis perm[i]. Each view dim
 * must step within one old axis, and the steps of all dims on an axis must stay inside
 * it (no carry into the next), so that the element offsets map exactly; false when not. */
static bool permute_view(attn_view *v, int rank, const int64_t *dims, const int *perm) {
  int64_t so[INFER_MAX_RANK], sn[INFER_MAX_RANK], nd[INFER_MAX_RANK], reach[INFER_MAX_RANK];
  int64_t s_new_of_old[INFER_MAX_RANK];
  for (int i = 0; i < rank; i++) nd[i] = dims[perm[i]];
  so[rank - 1] = sn[rank - 1] = 1;
  for (int i = rank - 2; i >= 0; i--) {
    so[i] = so[i + 1] * dims[i + 1];
    sn[i] = sn[i + 1] * nd[i + 1];
  }
  for (int i = 0; i < rank; i++) s_new_of_old[perm[i]] = sn[i];
  int64_t off = v->offset, noff = 0;
  if (off < 0) return false;
  for (int a = 0; a < rank; a++) {
    int64_t c = off / so[a];
    off -= c * so[a];
    if (c >= dims[a]) return false;
    reach[a] = c;
    noff += c * s_new_of_old[a];
  }
  attn_view out = *v;
  out.offset = noff;
  for (int j = 0; j < 4; j++) {
    int64_t e = v->dims[j], st = v->strides[j];
    if (e <= 1 || st == 0) continue;
    if (st < 0) return false;
    int a = 0;
    while (a < rank && st % so[a]) a++;
    if (a == rank) return false; /* so[rank - 1] = 1 divides everything */
    int64_t k = st / so[a];
    reach[a] += k * (e - 1);
    out.strides[j] = k * s_new_of_old[a];
  }
  for (int a = 0; a < rank; a++)
    if (reach[a] >= dims[a]) return false;
  *v = out;
  return true;
}

/* Value v's dims with the leading axes permuted (new axis i = old axis perm[i]). */
static void permute_dims(value *v, const int *perm) {
  int64_t d[INFER_MAX_RANK];
  for (int i = 0; i < v->t.rank; i++) d[i] = v->t.dims[perm[i]];
  memcpy(v->t.dims, d, sizeof(int64_t) * (size_t)v->t.rank);
}

/* Before: Transpose node i whose output only row-wise ops read, ending in FusedAttention
 * inputs only. */
static infer_status move_before(graph *g, int i, int *readers, int *removed) {
  int rank, perm[INFER_MAX_RANK], inv[INFER_MAX_RANK];
  if (!leading_transpose(g, &g->nodes[i], &rank, perm)) return INFER_OK;
  int x = g->nodes[i].inputs[0], t = g->nodes[i].outputs[0];
  if (x < 0 || t < 0 || !g->values[t].shape_known || pass_is_graph_output(g, t)) return INFER_OK;
  for (int a = 0; a < rank; a++) inv[perm[a]] = a;
  /* the values reached (t first) and the attention nodes at the end */
  int vals[MAX_CHAIN], n_vals = 1, attn[MAX_CHAIN], n_attn = 0, dead[MAX_CHAIN], n_dead = 0;
  vals[0] = t;
  for (int q = 0; q < n_vals; q++) {
    int u = vals[q];
    if (pass_is_graph_output(g, u) || !same_leading(&g->values[u], &g->values[t])) return INFER_OK;
    int seen = 0;
    for (int r = 0; r < g->n_nodes; r++) {
      const node *n = &g->nodes[r];
      if (n->removed) continue;
      int uses = 0;
      for (int k = 0; k < n->n_inputs; k++) uses += n->inputs[k] == u;
      if (!uses) continue;
      seen += uses;
      if (dead_node(g, r, 0)) { /* folded into a view: removed below with what it feeds */
        if (n_dead == MAX_CHAIN) return INFER_OK;
        dead[n_dead++] = r;
        continue;
      }
      if (n->op_type && n->domain && strcmp(n->domain, "infer") == 0 &&
          strcmp(n->op_type, "FusedAttention") == 0 && n->params) {
        for (int k = 3; k < n->n_inputs; k++)
          if (n->inputs[k] == u) return INFER_OK;
        bool listed = false;
        for (int a = 0; a < n_attn; a++) listed |= attn[a] == r;
        if (!listed) {
          if (n_attn == MAX_CHAIN) return INFER_OK;
          attn[n_attn++] = r;
        }
        continue;
      }
      int y = uses == 1 ? row_wise_output(g, n, u) : -1;
      if (y < 0 || n_vals == MAX_CHAIN) return INFER_OK;
      vals[n_vals++] = y;
    }
    if (seen != readers[u] || seen == 0) return INFER_OK;
  }
  if (n_attn == 0) return INFER_OK;
  /* every view must map before anything changes */
  fused_attention_params fps[MAX_CHAIN];
  for (int a = 0; a < n_attn; a++) {
    fps[a] = *(const fused_attention_params *)g->nodes[attn[a]].params;
    for (int q = 0; q < n_vals; q++) {
      const value *uv = &g->values[vals[q]];
      for (int k = 0; k < 3; k++)
        if (g->nodes[attn[a]].inputs[k] == vals[q] &&
            !permute_view(&fps[a].view[k], uv->t.rank, uv->t.dims, inv))
          return INFER_OK;
    }
  }
  for (int a = 0; a < n_attn; a++) {
    int ins[3];
    memcpy(ins, g->nodes[attn[a]].inputs, sizeof ins);
    TRY(pass_rewrite_fused_attention(g, attn[a], ins, &fps[a]));
  }
  for (int d = 0; d < n_dead; d++) *removed += remove_dead(g, dead[d], readers);
  for (int q = 1; q < n_vals; q++) permute_dims(&g->values[vals[q]], inv);
  pass_replace_uses(g, t, x, readers);
  pass_remove_node(g, i, readers);
  ++*removed;
  return INFER_OK;
}

/* After: FusedAttention node i whose output reaches, through row-wise ops and reshapes
 * of the rows, a Transpose of the leading axes. */
static infer_status move_after(graph *g, int i, int *readers, int *removed) {
  int o = g->nodes[i].outputs[0];
  if (o < 0 || !g->values[o].shape_known) return INFER_OK;
  int vals[MAX_CHAIN], nodes[MAX_CHAIN], n_vals = 0, cur = o, tr = -1;
  int rank = 0, perm[INFER_MAX_RANK];
  while (tr < 0) {
    int r = pass_sole_reader(g, cur, readers);
    if (r < 0 || n_vals == MAX_CHAIN) return INFER_OK;
    const node *n = &g->nodes[r];
    vals[n_vals] = cur;
    nodes[n_vals++] = r;
    if (leading_transpose(g, n, &rank, perm)) {
      tr = r;
      break;
    }
    int y = row_wise_output(g, n, cur);
    if (y < 0 && pass_node_is(n, "Reshape") && n->inputs[0] == cur && n->n_outputs == 1 &&
        n->outputs[0] >= 0) {
      const value *a = &g->values[cur], *b = &g->values[n->outputs[0]];
      if (b->shape_known && a->t.rank >= 1 && b->t.rank >= 1 &&
          a->t.dims[a->t.rank - 1] == b->t.dims[b->t.rank - 1])
        y = n->outputs[0];
    }
    if (y < 0) return INFER_OK;
    cur = y;
  }
  /* u: the Transpose's input; its leading dims are the rows' order now */
  int u = cur, yt = g->nodes[tr].outputs[0];
  const value *uv = &g->values[u];
  if (uv->t.rank != rank || yt < 0) return INFER_OK;
  int64_t rows = rows_of(uv);
  /* permuted, u must be the Transpose's output (then the Transpose can go) */
  const value *yv = &g->values[yt];
  if (!yv->shape_known || yv->t.rank != rank || yv->t.dtype != uv->t.dtype) return INFER_OK;
  for (int a = 0; a < rank; a++)
    if (yv->t.dims[a] != uv->t.dims[perm[a]]) return INFER_OK;
  /* each value on the way: u's rank with its leading dims (they get permuted), or 2-D
   * with its row count (unchanged) */
  for (int q = 0; q < n_vals; q++) {
    const value *w = &g->values[vals[q]];
    bool full = same_leading(w, uv), flat = w->t.rank == 2 && w->t.dims[0] == rows;
    if (!full && !flat) return INFER_OK;
  }
  fused_attention_params fp = *(const fused_attention_params *)g->nodes[i].params;
  int64_t fdims[INFER_MAX_RANK];
  memcpy(fdims, uv->t.dims, sizeof(int64_t) * (size_t)rank);
  fdims[rank - 1] = g->values[o].t.dims[g->values[o].t.rank - 1];
  if (!permute_view(&fp.view[ATTN_O], rank, fdims, perm)) return INFER_OK;
  if (g->values[o].t.rank == rank)
    for (int a = 0; a < rank; a++) fp.out_dims[a] = fdims[perm[a]];
  /* every Reshape on the way gets its target as explicit dims (a 0 in the old one would
   * copy a dim that moves): permuted for rank-`rank` outputs */
  int shapes[MAX_CHAIN];
  for (int q = 0; q < n_vals; q++) {
    shapes[q] = -1;
    const node *n = &g->nodes[nodes[q]];
    if (!pass_node_is(n, "Reshape")) continue;
    const value *w = &g->values[n->outputs[0]];
    int64_t len = w->t.rank, nd[INFER_MAX_RANK];
    for (int a = 0; a < w->t.rank; a++) nd[a] = w->t.rank == rank ? w->t.dims[perm[a]] : w->t.dims[a];
    int c = pass_add_constant(g, n->inputs[1] >= 0 ? n->inputs[1] : n->outputs[0], "/rows",
                              INFER_DTYPE_INT64, 1, &len);
    if (c < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "move-row-transposes: out of memory");
    int64_t *d = g->values[c].t.data;
    memcpy(d, nd, sizeof nd[0] * (size_t)len);
    shapes[q] = c;
  }
  int ins[3];
  memcpy(ins, g->nodes[i].inputs, sizeof ins);
  TRY(pass_rewrite_fused_attention(g, i, ins, &fp));
  for (int q = 0; q < n_vals; q++) {
    value *w = &g->values[vals[q]];
    if (w->t.rank == rank) permute_dims(w, perm);
    /* (a Reshape's output is the next value on the way, permuted there) */
    if (shapes[q] >= 0) g->nodes[nodes[q]].inputs[1] = shapes[q];
  }
  /* u now holds the Transpose's output (readers is not sized for the new constants:
   * only older values are touched until the caller recounts) */
  if (!pass_can_bypass(g, tr, u, yt, readers))
    return infer_fail(INFER_ERR_INTERNAL, "move-row-transposes: the rows do not match");
  pass_bypass(g, tr, u, yt, readers);
  ++*removed;
  return INFER_OK;
}

infer_status pass_move_row_transposes(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "move-row-transposes: out of memory");
  infer_status s = INFER_OK;
  for (int i = 0; i < g->n_nodes && s == INFER_OK; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    if (pass_node_is(n, "Transpose")) {
      s = move_before(g, i, readers, removed);
    } else if (n->op_type && n->domain && strcmp(n->domain, "infer") == 0 &&
               strcmp(n->op_type, "FusedAttention") == 0 && n->params) {
      int before = *removed;
      s = move_after(g, i, readers, removed);
      if (*removed == before) continue;
      /* new shape constants: recount (they are read once each) */
      free(readers);
      readers = pass_count_readers(g);
      if (!readers && s == INFER_OK)
        s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "move-row-transposes: out of memory");
      if (!readers) return s;
    }
  }
  free(readers);
  return s;
}
