/* pass_channels_last.c: for fp16 GPU builds, 2-D convolutions and what lies between
 * them run on channels-last (NHWC) data, the layout tensor-core convolutions read
 * natively; NCHW data would make cuDNN transpose around every convolution.
 *
 * Values produced by converted nodes keep their id and get NHWC dims (N, H, W, C).
 * Converted: Conv/FusedConv with a constant 4-D W (-> FusedConv channels_last = 1,
 * W transposed to M x kH x kW x C/g once at build); unary elementwise ops, per-tensor
 * QuantizeLinear / DequantizeLinear among them (a QDQ model's activations); binary
 * elementwise ops whose other operand can be made channels-last (a same-shape value
 * through a Transpose, a constant transposed at build); Concat on the channel axis;
 * 2-D MaxPool (without Indices) and AveragePool (-> channels_last = 1);
 * GlobalAveragePool / GlobalMaxPool (-> ReduceMean / ReduceMax over H and W); Reduce*
 * with keepdims = 1 and attribute or constant axes (the axes mapped to NHWC); and the
 * NCHW <-> NHWC Transposes around plain NHWC work become Identities (layout_noop). Every
 * other reader of a channels-last value reads an NCHW copy made by one Transpose, and
 * a converted node never writes a graph output, so the graph's interface is
 * unchanged. New nodes are placed right after the producer of what they read; the
 * node order stays topological. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/conv_util.h"
#include "../ops/elementwise_chain.h"
#include "../ops/op.h"
#include "passes.h"

static const int to_cl_perm[4] = {0, 2, 3, 1}, to_nchw_perm[4] = {0, 3, 1, 2};

typedef struct cl_state {
  graph *g;
  bool *is_cl;  /* per value: holds NHWC data */
  int *cl_copy;   /* per NCHW value: its channels-last copy, or -1 */
  int *nchw_copy; /* per channels-last value: its NCHW copy, or -1 */
  double *key;    /* per node: position for the final reordering */
  int *readers;   /* per value at the start (the pattern checks need them) */
  int n_read;     /* the values readers counts */
  int cap_values, cap_nodes;
  int added;  /* Transposes */
  int copies; /* per-tensor Q/DQ nodes copied (qdq_copy_cl) */
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
  int64_t p[4] = {perm[0], perm[1], perm[2], perm[3]};
  int i = -1, t = pass_add_transpose(g, v, p, suffix, &i);
  if (t < 0 || !grow_state(s)) return -1;
  int p_node = pass_producer(g, v);
  s->key[i] = p_node >= 0 ? p_node + 0.5 : -1.0;
  s->added++;
  return t;
}

static bool per_tensor_qdq(const graph *g, const node *n);

/* A copy of per-tensor Q/DQ node p reading `in` (p's input, channels-last) into a new
 * channels-last value, placed right after p; -1 when out of memory, -2 when p has an
 * attribute other than an integer (the ones Q/DQ define are: axis, block_size,
 * output_dtype, saturate). */
static int qdq_copy_cl(cl_state *s, int p, int in) {
  graph *g = s->g;
  for (int k = 0; k < g->nodes[p].n_attrs; k++)
    if (g->nodes[p].attrs[k].type != ATTR_INT) return -2;
  int v = g->nodes[p].outputs[0];
  char *name = pass_unique_name(g, g->values[v].name, "_nhwc");
  if (!name) return -1;
  int y = graph_add_value(g, name);
  int i = y < 0 ? -1 : graph_add_node(g, g->nodes[p].n_inputs, 1, 0);
  if (i < 0 || !grow_state(s)) {
    free(name);
    return -1;
  }
  node *n = &g->nodes[i];
  const node *src = &g->nodes[p];
  n->name = name;
  n->op_type = strdup(src->op_type);
  n->domain = strdup(src->domain);
  n->opset = src->opset;
  n->model_index = -1;
  n->op = src->op;
  if (!n->op_type || !n->domain) return -1;
  for (int k = 0; k < src->n_inputs; k++) n->inputs[k] = src->inputs[k];
  n->inputs[0] = in;
  n->outputs[0] = y;
  for (int k = 0; k < g->nodes[p].n_attrs; k++) {
    const attr *a = &g->nodes[p].attrs[k];
    if (pass_set_attr_int(&g->nodes[i], a->name, a->i) != INFER_OK) return -1;
  }
  if (pass_reparse(&g->nodes[i]) != INFER_OK) return -1;
  value *yv = &g->values[y];
  yv->t = g->values[v].t;
  yv->t.data = NULL;
  permute_dims(yv->t.dims, to_cl_perm);
  yv->has_type = yv->shape_known = true;
  yv->shape_dep = g->values[v].shape_dep;
  yv->producer = i;
  s->key[i] = p + 0.5;
  s->copies++;
  s->is_cl[y] = true;
  return y;
}

