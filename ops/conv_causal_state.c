/* conv_causal_state.c: CausalConvWithState (opset 27), the streaming depthwise causal
 * convolution of state-space and linear-attention blocks (Mamba's conv1d), CPU
 * reference: the input [B, C, L] is continued from past_state [B, C, K - 1] (zeros
 * without), each channel convolved with its own K taps (weight [C, 1, K]) plus bias,
 * then SiLU when activation is "silu" or "swish"; present_state is the last K - 1
 * positions of the continued input. The convolution is rounded to the input's dtype
 * before the activation, as the ONNX reference does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

static const char *const ccs_attrs[] = {"activation", NULL};

static infer_status ccs_parse(const node *n, void **params) {
  const char *act;
  TRY(attr_get_string(n, "activation", "none", &act));
  int silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
  if (!silu && strcmp(act, "none") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "CausalConvWithState: activation '%s' (none, silu "
                      "or swish)", act);
  int *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "CausalConvWithState: out of memory");
  *p = silu;
  *params = p;
  return INFER_OK;
}

static infer_status ccs_check(const node *n, const tensor *const *in) {
  const tensor *x = in[0], *w = in[1];
  const tensor *b = n->n_inputs > 2 ? in[2] : NULL, *past = n->n_inputs > 3 ? in[3] : NULL;
  if (!dtype_is_float(x->dtype) || w->dtype != x->dtype)
    return infer_fail(INFER_ERR_UNSUPPORTED, "CausalConvWithState: input and weight must share a "
                      "float dtype");
  if (x->rank != 3 || w->rank != 3 || w->dims[0] != x->dims[1] || w->dims[1] != 1 || w->dims[2] < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "CausalConvWithState: input [B, C, L] and weight "
                      "[C, 1, K]");
  const int64_t k = w->dims[2];
  if (b && (b->rank != 1 || b->dims[0] != x->dims[1] || b->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "CausalConvWithState: bias must be [%lld]",
                      (long long)x->dims[1]);
  if (past && (past->rank != 3 || past->dims[0] != x->dims[0] || past->dims[1] != x->dims[1] ||
               past->dims[2] != k - 1 || past->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "CausalConvWithState: past_state must be [%lld, "
                      "%lld, %lld]", (long long)x->dims[0], (long long)x->dims[1], (long long)(k - 1));
  return INFER_OK;
}

static infer_status ccs_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  (void)params;
  TRY(ccs_check(n, in));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = 3;
  memcpy(out[0]->dims, in[0]->dims, 3 * sizeof in[0]->dims[0]);
  if (n->n_outputs > 1 && out[1]) {
    out[1]->dtype = in[0]->dtype;
    out[1]->rank = 3;
    out[1]->dims[0] = in[0]->dims[0];
    out[1]->dims[1] = in[0]->dims[1];
    out[1]->dims[2] = in[1]->dims[2] - 1;
  }
  return INFER_OK;
}

static infer_status ccs_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  (void)ws;
  const bool silu = *(const int *)params != 0;
  TRY(ccs_check(n, in));
  const tensor *x = in[0], *w = in[1];
  const tensor *b = n->n_inputs > 2 ? in[2] : NULL, *past = n->n_inputs > 3 ? in[3] : NULL;
  tensor *state = n->n_outputs > 1 ? out[1] : NULL;
  const int64_t B = x->dims[0], C = x->dims[1], L = x->dims[2], K = w->dims[2];
  for (int64_t bn = 0; bn < B; bn++)
    for (int64_t c = 0; c < C; c++) {
      const int64_t xr = (bn * C + c) * L, pr = (bn * C + c) * (K - 1);
      /* position t of the continued input: past for t < K - 1, then x */
#define CCS_AT(t) ((t) < K - 1 ? (past ? tensor_get_f64(past, pr + (t)) : 0) \
                               : tensor_get_f64(x, xr + (t) - (K - 1)))
      for (int64_t t = 0; t < L; t++) {
        double acc = b ? tensor_get_f64(b, c) : 0;
        for (int64_t k = 0; k < K; k++) acc += tensor_get_f64(w, c * K + k) * CCS_AT(t + k);
        tensor_set_f64(out[0], xr + t, acc);
        if (silu) { /* on the value rounded to the dtype */
          const double v = tensor_get_f64(out[0], xr + t);
          tensor_set_f64(out[0], xr + t, v / (1 + exp(-v)));
        }
      }
      if (state)
        for (int64_t j = 0; j < K - 1; j++) tensor_set_f64(state, pr + j, CCS_AT(L + j));
#undef CCS_AT
    }
  return INFER_OK;
}

const op_desc op_causal_conv_with_state = {.name = "CausalConvWithState",
                                           .domain = "",
                                           .since = 27,
                                           .until = OP_OPSET_MAX,
                                           .min_inputs = 2,
                                           .max_inputs = 4,
                                           .min_outputs = 1,
                                           .max_outputs = 2,
                                           .attrs = ccs_attrs,
                                           .parse = ccs_parse,
                                           .infer = ccs_infer,
                                           .run = ccs_run};
