/* cuda_conv.h: what the GPU side of Conv and FusedConv shares across its files: the
 * prepared state of one step (cuda_conv.c prepares and runs it, conv_then_epilogue.c
 * runs its cuDNN + epilogue form), the measured choice
 * of its algorithm and implementation (conv_algo_search.c) and what the algorithm
 * cache keeps of that choice (conv_cache_key.c). */
#ifndef INFER_CUDA_CONV_H
#define INFER_CUDA_CONV_H

#include "../conv_fused.h"
#include "conv_alt.h"
#include "conv_descriptors.h"

typedef struct conv_state {
  conv_descs d;
  cudnnConvolutionFwdAlgo_t algo;
  size_t algo_ws;
  bool explicit_pad;
  int rank; /* of the cuDNN problem (>= 4) */
  int64_t in_dims[5], padded_dims[5], pad_begin[5]; /* in memory order */
  int64_t padded_bytes; /* of the padded input in the workspace */
  /* the epilogue: y = act(conv + bias + z); a plain Conv has CONV_ACT_NONE, no z */
  conv_act act;
  float alpha, beta;
  bool has_z, channels_last;
  bool nan_exact;                 /* config cuda.nan_exact: no library activation */
  bool bias_first;                /* config cuda.conv_bias_first (conv_then_epilogue) */
  bool use_fused;                 /* one cudnnConvolutionBiasActivationForward call */
  cudnnActivationDescriptor_t actd; /* for the fused call */
  void *zero_bias;                /* device zeros standing in for an absent B there */
  int kdt;                        /* K_F32 / K_F16 for the epilogue kernel, 0 otherwise */
  int64_t count, channels, inner; /* of y, for the epilogue kernel */
  /* another implementation (conv_alt.h) when it timed faster at build */
  conv_problem prob;
  bool prob_ok;                   /* 2-D with an epilogue kernel dtype: alternatives apply */
  const conv_alt *alt;
  void *alt_state;
  int64_t alt_ws;
  /* the engine's request to write y as a slice of a wider tensor (cuda_exec.out_pitch;
   * 0: none) and whether the chosen alternative does (prob.y_pitch then set) */
  int64_t y_pitch_req;
  bool y_pitched;
} conv_state;

/* ---- conv_then_epilogue.c ---------------------------------------------------------- */

/* cuDNN's convolution of src into y, then the epilogue kernel: y = act(conv + bias + z),
 * the bias inside cuDNN's float32 accumulation in float16 (bias_first). w: the weights,
 * ws: the step's workspace (cuDNN's part first). Float32 or float16 (s->kdt). */
infer_status conv_then_epilogue(const cuda_exec *x, const conv_state *s, const void *src,
                                const void *w, const void *bias, const void *z, void *y,
                                void *ws);

/* ---- conv_algo_search.c ------------------------------------------------------------ */

/* The implementation config cuda.conv_impl forces (a test hook), or NULL. */
const char *conv_forced_impl(const cuda_exec *x);
/* Makes alternative a the step's implementation without timing it: false when it
 * does not take the problem or needs more scratch than the workspace limit allows. */
bool conv_take_alt(const cuda_exec *x, conv_state *s, const conv_alt *a);
/* The measured search on scratch buffers (y_bytes: the output's size): cuDNN's
 * algorithm, then where the step has an epilogue kernel the fastest of it, cuDNN's
 * fused call and the alternatives. Sets s->algo, algo_ws, the math type, use_fused
 * and alt. */
infer_status conv_choose_algo(const cuda_exec *x, conv_state *s, const tensor *const *in,
                              int64_t y_bytes);

/* ---- conv_cache_key.c -------------------------------------------------------------- */

/* The algorithm cache's key of the problem (xd: the padded input's logical dims) in
 * key (cap bytes, at most ALGO_CACHE_KEY_MAX + 1 needed). */
void conv_cache_key(const conv_state *s, const int64_t *xd, const int64_t *wd, const int *pads,
                    const int *strides, const int *dil, int64_t group, cudnnDataType_t dt,
                    infer_precision p, char *key, size_t cap);
/* Takes the cached choice for key when there is one that this cuDNN and the
 * workspace limit accept; false otherwise. */
bool conv_cached_algo(const cuda_exec *x, conv_state *s, const char *key);
/* The cache entry's variant: 0 convolution + epilogue kernel, 1 cuDNN's fused call,
 * 2 + i the alternative conv_alts[i]. */
int64_t conv_variant_code(const conv_state *s);

#endif
