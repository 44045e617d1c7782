/* cudnn_backend_util.c: descriptor builders over cuDNN's backend (graph) API
 * (see cudnn_backend_util.h). Attribute names and element types are those of
 * cudnn_graph_v9.h; each builder finalizes what it returns. */
#include "cudnn_backend_util.h"

#include "../../core/cuda_check.h"
#include "cuda_timing.h"

#define BE_SET(d, name, type, count, value) \
  CUDNN_TRY(cudnnBackendSetAttribute((d), (name), (type), (count), (value)))

/* A failed call on a path that cleans up before returning. */
static infer_status be_fail(cudnnStatus_t cs, const char *what) {
  return infer_fail(CUDNN_STATUS_CATEGORY(cs) == CUDNN_STATUS_NOT_SUPPORTED ? INFER_ERR_UNSUPPORTED
                                                                           : INFER_ERR_DEVICE,
                    "cuDNN backend: %s failed: %s", what, cudnnGetErrorString(cs));
}

infer_status be_create(be_pool *p, cudnnBackendDescriptorType_t type,
                       cudnnBackendDescriptor_t *out) {
  *out = NULL;
  if (p->n >= BE_POOL_MAX)
    return infer_fail(INFER_ERR_INTERNAL, "cuDNN backend: more than %d descriptors", BE_POOL_MAX);
  CUDNN_TRY(cudnnBackendCreateDescriptor(type, out));
  p->d[p->n++] = *out;
  return INFER_OK;
}

void be_pool_release(be_pool *p) {
  while (p->n > 0) cudnnBackendDestroyDescriptor(p->d[--p->n]);
}

