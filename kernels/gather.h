/* gather.h: Gather and GatherElements by element size (any dtype).
 *
 * Indices (int32 or int64, k_dtype codes) live on the device and may be negative
 * (counted from the back). An index outside [-dim, dim) cannot be reported from a
 * kernel without a host read, so the element it selects is written as zero bytes
 * and nothing outside the data is read (the CPU backend reports the error). */
#ifndef INFER_K_GATHER_H
#define INFER_K_GATHER_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* data viewed as [outer, dim, inner] (inner in elements of elem_size bytes);
 * dst[o, j, :] = data[o, idx[j], :] for j < count. */
cudaError_t k_gather(int64_t elem_size, const void *data, int idx_dtype, const void *idx,
                     void *dst, int64_t outer, int64_t dim, int64_t count, int64_t inner,
                     cudaStream_t stream);

/* dst has idx's shape (rank <= 8, same rank as data, idx_dims[d] <= data_dims[d]
 * off the axis): dst[p] = data[p with p[axis] = idx[p]]. elem_size 1, 2, 4 or 8. */
cudaError_t k_gather_elements(int elem_size, int rank, const int64_t *data_dims,
                              const int64_t *idx_dims, int axis, const void *data, int idx_dtype,
                              const void *idx, void *dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
