/* onnx_loader.c: decodes a ModelProto with protobuf-c and converts it at once into
 * the engine graph; the protobuf tree is freed before returning. */
#include "onnx_loader.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/status.h"
#include "name_map.h"
#include "onnx_nesting.h"
#include "onnx.pb-c.h"
#include "tensor_proto.h"

/* protobuf limits messages to 2 GiB; larger models must use external data. */
#define MODEL_MAX_BYTES ((size_t)2 << 30)

infer_status file_read_all(const char *path, size_t max_bytes, uint8_t **data, size_t *len) {
  *data = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return infer_fail(INFER_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return infer_fail(INFER_ERR_IO, "'%s' is not a regular file", path);
  }
  if ((uint64_t)st.st_size > max_bytes) {
    fclose(f);
    return infer_fail(INFER_ERR_INVALID_INPUT, "'%s' is %lld bytes, more than the %zu allowed",
                      path, (long long)st.st_size, max_bytes);
  }
  size_t n = (size_t)st.st_size;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) {
    fclose(f);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for '%s'", n, path);
  }
  if (fread(buf, 1, n, f) != n) {
    free(buf);
    fclose(f);
    return infer_fail(INFER_ERR_IO, "reading '%s' failed", path);
  }
  fclose(f);
  *data = buf;
  *len = n;
  return INFER_OK;
}

typedef struct loader {
  graph *g;
  name_map names;
  const char *base_dir;
  mem_budget *budget; /* weights' bytes are taken from it; NULL: no limit */
  int depth; /* 0 for the main graph, +1 per subgraph level */
} loader;

static infer_status convert_graph(loader *L, const Onnx__GraphProto *gp, bool sub);

/* A subgraph's values that no node of it writes and that are neither its inputs nor its
 * initializers name outer-scope values: they become its captures. */
static infer_status find_captures(graph *g) {
  bool *written = calloc((size_t)g->n_values + 1, sizeof(bool));
  g->captures = calloc((size_t)g->n_values + 1, sizeof(int));
  g->capture_input = calloc((size_t)g->n_values + 1, sizeof(int));
  if (!written || !g->captures || !g->capture_input) {
    free(written);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k] >= 0) written[g->nodes[i].outputs[k]] = true;
  for (int v = 0; v < g->n_values; v++) {
    if (written[v] || g->values[v].kind != VALUE_INTERMEDIATE) continue;
    g->values[v].kind = VALUE_INPUT;
    g->captures[g->n_captures++] = v;
  }
  free(written);
  return INFER_OK;
}

/* Id of the value called `name`, creating an intermediate one if new. */
static infer_status value_get(loader *L, const char *name, int *id) {
  int v = name_map_get(&L->names, name);
  if (v < 0) {
    v = graph_add_value(L->g, name);
    if (v < 0 || !name_map_put(&L->names, L->g->values[v].name, v))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory adding value '%s'", name);
  }
  *id = v;
  return INFER_OK;
}

/* Declared dtype and shape of a graph input/output. */
static infer_status set_type(value *v, const Onnx__ValueInfoProto *vi, const char *role) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp) return INFER_OK; /* untyped: shape inference decides */
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s '%s' is not a tensor (sequence, map and "
                      "optional types are not supported)", role, v->name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (!tt->has_elem_type || tt->elem_type == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s '%s' has an undefined element type", role,
                      v->name);
  if (infer_dtype_size((infer_dtype)tt->elem_type) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s '%s' has unsupported element type %s (%d)",
                      role, v->name, infer_dtype_name((infer_dtype)tt->elem_type),
                      (int)tt->elem_type);
  v->t.dtype = (infer_dtype)tt->elem_type;
  v->has_type = true;
  if (!tt->shape) return INFER_OK; /* rank unknown */
  if (tt->shape->n_dim > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s '%s' has rank %zu, above %d", role, v->name,
                      tt->shape->n_dim, INFER_MAX_RANK);
  v->t.rank = (int)tt->shape->n_dim;
  v->shape_known = true;
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (d->dim_value < 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s '%s' dim %zu is negative (%lld)", role,
                          v->name, i, (long long)d->dim_value);
      v->t.dims[i] = d->dim_value;
    } else {
      v->t.dims[i] = -1;
      v->shape_known = false;
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param) {
        if (!v->dim_params && !(v->dim_params = calloc(INFER_MAX_RANK, sizeof(char *))))
          return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
        if (!(v->dim_params[i] = strdup(d->dim_param)))
          return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      }
    }
  }
  return INFER_OK;
}

/* A GraphProto attribute (If's branches, Loop's body) into its own graph, with the
 * model's opsets; names it does not define itself become its captures (graph.h). */
