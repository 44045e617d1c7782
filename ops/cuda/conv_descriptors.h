/* conv_descriptors.h: the cuDNN descriptors of one convolution problem, forward
 * (Conv, FusedConv: cuda_conv.c) or transposed (ConvTranspose), and what both do
 * with them alike (ops/cuda/conv_descriptors.c). */
#ifndef INFER_CONV_DESCRIPTORS_H
#define INFER_CONV_DESCRIPTORS_H

#include "../../core/cuda_check.h"
#include "../cuda_op.h"

/* The cuDNN descriptors of one convolution problem, forward or transposed. For
 * ConvTranspose, x is our input (cuDNN's dy) and y our output (cuDNN's dx). */
typedef struct conv_descs {
  cudnnTensorDescriptor_t x, y, b; /* b: the bias, NULL without one */
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  bool is_double; /* scaling factors are double for double data, else float */
} conv_descs;

/* Destroys the descriptors that were created (the struct itself is the caller's). */
void conv_descs_release(conv_descs *d);

/* The 1 and 0 that cuDNN's alpha/beta point to, in the type it expects. */
extern const float conv_one_f, conv_zero_f;
extern const double conv_one_d, conv_zero_d;
#define DESCS_ONE(d) ((d)->is_double ? (const void *)&conv_one_d : (const void *)&conv_one_f)
#define DESCS_ZERO(d) ((d)->is_double ? (const void *)&conv_zero_d : (const void *)&conv_zero_f)

/* cuDNN's data type for dt (float32, float16, float64), else INFER_ERR_UNSUPPORTED. */
infer_status conv_data_type(infer_dtype dt, cudnnDataType_t *out);

/* Creates and sets d for an r-D problem (r >= 4; dims in logical N, C, spatial...
 * order; cl: the data is channels-last): tensors x (xd), y (yd), the filter (wd),
 * the convolution (symmetric pads, strides, dilations of the r - 2 spatial dims,
 * group) and, when `bias`, a 1 x C x 1... bias. Created descriptors stay in d on
 * failure (conv_descs_release frees them). */
infer_status conv_descs_make(conv_descs *d, const cuda_exec *ex, cudnnDataType_t dt, int r,
                             const int64_t *xd, const int64_t *wd, const int64_t *yd,
                             const int *pads, const int *strides, const int *dil,
                             int64_t group, bool bias, bool cl);

/* Enqueues y += bias (input 2) when d has a bias descriptor. */
infer_status conv_add_bias(const cuda_exec *x, const conv_descs *d, const tensor *const *in,
                           tensor *const *out);

#endif
