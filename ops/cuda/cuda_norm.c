/* cuda_norm.c: BatchNormalization (inference), InstanceNormalization,
 * GroupNormalization, LayerNormalization (with Mean / InvStdDev) and
 * RMSNormalization on the GPU (kernels/norm.cu).
 *
 * BatchNormalization becomes y = x * scale[c] + shift[c]. With constant
 * parameters (the usual case) scale and shift are computed once here, in double
 * from the host copies, into a small device buffer owned by the step; otherwise a
 * tiny kernel computes them into the workspace at each run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/norm.h"
#include "../cuda_op.h"
#include "../norm_params.h"

static int64_t round_up_256(int64_t b) { return (b + 255) / 256 * 256; }

/* ---- BatchNormalization --------------------------------------------------------- */

typedef struct bn_state {
  int64_t n, c, s;
  double eps;
  int param_dt; /* K_F32, or K_F64 for float64 data */
  int64_t esz;  /* bytes of one parameter element */
  void *dev;    /* scale[c] then shift[c] (constant parameters), or NULL */
} bn_state;

static void bn_release(void *p) {
  bn_state *s = p;
  if (!s) return;
  if (s->dev) cudaFree(s->dev);
  free(s);
}

static infer_status bn_prepare(const cuda_exec *x, const node *n, const void *params,
                               const tensor *const *in, const tensor *const *host_in,
                               tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *X = in[0];
  if (!dtype_is_float(X->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "BatchNormalization on the GPU: dtype %s is not supported",
                      infer_dtype_name(X->dtype));
  for (int k = 1; k < n->n_outputs; k++)
    if (out[k])
      return infer_fail(
          INFER_ERR_UNSUPPORTED,
          "BatchNormalization on the GPU: output %d (training statistics) is not supported", k);
  float eps = ((const batchnorm_params *)params)->epsilon;
  bn_state tmp;
  memset(&tmp, 0, sizeof tmp);
  if (X->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "BatchNormalization: X must have rank >= 1");
  tmp.n = X->dims[0];
  tmp.c = X->rank == 1 ? 1 : X->dims[1];
  tmp.s = X->rank <= 2 ? 1 : dims_count(X->rank - 2, X->dims + 2);
  tmp.eps = eps;
  tmp.param_dt = X->dtype == INFER_DTYPE_FLOAT64 ? K_F64 : K_F32;
  tmp.esz = tmp.param_dt == K_F64 ? 8 : 4;
  static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
  bool all_const = true;
  for (int k = 1; k < 5; k++) {
    if (!in[k] || !dtype_is_float(in[k]->dtype) || dims_count(in[k]->rank, in[k]->dims) != tmp.c)
      return infer_fail(INFER_ERR_INVALID_MODEL, "BatchNormalization: %s must hold %lld floats",
                        names[k], (long long)tmp.c);
    if (!host_in[k] || (tmp.c > 0 && !host_in[k]->data)) all_const = false;
  }
  if (all_const && tmp.c > 0) {
    int64_t bytes = 2 * tmp.c * tmp.esz;
    void *h = malloc((size_t)bytes);
    if (!h) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < tmp.c; i++) {
      double a = tensor_get_f64(host_in[1], i) / sqrt(tensor_get_f64(host_in[4], i) + (double)eps);
      double b = tensor_get_f64(host_in[2], i) - tensor_get_f64(host_in[3], i) * a;
      if (tmp.param_dt == K_F64) {
        ((double *)h)[i] = a;
        ((double *)h)[tmp.c + i] = b;
      } else {
        ((float *)h)[i] = (float)a;
        ((float *)h)[tmp.c + i] = (float)b;
      }
    }
    cudaError_t e = cudaMalloc(&tmp.dev, (size_t)bytes);
    if (e == cudaSuccess) e = cudaMemcpy(tmp.dev, h, (size_t)bytes, cudaMemcpyHostToDevice);
    free(h);
    if (e != cudaSuccess) {
      if (tmp.dev) cudaFree(tmp.dev);
      cudaGetLastError();
      return infer_fail(e == cudaErrorMemoryAllocation ? INFER_ERR_OUT_OF_MEMORY : INFER_ERR_DEVICE,
                        "BatchNormalization on the GPU: uploading scale/shift failed: %s",
                        cudaGetErrorString(e));
    }
  } else if (tmp.c > 0) {
    *ws_bytes = 2 * round_up_256(tmp.c * tmp.esz);
  }
  bn_state *s = malloc(sizeof *s);
  if (!s) {
    if (tmp.dev) cudaFree(tmp.dev);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  *s = tmp;
  *state = s;
  return INFER_OK;
}

static infer_status bn_run(const cuda_exec *x, const node *n, const void *params, const void *state,
                           const tensor *const *in, tensor *const *out) {
  const bn_state *s = state;
  cudaStream_t st = (cudaStream_t)x->stream;
  if (s->n * s->c * s->s == 0) return INFER_OK;
  const void *scale, *shift;
  if (s->dev) {
    scale = s->dev;
    shift = (const char *)s->dev + s->c * s->esz;
  } else {
    char *ws = x->ws;
    scale = ws;
    shift = ws + round_up_256(s->c * s->esz);
    CUDA_LAUNCH_TRY(k_bn_params(s->c, (int)in[1]->dtype, in[1]->data, (int)in[2]->dtype,
                                in[2]->data, (int)in[3]->dtype, in[3]->data, (int)in[4]->dtype,
                                in[4]->data, s->eps, s->param_dt, (void *)scale, (void *)shift,
                                st));
  }
  CUDA_LAUNCH_TRY(
      k_bn_apply((int)in[0]->dtype, s->n, s->c, s->s, in[0]->data, out[0]->data, scale, shift, st));
  return INFER_OK;
}

/* ---- row normalizations ------------------------------------------------------------ */

typedef struct rows_state {
  int64_t rows, len;
  k_norm_affine sa, ba;
  bool has_bias, rms;
  float eps;
  int mean_dt, inv_dt;
  bool has_mean, has_inv;
} rows_state;

static infer_status rows_state_new(const rows_state *tmp, void **state) {
  rows_state *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *s = *tmp;
  *state = s;
  return INFER_OK;
}

/* X is a float tensor and the affine inputs have its (storage) dtype. */
static infer_status rows_check_dtypes(const char *op, const tensor *const *in, int n_affine) {
  if (!dtype_is_float(in[0]->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                      infer_dtype_name(in[0]->dtype));
  for (int k = 1; k <= n_affine; k++)
    if (in[k] && in[k]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: input %d has dtype %s, X has %s", op,
                        k, infer_dtype_name(in[k]->dtype), infer_dtype_name(in[0]->dtype));
  return INFER_OK;
}

/* Instance (groups = 0) and Group normalization: rows are the (n, group) blocks. */
static infer_status group_prepare(const char *op, const node *n, const groupnorm_params *p,
                                  const tensor *const *in, void **state) {
  int64_t groups = p->groups;
  const tensor *X = in[0];
  TRY(rows_check_dtypes(op, in, 2));
  if (X->rank < 2) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: X must have rank >= 2", op);
  float eps = p->epsilon;
  int64_t c = X->dims[1], sp = dims_count(X->rank - 2, X->dims + 2);
  bool instance = groups == 0;
  if (instance) groups = c;
  if (groups <= 0 || c % groups != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %lld channels in %lld groups", op, (long long)c,
                      (long long)groups);
  int64_t cpg = c / groups;
  bool per_channel = instance || n->opset >= 21;
  int64_t aff_len = per_channel ? c : groups;
  for (int k = 1; k <= 2; k++)
    if (!in[k] || dims_count(in[k]->rank, in[k]->dims) != aff_len)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %d must hold %lld values", op, k,
                        (long long)aff_len);
  rows_state s;
  memset(&s, 0, sizeof s);
  s.rows = X->dims[0] * groups;
  s.len = cpg * sp;
  s.eps = eps;
  s.has_bias = true;
  s.sa.mode = K_AFF_GROUP;
  s.sa.groups = groups;
  s.sa.mul = per_channel ? cpg : 1;
  s.sa.s = sp > 0 ? sp : 1;
  s.sa.step = per_channel && cpg > 1 ? 1 : 0;
  s.ba = s.sa;
  return rows_state_new(&s, state);
}

static infer_status instnorm_prepare(const cuda_exec *x, const node *n, const void *params,
                                     const tensor *const *in, const tensor *const *host_in,
                                     tensor *const *out, void **state, int64_t *ws_bytes) {
  return group_prepare("InstanceNormalization", n, params, in, state);
}

static infer_status groupnorm_prepare(const cuda_exec *x, const node *n, const void *params,
                                      const tensor *const *in, const tensor *const *host_in,
                                      tensor *const *out, void **state, int64_t *ws_bytes) {
  return group_prepare("GroupNormalization", n, params, in, state);
}

/* Where Scale / B (broadcast unidirectionally to X) live for each row element. */
static infer_status layer_affine(const char *op, const tensor *t, const tensor *X, int axis,
                                 int64_t inner, k_norm_affine *a) {
  memset(a, 0, sizeof *a);
  if (t->rank > X->rank)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: a parameter has a higher rank than X", op);
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i], xd = X->dims[X->rank - t->rank + i];
    if (d != 1 && d != xd)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: a parameter does not broadcast to X", op);
  }
  int64_t strides[INFER_MAX_RANK];
  broadcast_strides(t->rank, t->dims, X->rank, strides);
  bool outer_zero = true;
  for (int i = 0; i < axis; i++) outer_zero = outer_zero && strides[i] == 0;
  if (outer_zero && dims_count(t->rank, t->dims) == inner) {
    a->mode = K_AFF_DENSE;
    return INFER_OK;
  }
  a->mode = K_AFF_BCAST;
  a->rank = X->rank;
  for (int i = 0; i < X->rank; i++) {
    a->dims[i] = X->dims[i];
    a->strides[i] = strides[i];
  }
  return INFER_OK;
}

