/* quantize.h: QuantizeLinear and DequantizeLinear on the device (ops/quant_linear.c
 * is the reference; ops/cuda/cuda_quantize.c the host side).
 *
 *   quantize:   y = saturate(round_half_even(x / scale) + zp)
 *   dequantize: y = (x - zp) * scale
 *
 * The parameter of element i (seen as outer x dim x inner around the axis) is at
 * base(o, a) + j * istep: per tensor 0, per axis a, blocked (o * sdim + a / block) *
 * inner + j (quant_layout in ops/quant_util.h). scale (float32, float16 or bfloat16)
 * and zp (uint8, int8, uint16, int16 or int32; NULL: zero) are device tensors of the
 * dtypes scale_dtype / zp_dtype, or, with params_in_args, the per-tensor scale0 / zp0. */
#ifndef INFER_K_QUANTIZE_H
#define INFER_K_QUANTIZE_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct k_quant_layout {
  int kind; /* 0 per tensor, 1 per axis, 2 blocked */
  int64_t dim, inner, block, sdim, istep;
  int64_t count; /* elements of x */
  int params_in_args; /* per tensor: scale0 and zp0 hold the parameters */
  float scale0;
  int32_t zp0;
  int scale_dtype, zp_dtype; /* k_dtype codes of the scale and zp tensors */
  int32_t lo, hi; /* quantize: the output dtype's range */
  int div_f16;    /* quantize: the quotient rounded to float16 (a float16 scale's precision) */
} k_quant_layout;

/* x: float32, float16, bfloat16 or int32 (k_dtype codes); y: uint8, int8, uint16 or
 * int16. cudaErrorInvalidValue for another pair. */
cudaError_t k_quantize(int x_dtype, const void *x, int y_dtype, void *y, const void *scale,
                       const void *zp, const k_quant_layout *l, cudaStream_t stream);
/* x: uint8, int8, uint16, int16 or int32; y: float32, float16 or bfloat16. */
cudaError_t k_dequantize(int x_dtype, const void *x, int y_dtype, void *y, const void *scale,
                         const void *zp, const k_quant_layout *l, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
