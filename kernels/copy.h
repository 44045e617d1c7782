/* copy.h: data movement by element size (any dtype), and small fill kernels.
 *
 * k_copy_view is the one strided N-D copy behind Transpose, Slice (negative steps
 * too), Expand, Tile (a rank-2r view with 0 strides on the repeat dims), Concat
 * (one call per input, into the output with the output's strides) and Split (one
 * call per output). The launcher simplifies the view (drops 1-dims, merges
 * contiguous dims), widens contiguous rows to 16/8/4-byte words when aligned,
 * uses 32-bit index math when the view allows it, and runs a tiled kernel for
 * transposes (the input's unit-stride dim is not the output's last). */
#ifndef INFER_K_COPY_H
#define INFER_K_COPY_H

#include <cuda_runtime.h>
#include <stdint.h>

#define K_VIEW_MAX_RANK 16

#ifdef __cplusplus
extern "C" {
#endif

/* For every index idx of `dims` (rank <= K_VIEW_MAX_RANK; rank 0 = one element):
 *   dst[sum idx_d * out_strides_d] = src[sum idx_d * in_strides_d]
 * Strides in elements of elem_size bytes (any size > 0). in_strides may be 0
 * (broadcast) or negative (reversed); out_strides NULL means C-contiguous (and
 * must not repeat an element otherwise). src and dst point at the view's first
 * element and must not overlap. */
cudaError_t k_copy_view(int64_t elem_size, int rank, const int64_t *dims, const int64_t *in_strides,
                        const int64_t *out_strides, const void *src, void *dst,
                        cudaStream_t stream);

/* dst[i] = the elem_size bytes of `pattern` (elem_size 1, 2, 4, 8 or 16), i < n. */
cudaError_t k_fill_pattern(int elem_size, const void *pattern, void *dst, int64_t n,
                           cudaStream_t stream);

/* dst[i] = v[i] for i < n <= 8 (the values travel as kernel arguments, so this
 * is safe in graph capture with host memory that does not outlive the call). */
cudaError_t k_write_i64(const int64_t *v, int n, int64_t *dst, cudaStream_t stream);

/* Range: dst[i] = *start + i * *delta, i < n; start and delta are device scalars
 * of `dtype` (k_dtype). Floats in double, integers wrap in 64 bits. */
cudaError_t k_range(int dtype, const void *start, const void *delta, void *dst, int64_t n,
                    cudaStream_t stream);

/* Trilu over batch x rows x cols: keeps j - i >= k (upper) or j - i <= k (lower),
 * zeros the rest. k is *k_dev (an int64 on the device) when k_dev is not NULL,
 * else 0. src may equal dst. */
cudaError_t k_trilu(int elem_size, int upper, const int64_t *k_dev, const void *src, void *dst,
                    int64_t batch, int64_t rows, int64_t cols, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
