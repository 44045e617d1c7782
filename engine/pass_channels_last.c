/* pass_channels_last.c: for fp16 GPU builds, 2-D convolutions and what lies between
 * them run on channels-last (NHWC) data, the layout tensor-core convolutions read
 * natively; NCHW data would make cuDNN transpose around every convolution.
 *
 * Values produced by converted nodes keep their id and get NHWC dims (N, H, W, C).
 * Converted: Conv/FusedConv with a constant 4-D W (-> FusedConv channels_last = 1,
 * W transposed to M x kH x kW x C/g once at build); unary elementwise ops; binary
 * elementwise ops whose other operand can be made channels-last (a same-shape value
 * through a Transpose, a constant transposed at build); Concat on the channel axis;
 * 2-D MaxPool (without Indices) and AveragePool (-> channels_last = 1);
 * GlobalAveragePool / GlobalMaxPool (-> ReduceMean / ReduceMax over H and W); and the
 * NCHW <-> NHWC Transposes around plain NHWC work become Identities (layout_noop). Every
 * other reader of a channels-last value reads an NCHW copy made by one Transpose, and
 * a converted node never writes a graph output, so the graph's interface is
 * unchanged. New nodes are placed right after the producer of what they read; the
 * node order stays topological. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/conv_util.h"
#include "../ops/op.h"
#include "passes.h"

static const int to_cl_perm[4] = {0, 2, 3, 1}, to_nchw_perm[4] = {0, 3, 1, 2};

typedef struct cl_state {
  graph *g;
  bool *is_cl;  /* per value: holds NHWC data */
  int *cl_copy;   /* per NCHW value: its channels-last copy, or -1 */
  int *nchw_copy; /* per channels-last value: its NCHW copy, or -1 */
  double *key;    /* per node: position for the final reordering */
  int cap_values, cap_nodes;
  int added;
} cl_state;

static bool grow_state(cl_state *s) {
  graph *g = s->g;
  if (g->n_values > s->cap_values) {
    int c = g->n_values * 2;
    bool *a = realloc(s->is_cl, sizeof(bool) * (size_t)c);
    if (a) s->is_cl = a;
    int *b = realloc(s->cl_copy, sizeof(int) * (size_t)c);
    if (b) s->cl_copy = b;
    int *d = realloc(s->nchw_copy, sizeof(int) * (size_t)c);
    if (d) s->nchw_copy = d;
    if (!a || !b || !d) return false;
    for (int v = s->cap_values; v < c; v++) {
      s->is_cl[v] = false;
      s->cl_copy[v] = s->nchw_copy[v] = -1;
    }
    s->cap_values = c;
  }
  if (g->n_nodes > s->cap_nodes) {
    int c = g->n_nodes * 2;
    double *k = realloc(s->key, sizeof(double) * (size_t)c);
    if (!k) return false;
    s->key = k;
    s->cap_nodes = c;
  }
  return true;
}

static void permute_dims(int64_t *dims, const int *perm) {
  int64_t d[4];
  for (int i = 0; i < 4; i++) d[i] = dims[perm[i]];
  memcpy(dims, d, sizeof d);
}

/* The data of a 4-D constant, permuted: a new constant value. */
static int permuted_constant(cl_state *s, int v, const int *perm) {
  graph *g = s->g;
  char *name = pass_unique_name(g, g->values[v].name, "_nhwc");
  if (!name) return -1;
  int c = graph_add_value(g, name);
  free(name);
  if (c < 0 || !grow_state(s)) return -1;
  const tensor *src = &g->values[v].t;
  tensor *dst = &g->values[c].t;
  *dst = *src;
  dst->data = NULL;
  permute_dims(dst->dims, perm);
  size_t es = infer_dtype_size(src->dtype);
  int64_t n = dims_count(4, src->dims);
  if (!(dst->data = malloc(n > 0 ? (size_t)n * es : 1))) return -1;
  permute4(src->data, src->dims, perm, dst->data, es);
  g->values[c].kind = VALUE_CONSTANT;
  g->values[c].has_type = g->values[c].shape_known = true;
  g->values[c].producer = -1;
  return c;
}

