/* index_nd.c: GatherND and ScatterND. indices [..., m] (int64) hold tuples of m
 * coordinates into data (negative ones count from the back); each tuple addresses the
 * slice data[i0, .., i(m-1), :, ..]. GatherND (batch_dims b) pairs the first b dims of
 * data and indices:
 *   out.shape = indices.shape[:-1] + data.shape[b+m:]
 * ScatterND copies data and writes (or reduces into) the addressed slices:
 *   updates.shape = indices.shape[:-1] + data.shape[m:]. */
#include <stdlib.h>
#include <string.h>

#include "index_params.h"

infer_status nd_make_plan(const char *op, const tensor *data, const tensor *indices, int64_t b,
                          nd_plan *pl) {
  int r = data->rank, q = indices->rank;
  char sd[160], si[160];
  dims_format(r, data->dims, sd, sizeof sd);
  dims_format(q, indices->dims, si, sizeof si);
  if (r < 1 || q < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: data %s and indices %s must have rank >= 1",
                      op, sd, si);
  if (b < 0 || b >= (q < r ? q : r))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: batch_dims %lld must be in [0, %d) for data %s and indices %s", op,
                      (long long)b, q < r ? q : r, sd, si);
  int64_t m = indices->dims[q - 1];
  if (m < 1 || m > r - b)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: the last dim of indices %s (%lld) must be in [1, %lld] for data %s",
                      op, si, (long long)m, (long long)(r - b), sd);
  for (int i = 0; i < b; i++)
    if (data->dims[i] != indices->dims[i])
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "%s: the first %lld dims of data %s and indices %s differ", op,
                        (long long)b, sd, si);
  pl->b = (int)b;
  pl->m = (int)m;
  pl->batch = dims_count((int)b, data->dims);
  pl->tuples = dims_count(q - 1 - (int)b, indices->dims + b);
  pl->slice = dims_count(r - (int)(b + m), data->dims + b + m);
  pl->data_batch = dims_count(r - (int)b, data->dims + b);
  if (pl->batch < 0 || pl->tuples < 0 || pl->slice < 0 || pl->data_batch < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: data %s or indices %s is too large", op, sd,
                      si);
  int64_t s = pl->slice;
  for (int j = (int)m - 1; j >= 0; j--) {
    pl->strides[j] = s;
    s *= data->dims[b + j];
  }
  return INFER_OK;
}

infer_status nd_tuple_offset(const char *op, const nd_plan *pl, const tensor *data,
                             const tensor *indices, int64_t bt, int64_t t, int64_t *offset) {
  int64_t pos = (bt * pl->tuples + t) * pl->m, off = bt * pl->data_batch;
  const int64_t *idx = indices->data;
  for (int j = 0; j < pl->m; j++) {
    int64_t dim = data->dims[pl->b + j], v;
    if (!index_resolve(idx[pos + j], dim, &v))
      return index_out_of_range(op, idx[pos + j], pos + j, dim);
    off += v * pl->strides[j];
  }
  *offset = off;
  return INFER_OK;
}

static const char *const gather_nd_attrs[] = {"batch_dims", NULL};
static const char *const scatter_nd_attrs[] = {"reduction", NULL};

/* ---- GatherND (11+) -------------------------------------------------------------------- */

static infer_status gather_nd_parse(const node *n, void **params) {
  gather_nd_params v;
  TRY(attr_get_int(n, "batch_dims", 0, &v.batch_dims));
  if (node_attr(n, "batch_dims") && n->opset < 12)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GatherND: attribute 'batch_dims' does not exist at opset %lld",
                      (long long)n->opset);
  gather_nd_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "GatherND: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status gather_nd_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  const gather_nd_params *p = params;
  const tensor *x = in[0], *idx = in[1];
  nd_plan pl;
  TRY(index_check_reduce_dtype("GatherND", x->dtype, IR_NONE));
  TRY(index_check_indices_dtype("GatherND", idx, false));
  TRY(nd_make_plan("GatherND", x, idx, p->batch_dims, &pl));
  int rank = idx->rank - 1 + x->rank - pl.b - pl.m;
  if (rank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "GatherND: output rank %d exceeds %d", rank,
                      INFER_MAX_RANK);
  int k = 0;
  for (int i = 0; i < idx->rank - 1; i++) out[0]->dims[k++] = idx->dims[i];
  for (int i = pl.b + pl.m; i < x->rank; i++) out[0]->dims[k++] = x->dims[i];
  out[0]->rank = rank;
  out[0]->dtype = x->dtype;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "GatherND: output size overflows");
  return INFER_OK;
}

