/* fold.c: shape inference over the graph in order, folding every node whose
 * inputs are all known constants (Shape -> Gather -> Concat -> Reshape chains,
 * ConstantOfShape weights, Constant nodes) into constant values. A control-flow node
 * (If, Loop, Scan) of constant inputs folds too, its subgraphs run by the CPU backend's
 * executor; the others' infer derives their output shapes where they do not depend on
 * run-time data (ops/control_shapes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "cpu/cpu_internal.h"
#include "engine_internal.h"
#include "../core/run_heap.h"
#include "../core/status.h"
#include "../core/tensor_limits.h"

/* Checks what infer produced for output k of node i. */
static infer_status check_output(const graph *g, int i, const tensor *t, int k) {
  char d[256];
  if (t->rank < 0 || t->rank > INFER_MAX_RANK || infer_dtype_size(t->dtype) == 0)
    return infer_fail(INFER_ERR_INTERNAL, "%s: output %d got rank %d dtype %d",
                      node_describe(g, i, d, sizeof d), k, t->rank, (int)t->dtype);
  for (int r = 0; r < t->rank; r++)
    if (t->dims[r] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output %d has a negative dim",
                        node_describe(g, i, d, sizeof d), k);
  if (tensor_nbytes(t) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output %d is too large (size overflows)",
                      node_describe(g, i, d, sizeof d), k);
  char what[320];
  snprintf(what, sizeof what, "%s: output %d", node_describe(g, i, d, sizeof d), k);
  return tensor_check_limits(t->rank, t->dims, what);
}

/* Runs node i on the CPU now and stores its outputs as constants; with keep, the
 * node stays and its outputs stay intermediates that hold the data for shape
 * inference (values that depend on the batch). */
static infer_status fold_node(graph *g, int i, const tensor **in, tensor **out, bool keep,
                              mem_budget *budget) {
  node *n = &g->nodes[i];
  char d[256], what[320];
  for (int k = 0; k < n->n_outputs; k++) {
    if (!out[k]) continue;
    int64_t nb = tensor_nbytes(out[k]);
    /* the folded value stays in the graph (its bytes given back when it is refolded) */
    snprintf(what, sizeof what, "folding %s (output %d)", node_describe(g, i, d, sizeof d), k);
    TRY(mem_budget_take(budget, nb, what));
    out[k]->data = malloc(nb > 0 ? (size_t)nb : 1);
    if (!out[k]->data) {
      mem_budget_give(budget, nb);
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: cannot allocate %lld bytes to fold it",
                        node_describe(g, i, d, sizeof d), (long long)nb);
    }
  }
  void *ws = NULL;
  int64_t ws_bytes = n->op->workspace ? n->op->workspace(n, n->params, in, out) : 0;
  if (ws_bytes < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: workspace size overflows",
                      node_describe(g, i, d, sizeof d));
  snprintf(what, sizeof what, "the workspace to fold %s", node_describe(g, i, d, sizeof d));
  TRY(mem_budget_take(budget, ws_bytes, what));
  if (ws_bytes > 0 && !(ws = malloc((size_t)ws_bytes))) {
    mem_budget_give(budget, ws_bytes);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: cannot allocate %lld bytes of workspace",
                      node_describe(g, i, d, sizeof d), (long long)ws_bytes);
  }
  infer_status s = n->op->run(n, n->params, in, out, ws);
  free(ws);
  mem_budget_give(budget, ws_bytes);
  if (s != INFER_OK) return infer_fail_prefix(s, "%s", node_describe(g, i, d, sizeof d));
  if (keep) {
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0) g->values[n->outputs[k]].data_dep = true;
    return INFER_OK;
  }
  for (int k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0) g->values[n->outputs[k]].kind = VALUE_CONSTANT;
  n->removed = true;
  return INFER_OK;
}

static void *fold_alloc(op_exec *x, int64_t bytes) {
  void *p = NULL;
  return run_heap_alloc(x->state, bytes, "a subgraph value while folding", &p) == INFER_OK ? p
                                                                                         : NULL;
}

/* Control node i, whose every input is a constant, computes the same at every run: it runs
 * now (its subgraphs through the CPU backend's executor, engine/cpu/cpu_subgraph.c, on a
 * heap charged to the build's budget and freed here) and its outputs become constants. */