static infer_status convert_subgraph(const loader *L, const Onnx__GraphProto *gp,
                                     const char *what, graph **out) {
  if (L->depth + 1 > GRAPH_SUBGRAPH_DEPTH_MAX)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: subgraphs nest deeper than %d levels", what,
                      GRAPH_SUBGRAPH_DEPTH_MAX);
  loader S = {.g = graph_create(), .base_dir = L->base_dir,
              .budget = L->budget, .depth = L->depth + 1};
  infer_status s = INFER_OK;
  if (!S.g || !name_map_init(&S.names, 64) ||
      !(S.g->opsets = calloc((size_t)L->g->n_opsets + 1, sizeof(opset_import))))
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory loading %s", what);
  for (int i = 0; s == INFER_OK && i < L->g->n_opsets; i++) {
    S.g->opsets[i].version = L->g->opsets[i].version;
    if (!(S.g->opsets[i].domain = strdup(L->g->opsets[i].domain)))
      s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    else
      S.g->n_opsets++;
  }
  if (s == INFER_OK) s = convert_graph(&S, gp, true);
  /* named at the main graph's node only: a chain of every level would bury the cause */
  if (s != INFER_OK && L->depth == 0) s = infer_fail_prefix(s, "%s", what);
  name_map_free(&S.names);
  if (s != INFER_OK) {
    graph_release(S.g);
    return s;
  }
  S.g->ir_version = L->g->ir_version;
  *out = S.g;
  return INFER_OK;
}

/* The outer-scope values node n's subgraph sg reads become inputs of n (one input per
 * name over all of n's subgraphs), and sg's captures point at them. */
static infer_status add_captures(loader *L, node *n, graph *sg) {
  for (int c = 0; c < sg->n_captures; c++) {
    const char *name = sg->values[sg->captures[c]].name;
    int k = n->n_inputs - n->n_captures;
    for (; k < n->n_inputs; k++)
      if (strcmp(L->g->values[n->inputs[k]].name, name) == 0) break;
    if (k == n->n_inputs) {
      int *grown = realloc(n->inputs, sizeof(int) * ((size_t)n->n_inputs + 2));
      if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      n->inputs = grown;
      TRY(value_get(L, name, &n->inputs[n->n_inputs]));
      n->n_inputs++;
      n->n_captures++;
    }
    sg->capture_input[c] = k;
  }
  return INFER_OK;
}

static infer_status convert_attr(const loader *L, const Onnx__AttributeProto *ap,
                                 const char *node_desc, attr *a) {
  const char *base_dir = L->base_dir;
  mem_budget *budget = L->budget;
  if (!ap->name || !ap->name[0])
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s has an attribute without a name", node_desc);
  if (!(a->name = strdup(ap->name))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (ap->ref_attr_name && ap->ref_attr_name[0])
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: attribute '%s' refers to a function attribute",
                      node_desc, ap->name);
  a->type = ap->has_type ? (attr_type)ap->type : ATTR_UNDEFINED;
  switch (a->type) {
    case ATTR_FLOAT: a->f = ap->f; break;
    case ATTR_INT: a->i = ap->i; break;
    case ATTR_STRING:
      if (!(a->s = malloc(ap->s.len + 1))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      if (ap->s.len) memcpy(a->s, ap->s.data, ap->s.len);
      a->s[ap->s.len] = 0;
      break;
    case ATTR_FLOATS:
      a->n = (int)ap->n_floats;
      if (!(a->floats = malloc(sizeof(float) * (ap->n_floats + 1))))
        return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      if (ap->n_floats) memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
      break;
    case ATTR_INTS:
      a->n = (int)ap->n_ints;
      if (!(a->ints = malloc(sizeof(int64_t) * (ap->n_ints + 1))))
        return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      if (ap->n_ints) memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
      break;
    case ATTR_STRINGS:
      a->n = (int)ap->n_strings;
      if (!(a->strings = calloc(ap->n_strings + 1, sizeof(char *))))
        return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      for (size_t i = 0; i < ap->n_strings; i++) {
        if (!(a->strings[i] = malloc(ap->strings[i].len + 1)))
          return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
        if (ap->strings[i].len) memcpy(a->strings[i], ap->strings[i].data, ap->strings[i].len);
        a->strings[i][ap->strings[i].len] = 0;
      }
      break;
    case ATTR_TENSOR: {
      if (!ap->t)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: tensor attribute '%s' has no tensor",
                          node_desc, ap->name);
      char what[512];
      snprintf(what, sizeof what, "%s attribute '%s'", node_desc, ap->name);
      TRY(tensor_from_proto(ap->t, base_dir, what, budget, &a->t));
      break;
    }
    case ATTR_GRAPH: {
      if (!ap->g)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: graph attribute '%s' has no graph",
                          node_desc, ap->name);
      char what[600];
      snprintf(what, sizeof what, "%s, subgraph '%s'", node_desc, ap->name);
      TRY(convert_subgraph(L, ap->g, what, &a->g));
      break;
    }
    case ATTR_GRAPHS:
    case ATTR_TENSORS:
      /* kept as a typed marker: ops that would need them are not supported, and
       * any op that does not list the attribute rejects it by name */
      break;
    default:
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute '%s' has unknown type %d",
                        node_desc, ap->name, (int)a->type);
  }
  return INFER_OK;
}

