/* cuda_movement.c: the GPU side of the shape family (Shape, Size, Constant,
 * ConstantOfShape, Range, Reshape, Flatten, Squeeze, Unsqueeze, Expand, Identity,
 * Dropout) and the movement family (Transpose, Concat, Split, Slice, Gather,
 * GatherElements, Tile, Trilu, Pad, Resize).
 *
 * Everything moves elements by size, so every fixed-size dtype works, in fp32 and
 * fp16 storage alike (values that come from attributes or constants are converted
 * to the storage dtype at prepare time). Shapes are static on the GPU: what the
 * CPU computes per run from shapes and constant inputs (Slice starts, Pad pads,
 * Resize scales and filter taps, Split sizes) is computed once in prepare, for Slice,
 * Pad and Resize by the CPU op's own functions (../slice_plan.h, ../pad_plan.h,
 * ../resize_plan.h) on the host copies of the constants and the node's params; a
 * non-constant input of that kind is INFER_ERR_UNSUPPORTED. Gather indices are
 * run-time data: an index out of range writes zeros (see kernels/gather.h). */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/copy.h"
#include "../../kernels/gather.h"
#include "../../kernels/pad_resize.h"
#include "../cuda_op.h"
#include "../movement_params.h"
#include "../pad_plan.h"
#include "../resize_plan.h"
#include "../shape_params.h"
#include "../slice_plan.h"

#define STREAM(x) ((cudaStream_t)(x)->stream)

/* ---- helpers ------------------------------------------------------------------------- */

/* Allocates the zeroed state *s of `bytes` and hands it to *state (the engine frees it). */
#define NEW_STATE(s, bytes)                                                   \
  do {                                                                        \
    (s) = calloc(1, (bytes));                                                 \
    if (!(s)) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");    \
    *state = (s);                                                             \
  } while (0)

static infer_status elem_size_of(const char *op, const tensor *t, int64_t *es) {
  *es = (int64_t)infer_dtype_size(t->dtype);
  if (*es == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                      infer_dtype_name(t->dtype));
  return INFER_OK;
}

/* Element i of host tensor t (its own dtype), converted to dtype `to`, into dst. */
static void elem_convert(const tensor *t, int64_t i, infer_dtype to, void *dst) {
  size_t es = infer_dtype_size(to);
  if (t->dtype == to) {
    memcpy(dst, (const char *)t->data + (size_t)i * es, es);
    return;
  }
  tensor d = {.dtype = to, .rank = 0, .data = dst};
  if (dtype_is_float(t->dtype) || dtype_is_float(to))
    tensor_set_f64(&d, 0, tensor_get_f64(t, i));
  else
    tensor_set_i64(&d, 0, tensor_get_i64(t, i));
}

/* v in dtype `to` into dst. */
static void elem_from_f64(infer_dtype to, double v, void *dst) {
  tensor d = {.dtype = to, .rank = 0, .data = dst};
  tensor_set_f64(&d, 0, v);
}

static bool input_given(const node *n, const tensor *const *in, int i) {
  return i < n->n_inputs && in[i];
}

/* A device buffer owned by a node's state. */
typedef struct dev_buf {
  void *p;
  int64_t bytes;
} dev_buf;

static void dev_buf_release(void *s) {
  dev_buf *b = s;
  if (!b) return;
  if (b->p) cudaFree(b->p);
  free(b);
}

static infer_status upload(const void *host, int64_t bytes, void **dev) {
  CUDA_TRY(cudaMalloc(dev, (size_t)(bytes > 0 ? bytes : 1)));
  if (bytes > 0) CUDA_TRY(cudaMemcpy(*dev, host, (size_t)bytes, cudaMemcpyHostToDevice));
  return INFER_OK;
}

/* ---- ops that only relabel the shape: Reshape, Flatten, Squeeze, Unsqueeze, Identity --
 * (a device-to-device copy; aliasing the buffers is the planner's business) */

static infer_status same_bytes_check(const node *n, const tensor *a, const tensor *b) {
  int64_t es;
  TRY(elem_size_of(n->op_type, a, &es));
  int64_t x = tensor_nbytes(a), y = tensor_nbytes(b);
  if (x < 0 || x != y)
    return infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: input and output byte sizes differ",
                      n->op_type);
  return INFER_OK;
}

static infer_status copy_bytes(const cuda_exec *x, const tensor *a, tensor *b) {
  int64_t bytes = tensor_nbytes(a);
  if (bytes > 0 && a->data != b->data)
    CUDA_TRY(cudaMemcpyAsync(b->data, a->data, (size_t)bytes, cudaMemcpyDeviceToDevice, STREAM(x)));
  return INFER_OK;
}

static infer_status view_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  return same_bytes_check(n, in[0], out[0]);
}

static infer_status view_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  return copy_bytes(x, in[0], out[0]);
}

static const cuda_op cuda_reshape = {.name = "Reshape", .prepare = view_prepare, .run = view_run};
static const cuda_op cuda_flatten = {.name = "Flatten", .prepare = view_prepare, .run = view_run};
static const cuda_op cuda_squeeze = {.name = "Squeeze", .prepare = view_prepare, .run = view_run};
static const cuda_op cuda_unsqueeze = {.name = "Unsqueeze", .prepare = view_prepare,
                                       .run = view_run};
