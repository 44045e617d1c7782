/* pass_row_gather.c: groups of data-movement nodes that act within rows become one
 * RowGather (ops/row_gather.h): each element is read once and written once, however
 * many Concats, Transposes, Slices and Splits the group held.
 *
 * A row is what lies after the leading `prefix` dims, which no node of the group
 * touches. On channels-last data a Concat, a channel shuffle (Reshape, Transpose,
 * Reshape) and the Slices or Split after it all act within each pixel's channels:
 * ShuffleNet's units wrote and read every channel three times (Concat, shuffle, the
 * two halves), now once. Any model whose movement ops keep to the trailing dims is
 * covered the same way; nothing here knows about shuffles.
 *
 * The group starts at a root (Concat, Transpose, Slice or Split) and takes every later
 * movement node whose data inputs all come from the group (its other inputs constant),
 * so the group depends on the root's inputs only and the root's place in the node order
 * can hold all of it. Every value of the group has a table: for each element of a row,
 * which input and which element of that input's row it is. The group's outputs are its
 * values read outside it (or graph outputs); the rest are never written. A group that
 * would save no copy (fewer than two copying nodes) is left alone. */
#include <stdlib.h>
#include <string.h>

#include "../ops/movement_params.h"
#include "../ops/op.h"
#include "../ops/row_gather.h"
#include "../ops/slice_plan.h"
#include "passes.h"

#define RG_MAX_NODES 32
#define RG_MAX_VALUES 64
#define RG_MAX_ROW 8192 /* elements of a row: the table of every value is that long */

typedef struct rg_group {
  graph *g;
  int prefix;
  int64_t lead[INFER_MAX_RANK]; /* the leading dims every value shares */
  infer_dtype dtype;
  bool keep_fp32;
  int *slot; /* per value: its index in vals, or -1 */
  int vals[RG_MAX_VALUES];
  int64_t *tabs[RG_MAX_VALUES];
  int n_vals;
  int nodes[RG_MAX_NODES];
  int n_nodes, copies;
  int inputs[ROW_GATHER_MAX_INPUTS];
  int n_inputs;
} rg_group;

static const char *const view_ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                       NULL};

static bool is_view(const node *n) {
  for (int k = 0; view_ops[k]; k++)
    if (pass_node_is(n, view_ops[k])) return true;
  return false;
}

static bool is_copy(const node *n) {
  return pass_node_is(n, "Concat") || pass_node_is(n, "Transpose") || pass_node_is(n, "Slice") ||
         pass_node_is(n, "Split");
}

/* How many of n's first inputs carry data (the rest must be constants). */
static int data_inputs(const node *n) { return pass_node_is(n, "Concat") ? n->n_inputs : 1; }

/* The row length of v in the group, or -1 when v does not fit it (shape, leading dims,
 * dtype, precision, length). */
static int64_t row_of(const rg_group *s, int v) {
  const value *x = &s->g->values[v];
  if (!x->shape_known || !x->has_type || x->t.dtype != s->dtype || x->keep_fp32 != s->keep_fp32 ||
      x->t.rank < s->prefix || memcmp(x->t.dims, s->lead, sizeof(int64_t) * (size_t)s->prefix))
    return -1;
  int64_t row = dims_count(x->t.rank - s->prefix, x->t.dims + s->prefix);
  return row >= 1 && row <= RG_MAX_ROW ? row : -1;
}

/* A table for v (row elements), or NULL when v does not fit or space ran out. */
static int64_t *new_table(rg_group *s, int v) {
  int64_t row = row_of(s, v);
  if (row < 0 || s->n_vals == RG_MAX_VALUES || s->slot[v] >= 0) return NULL;
  int64_t *t = malloc(sizeof(int64_t) * (size_t)row);
  if (!t) return NULL;
  s->vals[s->n_vals] = v;
  s->tabs[s->n_vals] = t;
  s->slot[v] = s->n_vals++;
  return t;
}

