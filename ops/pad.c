/* pad.c: Pad. Opsets 2-10 take `pads` and `value` as attributes; 11+ take pads and
 * an optional constant_value as inputs, 18+ an optional axes input. Modes: constant,
 * reflect, edge, and wrap (19+).
 *
 * Negative pads crop. As in ONNX Runtime, the crop happens first: reflect, edge and
 * wrap then extend the cropped region. Large pads repeat periodically (reflect,
 * wrap) like numpy.pad. Elements are copied as bytes, so every fixed-size dtype
 * works. */
#include <stdlib.h>

#include "pad_plan.h"
#include "pad_resize.h"
#include "reduce_util.h"

static const char *const pad_attrs[] = {"mode", "pads", "value", NULL};

static infer_status pad_parse(const node *n, void **params) {
  pad_params tmp;
  memset(&tmp, 0, sizeof tmp);
  const char *mode;
  TRY(attr_get_string(n, "mode", "constant", &mode));
  if (strcmp(mode, "constant") == 0)
    tmp.mode = PAD_CONSTANT;
  else if (strcmp(mode, "reflect") == 0)
    tmp.mode = PAD_REFLECT;
  else if (strcmp(mode, "edge") == 0)
    tmp.mode = PAD_EDGE;
  else if (strcmp(mode, "wrap") == 0 && n->opset >= 19)
    tmp.mode = PAD_WRAP;
  else
    return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: mode '%s' is not valid at opset %lld",
                      mode, (long long)n->opset);
  if (n->opset < 11) {
    const int64_t *pads;
    TRY(attr_get_ints(n, "pads", &pads, &tmp.n_pads));
    if (tmp.n_pads < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: attribute 'pads' is required");
    if (tmp.n_pads > 2 * INFER_MAX_RANK || tmp.n_pads % 2)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: 'pads' has %d entries", tmp.n_pads);
    memcpy(tmp.pads, pads, sizeof(int64_t) * (size_t)tmp.n_pads);
    TRY(attr_get_float(n, "value", 0.0f, &tmp.value));
  } else if (node_attr(n, "pads") || node_attr(n, "value")) {
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Pad: 'pads' and 'value' are inputs, not attributes, at opset %lld",
                      (long long)n->opset);
  }
  pad_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Pad: out of memory");
  *p = tmp;
  *params = p;
  return INFER_OK;
}

infer_status pad_resolve(const node *n, const pad_params *p, const tensor *x,
                         const tensor *const *in, int64_t *begin, int64_t *end) {
  int r = x->rank;
  int64_t pads[2 * INFER_MAX_RANK];
  int np, axes_n = r;
  int axes[INFER_MAX_RANK];
  for (int i = 0; i < r; i++) axes[i] = i;
  if (n->opset < 11) {
    if (n->n_inputs > 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: opset %lld takes one input",
                        (long long)n->opset);
    np = p->n_pads;
    memcpy(pads, p->pads, sizeof(int64_t) * (size_t)np);
  } else {
    const tensor *pt = n->n_inputs > 1 ? in[1] : NULL;
    if (!pt) return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: input 'pads' is required");
    const tensor *at = n->n_inputs > 3 ? in[3] : NULL;
    if (!pt->data || (at && !at->data)) return OP_NEEDS_DATA;
    if (pt->dtype != INFER_DTYPE_INT64)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: pads must be int64, not %s",
                        infer_dtype_name(pt->dtype));
    TRY(tensor_read_ints(pt, "Pad pads", pads, 2 * INFER_MAX_RANK, &np));
    if (at) {
      if (n->opset < 18)
        return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: the axes input needs opset 18");
      int64_t raw[INFER_MAX_RANK];
      bool seen[INFER_MAX_RANK] = {false};
      TRY(tensor_read_ints(at, "Pad axes", raw, INFER_MAX_RANK, &axes_n));
      for (int i = 0; i < axes_n; i++) {
        TRY(axis_normalize(raw[i], r, "Pad axes entry", &axes[i]));
        if (seen[axes[i]])
          return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: axis %lld is repeated",
                            (long long)raw[i]);
        seen[axes[i]] = true;
      }
    }
  }
  if (np != 2 * axes_n)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: %d pads for %d axes (need %d)", np,
                      axes_n, 2 * axes_n);
  for (int i = 0; i < r; i++) begin[i] = end[i] = 0;
  for (int i = 0; i < axes_n; i++) {
    begin[axes[i]] = pads[i];
    end[axes[i]] = pads[axes_n + i];
  }
  return INFER_OK;
}

void pad_region(int rank, const int64_t *dims, const int64_t *begin, const int64_t *end,
                int64_t *lo, int64_t *ext, int64_t *pb) {
  for (int i = 0; i < rank; i++) {
    lo[i] = begin[i] < 0 ? -begin[i] : 0;
    ext[i] = dims[i] - lo[i] - (end[i] < 0 ? -end[i] : 0);
    pb[i] = begin[i] > 0 ? begin[i] : 0;
  }
}