/* v's channels-last form (v itself when it is one); -1 when out of memory. The output
 * of a per-tensor QuantizeLinear / DequantizeLinear becomes channels-last through the
 * node rather than after it, on its input's channels-last form (so recursively up a
 * Q -> DQ pair): the node itself when nothing else reads its output (it was visited
 * before and stayed NCHW, so no other reader sees the change), else a copy of it. The
 * Transpose then lands before the pair, which stays next to the convolution that reads
 * it (what pass int8-conv matches), and a graph input's Transpose joins the input's cast
 * on the GPU; the copy costs one elementwise pass, the Transpose it replaces as much. */
static int as_cl_from(cl_state *s, int v, bool in_place);

static int as_cl(cl_state *s, int v) { return as_cl_from(s, v, true); }

/* in_place false: v's NCHW readers all stay (the asking node is a copy), so its
 * producer is copied rather than changed. */
static int as_cl_from(cl_state *s, int v, bool in_place) {
  if (s->is_cl[v]) return v;
  if (s->cl_copy[v] >= 0) return s->cl_copy[v];
  graph *g = s->g;
  int p = pass_producer(g, v);
  if (p >= 0 && s->readers && v < s->n_read && per_tensor_qdq(g, &g->nodes[p]) &&
      g->nodes[p].inputs[0] >= 0) {
    bool self = in_place && s->readers[v] == 1;
    int in = as_cl_from(s, g->nodes[p].inputs[0], self);
    if (in < 0) return -1;
    if (self) {
      g->nodes[p].inputs[0] = in;
      permute_dims(g->values[v].t.dims, to_cl_perm);
      s->is_cl[v] = true;
      return v;
    }
    int c = qdq_copy_cl(s, p, in);
    if (c == -1) return -1;
    if (c >= 0) {
      s->cl_copy[v] = c;
      return c;
    }
  }
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

/* A QuantizeLinear or DequantizeLinear of one scale and zero point for the whole tensor
 * (the activations of a QDQ model): elementwise whatever the layout, its 4-D output
 * (8- or 16-bit integers, or float) channels-last like its input. Per-axis and blocked
 * ones read the channel axis and stay NCHW. */
static bool per_tensor_qdq(const graph *g, const node *n) {
  if (!pass_node_is(n, "QuantizeLinear") && !pass_node_is(n, "DequantizeLinear")) return false;
  if (n->n_inputs < 2 || n->n_outputs != 1 || n->outputs[0] < 0) return false;
  for (int k = 1; k < n->n_inputs && k < 3; k++) {
    const value *p = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
    if (p && (!p->shape_known || dims_count(p->t.rank, p->t.dims) != 1)) return false;
  }
  const value *y = &g->values[n->outputs[0]];
  return y->shape_known && y->t.rank == 4 && !pass_is_graph_output(g, n->outputs[0]);
}

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

/* NCHW axis a (possibly negative) as the NHWC axis holding the same dim. */
static int64_t cl_axis(int64_t a) {
  static const int64_t to_nhwc[4] = {0, 3, 1, 2};
  if (a < 0) a += 4;
  return a >= 0 && a < 4 ? to_nhwc[a] : -1;
}

/* A new int64 constant of n values (the vector form of a shape or an axis list). */
static int int_constant(cl_state *s, int base, const char *suffix, const int64_t *v, int64_t n) {
  int c = pass_add_constant(s->g, base, suffix, INFER_DTYPE_INT64, 1, &n);
  if (c < 0 || !grow_state(s)) return -1;
  memcpy(s->g->values[c].t.data, v, sizeof(int64_t) * (size_t)n);
  return c;
}

/* Slice of a channels-last value with constant starts/ends/axes/steps (opset 10+): the
 * same slice with the axes renamed to their NHWC places. */
static infer_status slice_cl(cl_state *s, int i, bool *done) {
  graph *g = s->g;
  const node *n = &g->nodes[i];
  *done = false;
  if (n->opset < 10 || n->n_inputs < 3) return INFER_OK;
  for (int k = 1; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].kind != VALUE_CONSTANT) return INFER_OK;
  int64_t count = dims_count(g->values[n->inputs[1]].t.rank, g->values[n->inputs[1]].t.dims);
  if (count < 1 || count > 4) return INFER_OK;
  int64_t axes[4];
  bool has_axes = n->n_inputs > 3 && n->inputs[3] >= 0;
  for (int64_t k = 0; k < count; k++) {
    int64_t a = has_axes ? tensor_get_i64(&g->values[n->inputs[3]].t, k) : k;
    if ((axes[k] = cl_axis(a)) < 0) return INFER_OK;
  }
  int c = int_constant(s, n->inputs[1], "_nhwc_axes", axes, count);
  OOM_IF(c < 0);
  node *m = &g->nodes[i];
  if (m->n_inputs > 3) {
    m->inputs[3] = c;
  } else { /* no axes input yet: give it one (steps stay absent) */
    int *grown = realloc(m->inputs, sizeof(int) * 4);
    OOM_IF(!grown);
    m->inputs = grown;
    m->inputs[3] = c;
    m->n_inputs = 4;
  }
  output_cl(s, i);
  *done = true;
  return INFER_OK;
}

