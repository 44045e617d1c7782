/* cudnn_backend_util.h: helpers over cuDNN's backend (graph) API in plain C
 * (cudnnBackendCreateDescriptor / SetAttribute / Finalize / Execute). A pool owns the
 * descriptors a graph is built of and destroys them in reverse order; builders make
 * tensor, convolution and pointwise operations, the operation graph, engine configs
 * by heuristics, execution plans, and run a plan through a short-lived variant pack.
 * Every cuDNN call is checked: a failure returns an infer_status with the call and
 * cuDNN's status text, and whatever a builder created is already in its pool. */
#ifndef INFER_CUDNN_BACKEND_UTIL_H
#define INFER_CUDNN_BACKEND_UTIL_H

#include <cudnn.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../include/infer.h"

#define BE_POOL_MAX 64 /* the attention graph's 14 operations take about 50 */

typedef struct be_pool {
  cudnnBackendDescriptor_t d[BE_POOL_MAX];
  int n;
} be_pool;

/* Creates a descriptor of `type` and adds it to the pool. */
infer_status be_create(be_pool *p, cudnnBackendDescriptorType_t type,
                       cudnnBackendDescriptor_t *out);
/* Destroys the pool's descriptors, last created first. */
void be_pool_release(be_pool *p);

/* A finalized 4-D tensor with logical dims N, C, H, W (dims[4]) and unique id `uid`:
 * channels_last gives the strides of N x H x W x C memory (H*W*C, 1, W*C, C), else those
 * of packed NCHW (C*H*W, H*W, W, 1). Byte alignment `align`. */
infer_status be_tensor(be_pool *p, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
                       bool channels_last, bool is_virtual, int64_t align,
                       cudnnBackendDescriptor_t *out);

/* A finalized 4-D tensor of any strides; by_value: a host scalar bound at execute (the
 * pointer in the variant pack is host memory). */
infer_status be_tensor_strided(be_pool *p, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
                               const int64_t *strides, bool is_virtual, bool by_value,
                               int64_t align, cudnnBackendDescriptor_t *out);

/* A finalized matrix product c = a . b over the leading (batch) dims, accumulating in comp. */
infer_status be_matmul(be_pool *p, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                       cudnnBackendDescriptor_t c, cudnnDataType_t comp,
                       cudnnBackendDescriptor_t *op);

/* A finalized reduction y = op(x) over the dims where y's is 1, in comp. */
infer_status be_reduction(be_pool *p, cudnnReduceTensorOp_t red, cudnnDataType_t comp,
                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                          cudnnBackendDescriptor_t *op);

/* A finalized pointwise operation with the inputs be_pointwise does not take: t, the
 * third operand (CUDNN_POINTWISE_BINARY_SELECT: y = t ? x : b), and axis (>= 0:
 * CUDNN_POINTWISE_GEN_INDEX's). b and t may be NULL. */
infer_status be_pointwise_ext(be_pool *p, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                              int64_t axis, cudnnBackendDescriptor_t x,
                              cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                              cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op);

/* A finalized 2-D forward convolution (cross-correlation) y = conv(x, w), symmetric
 * pads, accumulating in `comp`; alpha 1, beta 0. Groups follow from the tensors'
 * dims (w's C is x's C / group). */
infer_status be_conv_fwd(be_pool *p, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w,
                         cudnnBackendDescriptor_t y, const int64_t *pad, const int64_t *stride,
                         const int64_t *dil, cudnnDataType_t comp, cudnnBackendDescriptor_t *op);

/* A finalized pointwise operation y = mode(x) or mode(x, b) (b NULL for unary modes),
 * computing in `prec`, scales alpha1 = alpha2 = 1. `param`: for CUDNN_POINTWISE_RELU_FWD
 * the upper clip (output in [0, param]), for CUDNN_POINTWISE_SWISH_FWD beta
 * (x sigmoid(beta x)); unused by other modes. */
infer_status be_pointwise(be_pool *p, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                          double param, cudnnBackendDescriptor_t x,
                          cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y,
                          cudnnBackendDescriptor_t *op);

/* A finalized operation graph of ops[0..n_ops). */
infer_status be_graph(be_pool *p, cudnnHandle_t h, const cudnnBackendDescriptor_t *ops,
                      int n_ops, cudnnBackendDescriptor_t *out);

/* Engine configs the heuristics of `mode` suggest for graph g, best first: at most cap
 * of them into cfgs[0..*n) (the caller destroys each). */
infer_status be_heuristics(cudnnBackendDescriptor_t g, cudnnBackendHeurMode_t mode, int cap,
                           cudnnBackendDescriptor_t *cfgs, int *n);

/* The numerical and behaviour notes of an engine config's engine, as bit masks
 * (bit k: note value k). */
infer_status be_config_notes(cudnnBackendDescriptor_t cfg, uint32_t *numerical,
                             uint32_t *behavior);

/* A finalized execution plan for cfg (the caller destroys it) and its workspace bytes;
 * *plan stays NULL on failure. */
infer_status be_plan(cudnnHandle_t h, cudnnBackendDescriptor_t cfg,
                     cudnnBackendDescriptor_t *plan, int64_t *ws_bytes);

/* Enqueues plan on h's stream with the data pointers ptrs[k] of the tensors uids[k]
 * and workspace ws, through a variant pack made and destroyed here (host memory only). */
infer_status be_execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, int n,
                        const int64_t *uids, void *const *ptrs, void *ws);

/* Milliseconds per be_execute of plan on `stream` (h's), as cuda_time_runs times it;
 * -1 when it fails. */
float be_time(cudnnHandle_t h, void *stream, cudnnBackendDescriptor_t plan, int n,
              const int64_t *uids, void *const *ptrs, void *ws);

#endif
