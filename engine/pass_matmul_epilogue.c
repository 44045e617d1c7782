/* pass_matmul_epilogue.c: MatMul (B a constant matrix) or Gemm -> [Mul by a constant per
 * column] -> [Add bias] -> [Add Z] -> [Relu | Gelu], Identities between passing, becomes
 * one FusedMatMul (domain infer, ops/matmul_fused.h); a FusedMatMul grows the same way:
 * Y = act(alpha * A . op(B) + bias + Z). Linear layers export as exactly these chains
 * (MatMul + Add for 3-D inputs, Gemm for 2-D ones), and cuBLASLt's epilogue then does
 * the bias, the residual (its C matrix) and the activation in the product's own kernel
 * instead of a pass over Y each.
 *
 * The order is the epilogue's: a residual Add after the activation is left alone. The
 * fused op is written where the chain's last node was (Z may be computed after the
 * product); every intermediate must have one reader and not be a graph output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/matmul_fused.h"
#include "../ops/op.h"
#include "passes.h"

static bool fusable_dtype(infer_dtype t) {
  return t == INFER_DTYPE_FLOAT32 || t == INFER_DTYPE_FLOAT16;
}

/* A constant of n elements laid along the last axis ([n], [1, n], [1, 1, n] ...). */
static bool is_row_vector(const graph *g, int v, int64_t n, infer_dtype dt) {
  if (!pass_is_constant(g, v)) return false;
  const tensor *t = &g->values[v].t;
  if (t->dtype != dt || dims_count(t->rank, t->dims) != n) return false;
  return t->rank == 0 ? n == 1 : t->dims[t->rank - 1] == n;
}

/* y = Reshape(x) keeps the rows' last dim (cols) and their count: the same bytes, which
 * a product's epilogue can write as y; fixed sizes only (the CPU's flexible batch would
 * change them per run). */
static bool rows_reshape(const graph *g, int x, int y, int64_t cols) {
  const value *a = &g->values[x], *b = &g->values[y];
  return a->shape_known && b->shape_known && !a->shape_dep && !a->data_dep && !b->shape_dep &&
         !b->data_dep && a->t.rank >= 1 && b->t.rank >= 1 && b->t.dims[b->t.rank - 1] == cols &&
         dims_count(a->t.rank, a->t.dims) == dims_count(b->t.rank, b->t.dims) &&
         !pass_is_graph_output(g, x);
}

/* A 1-D copy of the n biases in v, each times scale (a new constant). */
static int bias_vector(graph *g, int v, int64_t n, double scale) {
  infer_dtype dt = g->values[v].t.dtype;
  int b = pass_add_constant(g, v, "/fused_bias", dt, 1, &n);
  if (b < 0) return -1;
  for (int64_t i = 0; i < n; i++)
    tensor_set_f64(&g->values[b].t, i, scale * tensor_get_f64(&g->values[v].t, i));
  return b;
}

static bool same_shape(const value *a, const value *b) {
  return a->shape_known && b->shape_known && a->t.dtype == b->t.dtype &&
         dims_equal(a->t.rank, a->t.dims, b->t.rank, b->t.dims);
}

/* The product's operands: from MatMul(A, B const 2-D) or Gemm(transA = 0, B const). */
typedef struct product {
  int a, b, bias, z;
  bool trans_b;
  float alpha;
  double bias_scale;
} product;

static bool product_of(const graph *g, const node *n, product *p) {
  memset(p, 0, sizeof *p);
  p->bias = p->z = -1;
  p->alpha = 1;
  p->bias_scale = 1;
  if (n->n_inputs < 2 || n->n_outputs != 1 || n->outputs[0] < 0) return false;
  p->a = n->inputs[0];
  p->b = n->inputs[1];
  const value *y = &g->values[n->outputs[0]];
  if (!y->shape_known || !fusable_dtype(y->t.dtype) || !pass_is_constant(g, p->b) ||
      g->values[p->b].t.rank != 2 || g->values[p->b].t.dtype != y->t.dtype ||
      !g->values[p->a].shape_known || g->values[p->a].t.rank < 1)
    return false;
  if (pass_node_is(n, "MatMul")) return n->n_inputs == 2;
  if (!pass_node_is(n, "Gemm")) return false;
  int64_t ta = 0, tb = 0;
  float beta = 1;
  if (attr_get_int(n, "transA", 0, &ta) != INFER_OK || ta != 0 ||
      attr_get_int(n, "transB", 0, &tb) != INFER_OK ||
      attr_get_float(n, "alpha", 1.0f, &p->alpha) != INFER_OK ||
      attr_get_float(n, "beta", 1.0f, &beta) != INFER_OK || g->values[p->a].t.rank != 2)
    return false;
  p->trans_b = tb != 0;
  int c = n->n_inputs > 2 ? n->inputs[2] : -1;
  int64_t cols = y->t.dims[1];
  if (c < 0 || beta == 0) return true;
  if (is_row_vector(g, c, cols, y->t.dtype)) {
    p->bias = c;
    p->bias_scale = beta;
    return true;
  }
  if (beta == 1 && same_shape(&g->values[c], y)) {
    p->z = c;
    return true;
  }
  return false; /* a C that broadcasts otherwise: left to Gemm */
}

