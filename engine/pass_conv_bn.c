/* pass_conv_bn.c: folds an inference BatchNormalization into the Conv before it.
 *
 *   BN(conv(x, W) + B) = conv(x, W * a) + (B - mean) * a + beta,
 *   a[m] = scale[m] / sqrt(var[m] + eps), m the output channel (dim 0 of W).
 *
 * Arithmetic is in double, stored in W's dtype (float32 or float64: the graph's
 * dtypes; half precision is chosen later by the backend). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "passes.h"

/* A constant float vector of exactly m elements (BN parameters: any float dtype). */
static bool is_channel_vector(const graph *g, int v, int64_t m) {
  if (!pass_is_constant(g, v)) return false;
  const tensor *t = &g->values[v].t;
  return dtype_is_float(t->dtype) && t->rank == 1 && t->dims[0] == m;
}

/* Whether Conv c and BatchNormalization b can fold; the Conv's W and B. */
static bool can_fold(const graph *g, int c, int b, const int *readers, int *w_out, int *b_out) {
  const node *cn = &g->nodes[c], *bn = &g->nodes[b];
  int x = bn->inputs[0];
  if (bn->n_inputs != 5 || bn->n_outputs != 1 || bn->outputs[0] < 0) return false;
  if (cn->n_outputs != 1 || cn->outputs[0] != x) return false;
  if (readers[x] != 1 || pass_is_graph_output(g, x)) return false;
  int w = cn->inputs[1], bias = cn->n_inputs > 2 ? cn->inputs[2] : -1;
  if (!pass_is_constant(g, w)) return false;
  const tensor *wt = &g->values[w].t;
  if (wt->dtype != INFER_DTYPE_FLOAT32 && wt->dtype != INFER_DTYPE_FLOAT64) return false;
  if (wt->rank < 3) return false;
  int64_t m = wt->dims[0];
  if (bias >= 0) {
    if (!pass_is_constant(g, bias)) return false;
    const tensor *bt = &g->values[bias].t;
    if (bt->dtype != wt->dtype || bt->rank != 1 || bt->dims[0] != m) return false;
  }
  for (int k = 1; k < 5; k++)
    if (!is_channel_vector(g, bn->inputs[k], m)) return false;
  /* the BN's channel dim is the Conv's output channel dim */
  const value *xv = &g->values[x];
  if (xv->shape_known && (xv->t.rank < 2 || xv->t.dims[1] != m)) return false;
  *w_out = w;
  *b_out = bias;
  return true;
}

/* Writes W' and B' for one Conv/BN pair into new constants; false on out of memory. */
static bool fold_pair(graph *g, int c, int b, int w, int bias, float eps) {
  int wf = pass_add_constant(g, w, "/bn_folded", g->values[w].t.dtype, g->values[w].t.rank,
                        g->values[w].t.dims);
  if (wf < 0) return false;
  int bf = pass_add_constant(g, w, "/bn_folded_bias", g->values[w].t.dtype, 1, g->values[w].t.dims);
  if (bf < 0) return false;
  const node *bn = &g->nodes[b];
  const tensor *wt = &g->values[w].t, *scale = &g->values[bn->inputs[1]].t,
               *beta = &g->values[bn->inputs[2]].t, *mean = &g->values[bn->inputs[3]].t,
               *var = &g->values[bn->inputs[4]].t;
  const tensor *bt = bias >= 0 ? &g->values[bias].t : NULL;
  tensor *wo = &g->values[wf].t, *bo = &g->values[bf].t;
  int64_t m = wt->dims[0], per = dims_count(wt->rank - 1, wt->dims + 1);
  for (int64_t o = 0; o < m; o++) {
    double a = tensor_get_f64(scale, o) / sqrt(tensor_get_f64(var, o) + (double)eps);
    double b0 = bt ? tensor_get_f64(bt, o) : 0.0;
    tensor_set_f64(bo, o, (b0 - tensor_get_f64(mean, o)) * a + tensor_get_f64(beta, o));
    if (wt->dtype == INFER_DTYPE_FLOAT32) {
      const float *src = (const float *)wt->data + o * per;
      float *dst = (float *)wo->data + o * per;
      for (int64_t i = 0; i < per; i++) dst[i] = (float)((double)src[i] * a);
    } else {
      const double *src = (const double *)wt->data + o * per;
      double *dst = (double *)wo->data + o * per;
      for (int64_t i = 0; i < per; i++) dst[i] = src[i] * a;
    }
  }
  /* the Conv reads W', B' (a third input slot when it had no bias) */
  node *cn = &g->nodes[c];
  if (cn->n_inputs < 3) {
    int *in = realloc(cn->inputs, 4 * sizeof(int));
    if (!in) return false;
    cn->inputs = in;
    cn->n_inputs = 3;
  }
  cn->inputs[1] = wf;
  cn->inputs[2] = bf;
  /* ... and writes the BN's output; its old output has no reader left */
  int x = cn->outputs[0], y = g->nodes[b].outputs[0];
  cn->outputs[0] = y;
  g->values[y].producer = c;
  g->values[x].producer = -1;
  return true;
}

infer_status pass_fold_conv_bn(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fold-conv-bn: out of memory");
  infer_status s = INFER_OK;
  for (int b = 0; b < g->n_nodes; b++) {
    if (!pass_node_is(&g->nodes[b], "BatchNormalization")) continue;
    int c = pass_producer(g, g->nodes[b].inputs[0]);
    if (c < 0 || !pass_node_is(&g->nodes[c], "Conv")) continue;
    int w, bias;
    if (!can_fold(g, c, b, readers, &w, &bias)) continue;
    float eps;
    if (attr_get_float(&g->nodes[b], "epsilon", 1e-5f, &eps) != INFER_OK) continue;
    /* new values may grow g->values: readers must cover them */
    int *grown = realloc(readers, sizeof(int) * ((size_t)g->n_values + 3));
    if (!grown) {
      s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "fold-conv-bn: out of memory");
      break;
    }
    readers = grown;
    int old_w = g->nodes[c].inputs[1];
    int old_b = g->nodes[c].n_inputs > 2 ? g->nodes[c].inputs[2] : -1;
    if (!fold_pair(g, c, b, w, bias, eps)) {
      s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "fold-conv-bn: out of memory folding %s",
                     g->nodes[b].name);
      break;
    }
    readers[old_w]--;
    if (old_b >= 0) readers[old_b]--;
    readers[g->nodes[c].inputs[1]] = readers[g->nodes[c].inputs[2]] = 1;
    pass_remove_node(g, b, readers);
    (*removed)++;
  }
  free(readers);
  return s;
}
