/* cuda_reduce.c: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp,
 * ArgMax/ArgMin, Softmax and LogSoftmax on the GPU (kernels/reduce.cu,
 * kernels/softmax.cu).
 *
 * The attributes are the CPU op's params (ops/reduce_params.h). Reductions resolve
 * their axes at prepare time as the CPU op does (reduce_axes_mask: attribute, or a
 * constant axes input; an axes input computed at run time is unsupported), merge
 * neighbouring dims, and run as [outer, reduced, inner] when the reduced dims are
 * contiguous, else through the general strided kernel. [outer, reduced, inner] with
 * inner > 1 (NHWC data over H and W, outer = N, inner = C) goes to the channels-last
 * kernel k_reduce_mid where it takes the dtype and kind. Softmax takes the CPU's
 * geometry (softmax_geometry). */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/reduce.h"
#include "../../kernels/softmax.h"
#include "../cuda_op.h"
#include "../reduce_params.h"

/* ---- Reduce* ------------------------------------------------------------------------ */

static const struct {
  const char *name;
  int kind;
} red_table[] = {
    {"ReduceSum", K_RED_SUM},       {"ReduceMean", K_RED_MEAN},
    {"ReduceMax", K_RED_MAX},       {"ReduceMin", K_RED_MIN},
    {"ReduceProd", K_RED_PROD},     {"ReduceL1", K_RED_L1},
    {"ReduceL2", K_RED_L2},         {"ReduceSumSquare", K_RED_SUMSQ},
    {"ReduceLogSum", K_RED_LOGSUM}, {"ReduceLogSumExp", K_RED_LOGSUMEXP},
};
enum { RED_OPS = sizeof red_table / sizeof red_table[0] };

typedef struct red_state {
  int kind;
  bool nothing; /* no output elements */
  bool strided;
  int64_t outer, r, inner;
  int64_t mid_chunks; /* > 0: k_reduce_mid with this many chunks */
  k_reduce_geom g;
} red_state;

/* mask[i]: dim i of x is reduced (the CPU's reduce_axes_mask, on the host copy of a
 * given axes input, which must be a constant). */
static infer_status red_axes(const node *n, const reduce_params *p, const tensor *const *in,
                             const tensor *const *host_in, int rank, bool *mask) {
  const tensor *axes = NULL;
  if (p->axes_from_input && n->n_inputs > 1 && in[1]) {
    if (!host_in[1])
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: the axes input must be a constant",
                        n->op_type);
    axes = host_in[1];
  }
  return reduce_axes_mask(n, p, axes, rank, mask);
}