static bool stat_dtype_ok(infer_dtype dt) { return dtype_is_float(dt); }

static infer_status layer_prepare_common(const char *op, bool rms, const node *n,
                                         const tensor *const *in, tensor *const *out,
                                         void **state) {
  const tensor *X = in[0];
  bool has_bias = !rms && n->n_inputs > 2 && in[2];
  TRY(rows_check_dtypes(op, in, has_bias ? 2 : 1));
  const layernorm_params *lp = n->params;
  int64_t axis_attr = lp->axis;
  float eps = lp->epsilon;
  int axis;
  TRY(axis_normalize(axis_attr, X->rank, "axis", &axis));
  rows_state s;
  memset(&s, 0, sizeof s);
  s.rows = dims_count(axis, X->dims);
  s.len = dims_count(X->rank - axis, X->dims + axis);
  s.eps = eps;
  s.rms = rms;
  s.has_bias = has_bias;
  if (!in[1]) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: Scale is missing", op);
  TRY(layer_affine(op, in[1], X, axis, s.len, &s.sa));
  if (has_bias) TRY(layer_affine(op, in[2], X, axis, s.len, &s.ba));
  if (!rms) {
    if (n->n_outputs > 1 && out[1]) {
      if (!stat_dtype_ok(out[1]->dtype))
        return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: Mean dtype %s", op,
                          infer_dtype_name(out[1]->dtype));
      s.has_mean = true;
      s.mean_dt = (int)out[1]->dtype;
    }
    if (n->n_outputs > 2 && out[2]) {
      if (!stat_dtype_ok(out[2]->dtype))
        return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: InvStdDev dtype %s", op,
                          infer_dtype_name(out[2]->dtype));
      s.has_inv = true;
      s.inv_dt = (int)out[2]->dtype;
    }
  }
  return rows_state_new(&s, state);
}

