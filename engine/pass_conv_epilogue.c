/* pass_conv_epilogue.c: Conv -> [Add(., Z)] -> [activation] becomes one FusedConv
 * (domain com.microsoft, ops/conv_fused.c): Y = act(Conv(X, W, B) + Z), the activation one
 * of Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, Swish, HardSwish, Gelu. ResNet's
 * residual blocks and MobileNet's Conv + ReLU6 then write their output once instead
 * of three times, and the GPU runs them as one cuDNN call or a convolution plus one
 * epilogue kernel.
 *
 * The fused op is written at the position of the chain's last node, which comes
 * after Z's producer (the shortcut branch may be computed after the Conv); the
 * other nodes of the chain are removed. Z must have Y's shape and dtype (no
 * broadcast); every intermediate must have one reader and not be a graph output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "passes.h"

static bool same_type(const value *a, const value *b) {
  return a->shape_known && b->shape_known && a->t.dtype == b->t.dtype &&
         a->t.rank == b->t.rank &&
         memcmp(a->t.dims, b->t.dims, sizeof(int64_t) * (size_t)a->t.rank) == 0;
}

/* A constant scalar input k of node n as a float, or `def` when the input is absent. */
static bool const_scalar(const graph *g, const node *n, int k, float def, float *out) {
  if (k >= n->n_inputs || n->inputs[k] < 0) {
    *out = def;
    return true;
  }
  const value *v = &g->values[n->inputs[k]];
  if (v->kind != VALUE_CONSTANT || dims_count(v->t.rank, v->t.dims) != 1 ||
      !dtype_is_float(v->t.dtype))
    return false;
  *out = (float)tensor_get_f64(&v->t, 0);
  return true;
}

/* Clip's bounds from inputs (opset >= 11) or attributes (before). */
static bool clip_bounds(const graph *g, const node *n, float *lo, float *hi) {
  if (n->opset >= 11)
    return n->n_inputs >= 1 && const_scalar(g, n, 1, -INFINITY, lo) &&
           const_scalar(g, n, 2, INFINITY, hi);
  return attr_get_float(n, "min", -INFINITY, lo) == INFER_OK &&
         attr_get_float(n, "max", INFINITY, hi) == INFER_OK;
}

/* The FusedConv activation (and its activation_params) node n computes, or NULL. */
static const char *epilogue_act(const graph *g, const node *n, float *params, int *n_params) {
  *n_params = 0;
  if (pass_node_is(n, "Relu")) return "Relu";
  if (pass_node_is(n, "Sigmoid")) return "Sigmoid";
  if (pass_node_is(n, "Tanh")) return "Tanh";
  if (pass_node_is(n, "HardSwish")) return "HardSwish";
  if (pass_node_is(n, "Clip") && clip_bounds(g, n, &params[0], &params[1])) {
    *n_params = 2;
    return "Clip";
  }
  if (pass_node_is(n, "LeakyRelu") && attr_get_float(n, "alpha", 0.01f, &params[0]) == INFER_OK) {
    *n_params = 1;
    return "LeakyRelu";
  }
  if (pass_node_is(n, "HardSigmoid") && attr_get_float(n, "alpha", 0.2f, &params[0]) == INFER_OK &&
      attr_get_float(n, "beta", 0.5f, &params[1]) == INFER_OK) {
    *n_params = 2;
    return "HardSigmoid";
  }
  if (pass_node_is(n, "Swish") && attr_get_float(n, "alpha", 1.0f, &params[0]) == INFER_OK) {
    *n_params = 1;
    return "Swish";
  }
  const char *ap = NULL;
  if (pass_node_is(n, "Gelu") && attr_get_string(n, "approximate", "none", &ap) == INFER_OK &&
      strcmp(ap, "none") == 0)
    return "Gelu";
  return NULL;
}

/* A deep copy of a Conv attribute (the Conv node keeps its own). */
static bool attr_copy(const attr *a, attr *to) {
  memset(to, 0, sizeof *to);
  to->type = a->type;
  to->i = a->i;
  to->f = a->f;
  to->n = a->n;
  to->name = strdup(a->name);
  bool ok = to->name != NULL;
  if (ok && a->type == ATTR_STRING) ok = (to->s = strdup(a->s ? a->s : "")) != NULL;
  if (ok && a->type == ATTR_INTS && a->n > 0) {
    ok = (to->ints = malloc(sizeof(int64_t) * (size_t)a->n)) != NULL;
    if (ok) memcpy(to->ints, a->ints, sizeof(int64_t) * (size_t)a->n);
  }
  if (ok && a->type == ATTR_FLOATS && a->n > 0) {
    ok = (to->floats = malloc(sizeof(float) * (size_t)a->n)) != NULL;
    if (ok) memcpy(to->floats, a->floats, sizeof(float) * (size_t)a->n);
  }
  if (!ok) attr_clear(to);
  return ok;
}