/* A Transpose node reading v into a new value; placed right after v's producer. */
static int add_transpose(cl_state *s, int v, const int *perm, const char *suffix) {
  graph *g = s->g;
  char *name = pass_unique_name(g, g->values[v].name, suffix);
  if (!name) return -1;
  int t = graph_add_value(g, name);
  int i = t < 0 ? -1 : graph_add_node(g, 1, 1, 0);
  if (i < 0 || !grow_state(s)) {
    free(name);
    return -1;
  }
  node *n = &g->nodes[i];
  n->name = name;
  n->op_type = strdup("Transpose");
  n->domain = strdup("");
  n->opset = 13;
  n->model_index = -1;
  n->op = op_registry_find("", "Transpose", 13, NULL);
  int64_t p[4] = {perm[0], perm[1], perm[2], perm[3]};
  if (!n->op_type || !n->domain || !n->op || pass_set_attr_ints(n, "perm", p, 4) != INFER_OK ||
      pass_reparse(n) != INFER_OK)
    return -1;
  n->inputs[0] = v;
  n->outputs[0] = t;
  value *tv = &g->values[t];
  tv->t = g->values[v].t;
  tv->t.data = NULL;
  permute_dims(tv->t.dims, perm);
  tv->has_type = tv->shape_known = true;
  tv->shape_dep = g->values[v].shape_dep; /* a flexible batch stays one (batch_rows.c) */
  tv->producer = i;
  int p_node = pass_producer(g, v);
  s->key[i] = p_node >= 0 ? p_node + 0.5 : -1.0;
  s->added++;
  return t;
}

/* v's channels-last form (v itself when it is one); -1 when out of memory. */
static int as_cl(cl_state *s, int v) {
  if (s->is_cl[v]) return v;
  if (s->cl_copy[v] >= 0) return s->cl_copy[v];
  graph *g = s->g;
  int c = g->values[v].kind == VALUE_CONSTANT ? permuted_constant(s, v, to_cl_perm)
                                              : add_transpose(s, v, to_cl_perm, "_nhwc");
  if (c >= 0) {
    s->cl_copy[v] = c;
    s->is_cl[c] = true;
  }
  return c;
}

/* v's NCHW form (v itself unless channels-last). */
static int as_nchw(cl_state *s, int v) {
  if (!s->is_cl[v]) return v;
  if (s->nchw_copy[v] < 0) s->nchw_copy[v] = add_transpose(s, v, to_nchw_perm, "_nchw");
  return s->nchw_copy[v];
}

static bool is_4d_float(const graph *g, int v) {
  const value *val = &g->values[v];
  return v >= 0 && val->shape_known && val->t.rank == 4 &&
         (val->t.dtype == INFER_DTYPE_FLOAT32 || val->t.dtype == INFER_DTYPE_FLOAT16);
}

static bool node_in(const node *n, const char *const *names) {
  for (; *names; names++)
    if (pass_node_is(n, *names)) return true;
  return false;
}

static const char *const unary_ops[] = {"Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
                                        "Swish", "Tanh", "LeakyRelu", "Gelu", "Elu", "Selu",
                                        "Softplus", "Mish", "Neg", "Abs", "Exp", "Erf",
                                        "Identity", NULL};
static const char *const binary_ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", NULL};

/* Makes node i's output channels-last (dims permuted). */
static void output_cl(cl_state *s, int i) {
  int y = s->g->nodes[i].outputs[0];
  permute_dims(s->g->values[y].t.dims, to_cl_perm);
  s->is_cl[y] = true;
}

/* A constant operand of a binary op broadcast against a 4-D output, as a 4-D
 * channels-last constant: rank < 4 gets leading 1s first. -1 when not possible. */
static int operand_cl(cl_state *s, int v) {
  graph *g = s->g;
  const value *val = &g->values[v];
  if (s->is_cl[v] || (val->shape_known && val->t.rank == 4)) return as_cl(s, v);
  if (val->kind != VALUE_CONSTANT || val->t.rank > 4) return -1;
  if (dims_count(val->t.rank, val->t.dims) == 1) return v; /* a scalar broadcasts alike */
  int r = val->t.rank;
  /* view as 4-D: leading 1s, same data */
  char *name = pass_unique_name(g, val->name, "_4d");
  if (!name) return -1;
  int w = graph_add_value(g, name);
  free(name);
  if (w < 0 || !grow_state(s)) return -1;
  value *wv = &g->values[w];
  const value *src = &g->values[v];
  wv->t = src->t;
  wv->t.rank = 4;
  for (int k = 0; k < 4; k++) wv->t.dims[k] = k < 4 - r ? 1 : src->t.dims[k - (4 - r)];
  int64_t nb = tensor_nbytes(&src->t);
  if (!(wv->t.data = malloc(nb > 0 ? (size_t)nb : 1))) return -1;
  memcpy(wv->t.data, src->t.data, (size_t)nb);
  wv->kind = VALUE_CONSTANT;
  wv->has_type = wv->shape_known = true;
  wv->producer = -1;
  return as_cl(s, w);
}