static infer_status layernorm_prepare(const cuda_exec *x, const node *n, const void *params,
                                      const tensor *const *in, const tensor *const *host_in,
                                      tensor *const *out, void **state, int64_t *ws_bytes) {
  return layer_prepare_common("LayerNormalization", false, n, in, out, state);
}

static infer_status rmsnorm_prepare(const cuda_exec *x, const node *n, const void *params,
                                    const tensor *const *in, const tensor *const *host_in,
                                    tensor *const *out, void **state, int64_t *ws_bytes) {
  return layer_prepare_common("RMSNormalization", true, n, in, out, state);
}

static infer_status rows_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const rows_state *s = state;
  CUDA_LAUNCH_TRY(k_norm_rows(
      (int)in[0]->dtype, s->rows, s->len, in[0]->data, out[0]->data, in[1]->data, &s->sa,
      s->has_bias ? in[2]->data : NULL, &s->ba, s->mean_dt, s->has_mean ? out[1]->data : NULL,
      s->inv_dt, s->has_inv ? out[2]->data : NULL, s->eps, s->rms, (cudaStream_t)x->stream));
  return INFER_OK;
}

static const cuda_op cuda_batchnorm = {
    .name = "BatchNormalization", .prepare = bn_prepare, .run = bn_run, .release = bn_release};
static const cuda_op cuda_instnorm = {
    .name = "InstanceNormalization", .prepare = instnorm_prepare, .run = rows_run};
static const cuda_op cuda_groupnorm = {
    .name = "GroupNormalization", .prepare = groupnorm_prepare, .run = rows_run};
static const cuda_op cuda_layernorm = {
    .name = "LayerNormalization", .prepare = layernorm_prepare, .run = rows_run};
static const cuda_op cuda_rmsnorm = {
    .name = "RMSNormalization", .prepare = rmsnorm_prepare, .run = rows_run};

const cuda_op *const cuda_ops_norm[] = {&cuda_batchnorm, &cuda_instnorm, &cuda_groupnorm,
                                        &cuda_layernorm, &cuda_rmsnorm,  NULL};
