/* movement_unique.c: Unique (11): the distinct elements of X (flattened), or its
 * distinct slices along `axis`, with the first-occurrence indices, the inverse
 * indices (for every element / slice, the output position of its value) and the
 * counts, all int64. sorted = 1 (default) orders them ascending, slices
 * lexicographically (the order of np.unique); sorted = 0 by first occurrence.
 *
 * The output size depends on X's values: shape inference sorts once (with scratch it
 * allocates, as it runs before the step, never inside it) and the run sorts again in
 * the workspace. The sort is a stable merge sort of item indices, so within a run of
 * equal items the first is the first occurrence. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"

typedef struct unique_params {
  bool has_axis, sorted;
  int64_t axis;
} unique_params;

static const char *const unique_attrs[] = {"axis", "sorted", NULL};

static infer_status unique_parse(const node *n, void **params) {
  unique_params t = {node_attr(n, "axis") != NULL, true, 0};
  int64_t s;
  TRY(attr_get_int(n, "axis", 0, &t.axis));
  TRY(attr_get_int(n, "sorted", 1, &s));
  t.sorted = s != 0;
  unique_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Unique: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

/* X as items: `items` slices of `outer` x `inner` elements (flattened: inner = outer
 * = 1); item s, element (o, i) is at (o * items + s) * inner + i. */
typedef struct unique_view {
  const tensor *x;
  int axis; /* -1: flattened */
  int64_t items, outer, inner;
} unique_view;

static infer_status unique_view_make(const unique_params *p, const tensor *x, unique_view *v) {
  v->x = x;
  if (!p->has_axis) {
    v->axis = -1;
    v->items = dims_count(x->rank, x->dims);
    v->outer = v->inner = 1;
    return INFER_OK;
  }
  TRY(axis_normalize(p->axis, x->rank, "Unique axis", &v->axis));
  v->items = x->dims[v->axis];
  v->outer = dims_count(v->axis, x->dims);
  v->inner = dims_count(x->rank - v->axis - 1, x->dims + v->axis + 1);
  return INFER_OK;
}

static int elem_cmp(const tensor *x, int64_t a, int64_t b) {
  if (dtype_is_float(x->dtype)) {
    double u = tensor_get_f64(x, a), w = tensor_get_f64(x, b);
    return u < w ? -1 : u > w ? 1 : 0;
  }
  if (x->dtype == INFER_DTYPE_UINT64) {
    uint64_t u = ((const uint64_t *)x->data)[a], w = ((const uint64_t *)x->data)[b];
    return u < w ? -1 : u > w ? 1 : 0;
  }
  int64_t u = tensor_get_i64(x, a), w = tensor_get_i64(x, b);
  return u < w ? -1 : u > w ? 1 : 0;
}

/* Items s and t compared lexicographically (element order o, then i). */
static int item_cmp(const unique_view *v, int64_t s, int64_t t) {
  for (int64_t o = 0; o < v->outer; o++)
    for (int64_t i = 0; i < v->inner; i++) {
      int c = elem_cmp(v->x, (o * v->items + s) * v->inner + i, (o * v->items + t) * v->inner + i);
      if (c) return c;
    }
  return 0;
}

/* order[0..n) = 0..n-1 stably sorted by item; tmp: n entries of scratch. */
static void unique_sort(const unique_view *v, int64_t *order, int64_t *tmp) {
  int64_t n = v->items;
  for (int64_t i = 0; i < n; i++) order[i] = i;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) tmp[k++] = item_cmp(v, order[b], order[a]) < 0 ? order[b++] : order[a++];
      while (a < mid) tmp[k++] = order[a++];
      while (b < hi) tmp[k++] = order[b++];
    }
    memcpy(order, tmp, (size_t)n * sizeof *order);
  }
}

/* Number of distinct items of a sorted order. */
static int64_t unique_count(const unique_view *v, const int64_t *order) {
  int64_t u = v->items > 0;
  for (int64_t k = 1; k < v->items; k++) u += item_cmp(v, order[k - 1], order[k]) != 0;
  return u;
}

