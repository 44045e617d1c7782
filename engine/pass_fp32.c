/* pass_fp32.c: mixed precision in fp16 builds: named nodes and op types computed and
 * stored in float32 (config precision.fp32_ops / precision.fp32_nodes; infer --fp32-ops,
 * --fp32-nodes; docs/precision.md).
 *
 * Marking is by value, before the fusion passes: the outputs of the chosen nodes get
 * value.keep_fp32. A pass that fuses a marked node either removes its output (it becomes
 * a fused op's inner result, which fused ops hold in float32 anyway) or makes it the
 * fused node's output, so the fused node is then the float32 one; marking constrains no
 * fusion. After the passes, pass_place_fp32 makes every live node that writes a kept
 * value a float32 node (all its float outputs kept, the constants only such nodes read
 * kept) and, on the GPU, places the conversions: a Cast (to FLOAT, the identity in the
 * graph's own dtypes, so the CPU runs it as a copy) from each float16-stored input into a
 * float32 copy the node reads, and from each kept output into a float16 copy for the
 * readers that are not float32 nodes. The GPU backend stores kept values in float32
 * (engine/cuda/cuda_engine.c), which makes those Casts the conversions.
 *
 * The default policy ("auto"): Pow, Exp and ReduceSumSquare (squares and exponentials
 * leave float16's range, 65504, first), and any reduction reading a kept value (a sum
 * of squares is larger still). Any marking extends through the nodes that read only
 * kept values (and constants), up to a join with float16 values or a heavy op (Conv,
 * MatMul, ...): the Sqrt of a sum of squares reads it in float32. Written-out LayerNorm, GELU and softmax chains are fused
 * before their Pow or Exp is stored, so the zoo's models keep nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "../ops/op.h"
#include "passes.h"

static const char *const default_ops[] = {"Pow", "Exp", "ReduceSumSquare", NULL};
static const char *const reductions[] = {"ReduceSum", "ReduceMean", "ReduceL1", "ReduceL2",
                                         "ReduceSumSquare", "ReduceLogSumExp", "ReduceMax",
                                         "ReduceMin", "ReduceProd", NULL};

/* Whether `name` is an entry of the comma-separated `list`. */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

static bool known_op_type(const char *name) {
  for (int i = 0; i < op_registry_count(); i++)
    if (strcmp(op_registry_at(i)->name, name) == 0) return true;
  return false;
}

/* Each entry of `list` must be an op infer knows (ops) or a node of the model (nodes),
 * else the build fails naming it. */
static infer_status check_list(const graph *g, const char *key, const char *list, bool ops) {
  char item[256];
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
    p = end ? end + 1 : NULL;
    if (len == 0) continue;
    if (ops && (strcmp(item, "auto") == 0 || strcmp(item, "none") == 0 || known_op_type(item)))
      continue;
    bool found = false;
    for (int i = 0; !ops && !found && i < g->n_nodes; i++)
      found = g->nodes[i].name && strcmp(g->nodes[i].name, item) == 0;
    if (!found)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "config %s: '%s' is %s", key, item,
                        ops ? "no op type infer knows (op types are ONNX names: Pow, "
                              "LayerNormalization, ...)"
                            : "no node of the model (node names as the ONNX file has them)");
  }
  return INFER_OK;
}

/* Whether node n reads float values and every non-constant one is kept, and is not one of
 * the heavy ops an island of float32 ends at: a float32 island extends through what it
 * feeds alone (the Sqrt of a sum of squares: storing the sum in float16 for it would
 * overflow after all), up to a join with float16 values or a product. */
static bool reads_only_kept(const graph *g, const node *n) {
  static const char *const heavy[] = {"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum",
                                      "LSTM", "GRU", "RNN", "Attention", NULL};
  for (int k = 0; heavy[k]; k++)
    if (pass_node_is(n, heavy[k])) return false;
  int kept = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    const value *v = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
    if (!v || v->kind == VALUE_CONSTANT || !dtype_is_float(v->t.dtype)) continue;
    if (!v->keep_fp32) return false;
    kept++;
  }
  return kept > 0;
}

infer_status pass_mark_fp32(graph *g, const char *ops, const char *nodes, int *marked) {
  *marked = 0;
  if (!ops) ops = "auto";
  TRY(check_list(g, "precision.fp32_ops", ops, true));
  TRY(check_list(g, "precision.fp32_nodes", nodes, false));
  bool by_default = in_list(ops, "auto");
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    if (n->removed) continue;
    bool keep = in_list(ops, n->op_type) || (n->name && nodes && in_list(nodes, n->name));
    for (int k = 0; by_default && !keep && default_ops[k]; k++) keep = pass_node_is(n, default_ops[k]);
    for (int k = 0; by_default && !keep && reductions[k]; k++)
      keep = pass_node_is(n, reductions[k]) && n->n_inputs > 0 && n->inputs[0] >= 0 &&
             g->values[n->inputs[0]].keep_fp32;
    if (!keep) keep = reads_only_kept(g, n);
    for (int k = 0; keep && k < n->n_outputs; k++) {
      value *v = n->outputs[k] >= 0 ? &g->values[n->outputs[k]] : NULL;
      if (v && v->t.dtype == INFER_DTYPE_FLOAT32 && !v->keep_fp32) {
        v->keep_fp32 = true;
        (*marked)++;
      }
    }
  }
  return INFER_OK;
}

