/* pool_unpool.c: MaxUnpool (opsets 9, 11), the inverse of MaxPool with indices (SegNet's
 * decoders): a zero tensor of the unpooled shape with each X[i] written at the flat index
 * I[i] (MaxPool's indices count over the whole [N, C, spatial...] tensor). The indices
 * are into the inferred shape, per spatial dim (in - 1) * stride + kernel - pads; an
 * output_shape input, at least that large, holds the result in its leading corner (the
 * ONNX reference's reading), zeros around. */
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct unpool_params {
  int nd;
  int64_t kernel[INFER_MAX_RANK], stride[INFER_MAX_RANK], pads[2 * INFER_MAX_RANK];
} unpool_params;

static const char *const unpool_attrs[] = {"kernel_shape", "pads", "strides", NULL};

static infer_status unpool_parse(const node *n, void **params) {
  unpool_params v;
  memset(&v, 0, sizeof v);
  const int64_t *k, *s, *p;
  int nk, ns, np;
  TRY(attr_get_ints(n, "kernel_shape", &k, &nk));
  TRY(attr_get_ints(n, "strides", &s, &ns));
  TRY(attr_get_ints(n, "pads", &p, &np));
  if (nk < 1 || nk > INFER_MAX_RANK - 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: kernel_shape is required (1 to %d dims)",
                      INFER_MAX_RANK - 2);
  if ((ns >= 0 && ns != nk) || (np >= 0 && np != 2 * nk))
    return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: strides / pads do not match the kernel's "
                      "%d dims", nk);
  v.nd = nk;
  for (int d = 0; d < nk; d++) {
    v.kernel[d] = k[d];
    v.stride[d] = ns > 0 ? s[d] : 1;
    v.pads[d] = np > 0 ? p[d] : 0;
    v.pads[nk + d] = np > 0 ? p[nk + d] : 0;
    if (v.kernel[d] < 1 || v.stride[d] < 1 || v.pads[d] < 0 || v.pads[nk + d] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: kernel, strides and pads must be "
                        "positive (pads non-negative)");
  }
  unpool_params *q = malloc(sizeof *q);
  if (!q) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "MaxUnpool: out of memory");
  *q = v;
  *params = q;
  return INFER_OK;
}

static infer_status unpool_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const unpool_params *p = params;
  const tensor *x = in[0], *idx = in[1], *shape = n->n_inputs > 2 ? in[2] : NULL;
  if (x->rank != p->nd + 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: X has rank %d for a %d-D kernel",
                      x->rank, p->nd);
  if (idx->dtype != INFER_DTYPE_INT64 || !dims_equal(idx->rank, idx->dims, x->rank, x->dims))
    return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: I must be int64 of X's shape");
  if (infer_dtype_size(x->dtype) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "MaxUnpool: X of dtype %s", infer_dtype_name(x->dtype));
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  out[0]->dims[0] = x->dims[0];
  out[0]->dims[1] = x->dims[1];
  if (shape) {
    if (shape->dtype != INFER_DTYPE_INT64 || shape->rank != 1 || shape->dims[0] != x->rank)
      return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: output_shape must be int64 [%d]",
                        x->rank);
    if (!shape->data) return OP_NEEDS_DATA;
    for (int d = 0; d < x->rank; d++) out[0]->dims[d] = tensor_get_i64(shape, d);
    if (out[0]->dims[0] != x->dims[0] || out[0]->dims[1] != x->dims[1])
      return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: output_shape changes N or C");
  } else {
    for (int d = 0; d < p->nd; d++)
      out[0]->dims[2 + d] = (x->dims[2 + d] - 1) * p->stride[d] + p->kernel[d] - p->pads[d] -
                            p->pads[p->nd + d];
  }
  for (int d = 0; d < x->rank; d++)
    if (out[0]->dims[d] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: output dim %d is negative", d);
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "MaxUnpool: output size overflows");
  return INFER_OK;
}

static infer_status unpool_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  (void)n, (void)ws;
  const unpool_params *p = params;
  const tensor *x = in[0], *idx = in[1];
  tensor *y = out[0];
  int64_t inf[INFER_MAX_RANK] = {x->dims[0], x->dims[1]}; /* the shape the indices count in */
  for (int d = 0; d < p->nd; d++)
    inf[2 + d] = (x->dims[2 + d] - 1) * p->stride[d] + p->kernel[d] - p->pads[d] - p->pads[p->nd + d];
  for (int d = 0; d < y->rank; d++)
    if (y->dims[d] < inf[d])
      return infer_fail(INFER_ERR_INVALID_INPUT, "MaxUnpool: output_shape dim %d (%lld) is below "
                        "the unpooled %lld", d, (long long)y->dims[d], (long long)inf[d]);
  const size_t es = infer_dtype_size(x->dtype);
  const int64_t total = dims_count(y->rank, inf), count = dims_count(x->rank, x->dims);
  memset(y->data, 0, (size_t)tensor_nbytes(y));
  for (int64_t i = 0; i < count; i++) {
    int64_t at = tensor_get_i64(idx, i);
    if (at < 0 || at >= total)
      return infer_fail(INFER_ERR_INVALID_INPUT, "MaxUnpool: index %lld outside the unpooled "
                        "%lld elements", (long long)at, (long long)total);
    int64_t dst = 0, stride = 1; /* the same coordinates in the output's dims */
    for (int d = y->rank - 1; d >= 0; d--) {
      dst += (at % inf[d]) * stride;
      at /= inf[d];
      stride *= y->dims[d];
    }
    memcpy((char *)y->data + dst * (int64_t)es, (const char *)x->data + i * (int64_t)es, es);
  }
  return INFER_OK;
}

const op_desc op_max_unpool = {.name = "MaxUnpool",
                               .domain = "",
                               .since = 9,
                               .until = OP_OPSET_MAX,
                               .min_inputs = 2,
                               .max_inputs = 3,
                               .min_outputs = 1,
                               .max_outputs = 1,
                               .attrs = unpool_attrs,
                               .parse = unpool_parse,
                               .infer = unpool_infer,
                               .run = unpool_run};