static infer_status fold_control(graph *g, int i, const tensor **in, tensor **out,
                                 mem_budget *budget) {
  node *n = &g->nodes[i];
  char d[256], what[320];
  run_heap h = {.budget = budget};
  op_exec x = {.run_graph = cpu_subgraph_run, .alloc = fold_alloc, .state = &h, .depth = 0};
  tensor *res = calloc((size_t)n->n_outputs + 1, sizeof *res);
  tensor **res_of = calloc((size_t)n->n_outputs + 1, sizeof *res_of);
  infer_status s = res && res_of ? INFER_OK : infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; s == INFER_OK && k < n->n_outputs; k++) res_of[k] = out[k] ? &res[k] : NULL;
  if (s == INFER_OK) s = n->op->control(n, n->params, in, res_of, &x);
  if (s != INFER_OK) s = infer_fail_prefix(s, "folding %s", node_describe(g, i, d, sizeof d));
  for (int k = 0; s == INFER_OK && k < n->n_outputs; k++) {
    if (!out[k]) continue;
    if ((s = check_output(g, i, &res[k], k)) != INFER_OK) break;
    int64_t nb = tensor_nbytes(&res[k]);
    snprintf(what, sizeof what, "folding %s (output %d)", node_describe(g, i, d, sizeof d), k);
    if ((s = mem_budget_take(budget, nb, what)) != INFER_OK) break;
    *out[k] = res[k];
    if (!(out[k]->data = malloc(nb > 0 ? (size_t)nb : 1))) {
      mem_budget_give(budget, nb);
      s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: cannot allocate %lld bytes to fold it",
                     node_describe(g, i, d, sizeof d), (long long)nb);
      break;
    }
    if (nb > 0) memcpy(out[k]->data, res[k].data, (size_t)nb);
    value *v = &g->values[n->outputs[k]];
    v->kind = VALUE_CONSTANT;
    v->shape_known = v->has_type = true;
  }
  if (s == INFER_OK) n->removed = true;
  run_heap_release(&h);
  free(res);
  free(res_of);
  return s;
}

/* Whether every input of control node n is a constant of the model (not a value computed
 * from the build batch, which a run may change). */
static bool control_inputs_constant(const graph *g, const node *n) {
  for (int k = 0; k < n->n_inputs; k++) {
    const value *v = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
    if (v && (v->kind != VALUE_CONSTANT || v->data_dep || v->shape_dep)) return false;
  }
  return true;
}

infer_status pass_infer_and_fold(graph *g, bool *dynamic, mem_budget *budget) {
  *dynamic = false;
  int cap = 1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].n_inputs > cap) cap = g->nodes[i].n_inputs;
    if (g->nodes[i].n_outputs > cap) cap = g->nodes[i].n_outputs;
  }
  const tensor **in = calloc((size_t)cap, sizeof *in);
  tensor **out = calloc((size_t)cap, sizeof *out);
  tensor *plain = calloc((size_t)cap, sizeof *plain); /* inputs shown without their data */
  infer_status s = INFER_OK;
  if (!in || !out || !plain) {
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  char d[256];
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    if (n->removed) continue;
    /* all_data: every input's data is known now (constants, or batch-dependent
     * values computed for the build batch); dep: the result depends on the batch */
    bool known = true, all_data = true, shape_dep = false, data_dep = false;
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      in[k] = v >= 0 ? &g->values[v].t : NULL;
      if (v < 0) continue;
      const value *val = &g->values[v];
      if (!val->shape_known || !val->has_type) known = false;
      if (val->kind != VALUE_CONSTANT && !val->data_dep) all_data = false;
      shape_dep |= val->shape_dep || val->data_dep;
      data_dep |= val->data_dep || (n->op->fold_from_shape && val->shape_dep);
    }
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      out[k] = v >= 0 ? &g->values[v].t : NULL;
      if (out[k]) {
        if (out[k]->data) mem_budget_give(budget, tensor_nbytes(out[k]));
        free(out[k]->data);
        memset(out[k], 0, sizeof(tensor));
        g->values[v].shape_known = g->values[v].has_type = false;
        g->values[v].shape_dep = shape_dep;
        g->values[v].data_dep = false;
      }
    }
    if (!known) {
      *dynamic = true;
      continue;
    }
    if (n->op->control && control_inputs_constant(g, n)) {
      if ((s = fold_control(g, i, in, out, budget)) != INFER_OK) goto done;
      continue;
    }
    /* a control node derives its shapes from constants only: the build batch's data
     * (data_dep) would pick a branch or a trip count that another batch may not */
    for (int k = 0; n->op->control && k < n->n_inputs; k++)
      if (in[k] && g->values[n->inputs[k]].data_dep) {
        plain[k] = *in[k];
        plain[k].data = NULL;
        in[k] = &plain[k];
      }
    s = n->op->infer(n, n->params, in, out);
    if (s == OP_NEEDS_DATA) {
      *dynamic = true;
      s = INFER_OK;
      continue;
    }
    if (s != INFER_OK) {
      s = infer_fail_prefix(s, "%s", node_describe(g, i, d, sizeof d));
      goto done;
    }
    for (int k = 0; k < n->n_outputs; k++) {
      if (!out[k]) continue;
      if ((s = check_output(g, i, out[k], k)) != INFER_OK) goto done;
      g->values[n->outputs[k]].shape_known = g->values[n->outputs[k]].has_type = true;
    }
    /* a control node's outputs have no data here (its constant case folded above) */
    if (!n->op->control && (all_data || n->op->fold_from_shape))
      if ((s = fold_node(g, i, in, out, data_dep, budget)) != INFER_OK) goto done;
  }
done:
  free(in);
  free(out);
  free(plain);
  return s;
}
