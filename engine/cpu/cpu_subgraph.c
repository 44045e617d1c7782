/* cpu_subgraph.c: the CPU backend's subgraph executor (op_exec.run_graph) for control
 * flow (ops/control.c). A subgraph is interpreted node by node: every node's shapes are
 * inferred from this run's data, its outputs and scratch come from the executor's
 * allocator (x->alloc: the CPU context's run-time heap, freed at the next run; a CUDA
 * host-fallback step's heap, freed when its host function ends; the build's, folding a
 * control node of constant inputs), a nested If/Loop/Scan runs through the same executor
 * one level deeper (bounded by GRAPH_SUBGRAPH_DEPTH_MAX). Subgraphs are bound at build
 * (engine/build.c) but not optimized by the passes. */
#include <stdio.h>
#include <string.h>

#include "../../core/status.h"
#include "../../ops/op.h"
#include "cpu_internal.h"

static void *alloc_or_null(op_exec *x, int64_t bytes) { return bytes < 0 ? NULL : x->alloc(x, bytes); }

/* One node of sg (not a control node) on the tensors in vals. */
static infer_status run_node(op_exec *x, const node *n, const tensor **in, tensor **out) {
  for (int k = 0; k < n->n_outputs; k++)
    if (out[k]) memset(out[k], 0, sizeof(tensor));
  infer_status st = n->op->infer(n, n->params, in, out);
  if (st == OP_NEEDS_DATA) return infer_fail(INFER_ERR_INTERNAL, "shapes unknown with all data set");
  if (st == INFER_ERR_INVALID_MODEL) st = INFER_ERR_INVALID_INPUT; /* from this run's values */
  TRY(st);
  for (int k = 0; k < n->n_outputs; k++) {
    if (!out[k]) continue;
    int64_t nb = tensor_nbytes(out[k]);
    if (nb < 0) return infer_fail(INFER_ERR_INVALID_INPUT, "output %d is too large", k);
    if (!(out[k]->data = alloc_or_null(x, nb)))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes", (long long)nb);
  }
  int64_t w = n->op->workspace ? n->op->workspace(n, n->params, in, out) : 0;
  void *ws = NULL;
  if (w < 0) return infer_fail(INFER_ERR_INVALID_INPUT, "workspace size overflows");
  if (w > 0 && !(ws = alloc_or_null(x, w)))
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes", (long long)w);
  return n->op->run(n, n->params, in, out, ws);
}

infer_status cpu_subgraph_run(op_exec *x, const graph *sg, const tensor *const *formal,
                              const tensor *const *node_in, tensor *result) {
  if (x->depth + 1 > GRAPH_SUBGRAPH_DEPTH_MAX)
    return infer_fail(INFER_ERR_UNSUPPORTED, "subgraphs nest deeper than %d",
                      GRAPH_SUBGRAPH_DEPTH_MAX);
  int io = 1;
  for (int i = 0; i < sg->n_nodes; i++) {
    if (sg->nodes[i].n_inputs > io) io = sg->nodes[i].n_inputs;
    if (sg->nodes[i].n_outputs > io) io = sg->nodes[i].n_outputs;
  }
  tensor *vals = alloc_or_null(x, (int64_t)sizeof(tensor) * (sg->n_values + 1));
  const tensor **in = alloc_or_null(x, (int64_t)sizeof(tensor *) * io);
  tensor **out = alloc_or_null(x, (int64_t)sizeof(tensor *) * io);
  if (!vals || !in || !out) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int v = 0; v < sg->n_values; v++) {
    vals[v] = sg->values[v].t;
    if (sg->values[v].kind != VALUE_CONSTANT) vals[v].data = NULL;
  }
  for (int i = 0; i < sg->n_inputs; i++) {
    const value *v = &sg->values[sg->inputs[i]];
    if (v->has_type && v->t.dtype != formal[i]->dtype)
      return infer_fail(INFER_ERR_INVALID_INPUT, "subgraph '%s' input '%s' is %s, given %s",
                        sg->name, v->name, infer_dtype_name(v->t.dtype),
                        infer_dtype_name(formal[i]->dtype));
    vals[sg->inputs[i]] = *formal[i];
  }
  for (int c = 0; c < sg->n_captures; c++) vals[sg->captures[c]] = *node_in[sg->capture_input[c]];
  op_exec inner = *x;
  inner.depth = x->depth + 1;
  char d[256];
  for (int i = 0; i < sg->n_nodes; i++) {
    const node *n = &sg->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? &vals[n->inputs[k]] : NULL;
    for (int k = 0; k < n->n_outputs; k++) out[k] = n->outputs[k] >= 0 ? &vals[n->outputs[k]] : NULL;
    infer_status st;
    if (n->op->control) {
      for (int k = 0; k < n->n_outputs; k++)
        if (out[k]) memset(out[k], 0, sizeof(tensor));
      st = n->op->control(n, n->params, in, out, &inner);
    } else {
      st = run_node(x, n, in, out);
    }
    if (st != INFER_OK)
      return infer_fail_prefix(st, "subgraph '%s' %s", sg->name, node_describe(sg, i, d, sizeof d));
  }
  for (int k = 0; k < sg->n_outputs; k++) {
    const tensor *t = &vals[sg->outputs[k]];
    int64_t nb = tensor_nbytes(t);
    if (!t->data && nb > 0)
      return infer_fail(INFER_ERR_INTERNAL, "subgraph '%s' output %d was not computed", sg->name, k);
    result[k] = *t;
    /* a value a node of sg wrote is fresh already; inputs, captures and constants are
     * copied (the caller may keep the result past the values it came from) */
    if (sg->values[sg->outputs[k]].kind == VALUE_INTERMEDIATE) continue;
    if (!(result[k].data = alloc_or_null(x, nb)))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes", (long long)nb);
    if (nb > 0) memcpy(result[k].data, t->data, (size_t)nb);
  }
  return INFER_OK;
}
