/* index_params.h: the index family (ops/index_*.c): TopK, NonZero, GatherND, ScatterND,
 * ScatterElements (and Scatter), OneHot, CumSum, CumProd, DepthToSpace, SpaceToDepth.
 *
 * Each op's parse fills one params struct (n->params) below; shape inference, the CPU
 * run and a later GPU side read the same struct and the same plan functions, so
 * defaults and the meaning of every attribute are written once, here and in parse.
 * An index outside its axis is a runtime error INFER_ERR_INVALID_INPUT naming the op,
 * found before the element it addresses is touched (a failed run's outputs are never
 * readable, so what was written before the bad index does not matter). */
#ifndef INFER_INDEX_PARAMS_H
#define INFER_INDEX_PARAMS_H

#include <stdbool.h>

#include "op.h"

/* ---- shared pieces (ops/index_util.c) --------------------------------------------- */

/* The reduction of ScatterND / ScatterElements (attribute `reduction`, opset 16+:
 * none, add, mul; 18+: max, min). */
typedef enum index_reduce { IR_NONE = 0, IR_ADD, IR_MUL, IR_MAX, IR_MIN } index_reduce;

/* Reads `reduction` (default none) checking that its value exists at n's opset. */
infer_status index_parse_reduction(const node *n, index_reduce *r);
/* INFER_ERR_UNSUPPORTED unless dt can be reduced with r (any dtype with IR_NONE,
 * numeric ones otherwise). */
infer_status index_check_reduce_dtype(const char *op, infer_dtype dt, index_reduce r);
/* dst[i] = dst[i] (r) src[i] for i < n, both contiguous of dtype dt (IR_NONE: copy).
 * Integers wrap (two's complement), floats follow numpy (max/min propagate NaN),
 * float16/bfloat16 compute in float and round once. */
void index_reduce_run(infer_dtype dt, index_reduce r, void *dst, const void *src, int64_t n);

/* Element i of an int32 or int64 tensor. */
static inline int64_t index_at(const tensor *t, int64_t i) {
  return t->dtype == INFER_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                       : ((const int32_t *)t->data)[i];
}

/* v in [-dim, dim) counted from the back when negative, into [0, dim); false when
 * outside. */
static inline bool index_resolve(int64_t v, int64_t dim, int64_t *out) {
  if (v < -dim || v >= dim) return false;
  *out = v < 0 ? v + dim : v;
  return true;
}

/* The INFER_ERR_INVALID_INPUT of an index outside [-dim, dim): names op, the index
 * input, the value and its position. */
infer_status index_out_of_range(const char *op, int64_t v, int64_t pos, int64_t dim);

/* INFER_ERR_INVALID_MODEL unless t is int64 (int32 too when allow_int32). */
infer_status index_check_indices_dtype(const char *op, const tensor *t, bool allow_int32);

/* True for the numeric dtypes (floats, signed and unsigned ints; not bool). */
bool index_dtype_numeric(infer_dtype dt);

/* ---- TopK (1+; K an input since 10, largest/sorted since 11) ----------------------- */

typedef struct topk_params {
  int64_t axis;    /* default -1 */
  bool largest;    /* default 1 */
  bool sorted;     /* default 1; the CPU always sorts (an unsorted order is any order) */
  int64_t k_attr;  /* opset < 10: attribute k; -1 when K is the second input */
} topk_params;

/* Axis and K for x (only its shape read) and the K input (in[1], host data, or NULL
 * before opset 10). OP_NEEDS_DATA when K is an input whose value is not known yet;
 * K outside [0, dim] is INVALID_MODEL (at run time the engine makes it INVALID_INPUT). */
infer_status topk_resolve(const topk_params *p, const tensor *x, const tensor *k_in, int *axis,
                          int64_t *k);

/* ---- GatherND (11+; batch_dims 12+) and ScatterND (11+; reduction 16+) ------------- */

typedef struct gather_nd_params {
  int64_t batch_dims; /* default 0 */
} gather_nd_params;

/* How GatherND / ScatterND walk data with indices [..., m]: `batch` leading dims
 * shared by data and indices, `tuples` index tuples per batch entry, each addressing
 * a slice of `slice` elements; data holds `data_batch` elements per batch entry. */
typedef struct nd_plan {
  int b;              /* batch dims */
  int m;              /* tuple length: indices.shape[-1] */
  int64_t batch;      /* product of the first b dims */
  int64_t tuples;     /* index tuples per batch entry */
  int64_t slice;      /* elements per addressed slice: prod(data.shape[b+m:]) */
  int64_t data_batch; /* elements of data per batch entry */
  int64_t strides[INFER_MAX_RANK]; /* element strides of data dims b..b+m-1 */
} nd_plan;

/* Checks data and indices shapes (b = batch_dims) and fills the plan; INVALID_MODEL
 * naming op when they do not fit. */
infer_status nd_make_plan(const char *op, const tensor *data, const tensor *indices, int64_t b,
                          nd_plan *pl);

/* Element offset in data of tuple t of batch entry bt; INVALID_INPUT (index out of
 * range) naming op. */
infer_status nd_tuple_offset(const char *op, const nd_plan *pl, const tensor *data,
                             const tensor *indices, int64_t bt, int64_t t, int64_t *offset);

/* ---- ScatterND / ScatterElements / Scatter ---------------------------------------- */

typedef struct scatter_params {
  int64_t axis;         /* ScatterElements / Scatter; default 0 */
  index_reduce reduction;
} scatter_params;

/* ---- OneHot (9+; negative axis 11+) --------------------------------------------- */

typedef struct onehot_params {
  int64_t axis; /* default -1; in [-r-1, r] for indices of rank r */
} onehot_params;

/* The depth input (a scalar or one-element tensor of any numeric dtype) as an
 * integer >= 1. OP_NEEDS_DATA when not known; INVALID_MODEL when not positive. */
infer_status onehot_depth(const tensor *depth, int64_t *d);

/* ---- CumSum (11+) and CumProd (26+) ------------------------------------------------ */

typedef struct cum_params {
  bool exclusive, reverse; /* defaults 0 */
  bool product;            /* CumProd */
} cum_params;

/* The axis input (a scalar or one-element int32/int64 tensor) normalized for rank. */
infer_status cum_axis(const char *op, const tensor *axis, int rank, int *out);

/* ---- DepthToSpace (1+; mode 11+) and SpaceToDepth (1+) ----------------------------- */

typedef struct depth_space_params {
  int64_t blocksize; /* required, >= 1 */
  bool crd;          /* DepthToSpace mode CRD (default DCR) */
  bool to_space;     /* DepthToSpace (else SpaceToDepth) */
} depth_space_params;

/* The rearrangement as a 6-D strided view of the contiguous N,C,H,W input: the output
 * in C order is the view with dims[6] and element strides[6]. Checks the shape and
 * fills out_dims (4). */
infer_status depth_space_view(const depth_space_params *p, const tensor *x, int64_t *out_dims,
                              int64_t *dims, int64_t *strides);

#endif