/* Split of a channels-last value: the same split on the NHWC axis; every output is
 * channels-last (none may be a graph output). */
static infer_status split_cl(cl_state *s, int i, bool *done) {
  graph *g = s->g;
  node *n = &g->nodes[i];
  *done = false;
  for (int k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] < 0 || !is_4d_float(g, n->outputs[k]) || pass_is_graph_output(g, n->outputs[k]))
      return INFER_OK;
  int64_t axis = 0;
  if (attr_get_int(n, "axis", 0, &axis) != INFER_OK || cl_axis(axis) < 0) return INFER_OK;
  TRY(pass_set_attr_int(n, "axis", cl_axis(axis)));
  TRY(pass_reparse(&g->nodes[i]));
  for (int k = 0; k < g->nodes[i].n_outputs; k++) {
    int y = g->nodes[i].outputs[k];
    permute_dims(g->values[y].t.dims, to_cl_perm);
    s->is_cl[y] = true;
  }
  *done = true;
  return INFER_OK;
}

/* A channel shuffle of a channels-last value: Reshape [N, C, H, W] -> [N, g, C/g, H, W],
 * Transpose (0, 2, 1, 3, 4), Reshape back to [N, C, H, W] (ShuffleNet's), each read once.
 * On NHWC data it is Reshape [N, H, W, g, C/g], Transpose (0, 1, 2, 4, 3), Reshape
 * [N, H, W, C]: the three nodes are rewritten so, and the result is channels-last. */
