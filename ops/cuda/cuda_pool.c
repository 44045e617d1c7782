/* cuda_pool.c: MaxPool (with the optional Indices output), AveragePool,
 * GlobalAveragePool, GlobalMaxPool and LRN on the GPU. The attributes are the CPU
 * op's params (ops/pool_params.h); window geometry comes from ops/conv_util.h at
 * prepare time, exactly as the CPU op computes it; the kernels are in
 * kernels/pool.cu (global pooling is a row reduction, kernels/reduce.cu).
 * MaxPool / AveragePool with channels_last = 1 (written by the to-channels-last
 * pass; X and Y N x H x W x C, 2-D, no Indices) run the channels-last kernels. */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/pool.h"
#include "../../kernels/reduce.h"
#include "../cuda_op.h"
#include "../pool_params.h"

typedef struct pool_state {
  k_pool_geom g;
  int64_t planes;
  int col_major, include_pad;
  bool channels_last;
  int64_t n, c; /* channels_last: batch and channels */
} pool_state;

static bool pool_dtype_ok(infer_dtype dt, bool is_max) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32:
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16:
    case INFER_DTYPE_FLOAT64: return true;
    case INFER_DTYPE_INT8:
    case INFER_DTYPE_UINT8: return is_max;
    default: return false;
  }
}

/* p: the CPU op's params (ops/pool_params.h). */
static infer_status pool_prepare(const char *op, bool is_max, const node *n, const pool_params *p,
                                 const tensor *const *in, tensor *const *out, void **state) {
  const tensor *x = in[0];
  if (!pool_dtype_ok(x->dtype, is_max))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                      infer_dtype_name(x->dtype));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", op);
  int64_t cl = p->channels_last;
  if (cl) {
    if (x->rank != 4 || out[0]->rank != 4)
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: channels_last = 1 supports 2-D "
                        "pooling only (4-D N x H x W x C data)", op);
    if (!dtype_is_float(x->dtype))
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: channels_last = 1 with dtype %s "
                        "is not supported", op, infer_dtype_name(x->dtype));
    if (n->n_outputs > 1 && out[1])
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: channels_last = 1 has no Indices "
                        "output", op);
  }
  /* spatial dims of X and Y: after N, C (NCHW) or after N (channels-last) */
  const int64_t *xsp = x->dims + (cl ? 1 : 2), *ysp = out[0]->dims + (cl ? 1 : 2);
  int nsp = x->rank - 2;
  if (nsp < 1 || nsp > WIN_MAX_SPATIAL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: %d spatial dims (supported: 1 to %d)",
                      op, nsp, WIN_MAX_SPATIAL);
  const win_attrs *w = &p->w;
  if (w->n_kernel != nsp)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: kernel_shape has %d entries, the input %d spatial dims", op, w->n_kernel,
                      nsp);
  /* MaxPool has no count_include_pad, AveragePool no storage_order */
  int64_t include_pad = is_max ? 0 : p->count_include_pad;
  int64_t storage_order = is_max ? p->storage_order : 0;
  win_geom g;
  TRY(win_geom_forward(w, nsp, xsp, w->kernel, p->ceil_mode != 0, op, &g));
  for (int i = 0; i < nsp; i++)
    if (ysp[i] != g.out[3 - nsp + i])
      return infer_fail(INFER_ERR_INTERNAL,
                        "%s on the GPU: output spatial dim %d is %lld, the geometry gives %lld",
                        op, i, (long long)ysp[i], (long long)g.out[3 - nsp + i]);
  if (cl && (out[0]->dims[0] != x->dims[0] || out[0]->dims[3] != x->dims[3]))
    return infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: channels-last output N or C differs "
                      "from the input's", op);
  pool_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int j = 0; j < 3; j++) {
    s->g.in[j] = g.in[j];
    s->g.k[j] = g.k[j];
    s->g.s[j] = g.s[j];
    s->g.d[j] = g.d[j];
    s->g.pb[j] = g.pb[j];
    s->g.pe[j] = g.pe[j];
    s->g.out[j] = g.out[j];
  }
  s->channels_last = cl != 0;
  s->n = x->dims[0];
  s->c = cl ? x->dims[3] : x->dims[1];
  s->planes = s->n * s->c;
  s->col_major = storage_order == 1;
  s->include_pad = include_pad != 0;
  *state = s;
  return INFER_OK;
}

static infer_status maxpool_prepare(const cuda_exec *x, const node *n, const void *params,
                                    const tensor *const *in, const tensor *const *host_in,
                                    tensor *const *out, void **state, int64_t *ws_bytes) {
  if (n->n_outputs > 1 && out[1] && out[1]->dtype != INFER_DTYPE_INT64)
    return infer_fail(INFER_ERR_INTERNAL, "MaxPool on the GPU: Indices must be int64");
  return pool_prepare("MaxPool", true, n, params, in, out, state);
}

