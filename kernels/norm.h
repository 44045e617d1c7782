/* norm.h: BatchNormalization (inference), and row normalizations on the device:
 * InstanceNormalization, GroupNormalization, LayerNormalization, RMSNormalization.
 * Statistics accumulate in float (double for float64), two passes (mean, then the
 * mean squared deviation). */
#ifndef INFER_K_NORM_H
#define INFER_K_NORM_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "k_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-channel scale = gamma / sqrt(var + eps), shift = beta - mean * scale for c
 * channels, from four float vectors of any float dtype; out_dt is K_F32 or K_F64
 * (the dtype of out_scale and out_shift). */
cudaError_t k_bn_params(int64_t c, int gamma_dt, const void *gamma, int beta_dt, const void *beta,
                        int mean_dt, const void *mean, int var_dt, const void *var, double eps,
                        int out_dt, void *out_scale, void *out_shift, cudaStream_t stream);

/* y = x * scale[ch] + shift[ch] for x of n x c x s (ch the middle index); scale and
 * shift are float (double when dtype is float64). float32/16, bfloat16, float64. */
cudaError_t k_bn_apply(int dtype, int64_t n, int64_t c, int64_t s, const void *x, void *y,
                       const void *scale, const void *shift, cudaStream_t stream);
/* k_bn_apply then act: 0 none, 1 Relu (applied to the stored value as the Relu op does:
 * x < 0 ? 0 : x, NaN passes), so one pass gives the bits of BatchNormalization followed
 * by Relu. s = 1 (channels-last data as [n, c], or 2-D input) runs a vectorized kernel
 * without a division per element; same bits as the general one. */
cudaError_t k_bn_apply_act(int dtype, int64_t n, int64_t c, int64_t s, const void *x, void *y,
                           const void *scale, const void *shift, int act, cudaStream_t stream);

/* Where a row's affine parameter (Scale or B) lives for in-row element i of row r. */
enum k_aff_mode {
  K_AFF_DENSE = 0, /* i */
  K_AFF_GROUP = 1, /* (r % groups) * mul + (i / s) * step */
  K_AFF_BCAST = 2  /* x's flat index r * len + i mapped through x's dims to the
                      parameter's strides (0 on broadcast dims) */
};
typedef struct k_norm_affine {
  int mode;
  int64_t groups, mul, s, step;
  int rank;
  int64_t dims[K_MAX_RANK], strides[K_MAX_RANK];
} k_norm_affine;

/* Normalizes each of `rows` contiguous rows of `len` elements:
 *   y = (x - mean) / sqrt(var + eps) * scale + bias     (rms = 0)
 *   y = x / sqrt(mean(x^2) + eps) * scale + bias        (rms = 1)
 * scale / bias (x's dtype) may be NULL (1 / 0), their affine descriptors are then
 * ignored. mean_out / inv_out (may be NULL) get the row mean and 1/sqrt(var + eps)
 * in float dtype mean_dt / inv_dt. x: float32/16, bfloat16, float64. */
cudaError_t k_norm_rows(int dtype, int64_t rows, int64_t len, const void *x, void *y,
                        const void *scale, const k_norm_affine *scale_aff, const void *bias,
                        const k_norm_affine *bias_aff, int mean_dt, void *mean_out, int inv_dt,
                        void *inv_out, float eps, int rms, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
