/* conv_epilogue.h: FusedConv's epilogue when cuDNN cannot fuse it into the
 * convolution: y = act(y + bias[c] + z), in place, one pass over y. */
#ifndef INFER_K_CONV_EPILOGUE_H
#define INFER_K_CONV_EPILOGUE_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype K_F32 or K_F16. bias (C values) and z (count values) may be NULL. The
 * channel of element i is (i / inner) % channels: inner = H*W for NCHW, 1 for
 * channels-last (rows of channels, kernels/k_rows.cuh: 16-byte vectors, no division
 * per element; same bits as the general kernel). act: conv_act of ops/conv_fused.h (0 none, 1 relu, 2 clip(alpha,
 * beta), 3 leaky relu(alpha), 4 sigmoid, 5 tanh, 6 hard sigmoid(alpha, beta)). */
cudaError_t k_conv_epilogue(int dtype, void *y, const void *bias, const void *z, int64_t count,
                            int64_t channels, int64_t inner, int act, float alpha, float beta,
                            cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
