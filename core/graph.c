/* graph.c: building, describing and validating the engine IR. */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

graph *graph_create(void) { return calloc(1, sizeof(graph)); }

void attr_clear(attr *a) {
  free(a->name);
  free(a->s);
  free(a->floats);
  free(a->ints);
  for (int i = 0; a->strings && i < a->n; i++) free(a->strings[i]);
  free(a->strings);
  free(a->t.data);
  graph_release(a->g);
  memset(a, 0, sizeof *a);
}

static void value_clear(value *v) {
  free(v->name);
  free(v->t.data);
  if (v->dim_params)
    for (int i = 0; i < INFER_MAX_RANK; i++) free(v->dim_params[i]);
  free(v->dim_params);
}

static void node_clear(node *n) {
  free(n->name);
  free(n->op_type);
  free(n->domain);
  free(n->inputs);
  free(n->outputs);
  for (int i = 0; i < n->n_attrs; i++) attr_clear(&n->attrs[i]);
  free(n->attrs);
  free(n->params);
}

void graph_release(graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) value_clear(&g->values[i]);
  for (int i = 0; i < g->n_nodes; i++) node_clear(&g->nodes[i]);
  for (int i = 0; i < g->n_opsets; i++) free(g->opsets[i].domain);
  free(g->values);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->opsets);
  free(g->captures);
  free(g->capture_input);
  free(g->name);
  free(g);
}

int graph_find_value(const graph *g, const char *name) {
  for (int i = 0; i < g->n_values; i++)
    if (strcmp(g->values[i].name, name) == 0) return i;
  return -1;
}

static bool grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return false;
  memset((char *)q + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
  *p = q;
  *cap = c;
  return true;
}

int graph_add_value(graph *g, const char *name) {
  if (!grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof(value))) return -1;
  value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = strdup(name ? name : "");
  if (!v->name) return -1;
  v->producer = -1;
  return g->n_values++;
}

int graph_add_node(graph *g, int n_inputs, int n_outputs, int n_attrs) {
  if (!grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(node))) return -1;
  node *n = &g->nodes[g->n_nodes];
  memset(n, 0, sizeof *n);
  n->inputs = calloc((size_t)n_inputs + 1, sizeof(int));
  n->outputs = calloc((size_t)n_outputs + 1, sizeof(int));
  n->attrs = calloc((size_t)n_attrs + 1, sizeof(attr));
  if (!n->inputs || !n->outputs || !n->attrs) {
    node_clear(n);
    return -1;
  }
  n->n_inputs = n_inputs;
  n->n_outputs = n_outputs;
  n->n_attrs = n_attrs;
  return g->n_nodes++;
}

const char *node_describe(const graph *g, int index, char *buf, int cap) {
  const node *n = &g->nodes[index];
  snprintf(buf, cap, "node '%s' (%s, domain %s, opset %lld, index %d)", n->name, n->op_type,
           n->domain[0] ? n->domain : "ai.onnx", (long long)n->opset, n->model_index);
  return buf;
}

/* Orders nodes so that every node comes after the producers of its inputs
 * (Kahn's algorithm). Producers must already be set. */
static infer_status graph_sort(graph *g) {
  int nn = g->n_nodes;
  int *pending = calloc((size_t)nn + 1, sizeof(int));
  int *order = calloc((size_t)nn + 1, sizeof(int));
  int *queue = calloc((size_t)nn + 1, sizeof(int));
  node *sorted = calloc((size_t)nn + 1, sizeof(node));
  int *new_index = calloc((size_t)nn + 1, sizeof(int));
  infer_status s = INFER_OK;
  if (!pending || !order || !queue || !sorted || !new_index) {
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory sorting %d nodes", nn);
    goto out;
  }
  /* pending[i] = number of inputs of node i produced by a node */
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++) {
      int v = g->nodes[i].inputs[k];
      if (v >= 0 && g->values[v].producer >= 0) pending[i]++;
    }
  /* consumers of each value in CSR form, so releasing a node's consumers is
   * linear in their number */
  int nv = g->n_values;
  int *first = calloc((size_t)nv + 2, sizeof(int));
  int total = 0;
  for (int i = 0; i < nn; i++) total += g->nodes[i].n_inputs;
  int *users = calloc((size_t)total + 1, sizeof(int));
  if (!first || !users) {
    free(first);
    free(users);
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory sorting %d nodes", nn);
    goto out;
  }
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] >= 0) first[g->nodes[i].inputs[k] + 1]++;
  for (int v = 0; v < nv; v++) first[v + 1] += first[v];
  int *fill = calloc((size_t)nv + 1, sizeof(int));
  if (!fill) {
    free(first);
    free(users);
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory sorting %d nodes", nn);
    goto out;
  }
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++) {
      int v = g->nodes[i].inputs[k];
      if (v >= 0) users[first[v] + fill[v]++] = i;
    }
  int head = 0, tail = 0, done = 0;
  for (int i = 0; i < nn; i++)
    if (pending[i] == 0) queue[tail++] = i;
  while (head < tail) {
    int i = queue[head++];
    order[done++] = i;
    for (int o = 0; o < g->nodes[i].n_outputs; o++) {
      int v = g->nodes[i].outputs[o];
      if (v < 0) continue;
      for (int u = first[v]; u < first[v + 1]; u++)
        if (--pending[users[u]] == 0) queue[tail++] = users[u];
    }
  }
  free(first);
  free(users);
  free(fill);
  if (done < nn) {
    int stuck = -1;
    for (int i = 0; i < nn && stuck < 0; i++)
      if (pending[i] > 0) stuck = i;
    char d[256];
    s = infer_fail(INFER_ERR_INVALID_MODEL, "the graph has a cycle through %s",
                   node_describe(g, stuck, d, sizeof d));
    goto out;
  }
  for (int i = 0; i < nn; i++) {
    sorted[i] = g->nodes[order[i]];
    new_index[order[i]] = i;
  }
  if (nn > 0) memcpy(g->nodes, sorted, (size_t)nn * sizeof(node)); /* g->nodes is NULL for none */
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].producer >= 0) g->values[v].producer = new_index[g->values[v].producer];
out:
  free(pending);
  free(order);
  free(queue);
  free(sorted);
  free(new_index);
  return s;
}

infer_status graph_validate(graph *g) {
  char d[256];
  for (int v = 0; v < g->n_values; v++) g->values[v].producer = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o];
      if (v < 0) continue;
      value *val = &g->values[v];
      if (val->kind != VALUE_INTERMEDIATE || val->producer >= 0)
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "%s writes '%s', which is already %s (single assignment)",
                          node_describe(g, i, d, sizeof d), val->name,
                          val->kind == VALUE_INPUT      ? "a graph input"
                          : val->kind == VALUE_CONSTANT ? "an initializer"
                                                        : "written by another node");
      val->producer = i;
    }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0) continue;
      const value *val = &g->values[v];
      if (val->kind == VALUE_INTERMEDIATE && val->producer < 0)
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "%s reads '%s', which no node, input or initializer defines",
                          node_describe(g, i, d, sizeof d), val->name);
    }
  }
  for (int o = 0; o < g->n_outputs; o++) {
    const value *val = &g->values[g->outputs[o]];
    if (val->kind == VALUE_INTERMEDIATE && val->producer < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "graph output '%s' is not produced by any node, input or initializer",
                        val->name);
    for (int p = 0; p < o; p++)
      if (g->outputs[p] == g->outputs[o])
        return infer_fail(INFER_ERR_INVALID_MODEL, "graph output '%s' is listed twice",
                          val->name);
  }
  return graph_sort(g);
}