static bool copyable(const attr *a) {
  return a->type == ATTR_INT || a->type == ATTR_INTS || a->type == ATTR_STRING ||
         a->type == ATTR_FLOAT || a->type == ATTR_FLOATS;
}

/* FusedConv's attributes: the Conv's, then activation and activation_params. */
static attr *fused_attrs(const node *conv, const char *act, const float *params, int n_params,
                         int *count) {
  int n = conv->n_attrs + (act ? 1 : 0) + (n_params ? 1 : 0);
  attr *a = calloc((size_t)n + 1, sizeof *a);
  if (!a) return NULL;
  int k = 0;
  for (; k < conv->n_attrs; k++)
    if (!attr_copy(&conv->attrs[k], &a[k])) goto fail;
  if (act) {
    a[k].type = ATTR_STRING;
    if (!(a[k].name = strdup("activation")) || !(a[k].s = strdup(act))) goto fail_k;
    k++;
  }
  if (n_params) {
    a[k].type = ATTR_FLOATS;
    a[k].n = n_params;
    if (!(a[k].name = strdup("activation_params")) ||
        !(a[k].floats = malloc(sizeof(float) * (size_t)n_params)))
      goto fail_k;
    memcpy(a[k].floats, params, sizeof(float) * (size_t)n_params);
    k++;
  }
  *count = k;
  return a;
fail_k:
  attr_clear(&a[k]);
fail:
  for (int j = 0; j < k; j++) attr_clear(&a[j]);
  free(a);
  return NULL;
}

static infer_status fuse_at(graph *g, int c, int *readers, int *removed) {
  const node *conv = &g->nodes[c];
  int y = conv->outputs[0];
  const value *yv = &g->values[y];
  if (!yv->shape_known || (yv->t.dtype != INFER_DTYPE_FLOAT32 && yv->t.dtype != INFER_DTYPE_FLOAT16))
    return INFER_OK;
  for (int k = 0; k < conv->n_attrs; k++)
    if (!copyable(&conv->attrs[k])) return INFER_OK;
  int chain[3] = {c, -1, -1}, n_chain = 1, cur = y, z = -1;
  int r = pass_sole_reader(g, cur, readers);
  if (r >= 0 && pass_node_is(&g->nodes[r], "Add") && g->nodes[r].n_inputs == 2) {
    const node *add = &g->nodes[r];
    int other = add->inputs[0] == cur ? add->inputs[1] : add->inputs[0];
    if (other != cur && same_type(&g->values[other], yv) &&
        same_type(&g->values[add->outputs[0]], yv)) {
      z = other;
      chain[n_chain++] = r;
      cur = add->outputs[0];
      r = pass_sole_reader(g, cur, readers);
    }
  }
  const char *act = NULL;
  float params[2];
  int n_params = 0;
  if (r >= 0) act = epilogue_act(g, &g->nodes[r], params, &n_params);
  if (act) {
    chain[n_chain++] = r;
    cur = g->nodes[r].outputs[0];
  }
  if (n_chain == 1) return INFER_OK;
  int n_attrs = 0;
  attr *attrs = fused_attrs(conv, act, params, n_params, &n_attrs);
  if (!attrs) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-conv-epilogue: out of memory");
  int ins[4] = {conv->inputs[0], conv->inputs[1], conv->n_inputs > 2 ? conv->inputs[2] : -1, z};
  int n_ins = z >= 0 ? 4 : ins[2] >= 0 ? 3 : 2;
  int last = chain[n_chain - 1];
  for (int k = 0; k < n_chain - 1; k++) pass_remove_node(g, chain[k], readers);
  for (int k = 0; k < g->nodes[last].n_inputs; k++)
    if (g->nodes[last].inputs[k] >= 0) readers[g->nodes[last].inputs[k]]--;
  TRY(pass_rewrite_node(g, last, "com.microsoft", "FusedConv", 1, ins, n_ins, attrs, n_attrs));
  for (int k = 0; k < n_ins; k++)
    if (ins[k] >= 0) readers[ins[k]]++;
  *removed += n_chain - 1;
  return INFER_OK;
}

infer_status pass_fuse_conv_epilogue(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-conv-epilogue: out of memory");
  infer_status st = INFER_OK;
  for (int i = 0; st == INFER_OK && i < g->n_nodes; i++)
    if (pass_node_is(&g->nodes[i], "Conv")) st = fuse_at(g, i, readers, removed);
  free(readers);
  return st;
}