static infer_status shuffle_cl(cl_state *s, int i, const int *readers, bool *done) {
  graph *g = s->g;
  *done = false;
  const node *r1 = &g->nodes[i];
  int x = r1->inputs[0], a = r1->outputs[0];
  const value *xv = &g->values[x], *av = &g->values[a];
  if (r1->n_inputs != 2 || !av->shape_known || av->t.rank != 5 || readers[a] != 1 ||
      pass_is_graph_output(g, a))
    return INFER_OK;
  const int64_t *xd = xv->t.dims; /* NHWC: the CL value's dims are permuted already */
  int64_t nb = xd[0], h = xd[1], w = xd[2], c = xd[3];
  const int64_t *ad = av->t.dims;
  if (ad[0] != nb || ad[3] != h || ad[4] != w || ad[1] * ad[2] != c) return INFER_OK;
  int t = pass_sole_reader(g, a, readers);
  if (t < 0 || !pass_node_is(&g->nodes[t], "Transpose")) return INFER_OK;
  const int64_t *perm;
  int pc = -1;
  if (attr_get_ints(&g->nodes[t], "perm", &perm, &pc) != INFER_OK || pc != 5 || perm[0] != 0 ||
      perm[1] != 2 || perm[2] != 1 || perm[3] != 3 || perm[4] != 4)
    return INFER_OK;
  int b = g->nodes[t].outputs[0];
  if (readers[b] != 1 || pass_is_graph_output(g, b)) return INFER_OK;
  int r2 = pass_sole_reader(g, b, readers);
  if (r2 < 0 || !pass_node_is(&g->nodes[r2], "Reshape") || g->nodes[r2].n_inputs != 2) return INFER_OK;
  int y = g->nodes[r2].outputs[0];
  const value *yv = &g->values[y];
  if (!yv->shape_known || yv->t.rank != 4 || yv->t.dims[0] != nb || yv->t.dims[1] != c ||
      yv->t.dims[2] != h || yv->t.dims[3] != w || pass_is_graph_output(g, y))
    return INFER_OK;
  int64_t g1 = ad[1], g2 = ad[2];
  int64_t s5[5] = {nb, h, w, g1, g2}, s4[4] = {nb, h, w, c}, p5[5] = {0, 1, 2, 4, 3};
  int c5 = int_constant(s, r1->inputs[1], "_nhwc_shape", s5, 5);
  int c4 = c5 < 0 ? -1 : int_constant(s, g->nodes[r2].inputs[1], "_nhwc_shape", s4, 4);
  OOM_IF(c4 < 0);
  g->nodes[i].inputs[1] = c5;
  memcpy(g->values[a].t.dims, s5, sizeof s5);
  TRY(pass_set_attr_ints(&g->nodes[t], "perm", p5, 5));
  TRY(pass_reparse(&g->nodes[t]));
  int64_t bd[5] = {nb, h, w, g2, g1};
  memcpy(g->values[b].t.dims, bd, sizeof bd);
  g->nodes[r2].inputs[1] = c4;
  permute_dims(g->values[y].t.dims, to_cl_perm);
  s->is_cl[y] = true;
  *done = true;
  return INFER_OK;
}

static const char *const reduce_ops[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                         "ReduceProd", "ReduceL1", "ReduceL2",
                                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
                                         NULL};

/* A Reduce* with keepdims = 1 of a channels-last value: the same reduction over the
 * NHWC positions of its axes (H, W -> 1, 2: the squeeze of squeeze-excitation reads the
 * NHWC data in place instead of an NCHW copy). Axes from the attribute, or from a
 * constant axes input (a permuted copy is made). *done stays false when the node does
 * not qualify (a computed axes input, keepdims = 0). */
