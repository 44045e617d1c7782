/* cuda_resize.c: the GPU side of ops/resize.c: Resize, planned at prepare by the CPU
 * op's functions (../resize_plan.h). */
#include <stdlib.h>
#include <string.h>

#include "../../kernels/pad_resize.h"
#include "../resize_plan.h"
#include "cuda_movement_util.h"

/* ---- Resize ----------------------------------------------------------------------------------
 * The plan (output size, scales, ROI) and every coordinate mapping are the CPU's
 * (ops/resize.c), made once at prepare from the constant scales/sizes/roi: nearest
 * becomes one input index per output coordinate and axis; linear/cubic become
 * per-axis tap tables (indices, weights, an outside flag) for separable passes,
 * last axis first, accumulating in float (double for float64 and integers). */

static bool given_nonempty(const node *n, const tensor *const *in, int i) {
  return mv_input_given(n, in, i) && dims_count(in[i]->rank, in[i]->dims) != 0;
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
  TRY(mv_elem_size("Resize", t, &es));
  if (es > 8 || t->dtype == INFER_DTYPE_BOOL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Resize on the GPU: dtype %s is not supported",
                      infer_dtype_name(t->dtype));
  MV_NEW_STATE(s, sizeof *s);
  TRY(gr_plan_make(n, p, in, host_in, &pl));
  if (!dims_equal(out[0]->rank, out[0]->dims, pl.rank, pl.out))
    return infer_fail(INFER_ERR_INTERNAL, "Resize on the GPU: output shape differs from the plan");
  s->rank = pl.rank;
  s->es = (int)es;
  s->nearest = p->mode == RS_NEAREST;
  s->extrapolation = p->extrapolation;
  s->total_out = dims_count(pl.rank, pl.out);
  mv_elem_from_f64(out[0]->dtype, p->extrapolation, s->ext);
  if (s->total_out == 0 || pl.rank == 0) return INFER_OK;
  if (s->nearest) {
    int64_t total = 0, k = 0;
    for (int d = 0; d < pl.rank; d++) total += pl.out[d];
    int64_t *table = malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
    if (!table) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    for (int d = 0; d < pl.rank; d++)
      for (int64_t o = 0; o < pl.out[d]; o++)
        table[k++] = pl.active[d] ? resize_nearest_index(p, &pl, d, o) : o;
    infer_status st = mv_upload(table, total * (int64_t)sizeof(int64_t), &s->dev);
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
  infer_status st = s->n_pass > 0 ? mv_upload(block, (int64_t)bytes, &s->dev) : INFER_OK;
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
  cudaStream_t st = MV_STREAM(x);
  if (s->total_out == 0) return INFER_OK;
  if (s->rank == 0 || (!s->nearest && s->n_pass == 0)) return mv_copy_bytes(x, in[0], out[0]);
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

const cuda_op cuda_resize = {.name = "Resize", .prepare = resize_prepare, .run = resize_run,
                             .release = resize_release};
