/* view.c: strided views through chains of movement ops (view.h). */
#include "view.h"

#include <string.h>

#include "../ops/op.h"
#include "../ops/slice_plan.h"
#include "passes.h"

/* Merges adjacent atoms of every dim where the outer one steps over the inner one
 * exactly, and drops size-1 atoms (keeping one per dim). */
static void normalize(view *w) {
  for (int i = 0; i < w->rank; i++) {
    view_atom out[VIEW_MAX_ATOMS];
    int n = 0;
    for (int a = 0; a < w->n_atoms[i]; a++) {
      view_atom t = w->atoms[i][a];
      if (t.size == 1) continue;
      if (n > 0 && out[n - 1].stride == t.size * t.stride) {
        out[n - 1].size *= t.size;
        out[n - 1].stride = t.stride;
      } else {
        out[n++] = t;
      }
    }
    if (n == 0) out[n++] = (view_atom){1, 1};
    memcpy(w->atoms[i], out, sizeof(view_atom) * (size_t)n);
    w->n_atoms[i] = n;
  }
}

void view_whole(const graph *g, int v, view *out) {
  const tensor *t = &g->values[v].t;
  memset(out, 0, sizeof *out);
  out->base = v;
  out->rank = t->rank;
  int64_t strides[INFER_MAX_RANK];
  dims_strides(t->rank, t->dims, strides);
  for (int i = 0; i < t->rank; i++) {
    out->n_atoms[i] = 1;
    out->atoms[i][0] = (view_atom){t->dims[i], strides[i]};
  }
  normalize(out);
}

int64_t view_dim(const view *w, int i) {
  int64_t s = 1;
  for (int a = 0; a < w->n_atoms[i]; a++) s *= w->atoms[i][a].size;
  return s;
}

bool view_dim_stride(const view *w, int i, int64_t *stride) {
  if (w->n_atoms[i] != 1) return false;
  *stride = w->atoms[i][0].stride;
  return true;
}

void view_transpose(view *w, const int64_t *perm) {
  view t = *w;
  for (int i = 0; i < w->rank; i++) {
    t.n_atoms[i] = w->n_atoms[perm[i]];
    memcpy(t.atoms[i], w->atoms[perm[i]], sizeof(view_atom) * VIEW_MAX_ATOMS);
  }
  *w = t;
}

bool view_reshape(view *w, int rank, const int64_t *dims) {
  int64_t total = 1;
  for (int i = 0; i < rank; i++) total *= dims[i];
  int64_t have = 1;
  for (int i = 0; i < w->rank; i++) have *= view_dim(w, i);
  if (total != have) return false;
  /* all atoms, outermost first */
  view_atom all[INFER_MAX_RANK * VIEW_MAX_ATOMS];
  int n = 0;
  for (int i = 0; i < w->rank; i++)
    for (int a = 0; a < w->n_atoms[i]; a++)
      if (w->atoms[i][a].size != 1) all[n++] = w->atoms[i][a];
  view r = *w;
  r.rank = rank;
  /* fill the new dims from the innermost, splitting an atom where a dim ends inside it */
  int k = n - 1;
  for (int i = rank - 1; i >= 0; i--) {
    view_atom got[VIEW_MAX_ATOMS];
    int m = 0;
    int64_t need = dims[i];
    while (need > 1) {
      if (k < 0 || m == VIEW_MAX_ATOMS) return false;
      view_atom *t = &all[k];
      if (t->size <= need) {
        if (need % t->size) return false;
        need /= t->size;
        got[m++] = *t;
        k--;
      } else {
        if (t->size % need) return false;
        got[m++] = (view_atom){need, t->stride};
        t->stride *= need;
        t->size /= need;
        need = 1;
      }
    }
    if (m == 0) got[m++] = (view_atom){1, 1};
    r.n_atoms[i] = m;
    for (int a = 0; a < m; a++) r.atoms[i][a] = got[m - 1 - a]; /* outermost first */
  }
  if (k >= 0) return false;
  normalize(&r);
  *w = r;
  return true;
}

static bool reshape_like(const node *n) {
  return pass_node_is(n, "Reshape") || pass_node_is(n, "Flatten") || pass_node_is(n, "Squeeze") ||
         pass_node_is(n, "Unsqueeze") || pass_node_is(n, "Identity");
}

bool view_follows(const graph *g, const node *n) {
  if (n->removed || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs < 1 ||
      n->inputs[0] < 0)
    return false;
  bool gather = pass_node_is(n, "Gather");
  if (!reshape_like(n) && !pass_node_is(n, "Transpose") && !pass_node_is(n, "Slice") && !gather)
    return false;
  const value *x = &g->values[n->inputs[0]], *y = &g->values[n->outputs[0]];
  if (gather) { /* one constant index: a select, as tensor[..., i, ...] */
    const value *idx = n->n_inputs > 1 && n->inputs[1] >= 0 ? &g->values[n->inputs[1]] : NULL;
    if (!idx || idx->kind != VALUE_CONSTANT || dims_count(idx->t.rank, idx->t.dims) != 1 ||
        idx->t.rank > 1)
      return false;
  }
  return x->shape_known && y->shape_known && x->kind != VALUE_CONSTANT &&
         x->t.rank <= INFER_MAX_RANK && y->t.rank <= INFER_MAX_RANK;
}

