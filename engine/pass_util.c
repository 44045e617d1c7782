/* pass_util.c: reader counts, rewiring and node bypass shared by the graph passes
 * (contracts in passes.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

int *pass_count_readers(const graph *g) {
  int *readers = calloc((size_t)g->n_values + 1, sizeof(int));
  if (!readers) return NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) readers[n->inputs[k]]++;
  }
  return readers;
}

bool pass_is_graph_output(const graph *g, int v) {
  for (int o = 0; o < g->n_outputs; o++)
    if (g->outputs[o] == v) return true;
  return false;
}

bool pass_node_is(const node *n, const char *op_type) {
  return !n->removed && n->domain && n->domain[0] == 0 && strcmp(n->op_type, op_type) == 0;
}

int pass_producer(const graph *g, int v) {
  if (v < 0 || g->values[v].kind != VALUE_INTERMEDIATE) return -1;
  int p = g->values[v].producer;
  if (p < 0 || g->nodes[p].removed) return -1;
  for (int k = 0; k < g->nodes[p].n_outputs; k++)
    if (g->nodes[p].outputs[k] == v) return p;
  return -1;
}

void pass_replace_uses(graph *g, int from, int to, int *readers) {
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] == from) {
        n->inputs[k] = to;
        readers[from]--;
        readers[to]++;
      }
  }
}

void pass_remove_node(graph *g, int i, int *readers) {
  node *n = &g->nodes[i];
  if (n->removed) return;
  for (int k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0) readers[n->inputs[k]]--;
  n->removed = true;
}

/* Same dtype and shape where the graph knows them (and known on the same sides,
 * so the run loop's static/dynamic decision does not change). */
static bool same_tensor(const value *a, const value *b) {
  if (a->has_type != b->has_type || a->shape_known != b->shape_known) return false;
  if (a->has_type && a->t.dtype != b->t.dtype) return false;
  if (a->shape_known && !dims_equal(a->t.rank, a->t.dims, b->t.rank, b->t.dims)) return false;
  return true;
}

bool pass_can_bypass(const graph *g, int i, int x, int y, const int *readers) {
  if (x < 0 || y < 0 || x == y) return false;
  if (!same_tensor(&g->values[x], &g->values[y])) return false;
  if (!pass_is_graph_output(g, y)) return true;
  /* y must keep its name: only an intermediate's producer can be retargeted */
  int p = pass_producer(g, x);
  return p >= 0 && p != i && !pass_is_graph_output(g, x);
}

void pass_bypass(graph *g, int i, int x, int y, int *readers) {
  pass_remove_node(g, i, readers);
  if (!pass_is_graph_output(g, y)) {
    pass_replace_uses(g, y, x, readers);
    return;
  }
  /* retarget: x's producer writes y; x's readers read y */
  int p = pass_producer(g, x);
  node *pn = &g->nodes[p];
  for (int k = 0; k < pn->n_outputs; k++)
    if (pn->outputs[k] == x) pn->outputs[k] = y;
  g->values[y].producer = p;
  g->values[x].producer = -1;
  pass_replace_uses(g, x, y, readers);
}

char *pass_unique_name(const graph *g, const char *base, const char *suffix) {
  size_t cap = strlen(base) + strlen(suffix) + 24;
  char *name = malloc(cap);
  if (!name) return NULL;
  snprintf(name, cap, "%s%s", base, suffix);
  for (int k = 2; graph_find_value(g, name) >= 0; k++) snprintf(name, cap, "%s%s_%d", base, suffix, k);
  return name;
}