static infer_status red_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  int k = 0;
  while (k < RED_OPS && strcmp(red_table[k].name, n->op_type) != 0) k++;
  if (k == RED_OPS)
    return infer_fail(INFER_ERR_INTERNAL, "reduce on the GPU: unknown op %s", n->op_type);
  const tensor *X = in[0];
  red_state s;
  memset(&s, 0, sizeof s);
  s.kind = red_table[k].kind;
  if (!k_reduce_supported((int)X->dtype, s.kind))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", n->op_type,
                      infer_dtype_name(X->dtype));
  if (!params)
    return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  bool mask[INFER_MAX_RANK];
  TRY(red_axes(n, params, in, host_in, X->rank, mask));
  int64_t total_in = dims_count(X->rank, X->dims);
  int64_t total_out = dims_count(out[0]->rank, out[0]->dims);
  int64_t kept = 1, count = 1;
  for (int i = 0; i < X->rank; i++) {
    if (mask[i])
      count *= X->dims[i];
    else
      kept *= X->dims[i];
  }
  if (kept != total_out)
    return infer_fail(INFER_ERR_INTERNAL,
                      "%s on the GPU: %lld outputs expected, the shape has %lld", n->op_type,
                      (long long)kept, (long long)total_out);
  red_state *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (total_out == 0) {
    s.nothing = true;
  } else if (count == 0 || total_in == 0) {
    /* every output reduces an empty set */
    s.outer = total_out;
    s.r = 0;
    s.inner = 1;
  } else {
    /* merge neighbouring dims of the same kind, dropping unit dims */
    int64_t strides[INFER_MAX_RANK];
    dims_strides(X->rank, X->dims, strides);
    k_reduce_geom *g = &s.g;
    int prev = -1;
    for (int i = 0; i < X->rank; i++) {
      int64_t d = X->dims[i];
      if (d == 1) continue;
      int kind = mask[i] ? 1 : 0;
      if (kind == 1) {
        if (prev == 1) {
          g->rd[g->nr - 1] *= d;
          g->rs[g->nr - 1] = strides[i];
        } else {
          g->rd[g->nr] = d;
          g->rs[g->nr++] = strides[i];
        }
      } else {
        if (prev == 0) {
          g->kd[g->nk - 1] *= d;
          g->ks[g->nk - 1] = strides[i];
        } else {
          g->kd[g->nk] = d;
          g->ks[g->nk++] = strides[i];
        }
      }
      prev = kind;
    }
    if (g->nr == 0) { /* nothing reduced: each output "reduces" one element */
      s.outer = total_out;
      s.r = 1;
      s.inner = 1;
    } else if (g->nr == 1) { /* [outer, r, inner] */
      s.r = g->rd[0];
      s.inner = g->rs[0];
      s.outer = total_in / (s.r * s.inner);
      if (s.inner > 1 && k_reduce_mid_supported((int)X->dtype, s.kind)) {
        int64_t ws = 0;
        s.mid_chunks = k_reduce_mid_chunks((int)X->dtype, s.outer, s.r, s.inner, x->sm_count, &ws);
        if (s.mid_chunks > 0) *ws_bytes = ws;
      }
    } else {
      s.strided = true;
    }
  }
  *p = s;
  *state = p;
  return INFER_OK;
}

static infer_status red_run(const cuda_exec *x, const node *n, const void *params,
                            const void *state, const tensor *const *in, tensor *const *out) {
  const red_state *s = state;
  if (s->nothing) return INFER_OK;
  cudaStream_t st = (cudaStream_t)x->stream;
  if (s->strided)
    CUDA_LAUNCH_TRY(
        k_reduce_strided((int)in[0]->dtype, s->kind, &s->g, in[0]->data, out[0]->data, st));
  else if (s->mid_chunks > 0)
    CUDA_LAUNCH_TRY(k_reduce_mid((int)in[0]->dtype, s->kind, s->outer, s->r, s->inner,
                                 s->mid_chunks, in[0]->data, out[0]->data, x->ws, st));
  else
    CUDA_LAUNCH_TRY(k_reduce_3d((int)in[0]->dtype, s->kind, s->outer, s->r, s->inner, in[0]->data,
                                out[0]->data, st));
  return INFER_OK;
}

/* ---- ArgMax / ArgMin ------------------------------------------------------------------ */

typedef struct axis_state {
  int64_t outer, len, inner;
  bool is_max, last, log;
} axis_state;

static infer_status axis_state_new(const axis_state *tmp, void **state) {
  axis_state *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *s = *tmp;
  *state = s;
  return INFER_OK;
}

