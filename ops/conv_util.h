/* conv_util.h: what Conv, ConvTranspose and the pooling ops share: the sliding
 * window attributes (kernel_shape, strides, dilations, pads, auto_pad), output
 * geometry, im2col/col2im, and dtype staging for the half types.
 *
 * The run-time kernels see every window as 3-D: 1-D and 2-D problems are padded at
 * the front with size-1 spatial dims (kernel 1, stride 1, no pads), so one loop
 * nest serves all three ranks. More than 3 spatial dims is INFER_ERR_UNSUPPORTED. */
#ifndef INFER_CONV_UTIL_H
#define INFER_CONV_UTIL_H

#include "op.h"

#define WIN_MAX_SPATIAL 3

typedef enum auto_pad_mode {
  AUTO_PAD_NOTSET = 0,
  AUTO_PAD_SAME_UPPER,
  AUTO_PAD_SAME_LOWER,
  AUTO_PAD_VALID
} auto_pad_mode;

/* Attributes as written in the node; a count of -1 means absent. */
typedef struct win_attrs {
  auto_pad_mode auto_pad;
  int n_kernel, n_strides, n_dilations, n_pads;
  int64_t kernel[WIN_MAX_SPATIAL], strides[WIN_MAX_SPATIAL], dilations[WIN_MAX_SPATIAL];
  int64_t pads[2 * WIN_MAX_SPATIAL];
} win_attrs;

/* Reads and range-checks kernel_shape, strides, dilations, pads and auto_pad
 * (the names the op does not accept are simply absent). `op` names the op in
 * messages. */
infer_status win_attrs_parse(const node *n, const char *op, win_attrs *w);

/* One problem's geometry, always 3-D (see above); nsp is the real spatial rank. */
typedef struct win_geom {
  int nsp;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
} win_geom;

/* Forward window geometry (Conv, pooling). kernel: the nsp kernel dims (from W or
 * kernel_shape). ceil_mode: pooling's rounding (output shrinks so the last window
 * starts inside the input or the left padding). Output dims < 1 are an error. */
infer_status win_geom_forward(const win_attrs *w, int nsp, const int64_t *in, const int64_t *kernel,
                              bool ceil_mode, const char *op, win_geom *g);

/* Element counts of a geometry. */
int64_t win_in_count(const win_geom *g);
int64_t win_out_count(const win_geom *g);
int64_t win_kernel_count(const win_geom *g);

/* Taps k in [*lo, *hi) with start + k*d inside [0, n): the part of a window that
 * reads real input. */
static inline void win_range(int64_t start, int64_t d, int64_t n, int64_t kmax, int64_t *lo,
                             int64_t *hi) {
  int64_t l = start < 0 ? (-start + d - 1) / d : 0;
  int64_t h = start >= n ? 0 : (n - start + d - 1) / d;
  if (h > kmax) h = kmax;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}

/* im2col over one image of `channels` channels: col is (channels * K) x out_count,
 * row (c, kd, kh, kw), column (od, oh, ow); padding reads as 0. */
void im2col_f32(const float *x, int64_t channels, const win_geom *g, float *col);
void im2col_f64(const double *x, int64_t channels, const win_geom *g, double *col);
/* The adjoint: y (channels x in_count of g, i.e. the ConvTranspose output seen as a
 * Conv input) += scattered col. y must be initialized by the caller. */
void col2im_f32(const float *col, int64_t channels, const win_geom *g, float *y);
void col2im_f64(const double *col, int64_t channels, const win_geom *g, double *y);

/* Plain triple-loop double GEMM (float64 models are rare): same contract as
 * cpu_sgemm. */
void ref_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
               const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
               int64_t ldc);

/* float16 / bfloat16 / float32 <-> float32 staging (float32: a copy). */
void stage_to_f32(const void *src, infer_dtype dt, int64_t count, float *dst);
void stage_from_f32(const float *src, infer_dtype dt, int64_t count, void *dst);

/* dst = src permuted: dst dim i is src dim perm[i] (4-D, elements of `es` bytes).
 * The channels-last reference paths (an op with channels_last = 1 on the CPU) use it
 * with perm_nhwc_to_nchw / perm_nchw_to_nhwc. */
void permute4(const void *src, const int64_t *sd, const int *perm, void *dst, size_t es);
extern const int perm_nhwc_to_nchw[4], perm_nchw_to_nhwc[4];

/* Workspace arithmetic: bytes for `count` elements of `elem` bytes, added to *total;
 * false on overflow. Workspace pieces are 64-byte aligned. */
bool ws_add(int64_t *total, int64_t count, int64_t elem);
/* Carves the next piece (same order as the ws_add calls) from *cursor. */
void *ws_take(char **cursor, int64_t count, int64_t elem);

#endif
