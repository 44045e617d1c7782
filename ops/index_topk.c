/* index_topk.c: TopK: the K largest (or smallest) elements along `axis` and their
 * int64 indices, sorted best first; equal values keep the lower index first (the
 * spec's tie rule). NaN counts as larger than every number (first when largest=1,
 * last when largest=0). K is attribute k before opset 10, else the second input; a K
 * known only at run time makes the output shapes dynamic (OP_NEEDS_DATA).
 *
 * Each row is turned into (key, index) pairs whose unsigned key orders like the
 * values (the best first), then the best K are picked with a heap of K entries and
 * sorted: O(n log K) per row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index_params.h"

static const char *const topk_attrs[] = {"axis", "largest", "sorted", "k", NULL};

static infer_status topk_parse(const node *n, void **params) {
  topk_params v;
  int64_t largest, sorted;
  TRY(attr_get_int(n, "axis", -1, &v.axis));
  TRY(attr_get_int(n, "largest", 1, &largest));
  TRY(attr_get_int(n, "sorted", 1, &sorted));
  TRY(attr_get_int(n, "k", -1, &v.k_attr));
  if (n->opset < 11 && (node_attr(n, "largest") || node_attr(n, "sorted")))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "TopK: attributes 'largest' and 'sorted' need opset 11 (the model has %lld)",
                      (long long)n->opset);
  if (n->opset < 10) {
    if (!node_attr(n, "k") || v.k_attr < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "TopK: opset %lld needs attribute 'k' >= 0", (long long)n->opset);
    if (n->n_inputs > 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "TopK: opset %lld takes K as attribute 'k', "
                        "not as an input", (long long)n->opset);
  } else {
    if (node_attr(n, "k"))
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "TopK: attribute 'k' does not exist at opset %lld (K is an input)",
                        (long long)n->opset);
    if (n->n_inputs < 2)
      return infer_fail(INFER_ERR_INVALID_MODEL, "TopK: input K is missing");
    v.k_attr = -1;
  }
  v.largest = largest != 0;
  v.sorted = sorted != 0;
  topk_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "TopK: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

infer_status topk_resolve(const topk_params *p, const tensor *x, const tensor *k_in, int *axis,
                          int64_t *k) {
  if (x->rank < 1) return infer_fail(INFER_ERR_INVALID_MODEL, "TopK: input X is a scalar");
  TRY(axis_normalize(p->axis, x->rank, "TopK axis", axis));
  if (p->k_attr >= 0) {
    *k = p->k_attr;
  } else {
    if (!k_in) return infer_fail(INFER_ERR_INVALID_MODEL, "TopK: input K is missing");
    if (!k_in->data) return OP_NEEDS_DATA;
    int64_t v[1];
    int count;
    TRY(tensor_read_ints(k_in, "TopK: K", v, 1, &count));
    if (count != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "TopK: K must hold one value, not %d", count);
    *k = v[0];
  }
  int64_t dim = x->dims[*axis];
  if (*k < 0 || *k > dim)
    return infer_fail(INFER_ERR_INVALID_MODEL, "TopK: K = %lld is outside [0, %lld] (axis %d)",
                      (long long)*k, (long long)dim, *axis);
  return INFER_OK;
}

static infer_status topk_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const tensor *x = in[0];
  int axis;
  int64_t k = 0;
  if (!index_dtype_numeric(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "TopK: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  TRY(topk_resolve(params, x, n->n_inputs > 1 ? in[1] : NULL, &axis, &k));
  for (int o = 0; o < 2; o++) {
    if (!out[o]) continue;
    out[o]->rank = x->rank;
    memcpy(out[o]->dims, x->dims, sizeof x->dims);
    out[o]->dims[axis] = k;
    out[o]->dtype = o == 0 ? x->dtype : INFER_DTYPE_INT64;
  }
  return INFER_OK;
}

typedef struct topk_entry {
  uint64_t key; /* smaller = better */
  int64_t index;
} topk_entry;

