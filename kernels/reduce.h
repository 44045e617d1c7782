/* reduce.h: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp on the
 * device (also GlobalAveragePool / GlobalMaxPool).
 *
 * Semantics follow ops/reduce_ops.c: float inputs accumulate in float (double for
 * float64); integer Sum/Mean/Prod/SumSquare/L1/Max/Min accumulate in int64 with
 * wrapping, integer L2/LogSum/LogSumExp in double. An empty reduced set gives the
 * identity (0, 1, -inf/+inf or the integer extreme; Mean: NaN for floats, 0 for
 * integers). Max/Min propagate NaN. LogSumExp shifts by the maximum when it is
 * finite. The output has the input's dtype. */
#ifndef INFER_K_REDUCE_H
#define INFER_K_REDUCE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "k_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

enum k_reduce_kind {
  K_RED_SUM = 0,
  K_RED_MEAN,
  K_RED_MAX,
  K_RED_MIN,
  K_RED_PROD,
  K_RED_L1,
  K_RED_L2,
  K_RED_SUMSQ,
  K_RED_LOGSUM,
  K_RED_LOGSUMEXP
};

/* Whether the launchers below handle (dtype, kind): float32/16, bfloat16, float64
 * for every kind; int8, uint8, int32, int64 for every kind; bool for Max/Min. */
int k_reduce_supported(int dtype, int kind);

/* x seen as C-ordered [outer, r, inner]; y[o * inner + i] reduces x[o, :, i].
 * r may be 0 (each output is the empty-set value). */
cudaError_t k_reduce_3d(int dtype, int kind, int64_t outer, int64_t r, int64_t inner, const void *x,
                        void *y, cudaStream_t stream);

/* General layout: the output is C-ordered over the kept dims kd[0..nk) (input
 * element strides ks); each output reduces the index space rd[0..nr) (input
 * strides rs) starting at its kept offset. nk may be 0 (one output); nr 0 means
 * one element per output; an rd entry 0 means an empty set. */
typedef struct k_reduce_geom {
  int nk, nr;
  int64_t kd[K_MAX_RANK], ks[K_MAX_RANK];
  int64_t rd[K_MAX_RANK], rs[K_MAX_RANK];
} k_reduce_geom;

cudaError_t k_reduce_strided(int dtype, int kind, const k_reduce_geom *g, const void *x, void *y,
                             cudaStream_t stream);

/* ---- the middle axis of [outer, r, inner], inner > 1 (kernels/reduce_mid.cu) ----------
 * NHWC data over H and W (outer = N, r = H*W, inner = C), faster than k_reduce_3d there:
 * each element is read once, up to 16 bytes at a time along inner, the sums kept in
 * fp32; r is split into `chunks` chunks that blocks reduce in parallel, and a second
 * pass combines the chunks' partial results (in the workspace) in chunk order. No
 * atomics: for one engine (shapes, chunk count and x's alignment fixed) results repeat
 * exactly run to run. They can differ from k_reduce_3d's in the last bits (summation
 * order; Max/Min not). Same semantics otherwise (NaN propagation, Mean = sum / r). */

/* float32 and float16, every kind but LogSumExp. */
int k_reduce_mid_supported(int dtype, int kind);
/* The chunk count for a GPU of sm_count multiprocessors, and in *ws_bytes the workspace
 * k_reduce_mid then needs (0 for one chunk). 0 when the shape is not one for
 * k_reduce_mid (inner <= 1, r < 1, sizes past its index range). Build time only (it
 * queries the device's occupancy). */
int64_t k_reduce_mid_chunks(int dtype, int64_t outer, int64_t r, int64_t inner, int sm_count,
                            int64_t *ws_bytes);
/* y[o * inner + i] reduces x[o, :, i]; ws: the bytes k_reduce_mid_chunks named (NULL
 * when 0). r >= 1. */
cudaError_t k_reduce_mid(int dtype, int kind, int64_t outer, int64_t r, int64_t inner,
                         int64_t chunks, const void *x, void *y, void *ws, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