static int64_t opset_for(const graph *g, const char *domain) {
  const char *d = (domain && strcmp(domain, "ai.onnx") != 0) ? domain : "";
  for (int i = 0; i < g->n_opsets; i++)
    if (strcmp(g->opsets[i].domain, d) == 0) return g->opsets[i].version;
  return -1;
}

static infer_status convert_node(loader *L, const Onnx__NodeProto *np, int index) {
  graph *g = L->g;
  int ni = graph_add_node(g, (int)np->n_input, (int)np->n_output, (int)np->n_attribute);
  if (ni < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory adding node %d", index);
  node *n = &g->nodes[ni];
  n->model_index = index;
  const char *dom = (np->domain && strcmp(np->domain, "ai.onnx") != 0) ? np->domain : "";
  n->name = strdup(np->name ? np->name : "");
  n->op_type = strdup(np->op_type ? np->op_type : "");
  n->domain = strdup(dom);
  if (!n->name || !n->op_type || !n->domain)
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  char desc[512];
  node_describe(g, ni, desc, sizeof desc);
  if (!n->op_type[0])
    return infer_fail(INFER_ERR_INVALID_MODEL, "node '%s' (index %d) has no op_type", n->name,
                      index);
  n->opset = opset_for(g, dom);
  if (n->opset < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "node '%s' (%s, index %d) uses domain '%s', which "
                      "the model does not import (opset_import)", n->name, n->op_type, index,
                      dom[0] ? dom : "ai.onnx");
  node_describe(g, ni, desc, sizeof desc);
  for (size_t k = 0; k < np->n_input; k++) {
    n->inputs[k] = -1;
    if (np->input[k] && np->input[k][0]) TRY(value_get(L, np->input[k], &n->inputs[k]));
  }
  for (size_t k = 0; k < np->n_output; k++) {
    n->outputs[k] = -1;
    if (np->output[k] && np->output[k][0]) {
      for (size_t j = 0; j < k; j++)
        if (np->output[j] && strcmp(np->output[j], np->output[k]) == 0)
          return infer_fail(INFER_ERR_INVALID_MODEL, "%s lists output '%s' twice", desc,
                            np->output[k]);
      TRY(value_get(L, np->output[k], &n->outputs[k]));
    }
  }
  for (size_t k = 0; k < np->n_attribute; k++) {
    for (size_t j = 0; j < k; j++)
      if (np->attribute[j]->name && np->attribute[k]->name &&
          strcmp(np->attribute[j]->name, np->attribute[k]->name) == 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s has attribute '%s' twice", desc,
                          np->attribute[k]->name);
    TRY(convert_attr(L, np->attribute[k], desc, &g->nodes[ni].attrs[k]));
    /* subgraph conversion grows other graphs only: n stays valid */
    if (n->attrs[k].g) TRY(add_captures(L, n, n->attrs[k].g));
  }
  return INFER_OK;
}

static infer_status convert_model(loader *L, const Onnx__ModelProto *mp) {
  graph *g = L->g;
  if (!mp->graph) return infer_fail(INFER_ERR_INVALID_MODEL, "the model has no graph");
  if (mp->n_opset_import == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "the model has no opset_import");
  g->ir_version = mp->ir_version;
  g->opsets = calloc(mp->n_opset_import, sizeof(opset_import));
  if (!g->opsets) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
    const char *d = (op->domain && strcmp(op->domain, "ai.onnx") != 0) ? op->domain : "";
    if (!op->has_version || op->version < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "opset_import of domain '%s' has no valid "
                        "version", d[0] ? d : "ai.onnx");
    if (opset_for(g, d) >= 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "domain '%s' is imported twice",
                        d[0] ? d : "ai.onnx");
    if (!(g->opsets[g->n_opsets].domain = strdup(d)))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    g->opsets[g->n_opsets++].version = op->version;
  }
  return convert_graph(L, mp->graph, false);
}

/* The graph's values and nodes. A subgraph (sub) may leave input shapes unknown, and a
 * name it reads without defining it (an outer-scope value) becomes a capture. */
