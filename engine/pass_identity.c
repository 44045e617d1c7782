/* pass_identity.c: drops nodes whose output is their first input, unchanged:
 * Identity, inference Dropout, shape ops that keep the shape, Cast to the same
 * dtype, Transpose by the identity permutation, Expand and Tile that keep the shape,
 * Pad by zeros, Concat of one input. Readers of the output read the
 * input instead (graph outputs: see passes.h). */
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "../ops/shape_params.h"
#include "passes.h"

/* Output 0 has input 0's shape, both known at build time. */
static bool keeps_shape(const graph *g, const node *n) {
  const value *x = &g->values[n->inputs[0]], *y = &g->values[n->outputs[0]];
  return x->shape_known && y->shape_known && x->has_type && y->has_type &&
         x->t.dtype == y->t.dtype && dims_equal(x->t.rank, x->t.dims, y->t.rank, y->t.dims);
}

/* Dropout is the identity unless training: training_mode (opset 12+, input 2) must
 * be absent or a constant false, or the ratio a constant 0 (dropout_drops_nothing). The
 * mask output must be absent or unused. */
static bool dropout_is_identity(const graph *g, const node *n, const int *readers) {
  if (n->n_inputs > 2 && n->inputs[2] >= 0) {
    const value *t = &g->values[n->inputs[2]];
    if (t->kind != VALUE_CONSTANT || !t->t.data || t->t.dtype != INFER_DTYPE_BOOL ||
        dims_count(t->t.rank, t->t.dims) != 1)
      return false;
    const value *r = n->n_inputs > 1 && n->inputs[1] >= 0 ? &g->values[n->inputs[1]] : NULL;
    if (r && r->kind != VALUE_CONSTANT) return false;
    if (!dropout_drops_nothing(r ? &r->t : NULL, &t->t)) return false;
  }
  if (n->n_outputs > 1 && n->outputs[1] >= 0) {
    int m = n->outputs[1];
    if (readers[m] > 0 || pass_is_graph_output(g, m)) return false;
  }
  return true;
}

/* The Transpose's perm is 0, 1, ..., rank-1 (read from the attribute, as the
 * backends do; absent means reversed, the identity only up to rank 1). */
static bool transpose_is_identity(const graph *g, const node *n) {
  const int64_t *perm;
  int count;
  if (attr_get_ints(n, "perm", &perm, &count) != INFER_OK) return false;
  if (count < 0) {
    const value *x = &g->values[n->inputs[0]];
    return x->shape_known && x->t.rank <= 1;
  }
  for (int i = 0; i < count; i++)
    if (perm[i] != i) return false;
  return true;
}

/* Every pad is 0: the pads input (opset 11+) or attribute (before), and no axes input. */
static bool pad_is_zero(const graph *g, const node *n) {
  const int64_t *pa;
  int c = -1;
  if (attr_get_ints(n, "pads", &pa, &c) == INFER_OK && c >= 0) {
    for (int i = 0; i < c; i++)
      if (pa[i] != 0) return false;
    return true;
  }
  if (n->n_inputs < 2 || n->inputs[1] < 0) return false;
  const value *p = &g->values[n->inputs[1]];
  if (p->kind != VALUE_CONSTANT || !p->t.data) return false;
  for (int64_t i = 0; i < dims_count(p->t.rank, p->t.dims); i++)
    if (tensor_get_i64(&p->t, i) != 0) return false;
  return true;
}

static bool is_identity(const graph *g, const node *n, const int *readers) {
  if (n->n_inputs < 1 || n->n_outputs < 1 || n->inputs[0] < 0 || n->outputs[0] < 0) return false;
  if (pass_node_is(n, "Identity")) return true;
  if (pass_node_is(n, "Dropout")) return dropout_is_identity(g, n, readers);
  if (pass_node_is(n, "Reshape") || pass_node_is(n, "Flatten") || pass_node_is(n, "Squeeze") ||
      pass_node_is(n, "Unsqueeze") || pass_node_is(n, "Cast"))
    return keeps_shape(g, n);
  if (pass_node_is(n, "Transpose")) return keeps_shape(g, n) && transpose_is_identity(g, n);
  /* Expand and Tile to the same shape repeat nothing */
  if (pass_node_is(n, "Expand") || pass_node_is(n, "Tile")) return keeps_shape(g, n);
  /* a Concat of one part (DenseNet's first layer of each block: torch.cat([x])) */
  if (pass_node_is(n, "Concat") && n->n_inputs == 1) return keeps_shape(g, n);
  /* a Pad of nothing (exporters write them before pools); pads that keep the shape but
   * are not all zero (a negative pad) would shift the data */
  if (pass_node_is(n, "Pad") && keeps_shape(g, n)) return pad_is_zero(g, n);
  return false;
}

infer_status pass_remove_identity(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "remove-identity: out of memory");
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    if (n->removed || !is_identity(g, n, readers)) continue;
    int x = n->inputs[0], y = n->outputs[0];
    if (!pass_can_bypass(g, i, x, y, readers)) continue;
    pass_bypass(g, i, x, y, readers);
    (*removed)++;
  }
  free(readers);
  return INFER_OK;
}