/* Node i reads only NCHW values. */
static infer_status inputs_nchw(cl_state *s, int i) {
  for (int k = 0; k < s->g->nodes[i].n_inputs; k++) {
    int v = s->g->nodes[i].inputs[k];
    if (v < 0 || !s->is_cl[v]) continue;
    int c = as_nchw(s, v);
    if (c < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "to-channels-last: out of memory");
    s->g->nodes[i].inputs[k] = c;
  }
  return INFER_OK;
}

#define OOM_IF(cond) \
  if (cond) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "to-channels-last: out of memory")

static infer_status convert_conv(cl_state *s, int i) {
  graph *g = s->g;
  node *n = &g->nodes[i];
  int x = as_cl(s, n->inputs[0]);
  OOM_IF(x < 0);
  int w = permuted_constant(s, g->nodes[i].inputs[1], to_cl_perm);
  OOM_IF(w < 0);
  int z = -1;
  if (g->nodes[i].n_inputs > 3 && g->nodes[i].inputs[3] >= 0) {
    z = as_cl(s, g->nodes[i].inputs[3]);
    OOM_IF(z < 0);
  }
  n = &g->nodes[i];
  if (pass_node_is(n, "Conv")) {
    /* Conv -> FusedConv with no activation: same attributes */
    attr *attrs = calloc((size_t)n->n_attrs + 1, sizeof(attr));
    OOM_IF(!attrs);
    int na = n->n_attrs;
    memcpy(attrs, n->attrs, sizeof(attr) * (size_t)na);
    free(n->attrs); /* the entries now belong to attrs */
    n->attrs = NULL;
    n->n_attrs = 0;
    int ins[3] = {x, w, n->n_inputs > 2 ? n->inputs[2] : -1};
    TRY(pass_rewrite_node(g, i, "com.microsoft", "FusedConv", 1, ins, ins[2] >= 0 ? 3 : 2,
                          attrs, na));
    n = &g->nodes[i];
  } else {
    n->inputs[0] = x;
    n->inputs[1] = w;
    if (z >= 0) n->inputs[3] = z;
  }
  TRY(pass_set_attr_int(n, "channels_last", 1));
  TRY(pass_reparse(n));
  output_cl(s, i);
  return INFER_OK;
}

/* Whether node i is a 4-D Transpose with permutation p. */
static bool transpose_is(const graph *g, int i, const int *p) {
  const node *n = &g->nodes[i];
  if (!pass_node_is(n, "Transpose") || n->n_inputs != 1 || n->n_outputs != 1) return false;
  const int64_t *perm;
  int c = -1;
  if (attr_get_ints(n, "perm", &perm, &c) != INFER_OK || c != 4) return false;
  for (int k = 0; k < 4; k++)
    if (perm[k] != p[k]) return false;
  return true;
}

/* The permutes models write around channels-last work (ConvNeXt's NCHW <-> NHWC around
 * its LayerNorm and Linear layers) are no-ops here: Transpose(0, 2, 3, 1) of a
 * channels-last value gives its bytes as they are, as a plain NHWC tensor; and
 * Transpose(0, 3, 1, 2) of a plain NHWC tensor gives a channels-last value with the same
 * bytes. Either becomes an Identity (a view on the GPU). */
static infer_status layout_noop(cl_state *s, int i, bool *done) {
  graph *g = s->g;
  node *n = &g->nodes[i];
  *done = false;
  int x = n->n_inputs == 1 ? n->inputs[0] : -1, y = n->n_outputs == 1 ? n->outputs[0] : -1;
  if (x < 0 || y < 0 || !is_4d_float(g, x) || !is_4d_float(g, y) || pass_is_graph_output(g, y))
    return INFER_OK;
  bool to_plain = s->is_cl[x] && transpose_is(g, i, to_cl_perm);
  bool to_cl = !s->is_cl[x] && transpose_is(g, i, to_nchw_perm);
  if (!to_plain && !to_cl) return INFER_OK;
  TRY(pass_rewrite_node(g, i, "", "Identity", 16, &x, 1, NULL, 0));
  if (to_cl) output_cl(s, i); /* y's dims become NHWC, its data already is */
  *done = true;
  return INFER_OK;
}

