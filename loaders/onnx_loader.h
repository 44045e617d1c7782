/* onnx_loader.h: ONNX model file -> engine graph. */
#ifndef INFER_ONNX_LOADER_H
#define INFER_ONNX_LOADER_H

#include "../core/graph.h"
#include "../core/mem_budget.h"

/* Reads and decodes `path`, converts it to a graph (owned by the caller:
 * graph_release). External data is resolved relative to the model's folder.
 * The graph is not validated yet (graph_validate). Subgraph nesting is bounded before
 * decoding (loaders/onnx_nesting.h). The file, its decoded form and the weights take
 * their bytes from `budget` before they are allocated (NULL: no limit); the weights'
 * stay taken. */
infer_status onnx_load_graph(const char *path, mem_budget *budget, graph **out);

/* Reads a whole file into memory (malloc'ed, caller frees). Files above
 * max_bytes are refused. */
infer_status file_read_all(const char *path, size_t max_bytes, uint8_t **data, size_t *len);

#endif