static infer_status arg_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *X = in[0];
  const arg_params *p = params;
  infer_dtype dt = X->dtype;
  if (!dtype_is_float(dt) && !dtype_is_signed_int(dt) &&
      !(dtype_is_unsigned_int(dt) && dt != INFER_DTYPE_BOOL))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", n->op_type,
                      infer_dtype_name(dt));
  if (X->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: the input must have rank >= 1", n->op_type);
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  int axis;
  TRY(axis_normalize(p->axis, X->rank, "axis", &axis));
  axis_state s;
  memset(&s, 0, sizeof s);
  s.outer = dims_count(axis, X->dims);
  s.len = X->dims[axis];
  s.inner = dims_count(X->rank - axis - 1, X->dims + axis + 1);
  s.is_max = p->is_max;
  s.last = p->last;
  if (s.len == 0 && s.outer * s.inner != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axis %d has size 0", n->op_type, axis);
  return axis_state_new(&s, state);
}

static infer_status arg_run(const cuda_exec *x, const node *n, const void *params,
                            const void *state, const tensor *const *in, tensor *const *out) {
  const axis_state *s = state;
  if (s->outer * s->inner == 0) return INFER_OK;
  CUDA_LAUNCH_TRY(k_argminmax((int)in[0]->dtype, s->is_max, s->last, s->outer, s->len, s->inner,
                              in[0]->data, out[0]->data, (cudaStream_t)x->stream));
  return INFER_OK;
}

/* ---- Softmax / LogSoftmax ------------------------------------------------------------- */

static infer_status softmax_prepare(const cuda_exec *x, const node *n, const void *params,
                                    const tensor *const *in, const tensor *const *host_in,
                                    tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *X = in[0];
  const softmax_params *p = params;
  if (!dtype_is_float(X->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", n->op_type,
                      infer_dtype_name(X->dtype));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  axis_state s;
  memset(&s, 0, sizeof s);
  s.log = p->log;
  TRY(softmax_geometry(n, p, X, &s.outer, &s.len, &s.inner));
  return axis_state_new(&s, state);
}

static infer_status softmax_run(const cuda_exec *x, const node *n, const void *params,
                                const void *state, const tensor *const *in, tensor *const *out) {
  const axis_state *s = state;
  CUDA_LAUNCH_TRY(k_softmax((int)in[0]->dtype, s->log, s->outer, s->len, s->inner, in[0]->data,
                            out[0]->data, (cudaStream_t)x->stream));
  return INFER_OK;
}

/* --profile and --verbose name the channels-last kernel */
static const char *red_impl(const void *state) {
  const red_state *s = state;
  return s && s->mid_chunks > 0 ? "reduce-nhwc" : "kernel";
}

#define RED_OP(sym, opname)                                                     \
  static const cuda_op sym = {                                                  \
      .name = opname, .prepare = red_prepare, .run = red_run, .impl = red_impl}
RED_OP(cuda_reduce_sum, "ReduceSum");
RED_OP(cuda_reduce_mean, "ReduceMean");
RED_OP(cuda_reduce_max, "ReduceMax");
RED_OP(cuda_reduce_min, "ReduceMin");
RED_OP(cuda_reduce_prod, "ReduceProd");
RED_OP(cuda_reduce_l1, "ReduceL1");
RED_OP(cuda_reduce_l2, "ReduceL2");
RED_OP(cuda_reduce_sumsq, "ReduceSumSquare");
RED_OP(cuda_reduce_logsum, "ReduceLogSum");
RED_OP(cuda_reduce_logsumexp, "ReduceLogSumExp");
#undef RED_OP
static const cuda_op cuda_argmax = {.name = "ArgMax", .prepare = arg_prepare, .run = arg_run};
static const cuda_op cuda_argmin = {.name = "ArgMin", .prepare = arg_prepare, .run = arg_run};
static const cuda_op cuda_softmax = {
    .name = "Softmax", .prepare = softmax_prepare, .run = softmax_run};
static const cuda_op cuda_logsoftmax = {
    .name = "LogSoftmax", .prepare = softmax_prepare, .run = softmax_run};

const cuda_op *const cuda_ops_reduce[] = {
    &cuda_reduce_sum,       &cuda_reduce_mean,  &cuda_reduce_max,
    &cuda_reduce_min,       &cuda_reduce_prod,  &cuda_reduce_l1,
    &cuda_reduce_l2,        &cuda_reduce_sumsq, &cuda_reduce_logsum,
    &cuda_reduce_logsumexp, &cuda_argmax,       &cuda_argmin,
    &cuda_softmax,          &cuda_logsoftmax,   NULL};
