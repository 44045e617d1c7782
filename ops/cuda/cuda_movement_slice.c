/* cuda_movement_slice.c: the GPU side of ops/movement_slice.c: Slice, a strided view
 * made once at prepare by the CPU op's plan (../slice_plan.h). */
#include <string.h>

#include "../../kernels/copy.h"
#include "../slice_plan.h"
#include "cuda_movement_util.h"

/* ---- Slice: a view with per-axis start and step (the CPU's plan, made once) ----------- */

typedef struct slice_state {
  int rank;
  int64_t offset; /* elements */
  int64_t dims[INFER_MAX_RANK], strides[INFER_MAX_RANK];
} slice_state;

/* The CPU's plan (ops/movement_slice.c) from the host copies of starts, ends, axes
 * and steps (opset 10+); each given one must be a constant. */
static infer_status slice_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  static const char *const names[] = {NULL, "starts", "ends", "axes", "steps"};
  slice_state *s;
  slice_plan pl;
  const tensor *t = in[0];
  int r = t->rank;
  int64_t es;
  TRY(mv_elem_size("Slice", t, &es));
  MV_NEW_STATE(s, sizeof *s);
  if (n->opset >= 10)
    for (int i = 1; i <= 4; i++)
      if (mv_input_given(n, in, i) && !host_in[i])
        return infer_fail(INFER_ERR_UNSUPPORTED, "Slice on the GPU: %s must be a constant",
                          names[i]);
  infer_status st = slice_make_plan(n, params, t, host_in, &pl);
  if (st == OP_NEEDS_DATA)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Slice on the GPU: starts/ends/axes/steps unknown");
  TRY(st);
  if (!dims_equal(out[0]->rank, out[0]->dims, r, pl.dims))
    return infer_fail(INFER_ERR_INTERNAL, "Slice on the GPU: output shape differs from the plan");
  s->rank = r;
  memcpy(s->dims, pl.dims, sizeof(int64_t) * (size_t)r);
  slice_plan_view(&pl, r, t->dims, &s->offset, s->strides);
  return INFER_OK;
}

static infer_status slice_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const slice_state *s = state;
  int64_t es = (int64_t)infer_dtype_size(in[0]->dtype);
  if (dims_count(s->rank, s->dims) == 0) return INFER_OK;
  CUDA_LAUNCH_TRY(k_copy_view(es, s->rank, s->dims, s->strides, NULL,
                              (const char *)in[0]->data + s->offset * es, out[0]->data,
                              MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_slice = {.name = "Slice", .prepare = slice_prepare, .run = slice_run};