static infer_status visit(cl_state *s, int i) {
  graph *g = s->g;
  bool noop = false;
  TRY(layout_noop(s, i, &noop));
  if (noop) return INFER_OK;
  node *n = &g->nodes[i];
  int y = n->n_outputs >= 1 ? n->outputs[0] : -1;
  bool y_ok = y >= 0 && n->n_outputs == 1 && is_4d_float(g, y) && !pass_is_graph_output(g, y);
  bool any_cl = false;
  for (int k = 0; k < n->n_inputs; k++) any_cl |= n->inputs[k] >= 0 && s->is_cl[n->inputs[k]];
  bool is_conv = pass_node_is(n, "Conv") ||
                 (!n->removed && strcmp(n->op_type, "FusedConv") == 0 &&
                  strcmp(n->domain, "com.microsoft") == 0);
  if (is_conv && y_ok && is_4d_float(g, n->inputs[0]) && n->inputs[1] >= 0 &&
      g->values[n->inputs[1]].kind == VALUE_CONSTANT && g->values[n->inputs[1]].t.rank == 4)
    return convert_conv(s, i);
  if (any_cl && y_ok && node_in(n, unary_ops) && s->is_cl[n->inputs[0]]) {
    for (int k = 1; k < n->n_inputs; k++) /* Clip's bounds are scalars */
      if (n->inputs[k] >= 0 && s->is_cl[n->inputs[k]]) return inputs_nchw(s, i);
    output_cl(s, i);
    return INFER_OK;
  }
  if (any_cl && y_ok && node_in(n, binary_ops) && n->n_inputs == 2) {
    int a = operand_cl(s, n->inputs[0]);
    int b = a < 0 ? -1 : operand_cl(s, n->inputs[1]);
    if (a >= 0 && b >= 0) {
      g->nodes[i].inputs[0] = a;
      g->nodes[i].inputs[1] = b;
      output_cl(s, i);
      return INFER_OK;
    }
  }
  if (any_cl && y_ok && pass_node_is(n, "Concat")) {
    int64_t axis = 0;
    if (attr_get_int(n, "axis", 0, &axis) == INFER_OK && (axis == 1 || axis == -3)) {
      for (int k = 0; k < g->nodes[i].n_inputs; k++) {
        int c = as_cl(s, g->nodes[i].inputs[k]);
        OOM_IF(c < 0);
        g->nodes[i].inputs[k] = c;
      }
      TRY(pass_set_attr_int(&g->nodes[i], "axis", 3));
      TRY(pass_reparse(&g->nodes[i]));
      output_cl(s, i);
      return INFER_OK;
    }
  }
  if (any_cl && y_ok && (pass_node_is(n, "MaxPool") || pass_node_is(n, "AveragePool")) &&
      s->is_cl[n->inputs[0]] && is_4d_float(g, n->inputs[0])) {
    TRY(pass_set_attr_int(n, "channels_last", 1));
    TRY(pass_reparse(n));
    output_cl(s, i);
    return INFER_OK;
  }
  bool gap = pass_node_is(n, "GlobalAveragePool"), gmp = !gap && pass_node_is(n, "GlobalMaxPool");
  if (any_cl && y_ok && (gap || gmp) && s->is_cl[n->inputs[0]]) {
    int in = n->inputs[0];
    attr *a = calloc(2, sizeof(attr));
    OOM_IF(!a);
    a[0].name = strdup("axes");
    a[0].type = ATTR_INTS;
    a[0].n = 2;
    a[0].ints = malloc(2 * sizeof(int64_t));
    a[1].name = strdup("keepdims");
    a[1].type = ATTR_INT;
    a[1].i = 1;
    if (!a[0].name || !a[0].ints || !a[1].name) {
      attr_clear(&a[0]);
      attr_clear(&a[1]);
      free(a);
      OOM_IF(true);
    }
    a[0].ints[0] = 1;
    a[0].ints[1] = 2;
    TRY(pass_rewrite_node(g, i, "", gap ? "ReduceMean" : "ReduceMax", 13, &in, 1, a, 2));
    output_cl(s, i);
    return INFER_OK;
  }
  return any_cl ? inputs_nchw(s, i) : INFER_OK;
}

infer_status pass_to_channels_last(graph *g, int *added) {
  *added = 0;
  cl_state s = {.g = g};
  infer_status st = INFER_OK;
  if (!grow_state(&s)) {
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "to-channels-last: out of memory");
    goto out;
  }
  int n0 = g->n_nodes;
  for (int i = 0; i < n0; i++) s.key[i] = i;
  for (int i = 0; st == INFER_OK && i < n0; i++)
    if (!g->nodes[i].removed) st = visit(&s, i);
  /* graph outputs never become channels-last (converted nodes skip them) */
  if (st == INFER_OK && s.added) st = pass_reorder_nodes(g, s.key);
  *added = s.added;
out:
  free(s.is_cl);
  free(s.cl_copy);
  free(s.nchw_copy);
  free(s.key);
  return st;
}