static infer_status pad_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const pad_params *p = params;
  const tensor *x = in[0];
  TRY(nr_require(x, "Pad", "data"));
  if (infer_dtype_size(x->dtype) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Pad: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, "Pad"));
  const tensor *cv = n->opset >= 11 && n->n_inputs > 2 ? in[2] : NULL;
  if (cv && dims_count(cv->rank, cv->dims) > 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: constant_value must be a scalar");
  int64_t b[INFER_MAX_RANK], e[INFER_MAX_RANK];
  TRY(pad_resolve(n, p, x, in, b, e));
  for (int i = 0; i < x->rank; i++) {
    int64_t d = x->dims[i], crop;
    int64_t kept = d - (b[i] < 0 ? -b[i] : 0) - (e[i] < 0 ? -e[i] : 0);
    int64_t grow = (b[i] > 0 ? b[i] : 0) + (e[i] > 0 ? e[i] : 0);
    if (kept < 0 || !size_add(kept, grow, &crop))
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Pad: pads %lld, %lld on axis %d of size %lld give a negative size",
                        (long long)b[i], (long long)e[i], i, (long long)d);
    if (p->mode != PAD_CONSTANT && kept == 0 && grow > 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Pad: cannot pad an empty axis %d in a non-constant mode", i);
    out[0]->dims[i] = crop;
  }
  out[0]->rank = x->rank;
  out[0]->dtype = x->dtype;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: output size overflows");
  return INFER_OK;
}

/* Source index (within the kept region of `ext` elements) of output position t
 * relative to the region's start; -1 for the constant. */
static int64_t pad_map(enum pad_mode mode, int64_t t, int64_t ext) {
  if (t >= 0 && t < ext) return t;
  switch (mode) {
    case PAD_EDGE: return t < 0 ? 0 : ext - 1;
    case PAD_WRAP: return ((t % ext) + ext) % ext;
    case PAD_REFLECT: {
      if (ext == 1) return 0;
      int64_t period = 2 * (ext - 1), m = ((t % period) + period) % period;
      return m < ext ? m : period - m;
    }
    default: return -1;
  }
}

static infer_status pad_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const pad_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  size_t es = infer_dtype_size(x->dtype);
  int r = x->rank;
  int64_t b[INFER_MAX_RANK], e[INFER_MAX_RANK];
  infer_status st = pad_resolve(n, p, x, in, b, e);
  if (st == OP_NEEDS_DATA) return infer_fail(INFER_ERR_RUNTIME, "Pad: pads not available");
  TRY(st);

  /* the constant as one element of x's dtype */
  unsigned char cval[16] = {0};
  tensor ct = {.dtype = x->dtype, .rank = 0, .data = cval};
  const tensor *cv = n->opset >= 11 && n->n_inputs > 2 ? in[2] : NULL;
  if (cv && dims_count(cv->rank, cv->dims) == 1) {
    if (cv->dtype == x->dtype)
      memcpy(cval, cv->data, es);
    else
      tensor_set_f64(&ct, 0, tensor_get_f64(cv, 0));
  } else if (n->opset < 11) {
    tensor_set_f64(&ct, 0, p->value);
  }

  int64_t total = dims_count(y->rank, y->dims);
  if (total == 0) return INFER_OK;
  const unsigned char *src = x->data;
  unsigned char *dst = y->data;
  if (r == 0) {
    memcpy(dst, src, es);
    return INFER_OK;
  }
  int64_t xs[INFER_MAX_RANK], lo[INFER_MAX_RANK], ext[INFER_MAX_RANK], pb[INFER_MAX_RANK];
  dims_strides(r, x->dims, xs);
  pad_region(r, x->dims, b, e, lo, ext, pb);
  int last = r - 1;
  int64_t row_len = y->dims[last], rows = total / row_len;
  int64_t idx[INFER_MAX_RANK] = {0};
  for (int64_t row = 0; row < rows; row++) {
    unsigned char *out_row = dst + (size_t)(row * row_len) * es;
    int64_t off = 0;
    bool constant_row = false;
    for (int d = 0; d < last; d++) {
      int64_t s = pad_map(p->mode, idx[d] - pb[d], ext[d]);
      if (s < 0) {
        constant_row = true;
        break;
      }
      off += (lo[d] + s) * xs[d];
    }
    if (constant_row) {
      for (int64_t i = 0; i < row_len; i++) memcpy(out_row + (size_t)i * es, cval, es);
    } else {
      const unsigned char *in_row = src + (size_t)(off + lo[last]) * es;
      int64_t i = 0;
      for (; i < row_len && i < pb[last]; i++) {
        int64_t s = pad_map(p->mode, i - pb[last], ext[last]);
        memcpy(out_row + (size_t)i * es, s < 0 ? cval : in_row + (size_t)s * es, es);
      }
      int64_t body = ext[last] < row_len - i ? ext[last] : row_len - i;
      if (body > 0) {
        memcpy(out_row + (size_t)i * es, in_row, (size_t)body * es);
        i += body;
      }
      for (; i < row_len; i++) {
        int64_t s = pad_map(p->mode, i - pb[last], ext[last]);
        memcpy(out_row + (size_t)i * es, s < 0 ? cval : in_row + (size_t)s * es, es);
      }
    }
    for (int d = last - 1; d >= 0; d--) {
      if (++idx[d] < y->dims[d]) break;
      idx[d] = 0;
    }
  }
  return INFER_OK;
}

const op_desc op_pad = {.name = "Pad",
                        .domain = "",
                        .since = 2,
                        .until = OP_OPSET_MAX,
                        .min_inputs = 1,
                        .max_inputs = 4,
                        .min_outputs = 1,
                        .max_outputs = 1,
                        .attrs = pad_attrs,
                        .parse = pad_parse,
                        .infer = pad_infer,
                        .run = pad_run};
