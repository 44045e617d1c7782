/* pass_bn_affine.c: an inference BatchNormalization that fold-conv-bn could not fold
 * (DenseNet's, after a Concat) becomes a FusedChain y = x * a[c] + b[c], with
 * a = scale / sqrt(var + eps) and b = B - mean * a computed once here: the same map, and a
 * chain that fuse-elementwise extends with the ReLU after it and that the channels-last
 * pass runs on NHWC data. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/elementwise_chain.h"
#include "../ops/op.h"
#include "passes.h"

static bool is_vector(const graph *g, int v, int64_t c) {
  if (v < 0 || g->values[v].kind != VALUE_CONSTANT || !g->values[v].t.data) return false;
  const tensor *t = &g->values[v].t;
  return dtype_is_float(t->dtype) && t->rank == 1 && t->dims[0] == c;
}

static infer_status affine_at(graph *g, int i, int *removed) {
  node *n = &g->nodes[i];
  if (n->n_inputs != 5 || n->n_outputs != 1 || n->outputs[0] < 0) return INFER_OK;
  int x = n->inputs[0];
  const value *xv = &g->values[x];
  if (!xv->shape_known || xv->t.rank < 2 ||
      (xv->t.dtype != INFER_DTYPE_FLOAT32 && xv->t.dtype != INFER_DTYPE_FLOAT16))
    return INFER_OK;
  int64_t c = xv->t.dims[1];
  for (int k = 1; k < 5; k++)
    if (!is_vector(g, n->inputs[k], c)) return INFER_OK;
  float eps = 1e-5f;
  if (attr_get_float(n, "epsilon", 1e-5f, &eps) != INFER_OK) return INFER_OK;
  /* [C, 1, ...]: broadcasts over the dims after the channel, as the NCHW layout needs */
  int64_t dims[INFER_MAX_RANK] = {c};
  int rank = xv->t.rank - 1;
  for (int k = 1; k < rank; k++) dims[k] = 1;
  infer_dtype dt = xv->t.dtype;
  int sv = n->inputs[1], bv = n->inputs[2], mv = n->inputs[3], vv = n->inputs[4];
  int a = pass_add_constant(g, sv, "/bn_scale", dt, rank, dims);
  int b = a < 0 ? -1 : pass_add_constant(g, bv, "/bn_shift", dt, rank, dims);
  if (b < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "bn-to-affine: out of memory");
  for (int64_t k = 0; k < c; k++) {
    double s = tensor_get_f64(&g->values[sv].t, k) /
               sqrt(tensor_get_f64(&g->values[vv].t, k) + (double)eps);
    tensor_set_f64(&g->values[a].t, k, s);
    tensor_set_f64(&g->values[b].t, k,
                   tensor_get_f64(&g->values[bv].t, k) - tensor_get_f64(&g->values[mv].t, k) * s);
  }
  int ins[3] = {x, a, b};
  node tmp;
  memset(&tmp, 0, sizeof tmp);
  int64_t steps[6] = {EWC_MUL, 1, 0, EWC_ADD, 2, 0};
  infer_status st = pass_set_attr_ints(&tmp, "steps", steps, 6);
  attr *pa = st == INFER_OK ? realloc(tmp.attrs, sizeof(attr) * ((size_t)tmp.n_attrs + 1)) : NULL;
  if (!pa) {
    for (int k = 0; k < tmp.n_attrs; k++) attr_clear(&tmp.attrs[k]);
    free(tmp.attrs);
    return st != INFER_OK ? st : infer_fail(INFER_ERR_OUT_OF_MEMORY, "bn-to-affine: out of memory");
  }
  tmp.attrs = pa;
  attr *p = &tmp.attrs[tmp.n_attrs++];
  memset(p, 0, sizeof *p);
  p->name = strdup("params");
  p->type = ATTR_FLOATS;
  p->n = 4;
  p->floats = calloc(4, sizeof(float));
  if (!p->name || !p->floats) {
    for (int k = 0; k < tmp.n_attrs; k++) attr_clear(&tmp.attrs[k]);
    free(tmp.attrs);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "bn-to-affine: out of memory");
  }
  TRY(pass_rewrite_node(g, i, "infer", "FusedChain", 1, ins, 3, tmp.attrs, tmp.n_attrs));
  (*removed)++;
  return INFER_OK;
}

infer_status pass_bn_to_affine(graph *g, int *rewritten) {
  *rewritten = 0;
  infer_status st = INFER_OK;
  int n0 = g->n_nodes;
  for (int i = 0; st == INFER_OK && i < n0; i++)
    if (pass_node_is(&g->nodes[i], "BatchNormalization")) st = affine_at(g, i, rewritten);
  return st;
}
