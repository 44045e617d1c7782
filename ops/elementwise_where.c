/* elementwise_where.c: Where(cond, X, Y) with three-way numpy broadcasting. The
 * selection only moves bytes, so one loop per element size covers every dtype. */
#include <string.h>

#include "elementwise.h"

#define WHERE_ROW(T)                                                       \
  do {                                                                     \
    T *o = (T *)it->ptr[0];                                                \
    const uint8_t *c = (const uint8_t *)it->ptr[1];                        \
    const T *x = (const T *)it->ptr[2], *y = (const T *)it->ptr[3];        \
    int64_t sc = it->inner[1], sx = it->inner[2], sy = it->inner[3];       \
    if (sc == 1 && sx == 1 && sy == 1)                                     \
      for (int64_t i = 0; i < it->n; i++) o[i] = c[i] ? x[i] : y[i];       \
    else                                                                   \
      for (int64_t i = 0; i < it->n; i++) o[i] = c[i * sc] ? x[i * sx] : y[i * sy]; \
  } while (0)

static void where_row(const ew_iter *it, size_t es) {
  switch (es) {
    case 1: WHERE_ROW(uint8_t); break;
    case 2: WHERE_ROW(uint16_t); break;
    case 4: WHERE_ROW(uint32_t); break;
    default: WHERE_ROW(uint64_t); break;
  }
}

static infer_status where_infer(const node *n, const void *p, const tensor *const *in,
                                tensor *const *out) {
  if (in[0]->dtype != INFER_DTYPE_BOOL)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Where: condition must be bool, not %s",
                      infer_dtype_name(in[0]->dtype));
  TRY(ew_same_dtypes("Where", 2, in + 1));
  TRY(ew_check_dtype("Where", "input", in[1]->dtype, EW_ALL));
  TRY(ew_broadcast_all("Where", 3, in, out[0]));
  out[0]->dtype = in[1]->dtype;
  return INFER_OK;
}

static infer_status where_run(const node *n, const void *p, const tensor *const *in,
                              tensor *const *out, void *ws) {
  size_t es = infer_dtype_size(out[0]->dtype);
  ew_iter it;
  if (ew_iter_init(&it, out[0], 3, in)) do
      where_row(&it, es);
    while (ew_iter_next(&it));
  return INFER_OK;
}

const op_desc op_where = {.name = "Where", .domain = "", .since = 9, .until = OP_OPSET_MAX,
                          .min_inputs = 3, .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
                          .infer = where_infer, .run = where_run};
