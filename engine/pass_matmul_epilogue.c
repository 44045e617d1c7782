/* pass_matmul_epilogue.c: MatMul (B a constant matrix) or Gemm -> [Add bias] -> [Add Z]
 * -> [Relu | Gelu] becomes one FusedMatMul (domain infer, ops/matmul_fused.h):
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

static bool is_const(const graph *g, int v) {
  return v >= 0 && g->values[v].kind == VALUE_CONSTANT && g->values[v].t.data &&
         g->values[v].shape_known && g->values[v].has_type;
}

static bool fusable_dtype(infer_dtype t) {
  return t == INFER_DTYPE_FLOAT32 || t == INFER_DTYPE_FLOAT16;
}

/* A constant of n elements laid along the last axis ([n], [1, n], [1, 1, n] ...). */
static bool is_row_vector(const graph *g, int v, int64_t n, infer_dtype dt) {
  if (!is_const(g, v)) return false;
  const tensor *t = &g->values[v].t;
  if (t->dtype != dt || dims_count(t->rank, t->dims) != n) return false;
  return t->rank == 0 ? n == 1 : t->dims[t->rank - 1] == n;
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
  if (!y->shape_known || !fusable_dtype(y->t.dtype) || !is_const(g, p->b) ||
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

static infer_status fuse_at(graph *g, int i, int *readers, int *removed) {
  product p;
  if (!product_of(g, &g->nodes[i], &p)) return INFER_OK;
  bool is_gemm = pass_node_is(&g->nodes[i], "Gemm");
  int y = g->nodes[i].outputs[0];
  const value *yv = &g->values[y];
  int64_t cols = yv->t.dims[yv->t.rank - 1];
  int chain[4] = {i, -1, -1, -1}, n_chain = 1, cur = y;
  int r = pass_sole_reader(g, cur, readers);
  if (p.bias < 0 && p.z < 0 && r >= 0 && pass_node_is(&g->nodes[r], "Add") &&
      g->nodes[r].n_inputs == 2) {
    const node *add = &g->nodes[r];
    int other = add->inputs[0] == cur ? add->inputs[1] : add->inputs[0];
    if (other != cur && is_row_vector(g, other, cols, yv->t.dtype) &&
        same_shape(&g->values[add->outputs[0]], yv)) {
      p.bias = other;
      chain[n_chain++] = r;
      cur = add->outputs[0];
      r = pass_sole_reader(g, cur, readers);
    }
  }
  if (p.z < 0 && r >= 0 && pass_node_is(&g->nodes[r], "Add") && g->nodes[r].n_inputs == 2) {
    const node *add = &g->nodes[r];
    int other = add->inputs[0] == cur ? add->inputs[1] : add->inputs[0];
    if (other != cur && same_shape(&g->values[other], yv) &&
        same_shape(&g->values[add->outputs[0]], yv)) {
      p.z = other;
      chain[n_chain++] = r;
      cur = add->outputs[0];
      r = pass_sole_reader(g, cur, readers);
    }
  }
  matmul_act act = MATMUL_ACT_NONE;
  if (r >= 0 && pass_node_is(&g->nodes[r], "Relu")) {
    act = MATMUL_ACT_RELU;
  } else if (r >= 0 && pass_node_is(&g->nodes[r], "Gelu")) {
    const char *ap = "none";
    if (attr_get_string(&g->nodes[r], "approximate", "none", &ap) == INFER_OK)
      act = strcmp(ap, "tanh") == 0 ? MATMUL_ACT_GELU_TANH : MATMUL_ACT_GELU;
  }
  if (act != MATMUL_ACT_NONE) chain[n_chain++] = r;
  if (n_chain == 1 && !is_gemm) return INFER_OK; /* a bare MatMul gains nothing */
  if (p.bias >= 0 && (g->values[p.bias].t.rank != 1 || p.bias_scale != 1)) {
    p.bias = bias_vector(g, p.bias, cols, p.bias_scale);
    if (p.bias < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-matmul-epilogue: out of memory");
    readers[g->n_values - 1] = 0; /* the caller counted with room for one more value */
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
  for (int i = 0; st == INFER_OK && i < n0; i++) {
    if (!pass_node_is(&g->nodes[i], "MatMul") && !pass_node_is(&g->nodes[i], "Gemm")) continue;
    /* counted afresh, with room for the one constant a fusion may add */
    int *readers = pass_count_readers(g);
    int *grown = readers ? realloc(readers, sizeof(int) * ((size_t)g->n_values + 2)) : NULL;
    if (!grown) {
      free(readers);
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-matmul-epilogue: out of memory");
    }
    readers = grown;
    st = fuse_at(g, i, readers, removed);
    free(readers);
  }
  return st;
}
