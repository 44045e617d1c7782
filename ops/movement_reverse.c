/* movement_reverse.c: ReverseSequence (10): for each batch entry b (along
 * batch_axis, default 1) the first sequence_lens[b] slices along time_axis (default
 * 0) in reverse order, the rest as they are. Any dtype (bytes are copied). */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"

typedef struct reverse_seq_params {
  int64_t batch_axis, time_axis;
} reverse_seq_params;

static const char *const reverse_seq_attrs[] = {"batch_axis", "time_axis", NULL};

static infer_status reverse_seq_parse(const node *n, void **params) {
  reverse_seq_params t;
  TRY(attr_get_int(n, "batch_axis", 1, &t.batch_axis));
  TRY(attr_get_int(n, "time_axis", 0, &t.time_axis));
  if ((t.batch_axis != 0 && t.batch_axis != 1) || (t.time_axis != 0 && t.time_axis != 1) ||
      t.batch_axis == t.time_axis)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "ReverseSequence: batch_axis %lld and time_axis %lld must be 0 and 1",
                      (long long)t.batch_axis, (long long)t.time_axis);
  reverse_seq_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "ReverseSequence: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

static infer_status reverse_seq_infer(const node *n, const void *params, const tensor *const *in,
                                      tensor *const *out) {
  const reverse_seq_params *p = params;
  const tensor *x = in[0], *lens = in[1];
  size_t es;
  char b1[96], b2[96];
  TRY(movement_elem_size("ReverseSequence", x->dtype, &es));
  if (x->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "ReverseSequence: input %s must have rank >= 2",
                      dims_format(x->rank, x->dims, b1, sizeof b1));
  if (lens->dtype != INFER_DTYPE_INT64 || lens->rank != 1 ||
      lens->dims[0] != x->dims[p->batch_axis])
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "ReverseSequence: sequence_lens (%s %s) must be int64 of the batch size %lld",
                      infer_dtype_name(lens->dtype), dims_format(lens->rank, lens->dims, b2, sizeof b2),
                      (long long)x->dims[p->batch_axis]);
  movement_same_shape(x, out[0]);
  return INFER_OK;
}

static infer_status reverse_seq_run(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out, void *ws) {
  const reverse_seq_params *p = params;
  const tensor *x = in[0], *lens = in[1];
  int64_t T = x->dims[p->time_axis], B = x->dims[p->batch_axis];
  const int64_t *len = lens->data;
  for (int64_t b = 0; b < B; b++)
    if (len[b] < 0 || len[b] > T)
      return infer_fail(INFER_ERR_RUNTIME, "ReverseSequence: sequence_lens[%lld] = %lld is "
                        "outside [0, %lld]", (long long)b, (long long)len[b], (long long)T);
  /* the first two axes are time and batch in some order; the rest is one row */
  size_t row = (size_t)dims_count(x->rank - 2, x->dims + 2) * infer_dtype_size(x->dtype);
  int64_t ts = p->time_axis == 0 ? B : 1, bs = p->time_axis == 0 ? 1 : T; /* in rows */
  const char *src = x->data;
  char *dst = out[0]->data;
  if (row == 0) return INFER_OK;
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) {
      int64_t from = t < len[b] ? len[b] - 1 - t : t;
      memcpy(dst + (size_t)(t * ts + b * bs) * row, src + (size_t)(from * ts + b * bs) * row, row);
    }
  return INFER_OK;
}

const op_desc op_reverse_sequence = {.name = "ReverseSequence",
                                     .domain = "",
                                     .since = 10,
                                     .until = OP_OPSET_MAX,
                                     .min_inputs = 2,
                                     .max_inputs = 2,
                                     .min_outputs = 1,
                                     .max_outputs = 1,
                                     .attrs = reverse_seq_attrs,
                                     .parse = reverse_seq_parse,
                                     .infer = reverse_seq_infer,
                                     .run = reverse_seq_run};
