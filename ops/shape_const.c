/* shape_const.c: Constant, ConstantOfShape and Range: outputs made from attributes
 * or from small scalar inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "shape_params.h"

/* ---- Constant (1+; value_float(s)/value_int(s) since 12) ------------------------------ */

static const char *const constant_attrs[] = {
    "value",        "value_float",   "value_floats", "value_int", "value_ints",
    "value_string", "value_strings", "sparse_value", NULL,
};

static infer_status constant_parse(const node *n, void **params) {
  static const struct {
    const char *name;
    attr_type type;
    int kind; /* -1: valid ONNX but not supported */
  } forms[] = {
      {"value", ATTR_TENSOR, CONSTANT_TENSOR},
      {"value_float", ATTR_FLOAT, CONSTANT_FLOAT},
      {"value_floats", ATTR_FLOATS, CONSTANT_FLOATS},
      {"value_int", ATTR_INT, CONSTANT_INT},
      {"value_ints", ATTR_INTS, CONSTANT_INTS},
      {"value_string", ATTR_STRING, -1},
      {"value_strings", ATTR_STRINGS, -1},
      {"sparse_value", ATTR_UNDEFINED, -1},
  };
  int found = -1, given = 0;
  for (int i = 0; i < (int)(sizeof forms / sizeof forms[0]); i++) {
    const attr *a = node_attr(n, forms[i].name);
    if (!a) continue;
    given++;
    found = i;
    if (forms[i].kind < 0)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Constant: attribute '%s' is not supported",
                        forms[i].name);
    if (a->type != forms[i].type)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Constant: attribute '%s' has the wrong type",
                        forms[i].name);
  }
  if (given != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Constant: exactly one value attribute must be given, found %d", given);
  constant_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Constant: out of memory");
  p->kind = (constant_kind)forms[found].kind;
  *params = p;
  return INFER_OK;
}

/* Where the constant's bytes live and how many there are (shape_params.h). */
infer_status constant_source(const node *n, const constant_params *p, tensor *shape,
                                    const void **data) {
  memset(shape, 0, sizeof *shape);
  switch (p->kind) {
    case CONSTANT_TENSOR: {
      const attr *a = node_attr(n, "value");
      size_t es;
      TRY(movement_elem_size("Constant", a->t.dtype, &es));
      if (a->t.rank < 0 || a->t.rank > INFER_MAX_RANK)
        return infer_fail(INFER_ERR_UNSUPPORTED, "Constant: rank %d", a->t.rank);
      *shape = a->t;
      *data = a->t.data;
      int64_t bytes = tensor_nbytes(shape);
      if (bytes < 0 || (bytes > 0 && !a->t.data))
        return infer_fail(INFER_ERR_INVALID_MODEL, "Constant: value tensor has no valid data");
      break;
    }
    case CONSTANT_FLOAT:
      shape->dtype = INFER_DTYPE_FLOAT32;
      *data = &node_attr(n, "value_float")->f;
      break;
    case CONSTANT_FLOATS: {
      const attr *a = node_attr(n, "value_floats");
      shape->dtype = INFER_DTYPE_FLOAT32;
      shape->rank = 1;
      shape->dims[0] = a->n;
      *data = a->floats;
      break;
    }
    case CONSTANT_INT:
      shape->dtype = INFER_DTYPE_INT64;
      *data = &node_attr(n, "value_int")->i;
      break;
    case CONSTANT_INTS: {
      const attr *a = node_attr(n, "value_ints");
      shape->dtype = INFER_DTYPE_INT64;
      shape->rank = 1;
      shape->dims[0] = a->n;
      *data = a->ints;
      break;
    }
  }
  return INFER_OK;
}

static infer_status constant_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  tensor shape;
  const void *data = NULL;
  TRY(constant_source(n, params, &shape, &data));
  movement_same_shape(&shape, out[0]);
  return INFER_OK;
}

static infer_status constant_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  tensor shape;
  const void *data = NULL;
  TRY(constant_source(n, params, &shape, &data));
  int64_t bytes = tensor_nbytes(&shape);
  if (bytes > 0) memcpy(out[0]->data, data, (size_t)bytes);
  return INFER_OK;
}

const op_desc op_constant = {.name = "Constant",
                             .domain = "",
                             .since = 1,
                             .until = OP_OPSET_MAX,
                             .min_inputs = 0,
                             .max_inputs = 0,
                             .min_outputs = 1,
                             .max_outputs = 1,
                             .attrs = constant_attrs,
                             .parse = constant_parse,
                             .infer = constant_infer,
                             .run = constant_run};

/* ---- ConstantOfShape (9+) ---------------------------------------------------------------
 * Output of shape `input` (empty = scalar) filled with the one element of the
 * `value` tensor attribute (default float32 0). */

static const char *const cos_attrs[] = {"value", NULL};

