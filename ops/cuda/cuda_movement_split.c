/* cuda_movement_split.c: the GPU side of ops/movement_split.c: Split, one strided copy
 * per output; the sizes from the CPU op's params (../movement_params.h) or a constant
 * `split` input, resolved at prepare. */
#include "../../kernels/copy.h"
#include "../movement_params.h"
#include "cuda_movement_util.h"

/* ---- Split: one strided copy per output from its slice of the input ------------------- */

typedef struct split_state {
  int axis, n;
  int64_t size[]; /* per output */
} split_state;

static infer_status split_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  split_state *s;
  int64_t es;
  int outs = n->n_outputs;
  const split_params *p = params;
  const tensor *t = in[0];
  TRY(mv_elem_size("Split", t, &es));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "Split: attributes were not parsed");
  MV_NEW_STATE(s, sizeof *s + sizeof(int64_t) * (size_t)outs);
  s->n = outs;
  int count = p->n_split;
  const int64_t *list = p->split;
  TRY(axis_normalize(p->axis, t->rank, "Split axis", &s->axis));
  int64_t dim = t->dims[s->axis], total = 0;
  if (mv_input_given(n, in, 1)) {
    const tensor *h = host_in[1];
    if (!h)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Split on the GPU: 'split' must be a constant");
    if (dims_count(h->rank, h->dims) != outs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: split must hold %d sizes", outs);
    for (int k = 0; k < outs; k++) s->size[k] = tensor_get_i64(h, k);
  } else if (count >= 0) {
    if (count != outs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: %d sizes for %d outputs", count, outs);
    for (int k = 0; k < outs; k++) s->size[k] = list[k];
  } else {
    /* num_outputs (> 0 exactly when given: ops/movement_split.c): ceil-sized parts */
    int64_t chunk = p->num_outputs > 0 ? dim / outs + (dim % outs != 0) : dim / outs;
    for (int k = 0; k < outs; k++) {
      int64_t start = chunk * k, left = start < dim ? dim - start : 0;
      s->size[k] = left < chunk ? left : chunk;
    }
  }
  for (int k = 0; k < outs; k++) {
    if (s->size[k] < 0 || (out[k] && out[k]->dims[s->axis] != s->size[k]))
      return infer_fail(INFER_ERR_INTERNAL, "Split on the GPU: output %d has an unexpected size",
                        k);
    total += s->size[k];
  }
  if (total != dim)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Split: sizes sum to %lld, the dim is %lld",
                      (long long)total, (long long)dim);
  return INFER_OK;
}

static infer_status split_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const split_state *s = state;
  const tensor *t = in[0];
  int64_t es = (int64_t)infer_dtype_size(t->dtype);
  int64_t outer = dims_count(s->axis, t->dims);
  int64_t inner = dims_count(t->rank - s->axis - 1, t->dims + s->axis + 1);
  int64_t in_row = t->dims[s->axis] * inner, offset = 0;
  for (int k = 0; k < s->n; k++) {
    int64_t row = s->size[k] * inner;
    if (out[k] && row > 0 && outer > 0) {
      int64_t dims[2] = {outer, row}, is[2] = {in_row, 1};
      CUDA_LAUNCH_TRY(k_copy_view(es, 2, dims, is, NULL, (const char *)t->data + offset * es,
                                  out[k]->data, MV_STREAM(x)));
    }
    offset += row;
  }
  return INFER_OK;
}

const cuda_op cuda_split = {.name = "Split", .prepare = split_prepare, .run = split_run};