static infer_status convert_graph(loader *L, const Onnx__GraphProto *gp, bool sub) {
  graph *g = L->g;
  g->name = strdup(gp->name ? gp->name : "");
  /* initializers first: a graph input that names one is a constant with a default */
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    if (!tp->name || !tp->name[0])
      return infer_fail(INFER_ERR_INVALID_MODEL, "initializer %zu has no name", i);
    if (name_map_get(&L->names, tp->name) >= 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "initializer '%s' is defined twice", tp->name);
    int v = -1;
    TRY(value_get(L, tp->name, &v));
    char what[512];
    snprintf(what, sizeof what, "initializer '%s'", tp->name);
    value *val = &g->values[v];
    TRY(tensor_from_proto(tp, L->base_dir, what, L->budget, &val->t));
    val->kind = VALUE_CONSTANT;
    val->has_type = val->shape_known = true;
  }
  g->inputs = calloc(gp->n_input + 1, sizeof(int));
  g->outputs = calloc(gp->n_output + 1, sizeof(int));
  if (!g->inputs || !g->outputs) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi->name || !vi->name[0])
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph input %zu has no name", i);
    int v = name_map_get(&L->names, vi->name);
    if (v >= 0 && g->values[v].kind == VALUE_CONSTANT) continue;
    if (v >= 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph input '%s' is listed twice", vi->name);
    TRY(value_get(L, vi->name, &v));
    g->values[v].kind = VALUE_INPUT;
    TRY(set_type(&g->values[v], vi, "graph input"));
    if (!sub && !g->values[v].has_type)
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph input '%s' has no type", vi->name);
    if (!sub && g->values[v].t.rank == 0 && !vi->type->tensor_type->shape)
      return infer_fail(INFER_ERR_UNSUPPORTED, "graph input '%s' has no shape (unknown rank)",
                        vi->name);
    g->inputs[g->n_inputs++] = v;
  }
  for (size_t i = 0; i < gp->n_node; i++) TRY(convert_node(L, gp->node[i], (int)i));
  for (size_t i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = gp->output[i];
    if (!vi->name || !vi->name[0])
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph output %zu has no name", i);
    int v = name_map_get(&L->names, vi->name);
    if (v < 0 && sub) TRY(value_get(L, vi->name, &v)); /* an outer value, passed through */
    if (v < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph output '%s' is not produced by any node, "
                        "input or initializer", vi->name);
    if (sub && !g->values[v].has_type) TRY(set_type(&g->values[v], vi, "subgraph output"));
    if (g->values[v].is_output)
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph output '%s' is listed twice", vi->name);
    g->values[v].is_output = true;
    g->outputs[g->n_outputs++] = v;
  }
  if (g->n_outputs == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "the graph has no outputs");
  return sub ? find_captures(g) : INFER_OK;
}

/* onnx_load_graph without the accounting of the file's bytes */
static infer_status load(const char *path, mem_budget *budget, graph **out) {
  *out = NULL;
  uint8_t *buf;
  size_t len;
  TRY(file_read_all(path, MODEL_MAX_BYTES, &buf, &len));
  if (len == 0) {
    free(buf);
    return infer_fail(INFER_ERR_INVALID_MODEL, "'%s' is empty", path);
  }
  /* protobuf-c recurses once per nested message without a limit: bound it first */
  infer_status ns = onnx_check_nesting(buf, len, path);
  if (ns != INFER_OK) {
    free(buf);
    return ns;
  }
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  if (!mp)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "'%s' is not a valid ONNX model (protobuf decoding failed: truncated "
                      "or not a ModelProto)", path);
  char *dir_copy = strdup(path);
  loader L = {.g = graph_create(), .base_dir = dir_copy ? dirname(dir_copy) : NULL,
              .budget = budget};
  infer_status s;
  if (!L.g || !dir_copy || !name_map_init(&L.names, 1024))
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
  else
    s = convert_model(&L, mp);
  onnx__model_proto__free_unpacked(mp, NULL);
  name_map_free(&L.names);
  free(dir_copy);
  if (s != INFER_OK) {
    graph_release(L.g);
    return s;
  }
  *out = L.g;
  return INFER_OK;
}

infer_status onnx_load_graph(const char *path, mem_budget *budget, graph **out) {
  *out = NULL;
  /* the file and protobuf-c's tree of it live together while the graph is made: both
   * are counted (the tree as the file's size again) and given back at the end */
  struct stat st;
  int64_t reading = stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
                            (uint64_t)st.st_size <= MODEL_MAX_BYTES
                        ? 2 * (int64_t)st.st_size
                        : 0;
  char what[4200];
  snprintf(what, sizeof what, "reading and decoding the model '%s'", path);
  TRY(mem_budget_take(budget, reading, what));
  infer_status s = load(path, budget, out);
  mem_budget_give(budget, reading);
  return s;
}