/* FusedMatMul's own product and epilogue, to extend (the pass runs again after
 * to-channels-last, where the layer scales and residuals of ConvNeXt become reachable). */
static bool fused_of(const graph *g, const node *n, product *p, matmul_act *act) {
  memset(p, 0, sizeof *p);
  p->bias = p->z = -1;
  p->bias_scale = 1;
  if (n->removed || strcmp(n->op_type, "FusedMatMul") != 0 || strcmp(n->domain, "infer") != 0 ||
      !n->params || !pass_is_constant(g, n->inputs[1]))
    return false;
  const fused_matmul_params *fp = n->params;
  p->a = n->inputs[0];
  p->b = n->inputs[1];
  p->bias = n->n_inputs > 2 ? n->inputs[2] : -1;
  p->z = n->n_inputs > 3 ? n->inputs[3] : -1;
  p->trans_b = fp->trans_b;
  p->alpha = fp->alpha;
  *act = fp->act;
  return true;
}

/* B with every output column (row, when trans_b) times s (a new constant). */
static int scaled_weights(graph *g, int b, int s, bool trans_b) {
  const tensor *bt = &g->values[b].t;
  int64_t dims[2] = {bt->dims[0], bt->dims[1]};
  int w = pass_add_constant(g, b, "/scaled", bt->dtype, 2, dims);
  if (w < 0) return -1;
  int64_t cols = trans_b ? dims[0] : dims[1];
  for (int64_t i = 0; i < dims[0] * dims[1]; i++) {
    int64_t col = trans_b ? i / dims[1] : i % dims[1];
    tensor_set_f64(&g->values[w].t, i,
                   tensor_get_f64(&g->values[b].t, i) * tensor_get_f64(&g->values[s].t, col % cols));
  }
  return w;
}

/* The biases of v times scale and times the vector s (s < 0: none), as a new [n]. */
static int bias_scaled(graph *g, int v, int64_t n, double scale, int s) {
  int b = bias_vector(g, v, n, scale);
  if (b >= 0 && s >= 0)
    for (int64_t i = 0; i < n; i++)
      tensor_set_f64(&g->values[b].t, i,
                     tensor_get_f64(&g->values[b].t, i) * tensor_get_f64(&g->values[s].t, i));
  return b;
}