static const cuda_op cuda_identity = {.name = "Identity", .prepare = view_prepare, .run = view_run};

/* ---- Dropout (inference: a copy, and a mask of ones) ------------------------------------ */

typedef struct dropout_state {
  int mask_es;
  unsigned char one[16]; /* 1 (true) in the mask's storage dtype */
} dropout_state;

static infer_status dropout_prepare(const cuda_exec *x, const node *n, const void *params,
                                    const tensor *const *in, const tensor *const *host_in,
                                    tensor *const *out, void **state, int64_t *ws_bytes) {
  dropout_state *s;
  TRY(same_bytes_check(n, in[0], out[0]));
  if (n->opset >= 12 && input_given(n, in, 2)) {
    const tensor *t = host_in[2];
    if (!t)
      return infer_fail(INFER_ERR_UNSUPPORTED,
                        "Dropout on the GPU: training_mode must be a constant");
    if (t->dtype != INFER_DTYPE_BOOL || dims_count(t->rank, t->dims) != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Dropout: training_mode must be one bool");
    if (*(const uint8_t *)t->data)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Dropout: training_mode=true is not supported");
  }
  NEW_STATE(s, sizeof *s);
  if (n->n_outputs > 1 && out[1]) {
    int64_t es;
    TRY(elem_size_of("Dropout mask", out[1], &es));
    if (es > 8)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Dropout on the GPU: mask dtype %s",
                        infer_dtype_name(out[1]->dtype));
    s->mask_es = (int)es;
    elem_from_f64(out[1]->dtype, 1.0, s->one); /* bool: 1; opset 7-9: 1.0 in x's dtype */
  }
  return INFER_OK;
}

