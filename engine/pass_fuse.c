/* pass_fuse.c: elementwise chains that exporters write out op by op, recognized and
 * replaced by the one op that computes them (each of which has a CPU op and a GPU
 * kernel):
 *   x * sigmoid(x)                                    -> Swish(x)             (SiLU)
 *   x * 0.5 * (1 + erf(x / sqrt(2))), either order    -> Gelu(x)              (exact GELU)
 *   (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta over the last
 *   axis                                               -> LayerNormalization(x, gamma, beta)
 * The chain's last node is rewritten in place into the fused op (it comes after every
 * other node of the chain and after the producers of the fused op's inputs, so the
 * order stays topological); the others are removed. Every intermediate of a chain
 * must have no reader outside it and must not be a graph output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "passes.h"

/* The node writing v when it is the live op_type node whose output v is read only
 * `uses` times and is not a graph output; else -1. */
static int chain_link(const graph *g, int v, const char *op_type, int uses, const int *readers) {
  int p = pass_producer(g, v);
  if (p < 0 || !pass_node_is(&g->nodes[p], op_type) || readers[v] != uses ||
      pass_is_graph_output(g, v))
    return -1;
  return p;
}

/* A constant holding a single value near `want`. */
static bool const_near(const graph *g, int v, double want, double tol) {
  if (v < 0 || g->values[v].kind != VALUE_CONSTANT) return false;
  const tensor *t = &g->values[v].t;
  if (dims_count(t->rank, t->dims) != 1 || !dtype_is_float(t->dtype)) return false;
  return fabs(tensor_get_f64(t, 0) - want) <= tol;
}

static attr *one_attr(const char *name, attr_type type, int64_t i, float f) {
  attr *a = calloc(1, sizeof *a);
  if (!a || !(a->name = strdup(name))) {
    free(a);
    return NULL;
  }
  a->type = type;
  a->i = i;
  a->f = f;
  return a;
}

/* Mul(x, Sigmoid(x)) at node i. */
static infer_status try_swish(graph *g, int i, int *readers, bool *done) {
  const node *m = &g->nodes[i];
  for (int side = 0; side < 2 && m->n_inputs == 2; side++) {
    int s_val = m->inputs[side], x = m->inputs[1 - side];
    int s = chain_link(g, s_val, "Sigmoid", 1, readers);
    if (s < 0 || g->nodes[s].inputs[0] != x || !dtype_is_float(g->values[x].t.dtype)) continue;
    pass_remove_node(g, s, readers);
    readers[s_val]--; /* the Mul no longer reads it */
    readers[x]--;
    TRY(pass_rewrite_node(g, i, "", "Swish", 24, &x, 1, NULL, 0));
    readers[x]++;
    *done = true;
    return INFER_OK;
  }
  return INFER_OK;
}

/* 0.5 * x * (1 + erf(x / sqrt(2))) ending at Mul node i, in the two orders the
 * exporters write: Mul(Mul(x, A), 0.5) and Mul(Mul(x, 0.5), A), A = Add(Erf(Div(x,
 * sqrt 2)), 1). */
