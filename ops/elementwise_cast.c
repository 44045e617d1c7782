/* elementwise_cast.c: Cast (attribute `to`) and CastLike (the second input's
 * dtype) between all numeric dtypes and bool; BitCast (reinterpreting the bits
 * as a dtype of the same width). Conversion rules are in
 * elementwise_convert.c. Strings, float8, 4-bit and 2-bit types are not dtypes
 * of this engine: they fail with INFER_ERR_UNSUPPORTED. `saturate` and
 * `round_mode` only affect float8 targets, so they are checked and ignored. */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

static infer_status check_common_attrs(const node *n) {
  int64_t sat;
  const char *mode;
  TRY(attr_get_int(n, "saturate", 1, &sat));
  TRY(attr_get_string(n, "round_mode", "up", &mode));
  if (strcmp(mode, "up") != 0 && strcmp(mode, "down") != 0 && strcmp(mode, "nearest") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: attribute round_mode must be up, down or nearest, not '%s'",
                      n->op_type, mode);
  return INFER_OK;
}

const char *onnx_type_name(int64_t t) {
  static const char *const names[] = {
      [8] = "string",        [14] = "complex64",  [15] = "complex128",
      [17] = "float8e4m3fn", [18] = "float8e4m3fnuz", [19] = "float8e5m2",
      [20] = "float8e5m2fnuz", [21] = "uint4",    [22] = "int4",
      [23] = "float4e2m1",   [24] = "float8e8m0", [25] = "uint2",
      [26] = "int2"};
  if (t >= 0 && t < (int64_t)(sizeof names / sizeof names[0]) && names[t]) return names[t];
  return "unknown";
}

/* Reads and checks attribute `to` into a new cast_params block. */
static infer_status parse_to(const node *n, void **params) {
  int64_t to;
  TRY(attr_get_int(n, "to", -1, &to));
  if (to < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute 'to' is missing", n->op_type);
  if (to >= EW_DTYPE_SLOTS || !ew_dtype_known((infer_dtype)to))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: target dtype %s (%lld) is not supported",
                      n->op_type, onnx_type_name(to), (long long)to);
  cast_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  p->to = (infer_dtype)to;
  *params = p;
  return INFER_OK;
}

static infer_status cast_parse(const node *n, void **params) {
  TRY(check_common_attrs(n));
  return parse_to(n, params);
}

static infer_status cast_infer(const node *n, const void *p, const tensor *const *in,
                               tensor *const *out) {
  const cast_params *cp = p;
  if (!cp) return infer_fail(INFER_ERR_INTERNAL, "Cast: attributes were not parsed");
  TRY(ew_check_dtype("Cast", "input", in[0]->dtype, EW_ALL));
  ew_copy_shape(out[0], in[0], cp->to);
  return INFER_OK;
}

static infer_status castlike_parse(const node *n, void **params) {
  *params = NULL;
  return check_common_attrs(n);
}

static infer_status castlike_infer(const node *n, const void *p, const tensor *const *in,
                                   tensor *const *out) {
  TRY(ew_check_dtype("CastLike", "input", in[0]->dtype, EW_ALL));
  TRY(ew_check_dtype("CastLike", "target_type", in[1]->dtype, EW_ALL));
  ew_copy_shape(out[0], in[0], in[1]->dtype);
  return INFER_OK;
}

static infer_status cast_run(const node *n, const void *p, const tensor *const *in,
                             tensor *const *out, void *ws) {
  ew_convert(out[0]->dtype, out[0]->data, in[0]->dtype, in[0]->data,
             dims_count(in[0]->rank, in[0]->dims));
  return INFER_OK;
}

static infer_status bitcast_infer(const node *n, const void *p, const tensor *const *in,
                                  tensor *const *out) {
  const cast_params *cp = p;
  if (!cp) return infer_fail(INFER_ERR_INTERNAL, "BitCast: attributes were not parsed");
  TRY(ew_check_dtype("BitCast", "input", in[0]->dtype, EW_ALL));
  if (infer_dtype_size(in[0]->dtype) != infer_dtype_size(cp->to))
    return infer_fail(INFER_ERR_INVALID_MODEL, "BitCast: %s and %s differ in bit width",
                      infer_dtype_name(in[0]->dtype), infer_dtype_name(cp->to));
  ew_copy_shape(out[0], in[0], cp->to);
  return INFER_OK;
}

static infer_status bitcast_run(const node *n, const void *p, const tensor *const *in,
                                tensor *const *out, void *ws) {
  int64_t nb = tensor_nbytes(in[0]);
  if (nb > 0) memcpy(out[0]->data, in[0]->data, (size_t)nb);
  return INFER_OK;
}

static const char *const bitcast_attrs[] = {"to", NULL};
const op_desc op_bitcast = {.name = "BitCast", .domain = "", .since = 26,
                            .until = OP_OPSET_MAX, .min_inputs = 1, .max_inputs = 1,
                            .min_outputs = 1, .max_outputs = 1, .attrs = bitcast_attrs,
                            .parse = parse_to, .infer = bitcast_infer, .run = bitcast_run};

static const char *const cast_attrs[] = {"to", "saturate", "round_mode", NULL};
static const char *const castlike_attrs[] = {"saturate", "round_mode", NULL};

/* Opset 6 made `to` an integer (opset 1 used a string). */
const op_desc op_cast = {.name = "Cast", .domain = "", .since = 6, .until = OP_OPSET_MAX,
                         .min_inputs = 1, .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                         .attrs = cast_attrs, .parse = cast_parse, .infer = cast_infer,
                         .run = cast_run};
const op_desc op_castlike = {.name = "CastLike", .domain = "", .since = 15,
                             .until = OP_OPSET_MAX, .min_inputs = 2, .max_inputs = 2,
                             .min_outputs = 1, .max_outputs = 1, .attrs = castlike_attrs,
                             .parse = castlike_parse, .infer = castlike_infer,
                             .run = cast_run};
