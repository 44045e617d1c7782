/* graph.h: the engine's intermediate representation of a model.
 *
 * Values are named tensors (graph inputs, constants, intermediates); nodes read and
 * write values by index. Loaders build a graph; passes rewrite it; the planner and
 * backends read it. Nothing here knows about protobuf. */
#ifndef INFER_GRAPH_H
#define INFER_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

struct op_desc;
struct graph;

/* Deepest nesting of subgraphs (If/Loop bodies inside bodies) the loader builds and the
 * engine walks; every recursion over subgraphs carries a depth checked against it. */
#define GRAPH_SUBGRAPH_DEPTH_MAX 64

/* Attribute kinds use ONNX AttributeProto.AttributeType numbers. */
typedef enum attr_type {
  ATTR_UNDEFINED = 0,
  ATTR_FLOAT = 1,
  ATTR_INT = 2,
  ATTR_STRING = 3,
  ATTR_TENSOR = 4,
  ATTR_GRAPH = 5,
  ATTR_FLOATS = 6,
  ATTR_INTS = 7,
  ATTR_STRINGS = 8,
  ATTR_TENSORS = 9,
  ATTR_GRAPHS = 10
} attr_type;

typedef struct attr {
  char *name;
  attr_type type;
  float f;
  int64_t i;
  char *s; /* NUL-terminated (ATTR_STRING) */
  int n;   /* element count of floats/ints/strings */
  float *floats;
  int64_t *ints;
  char **strings;
  tensor t; /* ATTR_TENSOR: data owned by the attribute */
  struct graph *g; /* ATTR_GRAPH: the subgraph, owned by the attribute */
} attr;

typedef struct node {
  char *name; /* may be "" */
  char *op_type;
  char *domain; /* "" for the default ONNX domain */
  int64_t opset; /* the imported opset version of the node's domain */
  int n_inputs, n_outputs;
  int *inputs;  /* value ids; -1 for an omitted optional input */
  int *outputs; /* value ids; -1 for an omitted optional output */
  int n_attrs;
  attr *attrs;
  const struct op_desc *op; /* bound by graph_bind_ops */
  void *params;             /* parsed attributes, one malloc block (free) */
  bool removed;             /* dropped by a pass; skipped everywhere */
  int model_index;          /* position in the model file, for messages */
  /* The last n_captures inputs are values of the enclosing graph that the node's
   * subgraphs read (outer-scope names): listed as inputs so that ordering, lifetimes
   * and passes see the use. The op's own inputs come first. */
  int n_captures;
} node;

typedef enum value_kind {
  VALUE_INTERMEDIATE = 0,
  VALUE_INPUT = 1,    /* a graph input the caller feeds */
  VALUE_CONSTANT = 2, /* initializer or folded value: t.data is set */
} value_kind;

typedef struct value {
  char *name;
  value_kind kind;
  /* dtype and shape; t.data holds the constant's bytes (owned) when kind is
   * VALUE_CONSTANT. A dim of -1 is not known yet. */
  tensor t;
  bool has_type;     /* dtype known */
  bool shape_known;  /* rank and all dims known */
  char **dim_params; /* symbolic dim names (or NULL per dim); NULL if none */
  int producer;      /* node index or -1 */
  bool is_output;    /* a graph output */
  /* Flexible batch (CPU engines built with --batch): the dims may change with the
   * run's batch (shape_dep), or the value was computed at build from shapes that
   * do (data_dep: it holds the build batch's data for shape inference, and its
   * node stays in the graph to recompute it each run). */
  bool shape_dep, data_dep;
  bool batch_input; /* a graph input whose first dim is the build's --batch */
  /* to-channels-last made this 4-D value NHWC (dims N, H, W, C) under its ONNX name,
   * which means NCHW: readers of kept values (infer_context_read_value) permute back */
  bool channels_last;
  /* mixed precision (engine/pass_fp32.c): stored in float32 in fp16 builds */
  bool keep_fp32;
} value;

typedef struct opset_import {
  char *domain;
  int64_t version;
} opset_import;

typedef struct graph {
  char *name;
  int n_values, cap_values;
  value *values;
  int n_nodes, cap_nodes;
  node *nodes;
  int n_inputs, n_outputs;
  int *inputs;  /* VALUE_INPUT ids, in model order */
  int *outputs; /* ids, in model order */
  int n_opsets;
  opset_import *opsets;
  int64_t ir_version;
  /* A subgraph's values that name outer-scope values (kind VALUE_INPUT, not in
   * `inputs`): capture i is filled at run time from input capture_input[i] of the node
   * that owns the subgraph. 0 in a model's main graph. */
  int n_captures;
  int *captures, *capture_input;
} graph;

graph *graph_create(void);
void graph_release(graph *g);
/* Id of the value named `name`, or -1 (linear in values: the loader keeps a map). */
int graph_find_value(const graph *g, const char *name);
/* Appends a value (name copied); returns its id or -1 when out of memory. */
int graph_add_value(graph *g, const char *name);
/* Appends a node with room for the given counts; returns its index or -1. */
int graph_add_node(graph *g, int n_inputs, int n_outputs, int n_attrs);
void attr_clear(attr *a);
/* "node 'name' (Op, domain ai.onnx, opset 13, index 4)" into buf. */
const char *node_describe(const graph *g, int index, char *buf, int cap);

/* Checks single assignment, undefined inputs, duplicate outputs, and orders the
 * nodes topologically (a cycle is an error naming a node on it). */
infer_status graph_validate(graph *g);

#endif
