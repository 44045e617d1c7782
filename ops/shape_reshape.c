/* shape_reshape.c: Reshape, Flatten, Squeeze, Unsqueeze: new dims, same bytes. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "shape_params.h"

static infer_status view_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  return movement_copy_all(in[0], out[0]);
}

static infer_status input_count(const char *op, const tensor *t, int64_t *count) {
  size_t es;
  TRY(movement_elem_size(op, t->dtype, &es));
  *count = dims_count(t->rank, t->dims);
  if (*count < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input size overflows", op);
  return INFER_OK;
}

/* ---- Reshape (5+; allowzero since 14) ---------------------------------------------
 * A 0 in `shape` copies the input dim at that index (unless allowzero=1: then
 * it is a real 0); one -1 takes whatever size is left. */

static const char *const reshape_attrs[] = {"allowzero", NULL};

static infer_status reshape_parse(const node *n, void **params) {
  reshape_params v;
  TRY(attr_get_int(n, "allowzero", 0, &v.allowzero));
  if (v.allowzero != 0 && v.allowzero != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: allowzero must be 0 or 1, not %lld",
                      (long long)v.allowzero);
  if (n->opset < 14 && node_attr(n, "allowzero"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: allowzero needs opset 14");
  reshape_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Reshape: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status reshape_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const reshape_params *p = params;
  int64_t count, shape[INFER_MAX_RANK], known = 1;
  int rank, infer_at = -1;
  char a[160], b[160];
  TRY(input_count("Reshape", in[0], &count));
  if (in[1]->dtype != INFER_DTYPE_INT64)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: shape must be int64, not %s",
                      infer_dtype_name(in[1]->dtype));
  if (in[1]->rank != 1) return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: shape must be 1-D");
  if (!in[1]->data) return OP_NEEDS_DATA;
  TRY(tensor_read_ints(in[1], "Reshape shape", shape, INFER_MAX_RANK, &rank));
  for (int i = 0; i < rank; i++) {
    int64_t d = shape[i];
    if (d == 0 && !p->allowzero) {
      if (i >= in[0]->rank)
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "Reshape: shape[%d] = 0 copies a dim the %d-D input lacks", i,
                          in[0]->rank);
      d = in[0]->dims[i];
    } else if (d == -1) {
      if (infer_at >= 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: more than one -1 in shape");
      infer_at = i;
      continue;
    } else if (d < 0) {
      return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: invalid dim %lld in shape",
                        (long long)d);
    }
    out[0]->dims[i] = d;
    if (!size_mul(known, d, &known))
      return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: target size overflows");
  }
  if (infer_at >= 0) {
    if (known == 0 || count % known != 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: cannot reshape %s to %s",
                        dims_format(in[0]->rank, in[0]->dims, a, sizeof a),
                        dims_format(rank, shape, b, sizeof b));
    out[0]->dims[infer_at] = count / known;
  } else if (known != count) {
    return infer_fail(INFER_ERR_INVALID_MODEL, "Reshape: cannot reshape %s to %s",
                      dims_format(in[0]->rank, in[0]->dims, a, sizeof a),
                      dims_format(rank, shape, b, sizeof b));
  }
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = rank;
  return INFER_OK;
}

const op_desc op_reshape = {.name = "Reshape",
                            .domain = "",
                            .since = 5,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 2,
                            .max_inputs = 2,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = reshape_attrs,
                            .parse = reshape_parse,
                            .infer = reshape_infer,
                            .run = view_run};

/* ---- Flatten (1+; negative axis since 11) ---------------------------------------- */

static const char *const axis_attrs[] = {"axis", NULL};

static infer_status flatten_parse(const node *n, void **params) {
  flatten_params v;
  TRY(attr_get_int(n, "axis", 1, &v.axis));
  flatten_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Flatten: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status flatten_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  int64_t axis = ((const flatten_params *)params)->axis, count;
  int r = in[0]->rank;
  TRY(input_count("Flatten", in[0], &count));
  if (axis < (n->opset >= 11 ? -r : 0) || axis > r)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Flatten: axis %lld out of range for rank %d",
                      (long long)axis, r);
  if (axis < 0) axis += r;
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = 2;
  out[0]->dims[0] = dims_count((int)axis, in[0]->dims);
  out[0]->dims[1] = dims_count(r - (int)axis, in[0]->dims + axis);
  return INFER_OK;
}

const op_desc op_flatten = {.name = "Flatten",
                            .domain = "",
                            .since = 1,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 1,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = axis_attrs,
                            .parse = flatten_parse,
                            .infer = flatten_infer,
                            .run = view_run};

