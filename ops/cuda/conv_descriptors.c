/* conv_descriptors.c: the cuDNN descriptors of one convolution problem
 * (conv_descriptors.h). */
#include "conv_descriptors.h"

void conv_descs_release(conv_descs *d) {
  if (d->x) cudnnDestroyTensorDescriptor(d->x);
  if (d->y) cudnnDestroyTensorDescriptor(d->y);
  if (d->b) cudnnDestroyTensorDescriptor(d->b);
  if (d->w) cudnnDestroyFilterDescriptor(d->w);
  if (d->conv) cudnnDestroyConvolutionDescriptor(d->conv);
}

/* The 1 and 0 that cuDNN's alpha/beta point to, in the type it expects. */
const float conv_one_f = 1, conv_zero_f = 0;
const double conv_one_d = 1, conv_zero_d = 0;

infer_status conv_data_type(infer_dtype dt, cudnnDataType_t *out) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32: *out = CUDNN_DATA_FLOAT; return INFER_OK;
    case INFER_DTYPE_FLOAT16: *out = CUDNN_DATA_HALF; return INFER_OK;
    case INFER_DTYPE_FLOAT64: *out = CUDNN_DATA_DOUBLE; return INFER_OK;
    default:
      return infer_fail(INFER_ERR_UNSUPPORTED, "Conv on the GPU: dtype %s is not supported",
                        infer_dtype_name(dt));
  }
}

/* dims are logical N, C, spatial...; channels_last: the data is N, spatial..., C. */
static infer_status set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int rank,
                               const int64_t *dims, bool channels_last) {
  int di[8], st[8], order[8]; /* order: dims from the fastest-varying in memory */
  int no = 0;
  if (channels_last) order[no++] = 1;
  for (int i = rank - 1; i >= 2; i--) order[no++] = i;
  if (!channels_last) order[no++] = 1;
  order[no++] = 0;
  int64_t s = 1;
  for (int k = 0; k < rank; k++) {
    int i = order[k];
    if (dims[i] > INT32_MAX || s > INT32_MAX)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Conv on the GPU: tensor too large for cuDNN");
    di[i] = (int)dims[i];
    st[i] = (int)s;
    s *= dims[i];
  }
  CUDNN_TRY(cudnnSetTensorNdDescriptor(d, dt, rank, di, st));
  return INFER_OK;
}

/* Creates and sets the descriptors: NCHW tensors x (xd), y (yd), filter (wd) and,
 * when `bias`, a 1 x C x 1... bias; a cross-correlation with fp32 accumulation for
 * half data and FMA math (no TF32) when fp32 precision was asked for. */
infer_status conv_descs_make(conv_descs *d, const cuda_exec *ex, cudnnDataType_t dt, int r,
                             const int64_t *xd, const int64_t *wd, const int64_t *yd,
                             const int *pads, const int *strides, const int *dil,
                             int64_t group, bool bias, bool cl) {
  d->is_double = dt == CUDNN_DATA_DOUBLE;
  CUDNN_TRY(cudnnCreateTensorDescriptor(&d->x));
  CUDNN_TRY(cudnnCreateTensorDescriptor(&d->y));
  CUDNN_TRY(cudnnCreateFilterDescriptor(&d->w));
  CUDNN_TRY(cudnnCreateConvolutionDescriptor(&d->conv));
  TRY(set_tensor(d->x, dt, r, xd, cl));
  TRY(set_tensor(d->y, dt, r, yd, cl));
  int wdi[5];
  for (int i = 0; i < r; i++) wdi[i] = (int)wd[i];
  CUDNN_TRY(cudnnSetFilterNdDescriptor(d->w, dt, cl ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, r,
                                       wdi));
  CUDNN_TRY(cudnnSetConvolutionNdDescriptor(d->conv, r - 2, pads, strides, dil,
                                            CUDNN_CROSS_CORRELATION,
                                            dt == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : dt));
  CUDNN_TRY(cudnnSetConvolutionGroupCount(d->conv, (int)group));
  CUDNN_TRY(cudnnSetConvolutionMathType(
      d->conv, ex->precision == INFER_PRECISION_FP32 && dt == CUDNN_DATA_FLOAT
                   ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
  if (bias) {
    int64_t bd[5] = {1, yd[1], 1, 1, 1};
    CUDNN_TRY(cudnnCreateTensorDescriptor(&d->b));
    TRY(set_tensor(d->b, dt, r, bd, false));
  }
  return INFER_OK;
}

/* y += bias, when the node has one. */
infer_status conv_add_bias(const cuda_exec *x, const conv_descs *d, const tensor *const *in,
                           tensor *const *out) {
  if (d->b)
    CUDNN_TRY(cudnnAddTensor(x->cudnn, DESCS_ONE(d), d->b, in[2]->data, DESCS_ONE(d), d->y,
                             out[0]->data));
  return INFER_OK;
}
