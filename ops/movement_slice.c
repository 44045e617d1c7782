/* movement_slice.c: Slice. Opset 1-9 take starts/ends/axes attributes; 10+ take
 * starts, ends, axes and steps inputs. Per axis, negative starts/ends count from
 * the back, then clamp (step > 0: both into [0, d]; step < 0: start into [0, d-1],
 * end into [-1, d-1]); the length is max(ceil((end - start) / step), 0). */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "slice_plan.h"

static const char *const slice_attrs[] = {"starts", "ends", "axes", NULL};

static infer_status slice_parse(const node *n, void **params) {
  slice_params v = {.n = 0, .n_axes = -1};
  const int64_t *st, *en, *ax;
  int ns, ne, na;
  TRY(attr_get_ints(n, "starts", &st, &ns));
  TRY(attr_get_ints(n, "ends", &en, &ne));
  TRY(attr_get_ints(n, "axes", &ax, &na));
  if (n->opset >= 10) {
    if (ns >= 0 || ne >= 0 || na >= 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Slice: starts/ends/axes are inputs since opset 10");
  } else {
    if (ns < 0 || ne < 0 || ns != ne || (na >= 0 && na != ns))
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Slice: starts and ends (and axes) must be given with equal lengths");
    if (ns > INFER_MAX_RANK)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: %d axes, more than rank %d", ns,
                        INFER_MAX_RANK);
    v.n = ns;
    v.n_axes = na;
    memcpy(v.starts, st, (size_t)ns * sizeof *st);
    memcpy(v.ends, en, (size_t)ns * sizeof *en);
    if (na > 0) memcpy(v.axes, ax, (size_t)na * sizeof *ax);
  }
  slice_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Slice: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

/* Reads optional input i (1-D int32/int64) into v; *count = -1 when absent. */
static infer_status slice_input(const node *n, const tensor *const *in, int i, const char *what,
                                int64_t *v, int *count) {
  *count = -1;
  if (i >= n->n_inputs || !in[i]) return INFER_OK;
  if (in[i]->dtype != INFER_DTYPE_INT64 && in[i]->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: %s must be int32 or int64, not %s", what,
                      infer_dtype_name(in[i]->dtype));
  if (in[i]->rank != 1) return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: %s must be 1-D", what);
  if (in[i]->dims[0] > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: %s has %lld entries, more than rank %d",
                      what, (long long)in[i]->dims[0], INFER_MAX_RANK);
  if (!in[i]->data) return OP_NEEDS_DATA;
  return tensor_read_ints(in[i], what, v, INFER_MAX_RANK, count);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

infer_status slice_make_plan(const node *n, const slice_params *p, const tensor *x,
                             const tensor *const *in, slice_plan *pl) {
  int r = x->rank, ns, ne, na, nst;
  int64_t st[INFER_MAX_RANK], en[INFER_MAX_RANK], ax[INFER_MAX_RANK], sp[INFER_MAX_RANK];
  bool seen[INFER_MAX_RANK] = {false};
  if (n->opset < 10) {
    if (n->n_inputs > 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: opset %lld takes one input",
                        (long long)n->opset);
    ns = ne = p->n;
    na = p->n_axes;
    nst = -1;
    memcpy(st, p->starts, sizeof st);
    memcpy(en, p->ends, sizeof en);
    memcpy(ax, p->axes, sizeof ax);
  } else {
    /* check every present input before asking for data, so errors come first */
    infer_status s[4];
    s[0] = slice_input(n, in, 1, "starts", st, &ns);
    s[1] = slice_input(n, in, 2, "ends", en, &ne);
    s[2] = slice_input(n, in, 3, "axes", ax, &na);
    s[3] = slice_input(n, in, 4, "steps", sp, &nst);
    for (int i = 0; i < 4; i++)
      if (s[i] != INFER_OK && s[i] != OP_NEEDS_DATA) return s[i];
    for (int i = 0; i < 4; i++)
      if (s[i] != INFER_OK) return s[i];
    if (ns < 0 || ne < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: starts and ends are required");
    if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Slice: starts, ends, axes and steps must have equal lengths");
  }
  if (ns > r)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: %d axes for a rank-%d input", ns, r);
  for (int i = 0; i < r; i++) {
    pl->start[i] = 0;
    pl->step[i] = 1;
    pl->dims[i] = x->dims[i];
  }
  for (int i = 0; i < ns; i++) {
    int a;
    TRY(axis_normalize(na >= 0 ? ax[i] : i, r, "Slice axis", &a));
    if (seen[a]) return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: axis %d repeated", a);
    seen[a] = true;
    int64_t step = nst >= 0 ? sp[i] : 1, d = x->dims[a], s = st[i], e = en[i], len;
    if (step == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Slice: step 0 on axis %d", a);
    if (s < 0) s += d; /* d >= 0, so this cannot overflow */
    if (e < 0) e += d;
    if (step > 0) {
      s = clamp64(s, 0, d);
      e = clamp64(e, 0, d);
      len = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = clamp64(s, 0, d - 1);
      e = clamp64(e, -1, d - 1);
      /* -step overflows only for INT64_MIN, which takes one element like INT64_MAX */
      int64_t back = step == INT64_MIN ? INT64_MAX : -step;
      len = (d > 0 && s > e) ? (s - e - 1) / back + 1 : 0;
    }
    /* with at most one element the step is never taken: keep strides small */
    if (len <= 1) step = step > 0 ? 1 : -1;
    if (len == 0) s = 0;
    pl->start[a] = s;
    pl->step[a] = step;
    pl->dims[a] = len;
  }
  return INFER_OK;
}

void slice_plan_view(const slice_plan *pl, int rank, const int64_t *dims, int64_t *offset,
                     int64_t *strides) {
  int64_t own[INFER_MAX_RANK];
  dims_strides(rank, dims, own);
  *offset = 0;
  for (int i = 0; i < rank; i++) {
    *offset += pl->start[i] * own[i];
    strides[i] = pl->step[i] * own[i];
  }
}

static infer_status slice_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  size_t es;
  slice_plan pl;
  TRY(movement_elem_size("Slice", in[0]->dtype, &es));
  TRY(slice_make_plan(n, params, in[0], in, &pl));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = in[0]->rank;
  memcpy(out[0]->dims, pl.dims, (size_t)in[0]->rank * sizeof pl.dims[0]);
  return INFER_OK;
}

static infer_status slice_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  slice_plan pl;
  int64_t strides[INFER_MAX_RANK], offset;
  const tensor *x = in[0];
  size_t es = infer_dtype_size(x->dtype);
  TRY(slice_make_plan(n, params, x, in, &pl));
  if (dims_count(x->rank, pl.dims) == 0) return INFER_OK;
  slice_plan_view(&pl, x->rank, x->dims, &offset, strides);
  movement_copy_view(out[0]->data, (const char *)x->data + offset * (int64_t)es, es, x->rank,
                     pl.dims, strides);
  return INFER_OK;
}

const op_desc op_slice = {.name = "Slice",
                          .domain = "",
                          .since = 1,
                          .until = OP_OPSET_MAX,
                          .min_inputs = 1,
                          .max_inputs = 5,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .attrs = slice_attrs,
                          .parse = slice_parse,
                          .infer = slice_infer,
                          .run = slice_run};