static infer_status gather_nd_run(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws) {
  const gather_nd_params *p = params;
  const tensor *x = in[0], *idx = in[1];
  nd_plan pl;
  TRY(nd_make_plan("GatherND", x, idx, p->batch_dims, &pl));
  size_t es = infer_dtype_size(x->dtype), bytes = (size_t)pl.slice * es;
  const char *src = x->data;
  char *dst = out[0]->data;
  for (int64_t bt = 0; bt < pl.batch; bt++)
    for (int64_t t = 0; t < pl.tuples; t++) {
      int64_t off = 0;
      TRY(nd_tuple_offset("GatherND", &pl, x, idx, bt, t, &off));
      if (bytes) memcpy(dst, src + off * (int64_t)es, bytes);
      dst += bytes;
    }
  return INFER_OK;
}

const op_desc op_gather_nd = {.name = "GatherND",
                              .domain = "",
                              .since = 11,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_outputs = 1,
                              .max_outputs = 1,
                              .attrs = gather_nd_attrs,
                              .parse = gather_nd_parse,
                              .infer = gather_nd_infer,
                              .run = gather_nd_run};

/* ---- ScatterND (11+) ------------------------------------------------------------------- */

static infer_status scatter_nd_parse(const node *n, void **params) {
  scatter_params v = {.axis = 0};
  TRY(index_parse_reduction(n, &v.reduction));
  scatter_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "ScatterND: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status scatter_nd_infer(const node *n, const void *params, const tensor *const *in,
                                     tensor *const *out) {
  const scatter_params *p = params;
  const tensor *x = in[0], *idx = in[1], *u = in[2];
  nd_plan pl;
  TRY(index_check_reduce_dtype("ScatterND", x->dtype, p->reduction));
  TRY(index_check_indices_dtype("ScatterND", idx, false));
  if (u->dtype != x->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "ScatterND: updates are %s, data is %s",
                      infer_dtype_name(u->dtype), infer_dtype_name(x->dtype));
  TRY(nd_make_plan("ScatterND", x, idx, 0, &pl));
  /* updates.shape = indices.shape[:-1] + data.shape[m:] */
  bool ok = u->rank == idx->rank - 1 + x->rank - pl.m;
  for (int i = 0; ok && i < idx->rank - 1; i++) ok = u->dims[i] == idx->dims[i];
  for (int i = pl.m; ok && i < x->rank; i++) ok = u->dims[idx->rank - 1 + i - pl.m] == x->dims[i];
  if (!ok) {
    char a[160], b[160], c[160];
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "ScatterND: updates %s must be indices.shape[:-1] + data.shape[%d:] "
                      "(indices %s, data %s)",
                      dims_format(u->rank, u->dims, a, sizeof a), pl.m,
                      dims_format(idx->rank, idx->dims, b, sizeof b),
                      dims_format(x->rank, x->dims, c, sizeof c));
  }
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  memcpy(out[0]->dims, x->dims, sizeof x->dims);
  return INFER_OK;
}

static infer_status scatter_nd_run(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out, void *ws) {
  const scatter_params *p = params;
  const tensor *x = in[0], *idx = in[1], *u = in[2];
  nd_plan pl;
  TRY(nd_make_plan("ScatterND", x, idx, 0, &pl));
  size_t es = infer_dtype_size(x->dtype);
  int64_t nb = tensor_nbytes(x);
  char *dst = out[0]->data;
  const char *src = u->data;
  if (nb > 0 && dst != x->data) memcpy(dst, x->data, (size_t)nb);
  for (int64_t t = 0; t < pl.tuples; t++) {
    int64_t off = 0;
    TRY(nd_tuple_offset("ScatterND", &pl, x, idx, 0, t, &off));
    index_reduce_run(x->dtype, p->reduction, dst + off * (int64_t)es,
                     src + t * pl.slice * (int64_t)es, pl.slice);
  }
  return INFER_OK;
}

const op_desc op_scatter_nd = {.name = "ScatterND",
                               .domain = "",
                               .since = 11,
                               .until = OP_OPSET_MAX,
                               .min_inputs = 3,
                               .max_inputs = 3,
                               .min_outputs = 1,
                               .max_outputs = 1,
                               .attrs = scatter_nd_attrs,
                               .parse = scatter_nd_parse,
                               .infer = scatter_nd_infer,
                               .run = scatter_nd_run};