static infer_status maxpool_run(const cuda_exec *x, const node *n, const void *params,
                                const void *state, const tensor *const *in, tensor *const *out) {
  const pool_state *s = state;
  if (s->channels_last) {
    CUDA_LAUNCH_TRY(k_maxpool_nhwc((int)in[0]->dtype, &s->g, s->n, s->c, in[0]->data,
                                   out[0]->data, (cudaStream_t)x->stream));
    return INFER_OK;
  }
  int64_t *idx = (n->n_outputs > 1 && out[1]) ? out[1]->data : NULL;
  CUDA_LAUNCH_TRY(k_maxpool((int)in[0]->dtype, &s->g, s->planes, in[0]->data, out[0]->data, idx,
                            s->col_major, (cudaStream_t)x->stream));
  return INFER_OK;
}

static infer_status avgpool_prepare(const cuda_exec *x, const node *n, const void *params,
                                    const tensor *const *in, const tensor *const *host_in,
                                    tensor *const *out, void **state, int64_t *ws_bytes) {
  return pool_prepare("AveragePool", false, n, params, in, out, state);
}

static infer_status avgpool_run(const cuda_exec *x, const node *n, const void *params,
                                const void *state, const tensor *const *in, tensor *const *out) {
  const pool_state *s = state;
  if (s->channels_last) {
    CUDA_LAUNCH_TRY(k_avgpool_nhwc((int)in[0]->dtype, &s->g, s->n, s->c, in[0]->data,
                                   out[0]->data, s->include_pad, (cudaStream_t)x->stream));
    return INFER_OK;
  }
  CUDA_LAUNCH_TRY(k_avgpool((int)in[0]->dtype, &s->g, s->planes, in[0]->data, out[0]->data,
                            s->include_pad, (cudaStream_t)x->stream));
  return INFER_OK;
}

/* ---- global pooling: a reduction of each (n, c) plane ------------------------------ */

typedef struct global_state {
  int64_t planes, size;
  bool is_max;
} global_state;

static infer_status global_prepare(const char *op, bool is_max, const tensor *const *in,
                                   void **state) {
  const tensor *x = in[0];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                      infer_dtype_name(x->dtype));
  if (x->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: the input must have rank >= 2", op);
  global_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  s->planes = x->dims[0] * x->dims[1];
  s->size = dims_count(x->rank - 2, x->dims + 2);
  s->is_max = is_max;
  *state = s;
  return INFER_OK;
}

static infer_status gap_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  return global_prepare("GlobalAveragePool", false, in, state);
}

static infer_status gmp_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  return global_prepare("GlobalMaxPool", true, in, state);
}

static infer_status global_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const global_state *s = state;
  if (s->planes == 0) return INFER_OK;
  if (s->size == 0 && !s->is_max) { /* the CPU's mean of an empty plane is 0 */
    CUDA_TRY(
        cudaMemsetAsync(out[0]->data, 0, (size_t)tensor_nbytes(out[0]), (cudaStream_t)x->stream));
    return INFER_OK;
  }
  CUDA_LAUNCH_TRY(k_reduce_3d((int)in[0]->dtype, s->is_max ? K_RED_MAX : K_RED_MEAN, s->planes,
                              s->size, 1, in[0]->data, out[0]->data, (cudaStream_t)x->stream));
  return INFER_OK;
}

/* ---- LRN ------------------------------------------------------------------------------ */

typedef struct lrn_state {
  int64_t n, c, s, size;
  float alpha, beta, bias;
} lrn_state;

static infer_status lrn_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *t = in[0];
  const lrn_params *p = params;
  if (!dtype_is_float(t->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "LRN on the GPU: dtype %s is not supported",
                      infer_dtype_name(t->dtype));
  if (t->rank < 2) return infer_fail(INFER_ERR_INVALID_MODEL, "LRN: the input must have rank >= 2");
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "LRN: attributes were not parsed");
  lrn_state tmp;
  tmp.alpha = p->alpha;
  tmp.beta = p->beta;
  tmp.bias = p->bias;
  tmp.size = p->size;
  if (tmp.size < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LRN: attribute 'size' must be given and >= 1");
  tmp.n = t->dims[0];
  tmp.c = t->dims[1];
  tmp.s = dims_count(t->rank - 2, t->dims + 2);
  lrn_state *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *s = tmp;
  *state = s;
  return INFER_OK;
}

static infer_status lrn_run(const cuda_exec *x, const node *n, const void *params,
                            const void *state, const tensor *const *in, tensor *const *out) {
  const lrn_state *s = state;
  CUDA_LAUNCH_TRY(k_lrn((int)in[0]->dtype, s->n, s->c, s->s, s->size, s->alpha, s->beta, s->bias,
                        in[0]->data, out[0]->data, (cudaStream_t)x->stream));
  return INFER_OK;
}

static const cuda_op cuda_maxpool = {
    .name = "MaxPool", .prepare = maxpool_prepare, .run = maxpool_run};
static const cuda_op cuda_avgpool = {
    .name = "AveragePool", .prepare = avgpool_prepare, .run = avgpool_run};
static const cuda_op cuda_gap = {
    .name = "GlobalAveragePool", .prepare = gap_prepare, .run = global_run};
static const cuda_op cuda_gmp = {
    .name = "GlobalMaxPool", .prepare = gmp_prepare, .run = global_run};
static const cuda_op cuda_lrn = {.name = "LRN", .prepare = lrn_prepare, .run = lrn_run};

const cuda_op *const cuda_ops_pool[] = {&cuda_maxpool, &cuda_avgpool, &cuda_gap,
                                        &cuda_gmp,     &cuda_lrn,     NULL};