/* ---- Squeeze / Unsqueeze: `axes` attribute before opset 13, input from 13 ---------- */

static const char *const axes_attrs[] = {"axes", NULL};

static infer_status axes_parse(const node *n, void **params) {
  const int64_t *v;
  int count;
  TRY(attr_get_ints(n, "axes", &v, &count));
  if (n->opset >= 13 && count >= 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axes is an input since opset 13", n->op_type);
  if (count > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %d axes, more than rank %d", n->op_type, count,
                      INFER_MAX_RANK);
  axes_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  p->n = count;
  if (count > 0) memcpy(p->axes, v, (size_t)count * sizeof *v);
  *params = p;
  return INFER_OK;
}

/* The axes from the attribute or input; *count = -1 when none were given. */
static infer_status axes_get(const node *n, const axes_params *p, const tensor *const *in,
                             int64_t *axes, int *count) {
  *count = -1;
  if (n->opset < 13 && n->n_inputs > 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: opset %lld takes one input", n->op_type,
                      (long long)n->opset);
  if (n->opset < 13) {
    *count = p->n;
    if (p->n > 0) memcpy(axes, p->axes, (size_t)p->n * sizeof *axes);
    return INFER_OK;
  }
  if (n->n_inputs < 2 || !in[1]) return INFER_OK;
  if (in[1]->dtype != INFER_DTYPE_INT64)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axes must be int64, not %s", n->op_type,
                      infer_dtype_name(in[1]->dtype));
  if (!in[1]->data) return OP_NEEDS_DATA;
  return tensor_read_ints(in[1], "axes", axes, INFER_MAX_RANK, count);
}

static infer_status squeeze_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  int64_t axes[INFER_MAX_RANK], count;
  int na, r = in[0]->rank;
  bool drop[INFER_MAX_RANK] = {false};
  TRY(input_count("Squeeze", in[0], &count));
  TRY(axes_get(n, params, in, axes, &na));
  if (na <= 0) { /* no axes (or, as runtimes do, an empty list): every 1-dim goes */
    for (int i = 0; i < r; i++) drop[i] = in[0]->dims[i] == 1;
  }
  if (r == 0 && na > 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Squeeze: a scalar has no axes to squeeze");
  for (int i = 0; i < na; i++) {
    int a;
    TRY(axis_normalize(axes[i], r, "Squeeze axis", &a));
    if (drop[a]) return infer_fail(INFER_ERR_INVALID_MODEL, "Squeeze: axis %d repeated", a);
    if (in[0]->dims[a] != 1) {
      char b[160];
      return infer_fail(INFER_ERR_INVALID_MODEL, "Squeeze: dim %d of %s is not 1", a,
                        dims_format(r, in[0]->dims, b, sizeof b));
    }
    drop[a] = true;
  }
  int k = 0;
  for (int i = 0; i < r; i++)
    if (!drop[i]) out[0]->dims[k++] = in[0]->dims[i];
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = k;
  return INFER_OK;
}

const op_desc op_squeeze = {.name = "Squeeze",
                            .domain = "",
                            .since = 1,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 2,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = axes_attrs,
                            .parse = axes_parse,
                            .infer = squeeze_infer,
                            .run = view_run};

static infer_status unsqueeze_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  int64_t axes[INFER_MAX_RANK], count;
  int na, r = in[0]->rank;
  bool add[INFER_MAX_RANK] = {false};
  TRY(input_count("Unsqueeze", in[0], &count));
  TRY(axes_get(n, params, in, axes, &na));
  if (na < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Unsqueeze: axes are required");
  if (r + na > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Unsqueeze: output rank %d exceeds %d", r + na,
                      INFER_MAX_RANK);
  for (int i = 0; i < na; i++) {
    int a;
    TRY(axis_normalize(axes[i], r + na, "Unsqueeze axis", &a));
    if (add[a]) return infer_fail(INFER_ERR_INVALID_MODEL, "Unsqueeze: axis %d repeated", a);
    add[a] = true;
  }
  for (int i = 0, k = 0; i < r + na; i++) out[0]->dims[i] = add[i] ? 1 : in[0]->dims[k++];
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = r + na;
  return INFER_OK;
}

const op_desc op_unsqueeze = {.name = "Unsqueeze",
                              .domain = "",
                              .since = 1,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_outputs = 1,
                              .max_outputs = 1,
                              .attrs = axes_attrs,
                              .parse = axes_parse,
                              .infer = unsqueeze_infer,
                              .run = view_run};