static infer_status unique_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const tensor *x = in[0];
  size_t es;
  TRY(movement_elem_size("Unique", x->dtype, &es));
  if (x->dtype == INFER_DTYPE_BOOL || x->dtype == INFER_DTYPE_STRING)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Unique: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  unique_view v;
  TRY(unique_view_make(params, x, &v));
  if (!x->data) return OP_NEEDS_DATA;
  int64_t u = 0;
  if (v.items > 0) {
    int64_t *order = malloc((size_t)v.items * 2 * sizeof *order);
    if (!order) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Unique: out of memory");
    unique_sort(&v, order, order + v.items);
    u = unique_count(&v, order);
    free(order);
  }
  tensor *y = out[0];
  movement_same_shape(x, y);
  if (v.axis < 0) {
    y->rank = 1;
    y->dims[0] = u;
  } else {
    y->dims[v.axis] = u;
  }
  for (int k = 1; k < 4 && k < n->n_outputs; k++)
    if (out[k]) {
      memset(out[k], 0, sizeof(tensor));
      out[k]->dtype = INFER_DTYPE_INT64;
      out[k]->rank = 1;
      out[k]->dims[0] = k == 2 ? v.items : u;
    }
  return INFER_OK;
}

static int64_t unique_workspace(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  unique_view v;
  int64_t b;
  if (unique_view_make(params, in[0], &v) != INFER_OK || !size_mul(v.items, 24, &b)) return -1;
  return b;
}

static infer_status unique_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const unique_params *p = params;
  const tensor *x = in[0];
  unique_view v;
  TRY(unique_view_make(p, x, &v));
  int64_t items = v.items;
  if (items == 0) return INFER_OK;
  int64_t *order = ws, *run_of = order + items, *first = run_of + items;
  unique_sort(&v, order, run_of);
  /* runs of equal items in sorted order: run_of[item], first[run] (its first occurrence) */
  int64_t u = 0;
  for (int64_t k = 0; k < items; k++) {
    if (k == 0 || item_cmp(&v, order[k - 1], order[k]) != 0) first[u++] = order[k];
    run_of[order[k]] = u - 1;
  }
  if (out[0]->dims[v.axis < 0 ? 0 : v.axis] != u)
    return infer_fail(INFER_ERR_RUNTIME, "Unique: the input changed after shape inference");
  /* pos[run]: the output position (order[] is free now) */
  int64_t *pos = order;
  if (p->sorted) {
    for (int64_t r = 0; r < u; r++) pos[r] = r;
  } else {
    int64_t next = 0;
    for (int64_t i = 0; i < items; i++)
      if (first[run_of[i]] == i) pos[run_of[i]] = next++;
  }
  size_t es = infer_dtype_size(x->dtype), row = (size_t)v.inner * es;
  const char *src = x->data;
  char *dst = out[0]->data;
  for (int64_t r = 0; r < u; r++)
    for (int64_t o = 0; o < v.outer; o++)
      memcpy(dst + (size_t)(o * u + pos[r]) * row, src + (size_t)(o * items + first[r]) * row, row);
  int64_t *idx = n->n_outputs > 1 && out[1] ? out[1]->data : NULL;
  int64_t *inv = n->n_outputs > 2 && out[2] ? out[2]->data : NULL;
  int64_t *cnt = n->n_outputs > 3 && out[3] ? out[3]->data : NULL;
  if (idx)
    for (int64_t r = 0; r < u; r++) idx[pos[r]] = first[r];
  if (inv)
    for (int64_t i = 0; i < items; i++) inv[i] = pos[run_of[i]];
  if (cnt) {
    for (int64_t r = 0; r < u; r++) cnt[r] = 0;
    for (int64_t i = 0; i < items; i++) cnt[pos[run_of[i]]]++;
  }
  return INFER_OK;
}

const op_desc op_unique = {.name = "Unique",
                           .domain = "",
                           .since = 11,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 1,
                           .max_inputs = 1,
                           .min_outputs = 1,
                           .max_outputs = 4,
                           .attrs = unique_attrs,
                           .parse = unique_parse,
                           .infer = unique_infer,
                           .run = unique_run,
                           .workspace = unique_workspace};
