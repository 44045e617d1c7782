/* pass_concat_chain.c: a Concat along the last axis read only by an elementwise chain
 * (FusedChain's first operand) goes into the chain, which then reads the parts where they
 * lie (attribute concat, ops/elementwise_chain.h). DenseNet concatenates every earlier
 * feature map before each layer's BatchNorm and ReLU; on NHWC data the channel axis is the
 * last, so the chain reads the feature list directly instead of a copy of it, which saves
 * writing and reading the whole concatenation once per layer. Runs after
 * fuse-elementwise, on the final layout. */
#include <stdlib.h>
#include <string.h>

#include "../ops/elementwise_chain.h"
#include "../ops/op.h"
#include "passes.h"

static bool is_chain(const node *n) {
  return !n->removed && strcmp(n->op_type, "FusedChain") == 0 && strcmp(n->domain, "infer") == 0 &&
         n->params;
}

/* The Concat producing v when it joins at least two parts along v's last axis, each of
 * known shape and v's dtype, at most EWC_MAX_PARTS of them; else -1. */
static int last_axis_concat(const graph *g, int v) {
  int c = pass_producer(g, v);
  if (c < 0 || !pass_node_is(&g->nodes[c], "Concat")) return -1;
  const node *n = &g->nodes[c];
  const value *y = &g->values[v];
  int64_t axis = 0;
  if (!y->shape_known || y->t.rank < 1 || attr_get_int(n, "axis", 0, &axis) != INFER_OK)
    return -1;
  if (axis < 0) axis += y->t.rank;
  if (axis != y->t.rank - 1 || n->n_inputs < 2 || n->n_inputs > EWC_MAX_PARTS) return -1;
  for (int k = 0; k < n->n_inputs; k++) {
    int p = n->inputs[k];
    if (p < 0 || !g->values[p].shape_known || g->values[p].t.dtype != y->t.dtype ||
        g->values[p].t.rank != y->t.rank || g->values[p].shape_dep)
      return -1;
  }
  return c;
}

/* Copies of the chain's "steps" and "views" attributes with input indices >= 1 moved by
 * `shift` (the parts take input 0's place); false when out of memory or malformed. */
static bool shifted(const node *n, const char *name, int shift, bool views, int64_t **out,
                    int *count) {
  const int64_t *v = NULL;
  int c = 0;
  *out = NULL;
  *count = 0;
  if (attr_get_ints(n, name, &v, &c) != INFER_OK) return false;
  if (c <= 0) return views; /* views is optional; a chain has steps */
  int64_t *w = malloc(sizeof(int64_t) * ((size_t)c + 1));
  if (!w) return false;
  memcpy(w, v, sizeof(int64_t) * (size_t)c);
  if (views) { /* per record: input index, rank, offset, rank strides */
    for (int i = 0; i + 2 < c; i += 3 + (int)w[i + 1]) {
      if (w[i + 1] < 0) {
        free(w);
        return false;
      }
      if (w[i] >= 1) w[i] += shift;
    }
  } else { /* per step: op, operand, swap */
    for (int i = 0; i + 2 < c; i += 3)
      if (w[i + 1] >= 1) w[i + 1] += shift;
  }
  *out = w;
  *count = c;
  return true;
}

static infer_status concat_into_chain(graph *g, int i, int *readers, int *fused) {
  node *n = &g->nodes[i];
  const fused_chain_params *p = n->params;
  if (p->n_parts || p->has_view[0] || n->n_inputs < 1 || n->n_outputs != 1) return INFER_OK;
  int v = n->inputs[0];
  if (v < 0 || readers[v] != 1 || pass_is_graph_output(g, v)) return INFER_OK;
  int c = last_axis_concat(g, v);
  if (c < 0) return INFER_OK;
  const node *cn = &g->nodes[c];
  int parts = cn->n_inputs, n_in = parts + n->n_inputs - 1;
  int64_t *steps, *views;
  int n_steps, n_views;
  if (!shifted(n, "steps", parts - 1, false, &steps, &n_steps)) return INFER_OK;
  if (!shifted(n, "views", parts - 1, true, &views, &n_views)) {
    free(steps);
    return INFER_OK;
  }
  int *in = malloc(sizeof(int) * (size_t)n_in);
  infer_status st = in ? INFER_OK : infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (st == INFER_OK) {
    memcpy(in, cn->inputs, sizeof(int) * (size_t)parts);
    memcpy(in + parts, n->inputs + 1, sizeof(int) * (size_t)(n->n_inputs - 1));
    st = pass_set_attr_ints(n, "steps", steps, n_steps);
  }
  if (st == INFER_OK && views) st = pass_set_attr_ints(n, "views", views, n_views);
  if (st == INFER_OK) st = pass_set_attr_int(n, "concat", parts);
  free(steps);
  free(views);
  if (st != INFER_OK) {
    free(in);
    return st;
  }
  readers[v]--;
  free(n->inputs);
  n->inputs = in;
  n->n_inputs = n_in;
  for (int k = 0; k < parts; k++) readers[in[k]]++;
  pass_remove_node(g, c, readers);
  (*fused)++;
  return pass_reparse(n);
}

infer_status pass_fuse_concat_chain(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-concat-chain: out of memory");
  infer_status st = INFER_OK;
  for (int i = 0; i < g->n_nodes && st == INFER_OK; i++)
    if (is_chain(&g->nodes[i])) st = concat_into_chain(g, i, readers, removed);
  free(readers);
  return st;
}
