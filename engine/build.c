/* build.c: binding nodes to op descriptors and graph inputs to concrete shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "engine_internal.h"
#include "../core/status.h"

static bool attr_allowed(const op_desc *op, const char *name) {
  for (const char *const *a = op->attrs; a && *a; a++)
    if (strcmp(*a, name) == 0) return true;
  return false;
}

/* One op the registry lacks (or lacks at this opset), over all the nodes using it. */
typedef struct missing_op {
  int first; /* node with the lowest model index */
  int count;
  bool known; /* the op exists at other opsets */
} missing_op;

/* Refuses a model whose nodes use ops the registry does not have, with one message
 * listing every such op (op, domain, opset, first node, node count), so a user learns
 * everything missing at once. INFER_OK when every node has a descriptor. */
static infer_status check_all_ops_known(graph *g) {
  missing_op *m = calloc((size_t)g->n_nodes + 1, sizeof *m);
  if (!m) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory checking %d nodes", g->n_nodes);
  int n_missing = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const node *n = &g->nodes[i];
    bool known = false;
    if (op_registry_find(n->domain, n->op_type, n->opset, &known)) continue;
    int j = 0;
    for (; j < n_missing; j++) {
      const node *f = &g->nodes[m[j].first];
      if (strcmp(f->op_type, n->op_type) == 0 && strcmp(f->domain, n->domain) == 0 &&
          f->opset == n->opset)
        break;
    }
    if (j == n_missing) m[n_missing++] = (missing_op){i, 0, known};
    if (n->model_index < g->nodes[m[j].first].model_index) m[j].first = i;
    m[j].count++;
  }
  if (n_missing == 0) {
    free(m);
    return INFER_OK;
  }
  /* the message keeps to what infer_fail can hold: later ops are counted, not named */
  char msg[2048], d[256];
  int off = 0, shown = 0;
  if (n_missing > 1)
    off = snprintf(msg, sizeof msg, "%d ops are not supported: ", n_missing);
  for (; shown < n_missing; shown++) {
    char item[512];
    node_describe(g, m[shown].first, d, sizeof d);
    int len = snprintf(item, sizeof item, "%s%s: %s (%d node%s)", shown ? "; " : "", d,
                       m[shown].known ? "this opset version of the op is not supported"
                                      : "the op is not supported",
                       m[shown].count, m[shown].count == 1 ? "" : "s");
    if (off + len >= (int)sizeof msg - 48) break;
    memcpy(msg + off, item, (size_t)len + 1);
    off += len;
  }
  if (shown < n_missing)
    snprintf(msg + off, sizeof msg - (size_t)off, "; and %d more ops", n_missing - shown);
  free(m);
  return infer_fail(INFER_ERR_UNSUPPORTED, "%s", msg);
}

static infer_status bind_ops_at(graph *g, int depth);

/* The subgraphs of node i (If's branches, Loop's body): ordered and bound like the main
 * graph, to GRAPH_SUBGRAPH_DEPTH_MAX levels. */
static infer_status bind_subgraphs(graph *g, int i, int depth) {
  char d[256];
  node *n = &g->nodes[i];
  for (int a = 0; a < n->n_attrs; a++) {
    graph *sg = n->attrs[a].g;
    if (!sg) continue;
    infer_status s = depth + 1 > GRAPH_SUBGRAPH_DEPTH_MAX
                         ? infer_fail(INFER_ERR_UNSUPPORTED, "subgraphs nest deeper than %d",
                                      GRAPH_SUBGRAPH_DEPTH_MAX)
                         : graph_validate(sg);
    if (s == INFER_OK) s = bind_ops_at(sg, depth + 1);
    /* named at the main graph's node only: a chain of every level would bury the cause */
    if (s != INFER_OK && depth == 0)
      return infer_fail_prefix(s, "%s, subgraph '%s'", node_describe(g, i, d, sizeof d),
                               n->attrs[a].name);
    TRY(s);
  }
  return INFER_OK;
}

/* Finds each node's descriptor, checks arity and attribute names, parses. */
infer_status build_bind_ops(graph *g) { return bind_ops_at(g, 0); }

static infer_status bind_ops_at(graph *g, int depth) {
  char d[256];
  TRY(check_all_ops_known(g));
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    const op_desc *op = op_registry_find(n->domain, n->op_type, n->opset, NULL);
    node_describe(g, i, d, sizeof d);
    if (!op) return infer_fail(INFER_ERR_INTERNAL, "%s: no descriptor", d);
    /* trailing omitted optional inputs/outputs do not count */
    int nin = n->n_inputs, nout = n->n_outputs;
    while (nin > 0 && n->inputs[nin - 1] < 0) nin--;
    while (nout > 0 && n->outputs[nout - 1] < 0) nout--;
    if (nin < op->min_inputs || nin > op->max_inputs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s has %d inputs; %s takes %d to %d", d, nin,
                        op->name, op->min_inputs, op->max_inputs);
    if (nout < op->min_outputs || nout > op->max_outputs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s has %d outputs; %s gives %d to %d", d, nout,
                        op->name, op->min_outputs, op->max_outputs);
    for (int k = 0; k < op->min_inputs; k++)
      if (n->inputs[k] < 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: required input %d is missing", d, k);
    for (int a = 0; a < n->n_attrs; a++)
      if (!attr_allowed(op, n->attrs[a].name))
        return infer_fail(INFER_ERR_UNSUPPORTED, "%s: attribute '%s' is not supported", d,
                          n->attrs[a].name);
    n->n_inputs = nin;
    n->n_outputs = nout;
    n->op = op;
    TRY(bind_subgraphs(g, i, depth)); /* before parse: it reads their inputs and outputs */
    if (op->parse) {
      infer_status s = op->parse(n, &n->params);
      if (s != INFER_OK) return infer_fail_prefix(s, "%s", d);
    }
  }
  return INFER_OK;
}

