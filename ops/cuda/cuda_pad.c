/* cuda_pad.c: the GPU side of ops/pad.c: Pad, with the pads resolved at prepare by the
 * CPU op's functions (../pad_plan.h). */
#include "../../kernels/pad_resize.h"
#include "../pad_plan.h"
#include "cuda_movement_util.h"

/* ---- Pad: pads resolved at prepare (crop first, then extend, as the CPU) ------------------ */

typedef struct pad_state {
  int mode, rank, es;
  bool cval_dev; /* the constant is read from input 2 on the device */
  int64_t lo[INFER_MAX_RANK], ext[INFER_MAX_RANK], pb[INFER_MAX_RANK];
  unsigned char cval[16];
} pad_state;

/* The CPU's resolution (ops/pad.c) from the host copies of pads and axes (opset 11+),
 * which must be constants; the constant value converted to the storage dtype here. */
static infer_status pad_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  static const int modes[] = {[PAD_CONSTANT] = K_PAD_CONSTANT, [PAD_REFLECT] = K_PAD_REFLECT,
                              [PAD_EDGE] = K_PAD_EDGE, [PAD_WRAP] = K_PAD_WRAP};
  const pad_params *p = params;
  pad_state *s;
  const tensor *t = in[0];
  int r = t->rank;
  int64_t es, b[INFER_MAX_RANK], e[INFER_MAX_RANK];
  TRY(mv_elem_size("Pad", t, &es));
  if (es > 8)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: dtype %s is not supported",
                      infer_dtype_name(t->dtype));
  MV_NEW_STATE(s, sizeof *s);
  s->es = (int)es;
  s->rank = r;
  s->mode = modes[p->mode];
  if (n->opset < 11) {
    mv_elem_from_f64(out[0]->dtype, p->value, s->cval);
  } else {
    if (mv_input_given(n, in, 1) && !host_in[1])
      return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: pads must be a constant");
    if (mv_input_given(n, in, 3) && !host_in[3])
      return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: axes must be a constant");
    if (mv_input_given(n, in, 2)) {
      int64_t c = dims_count(in[2]->rank, in[2]->dims);
      if (c > 1) return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: constant_value must be a scalar");
      if (c == 1 && host_in[2]) {
        mv_elem_convert(host_in[2], 0, out[0]->dtype, s->cval);
      } else if (c == 1) {
        if (in[2]->dtype != out[0]->dtype)
          return infer_fail(INFER_ERR_UNSUPPORTED,
                            "Pad on the GPU: a non-constant constant_value of dtype %s for %s data",
                            infer_dtype_name(in[2]->dtype), infer_dtype_name(out[0]->dtype));
        s->cval_dev = true;
      }
    }
  }
  infer_status st = pad_resolve(n, p, t, host_in, b, e);
  if (st == OP_NEEDS_DATA)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: pads/axes unknown");
  TRY(st);
  pad_region(r, t->dims, b, e, s->lo, s->ext, s->pb);
  for (int i = 0; i < r; i++) {
    if (s->ext[i] < 0 || out[0]->dims[i] != s->ext[i] + s->pb[i] + (e[i] > 0 ? e[i] : 0))
      return infer_fail(INFER_ERR_INTERNAL, "Pad on the GPU: output shape differs on axis %d", i);
    if (s->mode != K_PAD_CONSTANT && s->ext[i] == 0 && out[0]->dims[i] > 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: cannot pad an empty axis %d", i);
  }
  return INFER_OK;
}

static infer_status pad_run(const cuda_exec *x, const node *n, const void *params,
                            const void *state, const tensor *const *in, tensor *const *out) {
  const pad_state *s = state;
  CUDA_LAUNCH_TRY(k_pad(s->es, s->mode, s->rank, in[0]->dims, out[0]->dims, s->lo, s->ext, s->pb,
                        s->cval, s->cval_dev ? in[2]->data : NULL, in[0]->data, out[0]->data,
                        MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_pad = {.name = "Pad", .prepare = pad_prepare, .run = pad_run};
