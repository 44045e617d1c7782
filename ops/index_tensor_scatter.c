/* index_tensor_scatter.c: TensorScatter (opset 24), the in-place KV-cache update of
 * decoding loops: present = past_cache with `update` written along `axis` (default -2)
 * from each batch row's write_indices[b] (default 0) on; mode "circular" wraps the
 * positions around the cache's length, "linear" (default) refuses to write past it. */
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct tscatter_params {
  int64_t axis;
  bool circular;
} tscatter_params;

static const char *const tscatter_attrs[] = {"axis", "mode", NULL};

static infer_status tscatter_parse(const node *n, void **params) {
  tscatter_params v;
  const char *mode;
  TRY(attr_get_int(n, "axis", -2, &v.axis));
  TRY(attr_get_string(n, "mode", "linear", &mode));
  if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "TensorScatter: mode '%s' (linear or circular)",
                      mode);
  v.circular = strcmp(mode, "circular") == 0;
  tscatter_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "TensorScatter: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status tscatter_check(const node *n, const tscatter_params *p,
                                   const tensor *const *in, int *axis) {
  const tensor *past = in[0], *upd = in[1], *idx = n->n_inputs > 2 ? in[2] : NULL;
  if (upd->dtype != past->dtype || upd->rank != past->rank || past->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "TensorScatter: update must match past_cache's "
                      "dtype and rank (at least 2)");
  TRY(axis_normalize(p->axis, past->rank, "TensorScatter axis", axis));
  if (*axis == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "TensorScatter: axis 0 is the batch");
  for (int d = 0; d < past->rank; d++)
    if (d == *axis ? upd->dims[d] > past->dims[d] : upd->dims[d] != past->dims[d])
      return infer_fail(INFER_ERR_INVALID_MODEL, "TensorScatter: update's dim %d (%lld) does not "
                        "fit past_cache's (%lld)", d, (long long)upd->dims[d],
                        (long long)past->dims[d]);
  if (idx && (idx->rank != 1 || idx->dims[0] != past->dims[0] ||
              (idx->dtype != INFER_DTYPE_INT64 && idx->dtype != INFER_DTYPE_INT32)))
    return infer_fail(INFER_ERR_INVALID_MODEL, "TensorScatter: write_indices must be int64 "
                      "[%lld]", (long long)past->dims[0]);
  return INFER_OK;
}

static infer_status tscatter_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  int axis;
  TRY(tscatter_check(n, params, in, &axis));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = in[0]->rank;
  memcpy(out[0]->dims, in[0]->dims, sizeof in[0]->dims[0] * in[0]->rank);
  return INFER_OK;
}

static infer_status tscatter_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  (void)ws;
  const tscatter_params *p = params;
  int axis = 0;
  TRY(tscatter_check(n, p, in, &axis));
  const tensor *past = in[0], *upd = in[1], *idx = n->n_inputs > 2 ? in[2] : NULL;
  const size_t es = infer_dtype_size(past->dtype);
  const int64_t inner = dims_count(past->rank - axis - 1, past->dims + axis + 1) * (int64_t)es;
  const int64_t per_batch = dims_count(axis - 1, past->dims + 1); /* prefix rows a batch row */
  const int64_t max = past->dims[axis], seq = upd->dims[axis];
  char *y = out[0]->data;
  const char *u = upd->data;
  if (y != past->data) memcpy(y, past->data, (size_t)tensor_nbytes(past));
  for (int64_t b = 0; b < past->dims[0]; b++) {
    const int64_t start = idx ? tensor_get_i64(idx, b) : 0;
    if (start < 0 || (!p->circular && start + seq > max))
      return infer_fail(INFER_ERR_INVALID_INPUT, "TensorScatter: batch row %lld writes positions "
                        "%lld..%lld of a cache of %lld", (long long)b, (long long)start,
                        (long long)(start + seq - 1), (long long)max);
    for (int64_t r = 0; r < per_batch; r++) {
      const int64_t pre = b * per_batch + r;
      for (int64_t s = 0; s < seq; s++) {
        const int64_t pos = p->circular ? (start + s) % max : start + s;
        memcpy(y + (pre * max + pos) * inner, u + (pre * seq + s) * inner, (size_t)inner);
      }
    }
  }
  return INFER_OK;
}

const op_desc op_tensor_scatter = {.name = "TensorScatter",
                                   .domain = "",
                                   .since = 24,
                                   .until = OP_OPSET_MAX,
                                   .min_inputs = 2,
                                   .max_inputs = 3,
                                   .min_outputs = 1,
                                   .max_outputs = 1,
                                   .attrs = tscatter_attrs,
                                   .parse = tscatter_parse,
                                   .infer = tscatter_infer,
                                   .run = tscatter_run};