static infer_status convert_reduce(cl_state *s, int i, bool *done) {
  graph *g = s->g;
  node *n = &g->nodes[i];
  *done = false;
  int64_t keep = 1;
  if (attr_get_int(n, "keepdims", 1, &keep) != INFER_OK || keep != 1) return INFER_OK;
  int64_t axes[4];
  int count = 0;
  bool from_input = n->n_inputs > 1 && n->inputs[1] >= 0;
  if (from_input) {
    const value *av = &g->values[n->inputs[1]];
    if (av->kind != VALUE_CONSTANT || !av->t.data ||
        tensor_read_ints(&av->t, "axes", axes, 4, &count) != INFER_OK)
      return INFER_OK;
  } else {
    const int64_t *a;
    int c;
    if (attr_get_ints(n, "axes", &a, &c) != INFER_OK || c > 4) return INFER_OK;
    for (int k = 0; k < c; k++) axes[k] = a[k];
    count = c > 0 ? c : 0;
  }
  for (int k = 0; k < count; k++)
    if ((axes[k] = cl_axis(axes[k])) < 0) return INFER_OK;
  if (from_input && count > 0) {
    int c = int_constant(s, g->nodes[i].inputs[1], "_nhwc_axes", axes, count);
    OOM_IF(c < 0);
    g->nodes[i].inputs[1] = c;
  } else if (count > 0) {
    TRY(pass_set_attr_ints(&g->nodes[i], "axes", axes, count));
    TRY(pass_reparse(&g->nodes[i]));
  }
  output_cl(s, i);
  *done = true;
  return INFER_OK;
}

static infer_status visit(cl_state *s, int i) {
  graph *g = s->g;
  bool noop = false;
  TRY(layout_noop(s, i, &noop));
  if (noop) return INFER_OK;
  node *n = &g->nodes[i];
  if (n->n_inputs >= 1 && n->inputs[0] >= 0 && s->is_cl[n->inputs[0]]) {
    bool done = false;
    if (pass_node_is(n, "Slice") && n->n_outputs == 1 && is_4d_float(g, n->outputs[0]) &&
        !pass_is_graph_output(g, n->outputs[0]))
      TRY(slice_cl(s, i, &done));
    else if (pass_node_is(n, "Split"))
      TRY(split_cl(s, i, &done));
    else if (pass_node_is(n, "Reshape") && s->readers)
      TRY(shuffle_cl(s, i, s->readers, &done));
    if (done) return INFER_OK;
    n = &g->nodes[i];
  }
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
  if (per_tensor_qdq(g, n) && n->inputs[0] >= 0 && s->is_cl[n->inputs[0]]) {
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
  bool chain = !n->removed && strcmp(n->op_type, "FusedChain") == 0 &&
               strcmp(n->domain, "infer") == 0;
  if (any_cl && y_ok && chain && s->is_cl[n->inputs[0]]) {
    /* its head is channels-last; the operands broadcast against it become so too */
    int conv[EWC_MAX_INPUTS];
    bool ok = n->n_inputs <= EWC_MAX_INPUTS;
    for (int k = 1; ok && k < n->n_inputs; k++) ok = (conv[k] = operand_cl(s, n->inputs[k])) >= 0;
    if (ok) {
      for (int k = 1; k < g->nodes[i].n_inputs; k++) g->nodes[i].inputs[k] = conv[k];
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
  if (any_cl && y_ok && node_in(n, reduce_ops) && s->is_cl[n->inputs[0]] &&
      is_4d_float(g, n->inputs[0])) {
    bool done = false;
    TRY(convert_reduce(s, i, &done));
    if (done) return INFER_OK;
    n = &g->nodes[i];
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
  s.readers = pass_count_readers(g);
  s.n_read = g->n_values;
  for (int i = 0; st == INFER_OK && i < n0; i++)
    if (!g->nodes[i].removed) st = visit(&s, i);
  /* graph outputs never become channels-last (converted nodes skip them) */
  for (int v = 0; st == INFER_OK && v < g->n_values && v < s.cap_values; v++)
    if (s.is_cl[v]) g->values[v].channels_last = true;
  if (st == INFER_OK && (s.added || s.copies)) st = pass_reorder_nodes(g, s.key);
  *added = s.added;
out:
  free(s.is_cl);
  free(s.cl_copy);
  free(s.nchw_copy);
  free(s.key);
  free(s.readers);
  return st;
}