static const input_shape *find_shape(const struct infer_options *o, const char *name,
                                     int index) {
  for (int i = 0; i < o->n_shapes; i++)
    if (o->shapes[i].name && strcmp(o->shapes[i].name, name) == 0) return &o->shapes[i];
  for (int i = 0; i < o->n_shapes; i++)
    if (!o->shapes[i].name && o->shapes[i].index == index) return &o->shapes[i];
  return NULL;
}

/* "x, y" (the model's inputs) into buf. */
static const char *input_names(const graph *g, char *buf, int cap) {
  int off = 0;
  buf[0] = 0;
  for (int i = 0; i < g->n_inputs && off < cap; i++)
    off += snprintf(buf + off, (size_t)(cap - off), i ? ", '%s'" : "'%s'",
                    g->values[g->inputs[i]].name);
  if (g->n_inputs == 0) snprintf(buf, (size_t)cap, "none");
  return buf;
}

/* Gives every graph input a concrete shape from the options. */
infer_status build_bind_inputs(graph *g, const struct infer_options *o, bool run_batch_computed) {
  char a[128], b[128];
  for (int i = 0; i < o->n_shapes; i++) {
    if (!o->shapes[i].name) {
      if (o->shapes[i].index >= g->n_inputs)
        return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%d inputs were given, but the model has "
                          "%d (%s)", o->shapes[i].index + 1, g->n_inputs,
                          input_names(g, a, sizeof a));
      continue;
    }
    int v = graph_find_value(g, o->shapes[i].name);
    if (v < 0 || g->values[v].kind != VALUE_INPUT)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "the model has no input named '%s' (its "
                        "inputs: %s)", o->shapes[i].name, input_names(g, a, sizeof a));
  }
  for (int i = 0; i < g->n_inputs; i++) {
    value *v = &g->values[g->inputs[i]];
    const input_shape *s = find_shape(o, v->name, i);
    if (s) {
      if (s->rank != v->t.rank)
        return infer_fail(INFER_ERR_INVALID_INPUT,
                          "input '%s': the model expects shape %s (rank %d), got %s (rank %d)",
                          v->name, dims_format(v->t.rank, v->t.dims, a, sizeof a), v->t.rank,
                          dims_format(s->rank, s->dims, b, sizeof b), s->rank);
      for (int k = 0; k < s->rank; k++) {
        if (s->dims[k] < 0) continue;
        if (v->t.dims[k] >= 0 && v->t.dims[k] != s->dims[k])
          return infer_fail(INFER_ERR_INVALID_INPUT,
                            "input '%s': the model expects shape %s, got %s (dim %d: %lld vs %lld)",
                            v->name, dims_format(v->t.rank, v->t.dims, a, sizeof a),
                            dims_format(s->rank, s->dims, b, sizeof b), k,
                            (long long)v->t.dims[k], (long long)s->dims[k]);
        v->t.dims[k] = s->dims[k];
      }
    }
    if (o->batch > 0 && v->t.rank > 0 && v->t.dims[0] < 0) {
      v->t.dims[0] = o->batch;
      /* where the backend computes the run's batch, a run may use any batch up to this
       * one; other backends run the batch they were built for */
      v->shape_dep = run_batch_computed;
      v->batch_input = true;
    }
    for (int k = 0; k < v->t.rank; k++)
      if (v->t.dims[k] < 0) {
        const char *sym = v->dim_params && v->dim_params[k] ? v->dim_params[k] : "?";
        return infer_fail(INFER_ERR_INVALID_ARGUMENT,
                          "input '%s' dim %d ('%s') is not fixed: give its shape "
                          "(infer_options_set_input_shape) or a batch size "
                          "(infer_options_set_batch)", v->name, k, sym);
      }
    if (tensor_nbytes(&v->t) < 0)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s': shape %s is too large", v->name,
                        dims_format(v->t.rank, v->t.dims, a, sizeof a));
    v->shape_known = true;
    if (s && s->value.data) {
      /* a build-time constant: shapes and folding may use its value */
      if (s->value.dtype != v->t.dtype)
        return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s': expected dtype %s, the "
                          "constant given is %s", v->name, infer_dtype_name(v->t.dtype),
                          infer_dtype_name(s->value.dtype));
      int64_t nb = tensor_nbytes(&v->t);
      if (!(v->t.data = malloc(nb > 0 ? (size_t)nb : 1)))
        return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      if (nb > 0) memcpy(v->t.data, s->value.data, (size_t)nb);
      v->kind = VALUE_CONSTANT;
    }
  }
  return INFER_OK;
}

int graph_live_nodes(const graph *g) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += !g->nodes[i].removed;
  return n;
}

int pass_remove_dead(graph *g) {
  bool *needed = calloc((size_t)g->n_values + 1, sizeof(bool));
  if (!needed) return 0;
  for (int o = 0; o < g->n_outputs; o++) needed[g->outputs[o]] = true;
  int removed = 0;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    node *n = &g->nodes[i];
    if (n->removed) continue;
    bool used = false;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && needed[n->outputs[k]]) used = true;
    if (!used) {
      n->removed = true;
      removed++;
      continue;
    }
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) needed[n->inputs[k]] = true;
  }
  free(needed);
  return removed;
}
