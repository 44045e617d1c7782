/* softmax.h: Softmax / LogSoftmax and ArgMax / ArgMin on the device.
 *
 * Both see x as C-ordered [outer, len, inner] and work along `len` (stride inner).
 * Semantics follow ops/reduce_softmax.c and ops/reduce_arg.c: softmax subtracts the
 * row maximum (an infinite maximum shifts by 0, NaN propagates) and accumulates in
 * float (double for float64); ArgMax/ArgMin return the first extreme (the last with
 * select_last), a NaN counting as the extreme (the first NaN wins). */
#ifndef INFER_K_SOFTMAX_H
#define INFER_K_SOFTMAX_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y = softmax (log_ = 0) or log-softmax (log_ = 1) of x; y has x's dtype (float32,
 * float16, bfloat16, float64). */
cudaError_t k_softmax(int dtype, int log_, int64_t outer, int64_t len, int64_t inner, const void *x,
                      void *y, cudaStream_t stream);

/* y[o * inner + i] = index along len of the max (is_max) / min of x[o, :, i];
 * len >= 1. Float types and every integer type but bool. */
cudaError_t k_argminmax(int dtype, int is_max, int select_last, int64_t outer, int64_t len,
                        int64_t inner, const void *x, int64_t *y, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