static infer_status fuse_at(graph *g, int i, int **readers_io, int *removed) {
  int *readers = *readers_io;
  product p;
  matmul_act act = MATMUL_ACT_NONE;
  bool is_gemm = pass_node_is(&g->nodes[i], "Gemm");
  bool is_fused = fused_of(g, &g->nodes[i], &p, &act);
  if (!is_fused && !product_of(g, &g->nodes[i], &p)) return INFER_OK;
  int y = g->nodes[i].outputs[0];
  const value *yv = &g->values[y];
  if (!yv->shape_known) return INFER_OK;
  int64_t cols = yv->t.dims[yv->t.rank - 1];
  int chain[16] = {i}, n_chain = 1, cur = y, scale = -1, reshaped = -1;
  bool bias_first = p.bias >= 0; /* a bias the scale multiplies too (it came before) */
  /* the epilogue's order: act(alpha * A . B + bias + Z); a constant scale per column can
   * come first (it folds into B and the bias), Identities (views) pass */
  for (int r; n_chain < 16 && act == MATMUL_ACT_NONE && (r = pass_sole_reader(g, cur, readers)) >= 0;) {
    const node *n = &g->nodes[r];
    int other = -1;
    if (n->n_inputs == 2) other = n->inputs[0] == cur ? n->inputs[1] : n->inputs[0];
    bool out_ok = n->n_outputs == 1 && same_shape(&g->values[n->outputs[0]], yv);
    if (pass_node_is(n, "Identity") && out_ok) {
    } else if (pass_node_is(n, "Reshape") && reshaped < 0 && n->inputs[0] == cur &&
               n->n_outputs == 1 && rows_reshape(g, cur, n->outputs[0], cols)) {
      /* a view of the rows (out_shape): what follows compares with its shape */
      reshaped = n_chain;
      yv = &g->values[n->outputs[0]];
    } else if (pass_node_is(n, "Mul") && out_ok && other != cur && p.z < 0 && scale < 0 &&
               is_row_vector(g, other, cols, yv->t.dtype)) {
      scale = other;
    } else if (pass_node_is(n, "Add") && out_ok && other != cur && p.bias < 0 && p.z < 0 &&
               is_row_vector(g, other, cols, yv->t.dtype)) {
      p.bias = other;
      bias_first = scale < 0;
    } else if (pass_node_is(n, "Add") && out_ok && other != cur && p.z < 0 &&
               same_shape(&g->values[other], yv)) {
      p.z = other;
    } else if (pass_node_is(n, "Relu") && out_ok) {
      act = MATMUL_ACT_RELU;
    } else if (pass_node_is(n, "Gelu") && out_ok) {
      const char *ap = "none";
      if (attr_get_string(n, "approximate", "none", &ap) != INFER_OK) break;
      act = strcmp(ap, "tanh") == 0 ? MATMUL_ACT_GELU_TANH : MATMUL_ACT_GELU;
    } else {
      break;
    }
    chain[n_chain++] = r;
    cur = n->outputs[0];
  }
  if (reshaped >= 0 && reshaped == n_chain - 1) n_chain--; /* a Reshape alone: left */
  if (n_chain == 1 && !is_gemm) return INFER_OK; /* nothing to fuse */
  bias_first = bias_first && scale >= 0;
  int n_before = g->n_values;
  if (scale >= 0) {
    p.b = scaled_weights(g, p.b, scale, p.trans_b);
    if (p.b < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-matmul-epilogue: out of memory");
  }
  if (p.bias >= 0 && (g->values[p.bias].t.rank != 1 || p.bias_scale != 1 || bias_first)) {
    p.bias = bias_scaled(g, p.bias, cols, p.bias_scale, bias_first ? scale : -1);
    if (p.bias < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-matmul-epilogue: out of memory");
  }
  if (g->n_values > n_before) { /* room in the reader counts for the new constants */
    int *grown = realloc(readers, sizeof(int) * ((size_t)g->n_values + 1));
    if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-matmul-epilogue: out of memory");
    for (int v = n_before; v < g->n_values; v++) grown[v] = 0;
    *readers_io = readers = grown;
  }
  int ins[4] = {p.a, p.b, p.bias, p.z};
  int n_ins = p.z >= 0 ? 4 : p.bias >= 0 ? 3 : 2;
  int last = chain[n_chain - 1];
  for (int k = 0; k < n_chain - 1; k++) pass_remove_node(g, chain[k], readers);
  for (int k = 0; k < g->nodes[last].n_inputs; k++)
    if (g->nodes[last].inputs[k] >= 0) readers[g->nodes[last].inputs[k]]--;
  TRY(pass_rewrite_node(g, last, "infer", "FusedMatMul", 1, ins, n_ins, NULL, 0));
  node *f = &g->nodes[last];
  if (act != MATMUL_ACT_NONE) TRY(pass_set_attr_string(f, "activation", matmul_act_name(act)));
  if (p.trans_b) TRY(pass_set_attr_int(f, "trans_b", 1));
  if (p.alpha != 1) TRY(pass_set_attr_float(f, "alpha", p.alpha));
  /* Y's dims when not A's leading ones and N (a Reshape in the chain, or one before) */
  const value *fy = &g->values[f->outputs[0]], *av = &g->values[p.a];
  bool derived = fy->t.rank == av->t.rank;
  for (int k = 0; derived && k + 1 < fy->t.rank; k++) derived = fy->t.dims[k] == av->t.dims[k];
  if (!derived) TRY(pass_set_attr_ints(f, "out_shape", fy->t.dims, fy->t.rank));
  TRY(pass_reparse(f));
  for (int k = 0; k < n_ins; k++)
    if (ins[k] >= 0) readers[ins[k]]++;
  *removed += n_chain - 1;
  return INFER_OK;
}

infer_status pass_fuse_matmul_epilogue(graph *g, int *removed) {
  *removed = 0;
  infer_status st = INFER_OK;
  int n0 = g->n_nodes;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-matmul-epilogue: out of memory");
  for (int i = 0; st == INFER_OK && i < n0; i++) {
    const node *n = &g->nodes[i];
    if (pass_node_is(n, "MatMul") || pass_node_is(n, "Gemm") ||
        (!n->removed && strcmp(n->op_type, "FusedMatMul") == 0))
      st = fuse_at(g, i, &readers, removed);
  }
  free(readers);
  return st;
}
