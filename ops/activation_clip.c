/* activation_clip.c: Clip. Opsets 6-10 take the bounds as float attributes
 * min/max; opset 11+ as optional scalar inputs of the input's dtype (read at run
 * time, so they need not be constants). y = min(max(x, lo), hi): with lo > hi
 * every element becomes hi, as numpy.clip does; NaN passes through. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "activation_params.h"
#include "elementwise.h"

typedef void (*clip_fn)(void *o, const void *a, int64_t n, const void *lo, const void *hi);

/* lo / hi point to one element of the input's dtype, or are NULL (no bound). */
#define CLIP_X(sfx, DT, TT, UT, CT, LD, ST, unused1, unused2)                        \
  static void clip_##sfx(void *o_, const void *a_, int64_t n, const void *lo_,       \
                         const void *hi_) {                                          \
    TT *o = o_;                                                                      \
    const TT *a = a_;                                                                \
    bool has_lo = lo_ != NULL, has_hi = hi_ != NULL;                                 \
    CT lo = has_lo ? LD(*(const TT *)lo_) : 0, hi = has_hi ? LD(*(const TT *)hi_) : 0; \
    for (int64_t i = 0; i < n; i++) {                                                \
      CT x = LD(a[i]);                                                               \
      if (has_lo && x < lo) x = lo;                                                  \
      if (has_hi && x > hi) x = hi;                                                  \
      o[i] = ST(TT, x);                                                              \
    }                                                                                \
  }
#define CLIP_ENTRY_X(sfx, DT, TT, UT, CT, LD, ST, unused1, unused2) [INFER_DTYPE_##DT] = clip_##sfx,

EW_FLOAT_TYPES(CLIP_X, 0, 0)
EW_SINT_TYPES(CLIP_X, 0, 0)
EW_UINT_TYPES(CLIP_X, 0, 0)
static const clip_fn clip_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(CLIP_ENTRY_X, 0, 0) EW_SINT_TYPES(CLIP_ENTRY_X, 0, 0)
        EW_UINT_TYPES(CLIP_ENTRY_X, 0, 0)};

static infer_status clip_apply(const tensor *x, tensor *y, const void *lo, const void *hi) {
  clip_fn fn = (int)x->dtype < EW_DTYPE_SLOTS ? clip_table[x->dtype] : NULL;
  if (!fn)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Clip: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  int64_t n = dims_count(x->rank, x->dims);
  if (n > 0) fn(y->data, x->data, n, lo, hi);
  return INFER_OK;
}

static infer_status clip_check_x(const tensor *x, unsigned mask) {
  return ew_check_dtype("Clip", "input", x->dtype, mask);
}

/* ---- opset 11+: bounds as inputs ------------------------------------------------------- */

static infer_status clip11_infer(const node *n, const void *p, const tensor *const *in,
                                 tensor *const *out) {
  TRY(clip_check_x(in[0], EW_NUMERIC));
  for (int k = 1; k < n->n_inputs; k++) {
    if (!in[k]) continue;
    const char *what = k == 1 ? "min" : "max";
    if (in[k]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Clip: %s is %s but the input is %s", what,
                        infer_dtype_name(in[k]->dtype), infer_dtype_name(in[0]->dtype));
    /* the spec says scalar; a one-element 1-D tensor is common in exported models */
    if (dims_count(in[k]->rank, in[k]->dims) != 1 || in[k]->rank > 1) {
      char buf[128];
      return infer_fail(INFER_ERR_INVALID_MODEL, "Clip: %s must be a scalar, not of shape %s",
                        what, dims_format(in[k]->rank, in[k]->dims, buf, sizeof buf));
    }
  }
  ew_copy_shape(out[0], in[0], in[0]->dtype);
  return INFER_OK;
}

static infer_status clip11_run(const node *n, const void *p, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const void *lo = n->n_inputs > 1 && in[1] ? in[1]->data : NULL;
  const void *hi = n->n_inputs > 2 && in[2] ? in[2]->data : NULL;
  return clip_apply(in[0], out[0], lo, hi);
}

const op_desc op_clip11 = {.name = "Clip", .domain = "", .since = 11, .until = OP_OPSET_MAX,
                           .min_inputs = 1, .max_inputs = 3, .min_outputs = 1,
                           .max_outputs = 1, .infer = clip11_infer, .run = clip11_run};

/* ---- opsets 6-10: bounds as attributes -------------------------------------------------- */

static infer_status clip6_parse(const node *n, void **params) {
  clip6_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  infer_status s = attr_get_float(n, "min", -FLT_MAX, &p->lo);
  if (s == INFER_OK) s = attr_get_float(n, "max", FLT_MAX, &p->hi);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

static infer_status clip6_infer(const node *n, const void *p, const tensor *const *in,
                                tensor *const *out) {
  TRY(clip_check_x(in[0], EW_FLOATS));
  ew_copy_shape(out[0], in[0], in[0]->dtype);
  return INFER_OK;
}

static infer_status clip6_run(const node *n, const void *p, const tensor *const *in,
                              tensor *const *out, void *ws) {
  const clip6_params *cp = p;
  if (!cp) return infer_fail(INFER_ERR_INTERNAL, "Clip: attributes were not parsed");
  /* one element of the input dtype each */
  union { double d; float f; uint16_t h; } lo, hi;
  ew_store_f64(in[0]->dtype, &lo, 0, cp->lo);
  ew_store_f64(in[0]->dtype, &hi, 0, cp->hi);
  return clip_apply(in[0], out[0], &lo, &hi);
}

static const char *const clip6_attrs[] = {"min", "max", NULL};

const op_desc op_clip6 = {.name = "Clip", .domain = "", .since = 6, .until = 10,
                          .min_inputs = 1, .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                          .attrs = clip6_attrs, .parse = clip6_parse, .infer = clip6_infer,
                          .run = clip6_run};