infer_status be_tensor_strided(be_pool *p, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
                               const int64_t *strides, bool is_virtual, bool by_value,
                               int64_t align, cudnnBackendDescriptor_t *out) {
  TRY(be_create(p, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out));
  cudnnBackendDescriptor_t t = *out;
  BE_SET(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
  BE_SET(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  BE_SET(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  BE_SET(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  BE_SET(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
  BE_SET(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  if (by_value) BE_SET(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
  CUDNN_TRY(cudnnBackendFinalize(t));
  return INFER_OK;
}

infer_status be_tensor(be_pool *p, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
                       bool channels_last, bool is_virtual, int64_t align,
                       cudnnBackendDescriptor_t *out) {
  int64_t st[4];
  if (channels_last) { /* memory N, H, W, C */
    st[1] = 1;
    st[3] = dims[1];
    st[2] = dims[3] * dims[1];
    st[0] = dims[2] * st[2];
  } else {             /* memory N, C, H, W */
    st[3] = 1;
    st[2] = dims[3];
    st[1] = dims[2] * dims[3];
    st[0] = dims[1] * st[1];
  }
  return be_tensor_strided(p, uid, dt, dims, st, is_virtual, false, align, out);
}

infer_status be_matmul(be_pool *p, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                       cudnnBackendDescriptor_t c, cudnnDataType_t comp,
                       cudnnBackendDescriptor_t *op) {
  cudnnBackendDescriptor_t md;
  TRY(be_create(p, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &md));
  BE_SET(md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
  CUDNN_TRY(cudnnBackendFinalize(md));
  TRY(be_create(p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, op));
  BE_SET(*op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
  BE_SET(*op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  BE_SET(*op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
  BE_SET(*op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &md);
  CUDNN_TRY(cudnnBackendFinalize(*op));
  return INFER_OK;
}

infer_status be_reduction(be_pool *p, cudnnReduceTensorOp_t red, cudnnDataType_t comp,
                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                          cudnnBackendDescriptor_t *op) {
  cudnnBackendDescriptor_t rd;
  TRY(be_create(p, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &rd));
  BE_SET(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
  BE_SET(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &red);
  CUDNN_TRY(cudnnBackendFinalize(rd));
  TRY(be_create(p, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, op));
  BE_SET(*op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  BE_SET(*op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  BE_SET(*op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd);
  CUDNN_TRY(cudnnBackendFinalize(*op));
  return INFER_OK;
}

infer_status be_conv_fwd(be_pool *p, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w,
                         cudnnBackendDescriptor_t y, const int64_t *pad, const int64_t *stride,
                         const int64_t *dil, cudnnDataType_t comp, cudnnBackendDescriptor_t *op) {
  cudnnBackendDescriptor_t cd;
  int64_t nsp = 2;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  TRY(be_create(p, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &cd));
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp);
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, pad);
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, pad);
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, dil);
  BE_SET(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, stride);
  CUDNN_TRY(cudnnBackendFinalize(cd));
  float alpha = 1, beta = 0;
  TRY(be_create(p, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, op));
  BE_SET(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  BE_SET(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
  BE_SET(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  BE_SET(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
         1, &cd);
  BE_SET(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
  BE_SET(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  CUDNN_TRY(cudnnBackendFinalize(*op));
  return INFER_OK;
}

/* The pointwise operation around descriptor pw (alpha2 only for a second operand). */
static infer_status pw_operation(be_pool *p, cudnnBackendDescriptor_t pw,
                                 cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                                 cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                                 cudnnBackendDescriptor_t *op) {
  float one = 1;
  TRY(be_create(p, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op));
  BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
  BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  if (b) BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  if (t) BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t);
  BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
  if (b) BE_SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
  CUDNN_TRY(cudnnBackendFinalize(*op));
  return INFER_OK;
}

infer_status be_pointwise(be_pool *p, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                          double param, cudnnBackendDescriptor_t x,
                          cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y,
                          cudnnBackendDescriptor_t *op) {
  cudnnBackendDescriptor_t pw;
  TRY(be_create(p, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
  BE_SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  BE_SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
  if (mode == CUDNN_POINTWISE_RELU_FWD) {
    double lower = 0, slope = 0;
    BE_SET(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, 1, &lower);
    BE_SET(pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, 1, &param);
    BE_SET(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &slope);
  } else if (mode == CUDNN_POINTWISE_SWISH_FWD) {
    BE_SET(pw, CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_DOUBLE, 1, &param);
  }
  CUDNN_TRY(cudnnBackendFinalize(pw));
  return pw_operation(p, pw, x, b, NULL, y, op);
}

infer_status be_pointwise_ext(be_pool *p, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                              int64_t axis, cudnnBackendDescriptor_t x,
                              cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                              cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op) {
  cudnnBackendDescriptor_t pw;
  TRY(be_create(p, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
  BE_SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  BE_SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
  if (axis >= 0) BE_SET(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
  CUDNN_TRY(cudnnBackendFinalize(pw));
  return pw_operation(p, pw, x, b, t, y, op);
}

infer_status be_graph(be_pool *p, cudnnHandle_t h, const cudnnBackendDescriptor_t *ops,
                      int n_ops, cudnnBackendDescriptor_t *out) {
  TRY(be_create(p, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, out));
  BE_SET(*out, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops);
  /* deprecated in cuDNN 9 but still taken; engines then know the device */
  BE_SET(*out, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  CUDNN_TRY(cudnnBackendFinalize(*out));
  return INFER_OK;
}

infer_status be_heuristics(cudnnBackendDescriptor_t g, cudnnBackendHeurMode_t mode, int cap,
                           cudnnBackendDescriptor_t *cfgs, int *n) {
  *n = 0;
  cudnnBackendDescriptor_t heur = NULL;
  const char *what = "cudnnBackendCreateDescriptor(ENGINEHEUR)";
  cudnnStatus_t cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "setting CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH";
    cs = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "setting CUDNN_ATTR_ENGINEHEUR_MODE";
    cs = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "cudnnBackendFinalize(ENGINEHEUR)";
    cs = cudnnBackendFinalize(heur);
  }
  int64_t count = 0;
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "counting CUDNN_ATTR_ENGINEHEUR_RESULTS";
    cs = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL);
  }
  if (count > cap) count = cap;
  if (count < 0) count = 0;
  int made = 0;
  while (cs == CUDNN_STATUS_SUCCESS && made < count) {
    what = "cudnnBackendCreateDescriptor(ENGINECFG)";
    cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[made]);
    if (cs == CUDNN_STATUS_SUCCESS) made++;
  }
  int64_t got = 0;
  if (cs == CUDNN_STATUS_SUCCESS && count > 0) {
    what = "getting CUDNN_ATTR_ENGINEHEUR_RESULTS";
    cs = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs);
  }
  if (cs != CUDNN_STATUS_SUCCESS || got < 0) got = 0;
  if (got > made) got = made;
  for (int i = (int)got; i < made; i++) cudnnBackendDestroyDescriptor(cfgs[i]);
  if (heur) cudnnBackendDestroyDescriptor(heur);
  if (cs != CUDNN_STATUS_SUCCESS) return be_fail(cs, what);
  *n = (int)got;
  return INFER_OK;
}

/* Bit k of the mask: note value k among notes[0..n). */
static uint32_t note_mask(const int *notes, int64_t n) {
  uint32_t mask = 0;
  for (int64_t i = 0; i < n; i++)
    if (notes[i] >= 0 && notes[i] < 32) mask |= 1u << notes[i];
  return mask;
}

infer_status be_config_notes(cudnnBackendDescriptor_t cfg, uint32_t *numerical,
                             uint32_t *behavior) {
  cudnnBackendDescriptor_t e = NULL;
  int64_t n = 0;
  *numerical = *behavior = 0;
  const char *what = "cudnnBackendCreateDescriptor(ENGINE)";
  cudnnStatus_t cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e);
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "getting CUDNN_ATTR_ENGINECFG_ENGINE";
    cs = cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                  1, &n, &e);
  }
  cudnnBackendNumericalNote_t num[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  cudnnBackendBehaviorNote_t beh[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  int nums[CUDNN_NUMERICAL_NOTE_TYPE_COUNT], behs[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  int64_t n_num = 0, n_beh = 0;
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "getting CUDNN_ATTR_ENGINE_NUMERICAL_NOTE";
    cs = cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                  CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n_num, num);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "getting CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE";
    cs = cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                  CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n_beh, beh);
  }
  if (n_num > CUDNN_NUMERICAL_NOTE_TYPE_COUNT) n_num = CUDNN_NUMERICAL_NOTE_TYPE_COUNT;
  if (n_beh > CUDNN_BEHAVIOR_NOTE_TYPE_COUNT) n_beh = CUDNN_BEHAVIOR_NOTE_TYPE_COUNT;
  for (int64_t i = 0; cs == CUDNN_STATUS_SUCCESS && i < n_num; i++) nums[i] = (int)num[i];
  for (int64_t i = 0; cs == CUDNN_STATUS_SUCCESS && i < n_beh; i++) behs[i] = (int)beh[i];
  if (cs == CUDNN_STATUS_SUCCESS) {
    *numerical = note_mask(nums, n_num);
    *behavior = note_mask(behs, n_beh);
  }
  if (e) cudnnBackendDestroyDescriptor(e);
  return cs == CUDNN_STATUS_SUCCESS ? INFER_OK : be_fail(cs, what);
}

infer_status be_plan(cudnnHandle_t h, cudnnBackendDescriptor_t cfg,
                     cudnnBackendDescriptor_t *plan, int64_t *ws_bytes) {
  cudnnBackendDescriptor_t pl = NULL;
  int64_t n = 0, ws = -1;
  *plan = NULL;
  const char *what = "cudnnBackendCreateDescriptor(EXECUTION_PLAN)";
  cudnnStatus_t cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &pl);
  if (cs == CUDNN_STATUS_SUCCESS) { /* deprecated in cuDNN 9 but still taken */
    what = "setting CUDNN_ATTR_EXECUTION_PLAN_HANDLE";
    cs = cudnnBackendSetAttribute(pl, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "setting CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG";
    cs = cudnnBackendSetAttribute(pl, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "cudnnBackendFinalize(EXECUTION_PLAN)";
    cs = cudnnBackendFinalize(pl);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "getting CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE";
    cs = cudnnBackendGetAttribute(pl, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                  1, &n, &ws);
  }
  if (cs == CUDNN_STATUS_SUCCESS && (n != 1 || ws < 0)) {
    if (pl) cudnnBackendDestroyDescriptor(pl);
    return infer_fail(INFER_ERR_DEVICE, "cuDNN backend: a plan reports no workspace size");
  }
  if (cs != CUDNN_STATUS_SUCCESS) {
    if (pl) cudnnBackendDestroyDescriptor(pl);
    return be_fail(cs, what);
  }
  *plan = pl;
  *ws_bytes = ws;
  return INFER_OK;
}

infer_status be_execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, int n,
                        const int64_t *uids, void *const *ptrs, void *ws) {
  cudnnBackendDescriptor_t vp = NULL;
  const char *what = "cudnnBackendCreateDescriptor(VARIANT_PACK)";
  cudnnStatus_t cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "setting CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS";
    cs = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
                                  uids);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "setting CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS";
    cs = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                  n, ptrs);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "setting CUDNN_ATTR_VARIANT_PACK_WORKSPACE";
    cs = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                  &ws);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "cudnnBackendFinalize(VARIANT_PACK)";
    cs = cudnnBackendFinalize(vp);
  }
  if (cs == CUDNN_STATUS_SUCCESS) {
    what = "cudnnBackendExecute";
    cs = cudnnBackendExecute(h, plan, vp);
  }
  if (vp) cudnnBackendDestroyDescriptor(vp);
  return cs == CUDNN_STATUS_SUCCESS ? INFER_OK : be_fail(cs, what);
}

typedef struct be_run {
  cudnnHandle_t h;
  cudnnBackendDescriptor_t plan;
  int n;
  const int64_t *uids;
  void *const *ptrs;
  void *ws;
} be_run;

static bool be_run_once(void *ctx) {
  const be_run *r = ctx;
  return be_execute(r->h, r->plan, r->n, r->uids, r->ptrs, r->ws) == INFER_OK;
}

float be_time(cudnnHandle_t h, void *stream, cudnnBackendDescriptor_t plan, int n,
              const int64_t *uids, void *const *ptrs, void *ws) {
  be_run r = {h, plan, n, uids, ptrs, ws};
  return cuda_time_runs(stream, be_run_once, &r);
}
