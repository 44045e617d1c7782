/* cast.h: element type conversion on the device. */
#ifndef INFER_K_CAST_H
#define INFER_K_CAST_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = (dst type) src[i] for i < n, any pair of k_dtype codes. Float -> int
 * saturates (NaN -> 0); -> bool is (v != 0). cudaErrorInvalidValue for an
 * unknown code. */
cudaError_t k_cast(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n,
                   cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
