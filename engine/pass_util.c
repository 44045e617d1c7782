/* pass_util.c: reader counts, rewiring, node bypass and rewrites (the FusedAttention one
 * included) shared by the graph passes (contracts in passes.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/attention_fused.h"
#include "../ops/op.h"
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
  return !n->removed && n->domain && (n->domain[0] == 0 || strcmp(n->domain, "ai.onnx") == 0) &&
         strcmp(n->op_type, op_type) == 0;
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

infer_status pass_rewrite_node(graph *g, int i, const char *domain, const char *op_type,
                               int64_t opset, const int *inputs, int n_inputs, attr *attrs,
                               int n_attrs) {
  node *n = &g->nodes[i];
  const op_desc *op = op_registry_find(domain, op_type, opset, NULL);
  int *in = malloc(sizeof(int) * ((size_t)n_inputs + 1));
  char *name = strdup(op_type), *dom = strdup(domain);
  if (!op || !in || !name || !dom) {
    free(in);
    free(name);
    free(dom);
    return infer_fail(op ? INFER_ERR_OUT_OF_MEMORY : INFER_ERR_INTERNAL,
                      "fusing into %s: %s", op_type, op ? "out of memory" : "op not registered");
  }
  memcpy(in, inputs, sizeof(int) * (size_t)n_inputs);
  for (int a = 0; a < n->n_attrs; a++) attr_clear(&n->attrs[a]);
  free(n->attrs);
  free(n->inputs);
  free(n->op_type);
  free(n->domain);
  free(n->params);
  n->params = NULL;
  n->attrs = attrs;
  n->n_attrs = n_attrs;
  n->inputs = in;
  n->n_inputs = n_inputs;
  n->n_outputs = 1;
  n->op_type = name;
  n->domain = dom;
  n->opset = opset;
  n->op = op;
  return op->parse ? op->parse(n, &n->params) : INFER_OK;
}

/* The attribute `name` of n, added (empty) when absent; NULL when out of memory. */
static attr *attr_slot(node *n, const char *name) {
  for (int k = 0; k < n->n_attrs; k++)
    if (strcmp(n->attrs[k].name, name) == 0) return &n->attrs[k];
  attr *grown = realloc(n->attrs, sizeof(attr) * ((size_t)n->n_attrs + 2));
  if (!grown) return NULL;
  n->attrs = grown;
  attr *a = &n->attrs[n->n_attrs];
  memset(a, 0, sizeof *a);
  if (!(a->name = strdup(name))) return NULL;
  n->n_attrs++;
  return a;
}

infer_status pass_set_attr_ints(node *n, const char *name, const int64_t *v, int count) {
  attr *a = attr_slot(n, name);
  int64_t *ints = malloc(sizeof(int64_t) * ((size_t)count + 1));
  if (!a || !ints) {
    free(ints);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "setting attribute %s: out of memory", name);
  }
  memcpy(ints, v, sizeof(int64_t) * (size_t)count);
  free(a->ints);
  a->type = ATTR_INTS;
  a->ints = ints;
  a->n = count;
  return INFER_OK;
}

infer_status pass_set_attr_float(node *n, const char *name, float v) {
  attr *a = attr_slot(n, name);
  if (!a) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "setting attribute %s: out of memory", name);
  a->type = ATTR_FLOAT;
  a->f = v;
  return INFER_OK;
}

infer_status pass_set_attr_string(node *n, const char *name, const char *v) {
  attr *a = attr_slot(n, name);
  char *copy = strdup(v);
  if (!a || !copy) {
    free(copy);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "setting attribute %s: out of memory", name);
  }
  free(a->s);
  a->type = ATTR_STRING;
  a->s = copy;
  return INFER_OK;
}

void pass_remove_attr(node *n, const char *name) {
  for (int k = 0; k < n->n_attrs; k++) {
    if (strcmp(n->attrs[k].name, name) != 0) continue;
    attr_clear(&n->attrs[k]);
    memmove(&n->attrs[k], &n->attrs[k + 1], sizeof(attr) * (size_t)(n->n_attrs - k - 1));
    n->n_attrs--;
    return;
  }
}

int pass_sole_reader(const graph *g, int v, const int *readers) {
  if (readers[v] != 1 || pass_is_graph_output(g, v)) return -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] == v) return i;
  }
  return -1;
}

infer_status pass_set_attr_int(node *n, const char *name, int64_t v) {
  attr *a = attr_slot(n, name);
  if (!a) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "setting attribute %s: out of memory", name);
  a->type = ATTR_INT;
  a->i = v;
  return INFER_OK;
}

infer_status pass_reparse(node *n) {
  free(n->params);
  n->params = NULL;
  return n->op && n->op->parse ? n->op->parse(n, &n->params) : INFER_OK;
}

infer_status pass_reorder_nodes(graph *g, const double *key) {
  int nn = g->n_nodes;
  int *order = malloc(sizeof(int) * ((size_t)nn + 1));
  int *new_index = malloc(sizeof(int) * ((size_t)nn + 1));
  node *sorted = malloc(sizeof(node) * ((size_t)nn + 1));
  if (!order || !new_index || !sorted) {
    free(order);
    free(new_index);
    free(sorted);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "reordering %d nodes: out of memory", nn);
  }
  /* insertion sort by key, stable: the graphs are a few thousand nodes at most and
   * almost sorted already */
  for (int i = 0; i < nn; i++) {
    int j = i;
    while (j > 0 && key[order[j - 1]] > key[i]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  for (int i = 0; i < nn; i++) {
    sorted[i] = g->nodes[order[i]];
    new_index[order[i]] = i;
  }
  memcpy(g->nodes, sorted, sizeof(node) * (size_t)nn);
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].producer >= 0) g->values[v].producer = new_index[g->values[v].producer];
  free(order);
  free(new_index);
  free(sorted);
  return INFER_OK;
}