static infer_status dropout_run(const cuda_exec *x, const node *n, const void *params,
                                const void *state, const tensor *const *in, tensor *const *out) {
  const dropout_state *s = state;
  TRY(copy_bytes(x, in[0], out[0]));
  if (s->mask_es > 0 && n->n_outputs > 1 && out[1])
    CUDA_LAUNCH_TRY(k_fill_pattern(s->mask_es, s->one, out[1]->data,
                                   dims_count(out[1]->rank, out[1]->dims), STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_dropout = {.name = "Dropout", .prepare = dropout_prepare,
                                     .run = dropout_run};

/* ---- Shape and Size: values known from shapes at prepare; a tiny kernel writes them ----- */

typedef struct ints_state {
  int n;
  int64_t v[8];
} ints_state;

static infer_status shape_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  ints_state *s;
  int64_t start, end;
  if (!params) return infer_fail(INFER_ERR_INTERNAL, "Shape: attributes were not parsed");
  shape_range(params, in[0]->rank, &start, &end);
  if (end - start > 8 || out[0]->dtype != INFER_DTYPE_INT64 ||
      dims_count(out[0]->rank, out[0]->dims) != end - start)
    return infer_fail(INFER_ERR_INTERNAL, "Shape on the GPU: unexpected output");
  NEW_STATE(s, sizeof *s);
  s->n = (int)(end - start);
  for (int64_t i = start; i < end; i++) s->v[i - start] = in[0]->dims[i];
  return INFER_OK;
}

static infer_status size_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  ints_state *s;
  if (out[0]->dtype != INFER_DTYPE_INT64)
    return infer_fail(INFER_ERR_INTERNAL, "Size on the GPU: unexpected output");
  NEW_STATE(s, sizeof *s);
  s->n = 1;
  s->v[0] = dims_count(in[0]->rank, in[0]->dims);
  return INFER_OK;
}

static infer_status ints_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const ints_state *s = state;
  CUDA_LAUNCH_TRY(k_write_i64(s->v, s->n, out[0]->data, STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_shape = {.name = "Shape", .prepare = shape_prepare, .run = ints_run};
static const cuda_op cuda_size = {.name = "Size", .prepare = size_prepare, .run = ints_run};

/* ---- Constant: the value converted to the storage dtype and kept on the device --------- */

static infer_status constant_prepare(const cuda_exec *x, const node *n, const void *params,
                                     const tensor *const *in, const tensor *const *host_in,
                                     tensor *const *out, void **state, int64_t *ws_bytes) {
  tensor src;
  const void *data = NULL;
  if (!params) return infer_fail(INFER_ERR_INTERNAL, "Constant: attributes were not parsed");
  TRY(constant_source(n, params, &src, &data)); /* the CPU op's value (shape_params.h) */
  src.data = (void *)data;
  int64_t count = dims_count(src.rank, src.dims), es;
  TRY(elem_size_of("Constant", out[0], &es));
  if (count < 0 || count != dims_count(out[0]->rank, out[0]->dims) || (count > 0 && !src.data) ||
      infer_dtype_size(src.dtype) == 0)
    return infer_fail(INFER_ERR_INTERNAL, "Constant on the GPU: value and output differ");
  dev_buf *b;
  NEW_STATE(b, sizeof *b);
  b->bytes = count * es;
  unsigned char *host = malloc((size_t)(b->bytes > 0 ? b->bytes : 1));
  if (!host) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < count; i++) elem_convert(&src, i, out[0]->dtype, host + i * es);
  infer_status st = upload(host, b->bytes, &b->p);
  free(host);
  return st;
}

static infer_status constant_run(const cuda_exec *x, const node *n, const void *params,
                                 const void *state, const tensor *const *in, tensor *const *out) {
  const dev_buf *b = state;
  if (b->bytes > 0)
    CUDA_TRY(cudaMemcpyAsync(out[0]->data, b->p, (size_t)b->bytes, cudaMemcpyDeviceToDevice,
                             STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_constant = {.name = "Constant", .prepare = constant_prepare,
                                      .run = constant_run, .release = dev_buf_release};

/* ---- ConstantOfShape: one element repeated ------------------------------------------------ */

typedef struct fill_state {
  int es;
  unsigned char value[16];
} fill_state;

static infer_status cos_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  fill_state *s;
  int64_t es;
  const cos_params *p = params;
  TRY(elem_size_of("ConstantOfShape", out[0], &es));
  if (es > 8)
    return infer_fail(INFER_ERR_UNSUPPORTED, "ConstantOfShape on the GPU: dtype %s",
                      infer_dtype_name(out[0]->dtype));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "ConstantOfShape: attributes were not parsed");
  NEW_STATE(s, sizeof *s);
  s->es = (int)es;
  /* the CPU op's element (shape_params.h; absent: float 0, all-zero bytes in every dtype) */
  tensor v = {.dtype = p->dtype, .rank = 0, .data = (void *)p->value};
  elem_convert(&v, 0, out[0]->dtype, s->value);
  return INFER_OK;
}

static infer_status fill_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const fill_state *s = state;
  CUDA_LAUNCH_TRY(k_fill_pattern(s->es, s->value, out[0]->data,
                                 dims_count(out[0]->rank, out[0]->dims), STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_constant_of_shape = {.name = "ConstantOfShape", .prepare = cos_prepare,
                                               .run = fill_run};

/* ---- Range: start and delta read on the device; the count is the output shape ---------- */

static infer_status range_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  infer_dtype t = out[0]->dtype;
  if (in[0]->dtype != t || in[2]->dtype != t || out[0]->rank != 1 || t == INFER_DTYPE_BOOL ||
      infer_dtype_size(t) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Range on the GPU: dtype %s is not supported",
                      infer_dtype_name(t));
  return INFER_OK;
}

static infer_status range_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  CUDA_LAUNCH_TRY(k_range((int)out[0]->dtype, in[0]->data, in[2]->data, out[0]->data,
                          out[0]->dims[0], STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_range = {.name = "Range", .prepare = range_prepare, .run = range_run};

/* ---- Expand and Tile: broadcast views of the input ------------------------------------ */

static infer_status es_prepare(const cuda_exec *x, const node *n, const void *params,
                               const tensor *const *in, const tensor *const *host_in,
                               tensor *const *out, void **state, int64_t *ws_bytes) {
  int64_t es;
  TRY(elem_size_of(n->op_type, in[0], &es));
  if (out[0]->dtype != in[0]->dtype || out[0]->rank < in[0]->rank)
    return infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: unexpected output", n->op_type);
  return INFER_OK;
}

static infer_status expand_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  int64_t strides[INFER_MAX_RANK];
  broadcast_strides(in[0]->rank, in[0]->dims, out[0]->rank, strides);
  CUDA_LAUNCH_TRY(k_copy_view((int64_t)infer_dtype_size(in[0]->dtype), out[0]->rank,
                              out[0]->dims, strides, NULL, in[0]->data, out[0]->data, STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_expand = {.name = "Expand", .prepare = es_prepare, .run = expand_run};

/* Output index r_i * d_i + j_i is the pair (r_i, j_i) with source strides (0, stride_i). */
static infer_status tile_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *t = in[0];
  int64_t own[INFER_MAX_RANK], dims[2 * INFER_MAX_RANK], strides[2 * INFER_MAX_RANK];
  if (dims_count(out[0]->rank, out[0]->dims) == 0) return INFER_OK;
  dims_strides(t->rank, t->dims, own);
  for (int i = 0; i < t->rank; i++) {
    dims[2 * i] = t->dims[i] ? out[0]->dims[i] / t->dims[i] : 0;
    strides[2 * i] = 0;
    dims[2 * i + 1] = t->dims[i];
    strides[2 * i + 1] = own[i];
  }
  CUDA_LAUNCH_TRY(k_copy_view((int64_t)infer_dtype_size(t->dtype), 2 * t->rank, dims, strides,
                              NULL, t->data, out[0]->data, STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_tile = {.name = "Tile", .prepare = es_prepare, .run = tile_run};

/* ---- Transpose ------------------------------------------------------------------------------ */

typedef struct perm_state {
  int perm[INFER_MAX_RANK];
} perm_state;

static infer_status transpose_prepare(const cuda_exec *x, const node *n, const void *params,
                                      const tensor *const *in, const tensor *const *host_in,
                                      tensor *const *out, void **state, int64_t *ws_bytes) {
  perm_state *s;
  int64_t es;
  TRY(elem_size_of("Transpose", in[0], &es));
  if (!params) return infer_fail(INFER_ERR_INTERNAL, "Transpose: attributes were not parsed");
  NEW_STATE(s, sizeof *s);
  return transpose_resolve_perm(params, in[0]->rank, s->perm); /* movement_params.h */
}

static infer_status transpose_run(const cuda_exec *x, const node *n, const void *params,
                                  const void *state, const tensor *const *in, tensor *const *out) {
  const perm_state *s = state;
  int64_t own[INFER_MAX_RANK], strides[INFER_MAX_RANK];
  dims_strides(in[0]->rank, in[0]->dims, own);
  for (int i = 0; i < in[0]->rank; i++) strides[i] = own[s->perm[i]];
  CUDA_LAUNCH_TRY(k_copy_view((int64_t)infer_dtype_size(in[0]->dtype), out[0]->rank,
                              out[0]->dims, strides, NULL, in[0]->data, out[0]->data, STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_transpose = {.name = "Transpose", .prepare = transpose_prepare,
                                       .run = transpose_run};

/* ---- Concat: one strided copy per input into its slice of the output ------------------ */

typedef struct axis_state {
  int axis;
} axis_state;

static infer_status concat_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  axis_state *s;
  int64_t es;
  const concat_params *p = params;
  TRY(elem_size_of("Concat", out[0], &es));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "Concat: attributes were not parsed");
  NEW_STATE(s, sizeof *s);
  TRY(axis_normalize(p->axis, out[0]->rank, "Concat axis", &s->axis));
  for (int k = 0; k < n->n_inputs; k++)
    if (!in[k] || in[k]->dtype != out[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: input %d is missing or differs", k);
  return INFER_OK;
}

static infer_status concat_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *o = out[0];
  int axis = ((const axis_state *)state)->axis;
  int64_t es = (int64_t)infer_dtype_size(o->dtype);
  int64_t outer = dims_count(axis, o->dims);
  int64_t inner = dims_count(o->rank - axis - 1, o->dims + axis + 1);
  int64_t out_row = o->dims[axis] * inner, offset = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    int64_t row = in[k]->dims[axis] * inner;
    if (row > 0 && outer > 0) {
      int64_t dims[2] = {outer, row}, is[2] = {row, 1}, os[2] = {out_row, 1};
      CUDA_LAUNCH_TRY(k_copy_view(es, 2, dims, is, os, in[k]->data,
                                  (char *)o->data + offset * es, STREAM(x)));
    }
    offset += row;
  }
  return INFER_OK;
}

static const cuda_op cuda_concat = {.name = "Concat", .prepare = concat_prepare, .run = concat_run};

/* ---- Split: one strided copy per output from its slice of the input ------------------- */

typedef struct split_state {
  int axis, n;
  int64_t size[]; /* per output */
} split_state;

static infer_status split_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  split_state *s;
  int64_t es;
  int outs = n->n_outputs;
  const split_params *p = params;
  const tensor *t = in[0];
  TRY(elem_size_of("Split", t, &es));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "Split: attributes were not parsed");
  NEW_STATE(s, sizeof *s + sizeof(int64_t) * (size_t)outs);
  s->n = outs;
  int count = p->n_split;
  const int64_t *list = p->split;
  TRY(axis_normalize(p->axis, t->rank, "Split axis", &s->axis));
  int64_t dim = t->dims[s->axis], total = 0;
  if (input_given(n, in, 1)) {
    const tensor *h = host_in[1];
    if (!h)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Split on the GPU: 'split' must be a constant");
    if (dims_count(h->rank, h->dims) != outs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: split must hold %d sizes", outs);
    for (int k = 0; k < outs; k++) s->size[k] = tensor_get_i64(h, k);
  } else if (count >= 0) {
    if (count != outs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: %d sizes for %d outputs", count, outs);
    for (int k = 0; k < outs; k++) s->size[k] = list[k];
  } else {
    /* num_outputs (> 0 exactly when given: ops/movement_split.c): ceil-sized parts */
    int64_t chunk = p->num_outputs > 0 ? dim / outs + (dim % outs != 0) : dim / outs;
    for (int k = 0; k < outs; k++) {
      int64_t start = chunk * k, left = start < dim ? dim - start : 0;
      s->size[k] = left < chunk ? left : chunk;
    }
  }
  for (int k = 0; k < outs; k++) {
    if (s->size[k] < 0 || (out[k] && out[k]->dims[s->axis] != s->size[k]))
      return infer_fail(INFER_ERR_INTERNAL, "Split on the GPU: output %d has an unexpected size",
                        k);
    total += s->size[k];
  }
  if (total != dim)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Split: sizes sum to %lld, the dim is %lld",
                      (long long)total, (long long)dim);
  return INFER_OK;
}

static infer_status split_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const split_state *s = state;
  const tensor *t = in[0];
  int64_t es = (int64_t)infer_dtype_size(t->dtype);
  int64_t outer = dims_count(s->axis, t->dims);
  int64_t inner = dims_count(t->rank - s->axis - 1, t->dims + s->axis + 1);
  int64_t in_row = t->dims[s->axis] * inner, offset = 0;
  for (int k = 0; k < s->n; k++) {
    int64_t row = s->size[k] * inner;
    if (out[k] && row > 0 && outer > 0) {
      int64_t dims[2] = {outer, row}, is[2] = {in_row, 1};
      CUDA_LAUNCH_TRY(k_copy_view(es, 2, dims, is, NULL, (const char *)t->data + offset * es,
                                  out[k]->data, STREAM(x)));
    }
    offset += row;
  }
  return INFER_OK;
}

static const cuda_op cuda_split = {.name = "Split", .prepare = split_prepare, .run = split_run};

/* ---- Slice: a view with per-axis start and step (the CPU's plan, made once) ----------- */

typedef struct slice_state {
  int rank;
  int64_t offset; /* elements */
  int64_t dims[INFER_MAX_RANK], strides[INFER_MAX_RANK];
} slice_state;

/* The CPU's plan (ops/movement_slice.c) from the host copies of starts, ends, axes
 * and steps (opset 10+); each given one must be a constant. */
static infer_status slice_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  static const char *const names[] = {NULL, "starts", "ends", "axes", "steps"};
  slice_state *s;
  slice_plan pl;
  const tensor *t = in[0];
  int r = t->rank;
  int64_t es;
  TRY(elem_size_of("Slice", t, &es));
  NEW_STATE(s, sizeof *s);
  if (n->opset >= 10)
    for (int i = 1; i <= 4; i++)
      if (input_given(n, in, i) && !host_in[i])
        return infer_fail(INFER_ERR_UNSUPPORTED, "Slice on the GPU: %s must be a constant",
                          names[i]);
  infer_status st = slice_make_plan(n, params, t, host_in, &pl);
  if (st == OP_NEEDS_DATA)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Slice on the GPU: starts/ends/axes/steps unknown");
  TRY(st);
  if (!dims_equal(out[0]->rank, out[0]->dims, r, pl.dims))
    return infer_fail(INFER_ERR_INTERNAL, "Slice on the GPU: output shape differs from the plan");
  s->rank = r;
  memcpy(s->dims, pl.dims, sizeof(int64_t) * (size_t)r);
  slice_plan_view(&pl, r, t->dims, &s->offset, s->strides);
  return INFER_OK;
}

static infer_status slice_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const slice_state *s = state;
  int64_t es = (int64_t)infer_dtype_size(in[0]->dtype);
  if (dims_count(s->rank, s->dims) == 0) return INFER_OK;
  CUDA_LAUNCH_TRY(k_copy_view(es, s->rank, s->dims, s->strides, NULL,
                              (const char *)in[0]->data + s->offset * es, out[0]->data, STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_slice = {.name = "Slice", .prepare = slice_prepare, .run = slice_run};

/* ---- Gather and GatherElements ----------------------------------------------------------- */

static infer_status gather_common(const node *n, const gather_params *p, const tensor *const *in,
                                  int *axis) {
  int64_t es;
  TRY(elem_size_of(n->op_type, in[0], &es));
  if (in[1]->dtype != INFER_DTYPE_INT64 && in[1]->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: indices must be int32 or int64", n->op_type);
  if (in[0]->rank == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: data is a scalar", n->op_type);
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  return axis_normalize(p->axis, in[0]->rank, "axis", axis);
}

static infer_status gather_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  axis_state *s;
  NEW_STATE(s, sizeof *s);
  return gather_common(n, params, in, &s->axis);
}

static infer_status gather_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *t = in[0], *idx = in[1];
  int axis = ((const axis_state *)state)->axis;
  CUDA_LAUNCH_TRY(k_gather((int64_t)infer_dtype_size(t->dtype), t->data, (int)idx->dtype,
                           idx->data, out[0]->data, dims_count(axis, t->dims), t->dims[axis],
                           dims_count(idx->rank, idx->dims),
                           dims_count(t->rank - axis - 1, t->dims + axis + 1), STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_gather = {.name = "Gather", .prepare = gather_prepare, .run = gather_run};

static infer_status gather_elements_prepare(const cuda_exec *x, const node *n, const void *params,
                                            const tensor *const *in, const tensor *const *host_in,
                                            tensor *const *out, void **state, int64_t *ws_bytes) {
  axis_state *s;
  NEW_STATE(s, sizeof *s);
  TRY(gather_common(n, params, in, &s->axis));
  if (infer_dtype_size(in[0]->dtype) > 8 || in[1]->rank != in[0]->rank)
    return infer_fail(INFER_ERR_UNSUPPORTED, "GatherElements on the GPU: unsupported shapes/dtype");
  for (int d = 0; d < in[0]->rank; d++)
    if (d != s->axis && in[1]->dims[d] > in[0]->dims[d])
      return infer_fail(INFER_ERR_INVALID_MODEL, "GatherElements: indices do not fit data");
  return INFER_OK;
}

static infer_status gather_elements_run(const cuda_exec *x, const node *n, const void *params,
                                        const void *state, const tensor *const *in,
                                        tensor *const *out) {
  const tensor *t = in[0], *idx = in[1];
  CUDA_LAUNCH_TRY(k_gather_elements((int)infer_dtype_size(t->dtype), t->rank, t->dims, idx->dims,
                                    ((const axis_state *)state)->axis, t->data, (int)idx->dtype,
                                    idx->data, out[0]->data, STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_gather_elements = {.name = "GatherElements",
                                             .prepare = gather_elements_prepare,
                                             .run = gather_elements_run};

/* ---- Trilu: k (optional input) is read on the device ------------------------------------- */

typedef struct trilu_state {
  int upper;
} trilu_state;

static infer_status trilu_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  trilu_state *s;
  int64_t es;
  const trilu_params *p = params;
  TRY(elem_size_of("Trilu", in[0], &es));
  if (es > 8 || in[0]->rank < 2)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Trilu on the GPU: unsupported input");
  if (input_given(n, in, 1) &&
      (in[1]->dtype != INFER_DTYPE_INT64 || dims_count(in[1]->rank, in[1]->dims) != 1))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Trilu: k must be one int64");
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "Trilu: attributes were not parsed");
  NEW_STATE(s, sizeof *s);
  s->upper = p->upper != 0;
  return INFER_OK;
}

static infer_status trilu_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *t = in[0];
  int r = t->rank;
  CUDA_LAUNCH_TRY(k_trilu((int)infer_dtype_size(t->dtype), ((const trilu_state *)state)->upper,
                          input_given(n, in, 1) ? (const int64_t *)in[1]->data : NULL, t->data,
                          out[0]->data, dims_count(r - 2, t->dims), t->dims[r - 2], t->dims[r - 1],
                          STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_trilu = {.name = "Trilu", .prepare = trilu_prepare, .run = trilu_run};

/* ---- Pad: pads resolved at prepare (crop first, then extend, as the CPU) ------------------ */

typedef struct pad_state {
  int mode, rank, es;
  bool cval_dev; /* the constant is read from input 2 on the device */
  int64_t lo[INFER_MAX_RANK], ext[INFER_MAX_RANK], pb[INFER_MAX_RANK];
  unsigned char cval[16];
} pad_state;

/* The CPU's resolution (ops/pad.c) from the host copies of pads and axes (opset 11+),
 * which must be constants; the constant value converted to the storage dtype here. */
static infer_status pad_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  static const int modes[] = {[PAD_CONSTANT] = K_PAD_CONSTANT, [PAD_REFLECT] = K_PAD_REFLECT,
                              [PAD_EDGE] = K_PAD_EDGE, [PAD_WRAP] = K_PAD_WRAP};
  const pad_params *p = params;
  pad_state *s;
  const tensor *t = in[0];
  int r = t->rank;
  int64_t es, b[INFER_MAX_RANK], e[INFER_MAX_RANK];
  TRY(elem_size_of("Pad", t, &es));
  if (es > 8)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: dtype %s is not supported",
                      infer_dtype_name(t->dtype));
  NEW_STATE(s, sizeof *s);
  s->es = (int)es;
  s->rank = r;
  s->mode = modes[p->mode];
  if (n->opset < 11) {
    elem_from_f64(out[0]->dtype, p->value, s->cval);
  } else {
    if (input_given(n, in, 1) && !host_in[1])
      return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: pads must be a constant");
    if (input_given(n, in, 3) && !host_in[3])
      return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: axes must be a constant");
    if (input_given(n, in, 2)) {
      int64_t c = dims_count(in[2]->rank, in[2]->dims);
      if (c > 1) return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: constant_value must be a scalar");
      if (c == 1 && host_in[2]) {
        elem_convert(host_in[2], 0, out[0]->dtype, s->cval);
      } else if (c == 1) {
        if (in[2]->dtype != out[0]->dtype)
          return infer_fail(INFER_ERR_UNSUPPORTED,
                            "Pad on the GPU: a non-constant constant_value of dtype %s for %s data",
                            infer_dtype_name(in[2]->dtype), infer_dtype_name(out[0]->dtype));
        s->cval_dev = true;
      }
    }
  }
  infer_status st = pad_resolve(n, p, t, host_in, b, e);
  if (st == OP_NEEDS_DATA)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Pad on the GPU: pads/axes unknown");
  TRY(st);
  pad_region(r, t->dims, b, e, s->lo, s->ext, s->pb);
  for (int i = 0; i < r; i++) {
    if (s->ext[i] < 0 || out[0]->dims[i] != s->ext[i] + s->pb[i] + (e[i] > 0 ? e[i] : 0))
      return infer_fail(INFER_ERR_INTERNAL, "Pad on the GPU: output shape differs on axis %d", i);
    if (s->mode != K_PAD_CONSTANT && s->ext[i] == 0 && out[0]->dims[i] > 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Pad: cannot pad an empty axis %d", i);
  }
  return INFER_OK;
}

static infer_status pad_run(const cuda_exec *x, const node *n, const void *params,
                            const void *state, const tensor *const *in, tensor *const *out) {
  const pad_state *s = state;
  CUDA_LAUNCH_TRY(k_pad(s->es, s->mode, s->rank, in[0]->dims, out[0]->dims, s->lo, s->ext, s->pb,
                        s->cval, s->cval_dev ? in[2]->data : NULL, in[0]->data, out[0]->data,
                        STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_pad = {.name = "Pad", .prepare = pad_prepare, .run = pad_run};

/* ---- Resize ----------------------------------------------------------------------------------
 * The plan (output size, scales, ROI) and every coordinate mapping are the CPU's
 * (ops/resize.c), made once at prepare from the constant scales/sizes/roi: nearest
 * becomes one input index per output coordinate and axis; linear/cubic become
 * per-axis tap tables (indices, weights, an outside flag) for separable passes,
 * last axis first, accumulating in float (double for float64 and integers). */

static bool given_nonempty(const node *n, const tensor *const *in, int i) {
  return input_given(n, in, i) && dims_count(in[i]->rank, in[i]->dims) != 0;
}

/* The CPU's plan (ops/resize.c) from the host copies of scales or sizes, and of roi
 * where tf_crop_and_resize uses it; those must be constants. */
static infer_status gr_plan_make(const node *n, const resize_params *p, const tensor *const *in,
                                 const tensor *const *host_in, resize_plan *pl) {
  int first = n->opset < 11 ? 1 : 2, last = n->opset < 11 ? 1 : 3;
  for (int i = first; i <= last; i++)
    if (given_nonempty(n, in, i) && !host_in[i])
      return infer_fail(INFER_ERR_UNSUPPORTED, "Resize on the GPU: %s must be a constant",
                        i == 3 ? "sizes" : "scales");
  if (n->opset >= 11 && p->coord == CT_TF_CROP_AND_RESIZE && given_nonempty(n, in, 1) &&
      !host_in[1])
    return infer_fail(INFER_ERR_UNSUPPORTED, "Resize on the GPU: roi must be a constant");
  infer_status st = resize_plan_make(n, p, in[0], host_in, pl);
  if (st == OP_NEEDS_DATA)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Resize on the GPU: roi/scales/sizes unknown");
  return st;
}

typedef struct gr_pass {
  int taps;
  int64_t outer, in_a, out_a, inner;
  size_t idx_off, w_off, outside_off; /* bytes into the state's device block */
} gr_pass;

typedef struct resize_state {
  bool nearest;
  int rank, es, n_pass;
  int64_t total_out;
  void *dev; /* nearest: the index table; linear/cubic: every pass's tap tables */
  unsigned char ext[16];
  double extrapolation;
  int64_t buf_bytes; /* one intermediate buffer in the workspace */
  gr_pass pass[INFER_MAX_RANK];
} resize_state;

static void resize_release(void *p) {
  resize_state *s = p;
  if (!s) return;
  if (s->dev) cudaFree(s->dev);
  free(s);
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Per-axis tap tables of the active axes (last first) in one host block. */
static infer_status gr_build_passes(const resize_params *p, const resize_plan *pl, resize_state *s,
                                    unsigned char **block, size_t *bytes) {
  int64_t cur[INFER_MAX_RANK], tidx[RESIZE_MAX_TAPS];
  double tw[RESIZE_MAX_TAPS];
  size_t size = 0;
  unsigned char *b = NULL;
  memcpy(cur, pl->in, sizeof cur);
  s->n_pass = 0;
  infer_status st = INFER_OK;
  for (int a = pl->rank - 1; a >= 0 && st == INFER_OK; a--) {
    if (!pl->active[a]) continue;
    gr_pass *ps = &s->pass[s->n_pass++];
    int64_t out_a = pl->out[a];
    int taps = 1, count;
    bool outside;
    for (int64_t o = 0; o < out_a; o++) {
      if (!resize_taps(p, pl, a, o, tidx, tw, &count, &outside)) {
        st = infer_fail(INFER_ERR_UNSUPPORTED,
                        "Resize: antialiased downscale on axis %d needs more than %d taps", a,
                        RESIZE_MAX_TAPS);
        break;
      }
      if (count > taps) taps = count;
    }
    if (st != INFER_OK) break;
    ps->taps = taps;
    ps->outer = dims_count(a, cur);
    ps->inner = dims_count(pl->rank - a - 1, cur + a + 1);
    ps->in_a = cur[a];
    ps->out_a = out_a;
    cur[a] = out_a;
    size_t n_tab = (size_t)out_a * (size_t)taps;
    ps->idx_off = align_up(size, 256);
    ps->w_off = ps->idx_off + n_tab * sizeof(int64_t);
    ps->outside_off = ps->w_off + n_tab * sizeof(double);
    size_t end = ps->outside_off + (size_t)out_a + 1;
    unsigned char *nb = realloc(b, end);
    if (!nb) {
      st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      break;
    }
    b = nb;
    memset(b + size, 0, end - size);
    size = end;
    int64_t *ti = (int64_t *)(b + ps->idx_off);
    double *tw_all = (double *)(b + ps->w_off);
    uint8_t *to = b + ps->outside_off;
    for (int64_t o = 0; o < out_a; o++) {
      resize_taps(p, pl, a, o, tidx, tw, &count, &outside);
      to[o] = outside;
      for (int k = 0; k < count; k++) {
        ti[o * taps + k] = tidx[k];
        tw_all[o * taps + k] = tw[k];
      }
    }
  }
  if (st != INFER_OK) {
    free(b);
    return st;
  }
  *block = b;
  *bytes = size;
  return INFER_OK;
}

static infer_status resize_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  const resize_params *p = params;
  resize_state *s;
  resize_plan pl;
  int64_t es;
  const tensor *t = in[0];
  TRY(elem_size_of("Resize", t, &es));
  if (es > 8 || t->dtype == INFER_DTYPE_BOOL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Resize on the GPU: dtype %s is not supported",
                      infer_dtype_name(t->dtype));
  NEW_STATE(s, sizeof *s);
  TRY(gr_plan_make(n, p, in, host_in, &pl));
  if (!dims_equal(out[0]->rank, out[0]->dims, pl.rank, pl.out))
    return infer_fail(INFER_ERR_INTERNAL, "Resize on the GPU: output shape differs from the plan");
  s->rank = pl.rank;
  s->es = (int)es;
  s->nearest = p->mode == RS_NEAREST;
  s->extrapolation = p->extrapolation;
  s->total_out = dims_count(pl.rank, pl.out);
  elem_from_f64(out[0]->dtype, p->extrapolation, s->ext);
  if (s->total_out == 0 || pl.rank == 0) return INFER_OK;
  if (s->nearest) {
    int64_t total = 0, k = 0;
    for (int d = 0; d < pl.rank; d++) total += pl.out[d];
    int64_t *table = malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
    if (!table) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    for (int d = 0; d < pl.rank; d++)
      for (int64_t o = 0; o < pl.out[d]; o++)
        table[k++] = pl.active[d] ? resize_nearest_index(p, &pl, d, o) : o;
    infer_status st = upload(table, total * (int64_t)sizeof(int64_t), &s->dev);
    free(table);
    return st;
  }
  int acc = k_resize_acc_bytes((int)t->dtype);
  if (acc == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Resize on the GPU: dtype %s is not supported",
                      infer_dtype_name(t->dtype));
  unsigned char *block = NULL;
  size_t bytes = 0;
  TRY(gr_build_passes(p, &pl, s, &block, &bytes));
  infer_status st = s->n_pass > 0 ? upload(block, (int64_t)bytes, &s->dev) : INFER_OK;
  free(block);
  TRY(st);
  if (s->n_pass >= 2) {
    /* every intermediate mixes input and output dims: the elementwise max bounds them */
    int64_t bound = 1;
    for (int d = 0; d < pl.rank; d++) bound *= pl.in[d] > pl.out[d] ? pl.in[d] : pl.out[d];
    s->buf_bytes = (int64_t)align_up((size_t)(bound * acc), 256);
    *ws_bytes = s->buf_bytes * (s->n_pass == 2 ? 1 : 2);
  }
  return INFER_OK;
}

static infer_status resize_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const resize_state *s = state;
  cudaStream_t st = STREAM(x);
  if (s->total_out == 0) return INFER_OK;
  if (s->rank == 0 || (!s->nearest && s->n_pass == 0)) return copy_bytes(x, in[0], out[0]);
  if (s->nearest) {
    CUDA_LAUNCH_TRY(k_resize_nearest(s->es, s->rank, in[0]->dims, out[0]->dims, s->dev, s->ext,
                                     in[0]->data, out[0]->data, st));
    return INFER_OK;
  }
  int64_t need = s->n_pass < 2 ? 0 : s->buf_bytes * (s->n_pass == 2 ? 1 : 2);
  if (x->ws_bytes < need || (need > 0 && !x->ws))
    return infer_fail(INFER_ERR_INTERNAL, "Resize on the GPU: workspace too small");
  char *buf[2] = {(char *)x->ws, (char *)x->ws + s->buf_bytes};
  for (int i = 0; i < s->n_pass; i++) {
    const gr_pass *ps = &s->pass[i];
    const void *src = i == 0 ? in[0]->data : buf[(i - 1) % 2];
    void *dst = i == s->n_pass - 1 ? out[0]->data : buf[i % 2];
    const char *dev = s->dev;
    CUDA_LAUNCH_TRY(k_resize_pass((int)in[0]->dtype, i > 0, i < s->n_pass - 1, src, dst, ps->outer,
                                  ps->in_a, ps->out_a, ps->inner, ps->taps,
                                  (const int64_t *)(dev + ps->idx_off),
                                  (const double *)(dev + ps->w_off),
                                  (const uint8_t *)(dev + ps->outside_off), s->extrapolation, st));
  }
  return INFER_OK;
}

static const cuda_op cuda_resize = {.name = "Resize", .prepare = resize_prepare, .run = resize_run,
                                    .release = resize_release};

/* ---- the family (the shape ops are listed here too) ------------------------------------- */

const cuda_op *const cuda_ops_movement[] = {
    &cuda_shape,     &cuda_size,      &cuda_constant,  &cuda_constant_of_shape,
    &cuda_range,     &cuda_reshape,   &cuda_flatten,   &cuda_squeeze,
    &cuda_unsqueeze, &cuda_expand,    &cuda_identity,  &cuda_dropout,
    &cuda_transpose, &cuda_concat,    &cuda_split,     &cuda_slice,
    &cuda_gather,    &cuda_gather_elements, &cuda_tile, &cuda_trilu,
    &cuda_pad,       &cuda_resize,    NULL,
};