bool view_invertible(const graph *g, const node *n) {
  return view_follows(g, n) && !pass_node_is(n, "Slice") && !pass_node_is(n, "Gather");
}

static void transpose_perm(const node *n, int rank, int64_t *perm) {
  const int64_t *p;
  int c = -1;
  if (attr_get_ints(n, "perm", &p, &c) == INFER_OK && c == rank)
    memcpy(perm, p, sizeof(int64_t) * (size_t)rank);
  else
    for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i; /* the default: reversed */
}

/* w (the view of node n's input) becomes the view of its output; false when not possible. */
static bool apply_node(const graph *g, const node *n, view *w) {
  const value *y = &g->values[n->outputs[0]];
  if (reshape_like(n)) return view_reshape(w, y->t.rank, y->t.dims);
  if (pass_node_is(n, "Transpose")) {
    int64_t perm[INFER_MAX_RANK];
    transpose_perm(n, w->rank, perm);
    view_transpose(w, perm);
    return true;
  }
  if (pass_node_is(n, "Gather")) {
    int64_t axis = 0;
    if (attr_get_int(n, "axis", 0, &axis) != INFER_OK) return false;
    if (axis < 0) axis += w->rank;
    if (axis < 0 || axis >= w->rank) return false;
    const tensor *it = &g->values[n->inputs[1]].t;
    int64_t i = tensor_get_i64(it, 0), size = view_dim(w, (int)axis);
    if (i < 0) i += size;
    if (i < 0 || i >= size) return false;
    for (int a = w->n_atoms[axis] - 1; a >= 0; a--) { /* i in the atoms' mixed radix */
      w->offset += (i % w->atoms[axis][a].size) * w->atoms[axis][a].stride;
      i /= w->atoms[axis][a].size;
    }
    if (it->rank == 1) { /* [1]: the dim stays, of size 1 */
      w->n_atoms[axis] = 1;
      w->atoms[axis][0] = (view_atom){1, 1};
    } else {
      for (int d = (int)axis; d + 1 < w->rank; d++) {
        w->n_atoms[d] = w->n_atoms[d + 1];
        memcpy(w->atoms[d], w->atoms[d + 1], sizeof w->atoms[d]);
      }
      w->rank--;
    }
    return true;
  }
  /* Slice: its starts, ends, axes and steps must be constants, and each sliced dim one
   * atom */
  const tensor *in[5] = {NULL};
  for (int k = 1; k < n->n_inputs && k < 5; k++) {
    if (n->inputs[k] < 0) continue;
    const value *c = &g->values[n->inputs[k]];
    if (c->kind != VALUE_CONSTANT) return false;
    in[k] = &c->t;
  }
  slice_plan pl;
  const tensor *x = &g->values[n->inputs[0]].t;
  if (slice_make_plan(n, n->params, x, in, &pl) != INFER_OK) return false;
  for (int i = 0; i < w->rank; i++) {
    if (pl.dims[i] == view_dim(w, i) && pl.start[i] == 0 && pl.step[i] == 1) continue;
    if (w->n_atoms[i] != 1 || (pl.step[i] <= 0 && pl.dims[i] > 1)) return false;
    view_atom *t = &w->atoms[i][0];
    w->offset += pl.start[i] * t->stride;
    t->stride *= pl.step[i] > 0 ? pl.step[i] : 1;
    t->size = pl.dims[i];
  }
  normalize(w);
  return true;
}

int view_of(const graph *g, int v, int max_steps, view *out) {
  int chain[64], n = 0, cur = v;
  if (max_steps > 64) max_steps = 64;
  while (n < max_steps) {
    int p = pass_producer(g, cur);
    if (p < 0 || !view_follows(g, &g->nodes[p])) break;
    chain[n++] = p;
    cur = g->nodes[p].inputs[0];
  }
  view_whole(g, cur, out);
  int followed = n;
  for (int k = n - 1; k >= 0; k--) {
    const node *nd = &g->nodes[chain[k]];
    if (!apply_node(g, nd, out)) {
      /* not a view: the chain starts again after this node */
      view_whole(g, nd->outputs[0], out);
      followed = k;
    }
  }
  return followed;
}

bool view_into(const graph *g, int from, int to, view *out) {
  int chain[64], n = 0, cur = to;
  while (cur != from) {
    int p = pass_producer(g, cur);
    if (p < 0 || n == 64 || !view_invertible(g, &g->nodes[p])) return false;
    chain[n++] = p;
    cur = g->nodes[p].inputs[0];
  }
  view_whole(g, to, out);
  for (int k = 0; k < n; k++) {
    const node *nd = &g->nodes[chain[k]];
    const value *x = &g->values[nd->inputs[0]];
    if (pass_node_is(nd, "Transpose")) {
      int64_t perm[INFER_MAX_RANK], inv[INFER_MAX_RANK];
      transpose_perm(nd, x->t.rank, perm);
      for (int i = 0; i < x->t.rank; i++) inv[perm[i]] = i;
      view_transpose(out, inv);
    } else if (!view_reshape(out, x->t.rank, x->t.dims)) {
      return false;
    }
  }
  return true;
}