/* A new constant value named after value `base` + suffix, of the given dtype and
 * shape, data malloc'ed (uninitialized); -1 when out of memory. */
int pass_add_constant(graph *g, int base, const char *suffix, infer_dtype dt, int rank,
                        const int64_t *dims) {
  int64_t d[INFER_MAX_RANK]; /* dims may point into g->values, which may move */
  memcpy(d, dims, sizeof(int64_t) * (size_t)rank);
  char *name = pass_unique_name(g, g->values[base].name, suffix);
  if (!name) return -1;
  int v = graph_add_value(g, name);
  free(name);
  if (v < 0) return -1;
  value *val = &g->values[v];
  val->t.dtype = dt;
  val->t.rank = rank;
  memcpy(val->t.dims, d, sizeof(int64_t) * (size_t)rank);
  int64_t nb = tensor_nbytes(&val->t);
  if (nb < 0 || !(val->t.data = malloc(nb > 0 ? (size_t)nb : 1))) return -1;
  val->kind = VALUE_CONSTANT;
  val->has_type = val->shape_known = true;
  return v;
}

int pass_add_transpose(graph *g, int v, const int64_t *perm, const char *suffix, int *node_out) {
  char *name = pass_unique_name(g, g->values[v].name, suffix);
  if (!name) return -1;
  int t = graph_add_value(g, name);
  int i = t < 0 ? -1 : graph_add_node(g, 1, 1, 0);
  if (i < 0) {
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
  const int r = g->values[v].t.rank;
  if (!n->op_type || !n->domain || !n->op || pass_set_attr_ints(n, "perm", perm, r) != INFER_OK ||
      pass_reparse(n) != INFER_OK)
    return -1;
  n->inputs[0] = v;
  n->outputs[0] = t;
  value *tv = &g->values[t];
  tv->t = g->values[v].t;
  tv->t.data = NULL;
  for (int d = 0; d < r; d++) tv->t.dims[d] = g->values[v].t.dims[perm[d]];
  tv->has_type = tv->shape_known = true;
  tv->shape_dep = g->values[v].shape_dep; /* a flexible batch stays one (batch_rows.c) */
  tv->producer = i;
  *node_out = i;
  return t;
}

/* A view as its 9-int attribute: the offset, the 4 dims, the 4 strides. */
static infer_status set_view_attr(node *n, const char *name, const attn_view *w) {
  int64_t v[9] = {w->offset};
  for (int i = 0; i < 4; i++) {
    v[1 + i] = w->dims[i];
    v[5 + i] = w->strides[i];
  }
  return pass_set_attr_ints(n, name, v, 9);
}

infer_status pass_rewrite_fused_attention(graph *g, int i, const int *ins,
                                          const fused_attention_params *p) {
  node tmp; /* collects the attributes, which the op's parse needs all at once */
  memset(&tmp, 0, sizeof tmp);
  infer_status st = INFER_OK;
  for (int k = 0; st == INFER_OK && k < 4; k++)
    st = set_view_attr(&tmp, attn_view_attr[k], &p->view[k]);
  if (st == INFER_OK) st = pass_set_attr_ints(&tmp, "out_shape", p->out_dims, p->out_rank);
  if (st == INFER_OK) st = pass_set_attr_float(&tmp, "scale", p->scale);
  /* the defaults stay implicit: a graph without GQA or a mask reads as before */
  if (st == INFER_OK && p->kv_group != 1) st = pass_set_attr_int(&tmp, "kv_group", p->kv_group);
  if (st == INFER_OK && p->causal) st = pass_set_attr_int(&tmp, "causal", 1);
  if (st == INFER_OK && p->causal && p->causal_offset != 0)
    st = pass_set_attr_int(&tmp, "causal_offset", p->causal_offset);
  if (st != INFER_OK) {
    for (int a = 0; a < tmp.n_attrs; a++) attr_clear(&tmp.attrs[a]);
    free(tmp.attrs);
    return st;
  }
  return pass_rewrite_node(g, i, "infer", "FusedAttention", 1, ins, 3, tmp.attrs, tmp.n_attrs);
}

bool pass_is_constant(const graph *g, int v) {
  return v >= 0 && g->values[v].kind == VALUE_CONSTANT && g->values[v].t.data &&
         g->values[v].shape_known && g->values[v].has_type;
}

bool pass_transpose_perm(const graph *g, const node *n, int *rank, int *perm) {
  const int64_t *v;
  int count;
  if (attr_get_ints(n, "perm", &v, &count) != INFER_OK) return false;
  if (count < 0) {
    const value *x = &g->values[n->inputs[0]];
    if (!x->shape_known) return false;
    *rank = x->t.rank;
    for (int i = 0; i < *rank; i++) perm[i] = *rank - 1 - i;
    return true;
  }
  if (count > INFER_MAX_RANK) return false;
  bool seen[INFER_MAX_RANK] = {false};
  for (int i = 0; i < count; i++) {
    if (v[i] < 0 || v[i] >= count || seen[v[i]]) return false;
    seen[v[i]] = true;
    perm[i] = (int)v[i];
  }
  *rank = count;
  return true;
}
