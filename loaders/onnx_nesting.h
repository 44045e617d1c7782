/* onnx_nesting.h: a bounded walk over the protobuf wire format of a ModelProto that
 * measures how deeply subgraphs nest, BEFORE protobuf-c decodes it. protobuf-c
 * recurses once per nested message and has no depth limit, so a small file of
 * thousands of nested subgraphs (NodeProto.attribute -> AttributeProto.g/.graphs ->
 * GraphProto -> NodeProto ...) would exhaust the stack inside the decoder. The walk
 * keeps its own fixed stack and refuses such a model with a message naming the limit. */
#ifndef INFER_ONNX_NESTING_H
#define INFER_ONNX_NESTING_H

#include <stddef.h>
#include <stdint.h>

#include "../core/graph.h" /* GRAPH_SUBGRAPH_DEPTH_MAX */
#include "../include/infer.h"

/* The most subgraph levels a model may nest: the main graph is level 0, a graph held by
 * one of its nodes' attributes level 1, and so on. Real models nest a handful (If and
 * Loop bodies); 64 keeps protobuf-c's recursion (3 messages per level) far from any
 * stack limit. */
#define ONNX_MAX_SUBGRAPH_DEPTH GRAPH_SUBGRAPH_DEPTH_MAX /* the one limit: loader, build, executor */

/* Walks the `len` bytes of a serialized ModelProto (`path` names it in messages).
 * Returns INFER_OK when it nests at most ONNX_MAX_SUBGRAPH_DEPTH subgraph levels;
 * INFER_ERR_INVALID_MODEL naming the limit when deeper, or when the wire data of the
 * messages it descends into is malformed (the decoder would fail there too, but only
 * after recursing into it). It reads every byte at most once and allocates nothing. */
infer_status onnx_check_nesting(const uint8_t *data, size_t len, const char *path);

#endif