static infer_status try_gelu(graph *g, int i, int *readers, bool *done) {
  const node *last = &g->nodes[i];
  if (last->n_inputs != 2) return INFER_OK;
  for (int side = 0; side < 2; side++) {
    int inner_val = last->inputs[side], other = last->inputs[1 - side];
    int inner = chain_link(g, inner_val, "Mul", 1, readers);
    if (inner < 0) continue;
    const node *mi = &g->nodes[inner];
    /* find A = Add(Erf(Div(x, sqrt2)), 1) among {other, the inner Mul's inputs} */
    int cand[3] = {other, mi->inputs[0], mi->inputs[1]};
    for (int c = 0; c < 3; c++) {
      int a_val = cand[c];
      int add = chain_link(g, a_val, "Add", 1, readers);
      if (add < 0) continue;
      int e_val = -1;
      for (int k = 0; k < 2; k++)
        if (const_near(g, g->nodes[add].inputs[1 - k], 1.0, 1e-6)) e_val = g->nodes[add].inputs[k];
      int erf = chain_link(g, e_val, "Erf", 1, readers);
      if (erf < 0) continue;
      int d_val = g->nodes[erf].inputs[0];
      int div = chain_link(g, d_val, "Div", 1, readers);
      if (div < 0 || !const_near(g, g->nodes[div].inputs[1], sqrt(2.0), 1e-3)) continue;
      int x = g->nodes[div].inputs[0];
      /* the remaining two operands must be x and the constant 0.5 */
      int rest[2], nr = 0;
      for (int k = 0; k < 3; k++)
        if (k != c) rest[nr++] = cand[k];
      bool ok = (rest[0] == x && const_near(g, rest[1], 0.5, 1e-6)) ||
                (rest[1] == x && const_near(g, rest[0], 0.5, 1e-6));
      /* in the first order A sits in the inner Mul with x, 0.5 outside; in the
       * second, the inner Mul is Mul(x, 0.5) and A outside: both leave {x, 0.5} */
      if (!ok || !dtype_is_float(g->values[x].t.dtype)) continue;
      int chain[4] = {inner, add, erf, div};
      for (int k = 0; k < 4; k++) pass_remove_node(g, chain[k], readers);
      for (int k = 0; k < last->n_inputs; k++) readers[last->inputs[k]]--;
      attr *ap = one_attr("approximate", ATTR_STRING, 0, 0);
      if (!ap || !(ap->s = strdup("none"))) {
        if (ap) attr_clear(ap);
        free(ap);
        return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      }
      TRY(pass_rewrite_node(g, i, "", "Gelu", 20, &x, 1, ap, 1));
      readers[x]++;
      *done = true;
      return INFER_OK;
    }
  }
  return INFER_OK;
}

/* The axes of a ReduceMean node are exactly the last axis of a rank-r input. */
static bool reduces_last_axis(const graph *g, const node *n, int r) {
  const attr *keep = node_attr(n, "keepdims");
  if (keep && keep->i == 0) return false;
  const attr *ax = node_attr(n, "axes");
  if (ax) return ax->n == 1 && (ax->ints[0] == -1 || ax->ints[0] == r - 1);
  if (n->n_inputs < 2 || n->inputs[1] < 0) return false;
  const value *v = &g->values[n->inputs[1]];
  if (v->kind != VALUE_CONSTANT || dims_count(v->t.rank, v->t.dims) != 1) return false;
  int64_t a = tensor_get_i64(&v->t, 0);
  return a == -1 || a == r - 1;
}