static bool fp32_node(const graph *g, const node *n) {
  for (int k = 0; !n->removed && k < n->n_outputs; k++)
    if (n->outputs[k] >= 0 && g->values[n->outputs[k]].keep_fp32) return true;
  return false;
}

/* A Cast (to FLOAT) of v into a new value named after it, flagged keep_fp32 = to_fp32;
 * key[] places it right after v's producer. -1 when out of memory. */
static int add_cast(graph *g, int v, bool to_fp32, double **key, int *cap) {
  char *name = pass_unique_name(g, g->values[v].name, to_fp32 ? "_fp32" : "_fp16");
  int c = name ? graph_add_value(g, name) : -1;
  int i = c < 0 ? -1 : graph_add_node(g, 1, 1, 0);
  if (i < 0) {
    free(name);
    return -1;
  }
  if (g->n_nodes > *cap) {
    double *grown = realloc(*key, sizeof(double) * (size_t)(g->n_nodes * 2));
    if (!grown) return -1;
    *key = grown;
    *cap = g->n_nodes * 2;
  }
  node *n = &g->nodes[i];
  n->name = name;
  n->op_type = strdup("Cast");
  n->domain = strdup("");
  n->opset = 13;
  n->model_index = -1;
  n->op = op_registry_find("", "Cast", 13, NULL);
  if (!n->op_type || !n->domain || !n->op || pass_set_attr_int(n, "to", INFER_DTYPE_FLOAT32) != INFER_OK ||
      pass_reparse(n) != INFER_OK)
    return -1;
  n->inputs[0] = v;
  n->outputs[0] = c;
  value *cv = &g->values[c], *src = &g->values[v];
  cv->t = src->t;
  cv->t.data = NULL;
  cv->has_type = cv->shape_known = true;
  cv->shape_dep = src->shape_dep;
  cv->channels_last = src->channels_last;
  cv->keep_fp32 = to_fp32;
  cv->producer = i;
  int p = pass_producer(g, v);
  (*key)[i] = p >= 0 ? p + 0.5 : -1.0;
  return c;
}

infer_status pass_place_fp32(graph *g, bool place_casts, int *n_fp32, int *added) {
  *added = 0;
  *n_fp32 = 0;
  int n0 = g->n_nodes;
  /* a float32 node computes all its float outputs in float32 */
  for (int i = 0; i < n0; i++) {
    const node *n = &g->nodes[i];
    if (!fp32_node(g, n)) continue;
    (*n_fp32)++;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && g->values[n->outputs[k]].t.dtype == INFER_DTYPE_FLOAT32)
        g->values[n->outputs[k]].keep_fp32 = true;
  }
  /* constants read only by float32 nodes are uploaded in float32 */
  bool *other = calloc((size_t)g->n_values + 1, sizeof(bool)), *mine = calloc((size_t)g->n_values + 1, sizeof(bool));
  if (!other || !mine) {
    free(other);
    free(mine);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "place-fp32: out of memory");
  }
  for (int i = 0; i < n0; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    bool f = fp32_node(g, n);
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) (f ? mine : other)[n->inputs[k]] = true;
  }
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].kind == VALUE_CONSTANT && mine[v] && !other[v] &&
        g->values[v].t.dtype == INFER_DTYPE_FLOAT32)
      g->values[v].keep_fp32 = true;
  free(mine);
  infer_status st = INFER_OK;
  double *key = NULL;
  int cap = 0, nv0 = g->n_values;
  int *to32 = NULL, *to16 = NULL; /* per value: its float32 / float16 copy, or -1 */
  if (place_casts) {
    key = malloc(sizeof(double) * (size_t)(n0 + 1));
    to32 = malloc(sizeof(int) * (size_t)(nv0 + 1));
    to16 = malloc(sizeof(int) * (size_t)(nv0 + 1));
    cap = n0 + 1;
    if (!key || !to32 || !to16) st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "place-fp32: out of memory");
    for (int i = 0; st == INFER_OK && i < n0; i++) key[i] = i;
    for (int v = 0; st == INFER_OK && v < nv0; v++) to32[v] = to16[v] = -1;
  }
  for (int i = 0; place_casts && st == INFER_OK && i < n0; i++) {
    bool f = fp32_node(g, &g->nodes[i]);
    if (g->nodes[i].removed) continue;
    for (int k = 0; st == INFER_OK && k < g->nodes[i].n_inputs; k++) {
      int v = g->nodes[i].inputs[k];
      if (v < 0 || v >= nv0 || g->values[v].t.dtype != INFER_DTYPE_FLOAT32) continue;
      bool kept = g->values[v].keep_fp32;
      if (f == kept) continue; /* stored as the node reads it */
      int *copy = f ? to32 : to16;
      if (copy[v] < 0 && (copy[v] = add_cast(g, v, f, &key, &cap)) < 0)
        st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "place-fp32: out of memory");
      else {
        g->nodes[i].inputs[k] = copy[v];
        (*added)++;
      }
    }
  }
  if (st == INFER_OK && *added) st = pass_reorder_nodes(g, key);
  free(key);
  free(to32);
  free(to16);
  free(other);
  return st;
}