static const int64_t *table_of(const rg_group *s, int v) {
  return v >= 0 && s->slot[v] >= 0 ? s->tabs[s->slot[v]] : NULL;
}

/* Drops the tables made after the first `keep`. */
static void drop_tables(rg_group *s, int keep) {
  while (s->n_vals > keep) {
    s->n_vals--;
    s->slot[s->vals[s->n_vals]] = -1;
    free(s->tabs[s->n_vals]);
  }
}

/* The trailing dims of v (after the prefix), and how many. */
static int tail_of(const rg_group *s, int v, int64_t *dims) {
  const tensor *t = &s->g->values[v].t;
  int r = t->rank - s->prefix;
  memcpy(dims, t->dims + s->prefix, sizeof(int64_t) * (size_t)r);
  return r;
}

/* out[o] = in[sum idx_k * strides[k] + base] over the C-ordered indices idx of dims. */
static void gather_strided(int64_t *out, const int64_t *in, int rank, const int64_t *dims,
                           const int64_t *strides, int64_t base) {
  int64_t idx[INFER_MAX_RANK] = {0}, count = dims_count(rank, dims);
  for (int64_t o = 0; o < count; o++) {
    int64_t at = base;
    for (int k = 0; k < rank; k++) at += idx[k] * strides[k];
    out[o] = in[at];
    for (int k = rank - 1; k >= 0; k--) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}

static bool transpose_tables(rg_group *s, const node *n) {
  const value *x = &s->g->values[n->inputs[0]];
  int perm[INFER_MAX_RANK], r = x->t.rank;
  if (!n->params || transpose_resolve_perm(n->params, r, perm) != INFER_OK) return false;
  for (int k = 0; k < s->prefix; k++)
    if (perm[k] != k) return false;
  int64_t in_dims[INFER_MAX_RANK], in_str[INFER_MAX_RANK], dims[INFER_MAX_RANK], str[INFER_MAX_RANK];
  int tr = tail_of(s, n->inputs[0], in_dims);
  dims_strides(tr, in_dims, in_str);
  for (int k = 0; k < tr; k++) {
    dims[k] = in_dims[perm[s->prefix + k] - s->prefix];
    str[k] = in_str[perm[s->prefix + k] - s->prefix];
  }
  const int64_t *in = table_of(s, n->inputs[0]);
  int64_t *out = new_table(s, n->outputs[0]);
  if (!out) return false;
  gather_strided(out, in, tr, dims, str, 0);
  return true;
}

static bool slice_tables(rg_group *s, const node *n) {
  const graph *g = s->g;
  const tensor *in_t[5] = {&g->values[n->inputs[0]].t, NULL, NULL, NULL, NULL};
  for (int k = 1; k < n->n_inputs && k < 5; k++)
    if (n->inputs[k] >= 0) in_t[k] = &g->values[n->inputs[k]].t;
  slice_plan pl;
  if (!n->params || slice_make_plan(n, n->params, in_t[0], in_t, &pl) != INFER_OK) return false;
  const tensor *x = in_t[0];
  for (int k = 0; k < s->prefix; k++)
    if (pl.start[k] != 0 || pl.step[k] != 1 || pl.dims[k] != x->dims[k]) return false;
  int64_t in_dims[INFER_MAX_RANK], in_str[INFER_MAX_RANK], str[INFER_MAX_RANK], base = 0;
  int tr = tail_of(s, n->inputs[0], in_dims);
  dims_strides(tr, in_dims, in_str);
  for (int k = 0; k < tr; k++) {
    base += pl.start[s->prefix + k] * in_str[k];
    str[k] = pl.step[s->prefix + k] * in_str[k];
  }
  const int64_t *in = table_of(s, n->inputs[0]);
  int64_t *out = new_table(s, n->outputs[0]);
  if (!out) return false;
  int64_t dims[INFER_MAX_RANK];
  if (tail_of(s, n->outputs[0], dims) != tr) return false;
  gather_strided(out, in, tr, dims, str, base);
  return true;
}

/* Concat and Split along axis a (>= prefix): `outer` blocks of the trailing dims before
 * a, each holding every part's a-slab of `inner` elements per index. */
static bool concat_tables(rg_group *s, const node *n) {
  const concat_params *p = n->params;
  int y = n->outputs[0], r = s->g->values[y].t.rank, a;
  if (!p || axis_normalize(p->axis, r, "Concat axis", &a) != INFER_OK || a < s->prefix) return false;
  const int64_t *d = s->g->values[y].t.dims;
  int64_t outer = dims_count(a - s->prefix, d + s->prefix), inner = dims_count(r - a - 1, d + a + 1);
  int64_t *out = new_table(s, y);
  if (!out) return false;
  for (int64_t o = 0, at = 0; o < outer; o++)
    for (int k = 0; k < n->n_inputs; k++) {
      int64_t part = s->g->values[n->inputs[k]].t.dims[a] * inner;
      memcpy(out + at, table_of(s, n->inputs[k]) + o * part, sizeof(int64_t) * (size_t)part);
      at += part;
    }
  return true;
}

static bool split_tables(rg_group *s, const node *n) {
  const split_params *p = n->params;
  const tensor *x = &s->g->values[n->inputs[0]].t;
  int a;
  if (!p || axis_normalize(p->axis, x->rank, "Split axis", &a) != INFER_OK || a < s->prefix)
    return false;
  int64_t outer = dims_count(a - s->prefix, x->dims + s->prefix);
  int64_t inner = dims_count(x->rank - a - 1, x->dims + a + 1), at = 0;
  const int64_t *in = table_of(s, n->inputs[0]);
  for (int m = 0; m < n->n_outputs; m++) {
    int y = n->outputs[m];
    if (y < 0) continue; /* omitted: its size is unknown here, and nothing reads it */
    const tensor *t = &s->g->values[y].t;
    if (t->rank != x->rank) return false;
    int64_t part = t->dims[a] * inner;
    int64_t *out = new_table(s, y);
    if (!out) return false;
    for (int64_t o = 0; o < outer; o++)
      memcpy(out + o * part, in + o * x->dims[a] * inner + at, sizeof(int64_t) * (size_t)part);
    at += part;
  }
  /* omitted outputs leave the offsets unknown unless they come last */
  for (int m = 0; m < n->n_outputs; m++)
    if (n->outputs[m] < 0 && m + 1 < n->n_outputs) return false;
  return true;
}

/* The tables of node i's outputs from its inputs'; false (no table kept) when the
 * node does not act within the rows. */
static bool node_tables(rg_group *s, int i) {
  const node *n = &s->g->nodes[i];
  int keep = s->n_vals;
  bool ok = false;
  if (n->n_outputs < 1 || n->outputs[0] < 0) return false;
  for (int k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    if (k < data_inputs(n) ? !table_of(s, v) : v >= 0 && s->g->values[v].kind != VALUE_CONSTANT)
      return false;
  }
  if (is_view(n)) {
    int64_t *out = n->n_outputs == 1 ? new_table(s, n->outputs[0]) : NULL;
    int64_t row = row_of(s, n->inputs[0]);
    ok = out && row == row_of(s, n->outputs[0]);
    if (ok) memcpy(out, table_of(s, n->inputs[0]), sizeof(int64_t) * (size_t)row);
  } else if (pass_node_is(n, "Transpose")) {
    ok = transpose_tables(s, n);
  } else if (pass_node_is(n, "Slice")) {
    ok = slice_tables(s, n);
  } else if (pass_node_is(n, "Concat")) {
    ok = concat_tables(s, n);
  } else if (pass_node_is(n, "Split")) {
    ok = split_tables(s, n);
  }
  if (!ok) drop_tables(s, keep);
  return ok;
}

/* The dims a root leaves alone: the prefix of the group it starts (0: none). */
static int root_prefix(const graph *g, const node *n) {
  const tensor *x = &g->values[n->inputs[0]].t;
  if (!g->values[n->inputs[0]].shape_known) return 0;
  int r = x->rank, a;
  if (pass_node_is(n, "Concat") || pass_node_is(n, "Split")) {
    const int64_t axis = pass_node_is(n, "Concat") ? ((const concat_params *)n->params)->axis
                                                    : ((const split_params *)n->params)->axis;
    return axis_normalize(axis, r, "axis", &a) == INFER_OK ? a : 0;
  }
  if (pass_node_is(n, "Transpose")) {
    int perm[INFER_MAX_RANK];
    if (transpose_resolve_perm(n->params, r, perm) != INFER_OK) return 0;
    for (a = 0; a < r && perm[a] == a; a++) {}
    return a;
  }
  const tensor *in_t[5] = {x, NULL, NULL, NULL, NULL};
  for (int k = 1; k < n->n_inputs && k < 5; k++) {
    if (n->inputs[k] < 0) continue;
    if (g->values[n->inputs[k]].kind != VALUE_CONSTANT) return 0;
    in_t[k] = &g->values[n->inputs[k]].t;
  }
  slice_plan pl;
  if (slice_make_plan(n, n->params, x, in_t, &pl) != INFER_OK) return 0;
  for (a = 0; a < r && pl.start[a] == 0 && pl.step[a] == 1 && pl.dims[a] == x->dims[a]; a++) {}
  return a;
}

/* The group rooted at node i, into s (tables, nodes, inputs); false when it is none. */
static bool grow_group(rg_group *s, int i) {
  graph *g = s->g;
  const node *root = &g->nodes[i];
  if (!root->params || root->n_inputs < 1 || root->inputs[0] < 0) return false;
  s->prefix = root_prefix(g, root);
  if (s->prefix < 1) return false;
  const value *x = &g->values[root->inputs[0]];
  memcpy(s->lead, x->t.dims, sizeof(int64_t) * (size_t)s->prefix);
  s->dtype = x->t.dtype;
  s->keep_fp32 = x->keep_fp32;
  for (int k = 0; k < data_inputs(root); k++) {
    int v = root->inputs[k];
    if (v < 0) return false;
    if (table_of(s, v)) continue; /* a part given twice */
    if (s->n_inputs == ROW_GATHER_MAX_INPUTS) return false;
    int64_t *t = new_table(s, v);
    if (!t) return false;
    for (int64_t c = 0; c < row_of(s, v); c++) t[c] = (int64_t)s->n_inputs << 32 | c;
    s->inputs[s->n_inputs++] = v;
  }
  if (!node_tables(s, i)) return false;
  s->nodes[s->n_nodes++] = i;
  s->copies += is_copy(root) && !(pass_node_is(root, "Concat") && root->n_inputs < 2);
  for (int j = i + 1; j < g->n_nodes && s->n_nodes < RG_MAX_NODES; j++) {
    const node *n = &g->nodes[j];
    if (n->removed || !(is_view(n) || is_copy(n))) continue;
    if (!node_tables(s, j)) continue;
    s->nodes[s->n_nodes++] = j;
    s->copies += is_copy(n) && !(pass_node_is(n, "Concat") && n->n_inputs < 2);
  }
  return true;
}

static infer_status rewrite(rg_group *s, int *readers, int *removed) {
  graph *g = s->g;
  int outs[ROW_GATHER_MAX_OUTPUTS], n_out = 0;
  int64_t tails[ROW_GATHER_MAX_OUTPUTS * (INFER_MAX_RANK + 1)], n_tails = 0, n_table = 0;
  /* the group's outputs: values its nodes write that are read elsewhere */
  for (int k = 0; k < s->n_nodes; k++) {
    const node *n = &g->nodes[s->nodes[k]];
    for (int m = 0; m < n->n_outputs; m++) {
      int v = n->outputs[m], inside = 0;
      if (v < 0) continue;
      for (int q = 0; q < s->n_nodes; q++) {
        const node *r = &g->nodes[s->nodes[q]];
        for (int c = 0; c < r->n_inputs; c++) inside += r->inputs[c] == v;
      }
      if (readers[v] == inside && !pass_is_graph_output(g, v)) continue;
      if (n_out == ROW_GATHER_MAX_OUTPUTS) return INFER_OK;
      outs[n_out++] = v;
      n_table += row_of(s, v);
    }
  }
  if (n_out == 0 || s->copies < 2) return INFER_OK;
  int64_t *table = malloc(sizeof(int64_t) * (size_t)n_table);
  if (!table) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-row-gather: out of memory");
  for (int j = 0, at = 0; j < n_out; j++) {
    int64_t dims[INFER_MAX_RANK], row = row_of(s, outs[j]);
    int r = tail_of(s, outs[j], dims);
    tails[n_tails++] = r;
    for (int k = 0; k < r; k++) tails[n_tails++] = dims[k];
    memcpy(table + at, table_of(s, outs[j]), sizeof(int64_t) * (size_t)row);
    at += (int)row;
  }
  node tmp;
  memset(&tmp, 0, sizeof tmp);
  infer_status st = pass_set_attr_int(&tmp, "prefix", s->prefix);
  if (st == INFER_OK) st = pass_set_attr_ints(&tmp, "tails", tails, (int)n_tails);
  if (st == INFER_OK) st = pass_set_attr_ints(&tmp, "table", table, (int)n_table);
  free(table);
  int *grown = st == INFER_OK ? malloc(sizeof(int) * (size_t)n_out) : NULL;
  if (!grown) {
    for (int a = 0; a < tmp.n_attrs; a++) attr_clear(&tmp.attrs[a]);
    free(tmp.attrs);
    return st != INFER_OK ? st : infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-row-gather: out of memory");
  }
  int root = s->nodes[0];
  /* the root's own outputs are written by nobody now unless they are group outputs */
  for (int m = 0; m < g->nodes[root].n_outputs; m++)
    if (g->nodes[root].outputs[m] >= 0) g->values[g->nodes[root].outputs[m]].producer = -1;
  for (int k = 1; k < s->n_nodes; k++) pass_remove_node(g, s->nodes[k], readers);
  for (int k = 0; k < g->nodes[root].n_inputs; k++)
    if (g->nodes[root].inputs[k] >= 0) readers[g->nodes[root].inputs[k]]--;
  /* parsed once it has all its outputs (the rewrite's parse sees one) */
  (void)pass_rewrite_node(g, root, "infer", "RowGather", 1, s->inputs, s->n_inputs, tmp.attrs,
                          tmp.n_attrs);
  node *n = &g->nodes[root];
  free(n->outputs);
  n->outputs = grown;
  n->n_outputs = n_out;
  for (int j = 0; j < n_out; j++) {
    grown[j] = outs[j];
    g->values[outs[j]].producer = root;
  }
  for (int k = 0; k < s->n_inputs; k++) readers[s->inputs[k]]++;
  if (!n->op) return infer_fail(INFER_ERR_INTERNAL, "fuse-row-gather: RowGather is not registered");
  TRY(pass_reparse(n));
  *removed += s->n_nodes - 1;
  return INFER_OK;
}

infer_status pass_fuse_row_gather(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  rg_group s = {.g = g, .slot = malloc(sizeof(int) * (size_t)(g->n_values > 0 ? g->n_values : 1))};
  if (!readers || !s.slot) {
    free(readers);
    free(s.slot);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-row-gather: out of memory");
  }
  for (int v = 0; v < g->n_values; v++) s.slot[v] = -1;
  infer_status st = INFER_OK;
  for (int i = 0; i < g->n_nodes && st == INFER_OK; i++) {
    const node *n = &g->nodes[i];
    if (n->removed || !is_copy(n)) continue;
    s.n_nodes = s.copies = s.n_inputs = 0;
    if (grow_group(&s, i)) st = rewrite(&s, readers, removed);
    drop_tables(&s, 0);
  }
  free(readers);
  free(s.slot);
  return st;
}
