/* loss.c: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12+), as exported
 * training graphs and evaluation heads carry them, CPU reference. Over input [N, C, d...]
 * and integer targets [N, d...]:
 *   loss[n, d] = -w[t] x[n, t, d]   (t = target[n, d]; 0 where t is ignore_index)
 *   SoftmaxCrossEntropyLoss takes x = log_softmax(scores) over C (its second output)
 *   reduction none: loss itself; sum: its sum; mean: the sum over the sum of w[t] of the
 *   elements not ignored (without weights and ignore_index: the plain mean)
 * in double. A target outside [0, C) that is not ignore_index is an input error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_params {
  int reduction;
  bool has_ignore;
  int64_t ignore;
  bool softmax; /* SoftmaxCrossEntropyLoss */
} loss_params;

static const char *const loss_attrs[] = {"ignore_index", "reduction", NULL};

static infer_status loss_parse(const node *n, void **params) {
  loss_params v;
  const char *red;
  TRY(attr_get_string(n, "reduction", "mean", &red));
  v.reduction = strcmp(red, "none") == 0 ? RED_NONE : strcmp(red, "sum") == 0 ? RED_SUM
                : strcmp(red, "mean") == 0                          ? RED_MEAN
                                                                    : -1;
  if (v.reduction < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: reduction '%s' (none, sum or mean)",
                      n->op_type, red);
  v.has_ignore = node_attr(n, "ignore_index") != NULL;
  TRY(attr_get_int(n, "ignore_index", 0, &v.ignore));
  v.softmax = strcmp(n->op_type, "SoftmaxCrossEntropyLoss") == 0;
  loss_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status loss_check(const node *n, const tensor *const *in, int64_t *N, int64_t *C,
                               int64_t *D) {
  const tensor *x = in[0], *t = in[1], *w = n->n_inputs > 2 ? in[2] : NULL;
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input of dtype %s", n->op_type,
                      infer_dtype_name(x->dtype));
  if (x->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input must be [N, C, ...]", n->op_type);
  if (t->dtype != INFER_DTYPE_INT64 && t->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: target must be int32 or int64", n->op_type);
  bool ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
  for (int d = 1; ok && d < t->rank; d++) ok = t->dims[d] == x->dims[d + 1];
  if (!ok) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: target must be input's shape "
                             "without its class dim", n->op_type);
  if (w && (w->rank != 1 || w->dims[0] != x->dims[1] || w->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: weights must be [%lld] of the input's dtype",
                      n->op_type, (long long)x->dims[1]);
  *N = x->dims[0];
  *C = x->dims[1];
  *D = dims_count(x->rank - 2, x->dims + 2);
  return INFER_OK;
}

static infer_status loss_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const loss_params *p = params;
  int64_t N = 0, C = 0, D = 0;
  TRY(loss_check(n, in, &N, &C, &D));
  out[0]->dtype = in[0]->dtype;
  if (p->reduction == RED_NONE) {
    out[0]->rank = in[1]->rank;
    memcpy(out[0]->dims, in[1]->dims, sizeof in[1]->dims[0] * in[1]->rank);
  } else {
    out[0]->rank = 0;
  }
  if (n->n_outputs > 1 && out[1]) { /* log_prob */
    out[1]->dtype = in[0]->dtype;
    out[1]->rank = in[0]->rank;
    memcpy(out[1]->dims, in[0]->dims, sizeof in[0]->dims[0] * in[0]->rank);
  }
  return INFER_OK;
}

static int64_t loss_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  (void)out;
  const loss_params *p = params;
  int64_t N = 0, C = 0, D = 0;
  if (!p->softmax || loss_check(n, in, &N, &C, &D) != INFER_OK) return 0;
  return N * C * D * (int64_t)sizeof(double); /* the log-probabilities */
}

static infer_status loss_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  const loss_params *p = params;
  int64_t N = 0, C = 0, D = 0;
  TRY(loss_check(n, in, &N, &C, &D));
  const tensor *x = in[0], *t = in[1], *w = n->n_inputs > 2 ? in[2] : NULL;
  double *lp = ws;
  if (p->softmax) { /* log_softmax over C, kept for the loss and the second output */
    for (int64_t b = 0; b < N; b++)
      for (int64_t d = 0; d < D; d++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; c++) {
          double v = tensor_get_f64(x, (b * C + c) * D + d);
          if (v > mx) mx = v;
        }
        for (int64_t c = 0; c < C; c++) sum += exp(tensor_get_f64(x, (b * C + c) * D + d) - mx);
        for (int64_t c = 0; c < C; c++) {
          const int64_t e = (b * C + c) * D + d;
          lp[e] = tensor_get_f64(x, e) - mx - log(sum);
          if (n->n_outputs > 1 && out[1]) tensor_set_f64(out[1], e, lp[e]);
        }
      }
  }
  double total = 0, wsum = 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t d = 0; d < D; d++) {
      const int64_t tv = tensor_get_i64(t, b * D + d);
      double l = 0, wt = 0;
      if (!(p->has_ignore && tv == p->ignore)) {
        if (tv < 0 || tv >= C)
          return infer_fail(INFER_ERR_INVALID_INPUT, "%s: target %lld outside the %lld classes",
                            n->op_type, (long long)tv, (long long)C);
        const int64_t e = (b * C + tv) * D + d;
        wt = w ? tensor_get_f64(w, tv) : 1;
        l = -(p->softmax ? lp[e] : tensor_get_f64(x, e)) * wt;
      }
      if (p->reduction == RED_NONE) tensor_set_f64(out[0], b * D + d, l);
      total += l;
      wsum += wt;
    }
  if (p->reduction == RED_SUM) tensor_set_f64(out[0], 0, total);
  if (p->reduction == RED_MEAN) /* weighted: over the weights of the elements counted */
    tensor_set_f64(out[0], 0, w || p->has_ignore ? total / wsum : total / (double)(N * D));
  return INFER_OK;
}

/* the two share everything but the name and SoftmaxCrossEntropyLoss's log_prob output */
#define LOSS_OP(NAME, MAX_OUT)                                                               \
  {.name = NAME, .domain = "", .since = 12, .until = OP_OPSET_MAX, .min_inputs = 2,          \
   .max_inputs = 3, .min_outputs = 1, .max_outputs = MAX_OUT, .attrs = loss_attrs,           \
   .parse = loss_parse, .infer = loss_infer, .run = loss_run, .workspace = loss_workspace}
const op_desc op_nll_loss = LOSS_OP("NegativeLogLikelihoodLoss", 1);
const op_desc op_softmax_cross_entropy_loss = LOSS_OP("SoftmaxCrossEntropyLoss", 2);
#undef LOSS_OP
