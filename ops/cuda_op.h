/* cuda_op.h: the GPU side of an op (host code in ops/cuda/, kernels in kernels/).
 *
 * Tensors handed to these functions have device data pointers and their
 * *storage* dtype: with --precision fp16 every float32 activation and weight is
 * float16 on the device (integer and bool tensors keep their dtype).
 *
 * - prepare (build time, once per node): check that this node is supported on
 *   the GPU (else INFER_ERR_UNSUPPORTED naming what), create descriptors, choose
 *   algorithms (may run and time them on x->stream), and report the workspace
 *   bytes run needs. Constant inputs already have device data; other data
 *   pointers are NULL. State goes in *state (released with `release`, or free()
 *   when release is NULL).
 * - run: only enqueue work on x->stream: no allocation, no synchronization, no
 *   host reads of device data. Check launch errors (cudaGetLastError) and
 *   library statuses with the macros of engine/cuda/cuda_check.h.
 */
#ifndef INFER_CUDA_OP_H
#define INFER_CUDA_OP_H

#include "../core/config.h"
#include "op.h"

typedef struct cuda_exec {
  void *stream;   /* cudaStream_t */
  void *cudnn;    /* cudnnHandle_t bound to stream */
  void *cublas;   /* cublasHandle_t bound to stream */
  void *ws;       /* device workspace shared by all steps */
  int64_t ws_bytes;
  infer_precision precision;
  int sm_count;
  /* algo_cache * (engine/cuda/algo_cache.h) at build time when the options name a
   * cache file: prepare may look a measured choice up before searching, and put
   * what it measured. NULL when no cache (and always in contexts). */
  void *algo_cache;
  /* the most scratch one step's algorithm may use (infer_options_set_workspace_limit);
   * set at build time */
  int64_t ws_limit;
  /* the engine's config entries (core/config.h: cuda.conv_impl, cuda.cudnn_rtc) */
  const struct config *cfg;
  /* contexts of engines with host-fallback steps: pinned host scratch (its head the run's
   * failure flag, an int, and message, then each such step's region;
   * ops/cuda/cuda_host_fallback.c) */
  void *host_ws;
  /* build time, for the step being prepared: its output 0 may be written as a slice of
   * a wider channels-last tensor, out_pitch elements from one pixel to the next (a
   * Concat's part, engine/cuda/cuda_concat_in_place.c; 0: dense). An op that writes so
   * sets *out_pitch_taken; others ignore both. */
  int64_t out_pitch;
  bool *out_pitch_taken;
} cuda_exec;

typedef struct cuda_op {
  const char *name; /* op_type in the default domain */
  /* host_in[k]: the same input on the host: data set for constants (e.g. a
   * Reshape's shape, Resize's scales, in their original dtype), NULL otherwise. */
  infer_status (*prepare)(const cuda_exec *x, const node *n, const void *params,
                          const tensor *const *in, const tensor *const *host_in,
                          tensor *const *out, void **state, int64_t *ws_bytes);
  infer_status (*run)(const cuda_exec *x, const node *n, const void *params, const void *state,
                      const tensor *const *in, tensor *const *out);
  void (*release)(void *state);
  /* library handles the op uses (CUDA_NEEDS_*): contexts create only those, since
   * creating a cuDNN handle costs much more than most runs */
  unsigned needs;
  const char *domain; /* NULL: the default domain (ai.onnx) */
  /* what runs a prepared step, for --profile (NULL: named after `needs`) */
  const char *(*impl)(const void *state);
} cuda_op;

/* config cuda.nan_exact=1: activations stay out of library calls (cuDNN's fused
 * convolution and graph engines, cuBLASLt's epilogues), whose NaN handling is theirs,
 * and run in our epilogue kernels, which keep NaN as the unfused ops do (kernels/k_nan.h).
 * Read at prepare time. */
static inline bool cuda_nan_exact(const cuda_exec *x) {
  return config_flag(x->cfg, "cuda.nan_exact", false);
}

#define CUDA_NEEDS_CUDNN 1u
#define CUDA_NEEDS_CUBLAS 2u

/* GPU implementation of (domain, op_type), or NULL; domain "" or "ai.onnx" is the
 * default one. */
const cuda_op *cuda_op_find(const char *domain, const char *op_type);

/* config cuda.host_fallback (on unless 0): a step whose op has no GPU implementation
 * runs its CPU reference on the host in stream order (ops/cuda/cuda_host_fallback.c). The
 * engine prepares such a step with cuda_host_fallback_prepare (it reads the graph's model
 * dtypes; in/out as for prepare; sub: how a control-flow op's subgraphs run, NULL for other
 * ops) and places its region of the contexts' host scratch at `offset` (0 for the first:
 * the failure flag and message go before it) with cuda_host_fallback_place, which returns
 * the region's end. After a run, cuda_host_fallback_failure(host_ws) is the failing
 * step's message ("" when none failed). */
extern const cuda_op cuda_op_host_fallback;
/* What a host-fallback step of If, Loop or Scan runs its subgraphs with, given by the
 * engine: the CPU backend's subgraph executor (op_exec.run_graph) and the engine's host
 * memory budget, which each run's subgraph values are taken from. */
typedef struct cuda_host_subgraphs {
  infer_status (*run_graph)(op_exec *x, const graph *sg, const tensor *const *in,
                            const tensor *const *node_in, tensor *out);
  struct mem_budget *budget;
} cuda_host_subgraphs;
infer_status cuda_host_fallback_prepare(const cuda_exec *x, const graph *g, const node *n,
                                        const tensor *const *in, tensor *const *out,
                                        const cuda_host_subgraphs *sub, void **state);
int64_t cuda_host_fallback_place(void *state, int64_t offset);
const char *cuda_host_fallback_failure(const void *host_ws);
/* A control node's graph output whose shape is known only after the run (a HostRegion's
 * detections) stays on the host: after a run, output k of the step (state) in a context's
 * host scratch (host_ws), in its model dtype, with this run's dims. */
infer_status cuda_host_fallback_output(const void *state, const void *host_ws, int k,
                                       tensor *out);

/* Each GPU op family file exports a NULL-terminated list (ops/cuda/cuda_registry.c). */
extern const cuda_op *const cuda_ops_elementwise[];
extern const cuda_op *const cuda_ops_conv[];
extern const cuda_op *const cuda_ops_conv_int8[];
extern const cuda_op *const cuda_ops_matmul[];
extern const cuda_op *const cuda_ops_pool[];
extern const cuda_op *const cuda_ops_norm[];
extern const cuda_op *const cuda_ops_reduce[];
extern const cuda_op *const cuda_ops_movement[];
extern const cuda_op *const cuda_ops_shape[];
extern const cuda_op *const cuda_ops_attention[];
extern const cuda_op *const cuda_ops_elementwise_chain[];
extern const cuda_op *const cuda_ops_quantize[];

#endif