static infer_status cos_parse(const node *n, void **params) {
  cos_params v = {.dtype = INFER_DTYPE_FLOAT32};
  const attr *a = node_attr(n, "value");
  if (a) {
    size_t es;
    if (a->type != ATTR_TENSOR)
      return infer_fail(INFER_ERR_INVALID_MODEL, "ConstantOfShape: value must be a tensor");
    TRY(movement_elem_size("ConstantOfShape", a->t.dtype, &es));
    if (dims_count(a->t.rank, a->t.dims) != 1 || !a->t.data || es > sizeof v.value)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "ConstantOfShape: value must hold exactly one element");
    v.dtype = a->t.dtype;
    memcpy(v.value, a->t.data, es);
  }
  cos_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "ConstantOfShape: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status cos_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  int rank;
  if (in[0]->dtype != INFER_DTYPE_INT64 || in[0]->rank != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "ConstantOfShape: input must be 1-D int64");
  if (!in[0]->data) return OP_NEEDS_DATA;
  TRY(tensor_read_ints(in[0], "ConstantOfShape shape", out[0]->dims, INFER_MAX_RANK, &rank));
  for (int i = 0; i < rank; i++)
    if (out[0]->dims[i] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "ConstantOfShape: negative dim %lld",
                        (long long)out[0]->dims[i]);
  out[0]->rank = rank;
  out[0]->dtype = ((const cos_params *)params)->dtype;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "ConstantOfShape: output size overflows");
  return INFER_OK;
}

static infer_status cos_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const cos_params *p = params;
  size_t es = infer_dtype_size(p->dtype);
  int64_t count = dims_count(out[0]->rank, out[0]->dims);
  bool zero = true;
  for (size_t i = 0; i < es; i++) zero = zero && p->value[i] == 0;
  if (zero) {
    memset(out[0]->data, 0, (size_t)count * es);
    return INFER_OK;
  }
  char *o = out[0]->data;
  for (int64_t i = 0; i < count; i++) memcpy(o + i * (int64_t)es, p->value, es);
  return INFER_OK;
}

const op_desc op_constant_of_shape = {.name = "ConstantOfShape",
                                      .domain = "",
                                      .since = 9,
                                      .until = OP_OPSET_MAX,
                                      .min_inputs = 1,
                                      .max_inputs = 1,
                                      .min_outputs = 1,
                                      .max_outputs = 1,
                                      .attrs = cos_attrs,
                                      .parse = cos_parse,
                                      .infer = cos_infer,
                                      .run = cos_run};

/* ---- Range (11+) ----------------------------------------------------------------------
 * start, start+delta, ... while short of limit: max(ceil((limit-start)/delta), 0)
 * elements. Integers are counted exactly in 64 bits, floats in double. */

static bool range_dtype_ok(infer_dtype t) {
  return dtype_is_float(t) || dtype_is_signed_int(t) || t == INFER_DTYPE_UINT8 ||
         t == INFER_DTYPE_UINT16 || t == INFER_DTYPE_UINT32;
}

static infer_status range_count(const tensor *const *in, int64_t *count) {
  const tensor *s = in[0], *l = in[1], *d = in[2];
  if (dtype_is_float(s->dtype)) {
    double start = tensor_get_f64(s, 0), limit = tensor_get_f64(l, 0), delta = tensor_get_f64(d, 0);
    double c = ceil((limit - start) / delta);
    if (delta == 0 || c != c || c > 4.0e18)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Range: (%g, %g, %g) gives no finite length",
                        start, limit, delta);
    *count = c > 0 ? (int64_t)c : 0;
    return INFER_OK;
  }
  int64_t start = tensor_get_i64(s, 0), limit = tensor_get_i64(l, 0), delta = tensor_get_i64(d, 0);
  if (delta == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Range: delta is 0");
  /* unsigned differences cannot overflow for any pair of int64 values */
  uint64_t diff, step, c;
  if (delta > 0 ? limit <= start : limit >= start) {
    *count = 0;
    return INFER_OK;
  }
  diff = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
  step = delta > 0 ? (uint64_t)delta : (uint64_t)0 - (uint64_t)delta;
  c = (diff - 1) / step + 1;
  if (c > (uint64_t)INT64_MAX)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Range: length overflows");
  *count = (int64_t)c;
  return INFER_OK;
}

static infer_status range_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  static const char *const names[] = {"start", "limit", "delta"};
  int64_t count = 0;
  if (!range_dtype_ok(in[0]->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Range: dtype %s is not supported",
                      infer_dtype_name(in[0]->dtype));
  for (int i = 0; i < 3; i++) {
    if (in[i]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Range: %s is %s, start is %s", names[i],
                        infer_dtype_name(in[i]->dtype), infer_dtype_name(in[0]->dtype));
    if (dims_count(in[i]->rank, in[i]->dims) != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Range: %s must be a scalar", names[i]);
  }
  for (int i = 0; i < 3; i++)
    if (!in[i]->data) return OP_NEEDS_DATA;
  TRY(range_count(in, &count));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = 1;
  out[0]->dims[0] = count;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Range: output size overflows");
  return INFER_OK;
}

static infer_status range_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  tensor *o = out[0];
  int64_t count = o->dims[0];
  if (dtype_is_float(o->dtype)) {
    double start = tensor_get_f64(in[0], 0), delta = tensor_get_f64(in[2], 0);
    for (int64_t i = 0; i < count; i++) tensor_set_f64(o, i, start + (double)i * delta);
  } else {
    /* wraps only past the limit, which the count never reaches */
    uint64_t start = (uint64_t)tensor_get_i64(in[0], 0), delta = (uint64_t)tensor_get_i64(in[2], 0);
    for (int64_t i = 0; i < count; i++)
      tensor_set_i64(o, i, (int64_t)(start + (uint64_t)i * delta));
  }
  return INFER_OK;
}

const op_desc op_range = {.name = "Range",
                          .domain = "",
                          .since = 11,
                          .until = OP_OPSET_MAX,
                          .min_inputs = 3,
                          .max_inputs = 3,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = range_infer,
                          .run = range_run};