static int64_t topk_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  int axis;
  if (axis_normalize(((const topk_params *)params)->axis, in[0]->rank, "axis", &axis) != INFER_OK)
    return 0;
  int64_t b;
  return size_mul(in[0]->dims[axis], (int64_t)sizeof(topk_entry), &b) ? b : -1;
}

/* An unsigned key ordered like the value (NaN above +inf; -0 equal to +0). */
static uint64_t order_key(const tensor *x, int64_t i) {
  if (dtype_is_float(x->dtype)) {
    double v = x->dtype == INFER_DTYPE_FLOAT32 ? ((const float *)x->data)[i] : tensor_get_f64(x, i);
    if (v != v) return UINT64_MAX;
    if (v == 0) v = 0; /* -0 */
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return (b >> 63) ? ~b : b | (UINT64_C(1) << 63);
  }
  if (dtype_is_signed_int(x->dtype)) return (uint64_t)tensor_get_i64(x, i) ^ (UINT64_C(1) << 63);
  return (uint64_t)tensor_get_i64(x, i); /* unsigned: the bits are the value */
}

static bool better(const topk_entry *a, const topk_entry *b) {
  return a->key < b->key || (a->key == b->key && a->index < b->index);
}

static int entry_cmp(const void *pa, const void *pb) {
  const topk_entry *a = pa, *b = pb;
  return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* Restores the heap (the worst entry at h[0]) below position i. */
static void sift_down(topk_entry *h, int64_t n, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, w = i;
    if (l < n && better(&h[w], &h[l])) w = l;
    if (r < n && better(&h[w], &h[r])) w = r;
    if (w == i) return;
    topk_entry t = h[i];
    h[i] = h[w];
    h[w] = t;
    i = w;
  }
}

static infer_status topk_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  const topk_params *p = params;
  const tensor *x = in[0];
  int axis;
  int64_t k = 0;
  TRY(topk_resolve(p, x, n->n_inputs > 1 ? in[1] : NULL, &axis, &k));
  int64_t dim = x->dims[axis], outer = dims_count(axis, x->dims);
  int64_t inner = dims_count(x->rank - axis - 1, x->dims + axis + 1);
  size_t es = infer_dtype_size(x->dtype);
  topk_entry *e = ws;
  const char *src = x->data;
  char *vals = out[0] ? out[0]->data : NULL;
  int64_t *idx = n->n_outputs > 1 && out[1] ? out[1]->data : NULL;
  if (k == 0) return INFER_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t base = o * dim * inner + j;
      /* the heap holds the best k seen so far, the worst of them on top */
      for (int64_t i = 0; i < dim; i++) {
        topk_entry t = {order_key(x, base + i * inner), i};
        if (p->largest) t.key = ~t.key;
        if (i < k) {
          e[i] = t;
          if (i == k - 1)
            for (int64_t h = k / 2 - 1; h >= 0; h--) sift_down(e, k, h);
        } else if (better(&t, &e[0])) {
          e[0] = t;
          sift_down(e, k, 0);
        }
      }
      qsort(e, (size_t)k, sizeof *e, entry_cmp);
      int64_t ob = o * k * inner + j;
      for (int64_t i = 0; i < k; i++) {
        if (vals)
          memcpy(vals + (ob + i * inner) * (int64_t)es,
                 src + (base + e[i].index * inner) * (int64_t)es, es);
        if (idx) idx[ob + i * inner] = e[i].index;
      }
    }
  return INFER_OK;
}

const op_desc op_topk = {.name = "TopK",
                         .domain = "",
                         .since = 1,
                         .until = OP_OPSET_MAX,
                         .min_inputs = 1,
                         .max_inputs = 2,
                         .min_outputs = 1,
                         .max_outputs = 2,
                         .attrs = topk_attrs,
                         .parse = topk_parse,
                         .infer = topk_infer,
                         .run = topk_run,
                         .workspace = topk_workspace};