/* (x - mean) / sqrt(mean((x - mean)^2) + eps) * gamma + beta ending at Add node i. */
static infer_status try_layernorm(graph *g, int i, int *readers, bool *done) {
  const node *add = &g->nodes[i];
  for (int side = 0; side < 2 && add->n_inputs == 2; side++) {
    int y_val = add->inputs[side], beta = add->inputs[1 - side];
    int mul = chain_link(g, y_val, "Mul", 1, readers);
    if (mul < 0) continue;
    for (int ms = 0; ms < 2; ms++) {
      int n_val = g->nodes[mul].inputs[ms], gamma = g->nodes[mul].inputs[1 - ms];
      int div = chain_link(g, n_val, "Div", 1, readers);
      if (div < 0) continue;
      int d_val = g->nodes[div].inputs[0], s_val = g->nodes[div].inputs[1];
      int sqrt_n = chain_link(g, s_val, "Sqrt", 1, readers);
      int sub = chain_link(g, d_val, "Sub", 2, readers);
      if (sqrt_n < 0 || sub < 0) continue;
      int ve_val = g->nodes[sqrt_n].inputs[0];
      int add_eps = chain_link(g, ve_val, "Add", 1, readers);
      if (add_eps < 0) continue;
      int var_val = -1, eps_val = -1;
      for (int k = 0; k < 2; k++)
        if (g->values[g->nodes[add_eps].inputs[1 - k]].kind == VALUE_CONSTANT) {
          var_val = g->nodes[add_eps].inputs[k];
          eps_val = g->nodes[add_eps].inputs[1 - k];
        }
      int var = chain_link(g, var_val, "ReduceMean", 1, readers);
      if (var < 0) continue;
      int p_val = g->nodes[var].inputs[0];
      int pw = chain_link(g, p_val, "Pow", 1, readers);
      if (pw < 0 || g->nodes[pw].inputs[0] != d_val || !const_near(g, g->nodes[pw].inputs[1], 2.0, 0))
        continue;
      int x = g->nodes[sub].inputs[0], mean_val = g->nodes[sub].inputs[1];
      int mean = chain_link(g, mean_val, "ReduceMean", 1, readers);
      if (mean < 0 || g->nodes[mean].inputs[0] != x) continue;
      const tensor *xt = &g->values[x].t;
      int r = xt->rank;
      if (r < 1 || !dtype_is_float(xt->dtype) || !reduces_last_axis(g, &g->nodes[mean], r) ||
          !reduces_last_axis(g, &g->nodes[var], r))
        continue;
      /* gamma and beta: constants of the last dim's length; eps a constant scalar */
      int64_t c = xt->dims[r - 1];
      const value *gv = &g->values[gamma], *bv = &g->values[beta], *ev = &g->values[eps_val];
      if (gv->kind != VALUE_CONSTANT || bv->kind != VALUE_CONSTANT || gv->t.dtype != xt->dtype ||
          bv->t.dtype != xt->dtype || gv->t.rank != 1 || bv->t.rank != 1 ||
          gv->t.dims[0] != c || bv->t.dims[0] != c || dims_count(ev->t.rank, ev->t.dims) != 1)
        continue;
      float eps = (float)tensor_get_f64(&ev->t, 0);
      int chain[8] = {mul, div, sqrt_n, sub, add_eps, var, pw, mean};
      for (int k = 0; k < 8; k++) pass_remove_node(g, chain[k], readers);
      for (int k = 0; k < add->n_inputs; k++) readers[add->inputs[k]]--;
      attr *attrs = calloc(2, sizeof(attr));
      if (!attrs || !(attrs[0].name = strdup("axis")) || !(attrs[1].name = strdup("epsilon"))) {
        if (attrs) {
          attr_clear(&attrs[0]);
          attr_clear(&attrs[1]);
        }
        free(attrs);
        return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      }
      attrs[0].type = ATTR_INT;
      attrs[0].i = -1;
      attrs[1].type = ATTR_FLOAT;
      attrs[1].f = eps;
      int ins[3] = {x, gamma, beta};
      TRY(pass_rewrite_node(g, i, "", "LayerNormalization", 17, ins, 3, attrs, 2));
      for (int k = 0; k < 3; k++) readers[ins[k]]++;
      *done = true;
      return INFER_OK;
    }
  }
  return INFER_OK;
}

infer_status pass_fuse_chains(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  int before = 0;
  for (int i = 0; i < g->n_nodes; i++) before += !g->nodes[i].removed;
  infer_status s = INFER_OK;
  for (int i = 0; s == INFER_OK && i < g->n_nodes; i++) {
    bool done = false;
    if (pass_node_is(&g->nodes[i], "Mul")) {
      s = try_gelu(g, i, readers, &done);
      if (s == INFER_OK && !done) s = try_swish(g, i, readers, &done);
    } else if (pass_node_is(&g->nodes[i], "Add")) {
      s = try_layernorm(g, i, readers, &done);
    }
  }
  int after = 0;
  for (int i = 0; i < g->n_nodes; i++) after += !g->nodes[i].removed;
  *removed = before - after;
  free(readers);
  return s;
}
