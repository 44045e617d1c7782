/* conv_cache_key.c: what the algorithm cache (algo_cache.h) keeps for one Conv /
 * FusedConv step (cuda_conv.h): its key and the entry's values, and the check of a
 * cached entry before use. */
#include <stdio.h>

#include "algo_cache.h"
#include "cuda_conv.h"

/* The algorithm cache's key: everything the choice depends on (cuDNN's descriptors
 * hold the problem; the epilogue decides whether the fused call is timed). */
static void key_add(char *key, size_t cap, size_t *len, const char *fmt, long long v) {
  if (*len >= cap) return;
  int k = snprintf(key + *len, cap - *len, fmt, v);
  *len = k < 0 ? cap : *len + (size_t)k;
}

void conv_cache_key(const conv_state *s, const int64_t *xd, const int64_t *wd, const int *pads,
                    const int *strides, const int *dil, int64_t group, cudnnDataType_t dt,
                    infer_precision p, char *key, size_t cap) {
  size_t k = 0;
  key[0] = 0;
  key_add(key, cap, &k, "conv:rank=%lld:x=", s->rank);
  for (int i = 0; i < s->rank; i++) key_add(key, cap, &k, "%lld,", xd[i]);
  key_add(key, cap, &k, ":w=%lld,", wd[0]);
  for (int i = 1; i < s->rank; i++) key_add(key, cap, &k, "%lld,", wd[i]);
  key_add(key, cap, &k, ":g=%lld:p/s/d=", group);
  for (int i = 0; i < s->rank - 2; i++) {
    key_add(key, cap, &k, "%lld/", pads[i]);
    key_add(key, cap, &k, "%lld/", strides[i]);
    key_add(key, cap, &k, "%lld,", dil[i]);
  }
  key_add(key, cap, &k, ":dt=%lld", dt);
  key_add(key, cap, &k, ":prec=%lld", p);
  key_add(key, cap, &k, ":nhwc=%lld", s->channels_last);
  key_add(key, cap, &k, ":act=%lld", s->actd ? (long long)s->act : -1);
  key_add(key, cap, &k, ":z=%lld", s->has_z);
  key_add(key, cap, &k, ":xmax=%lld", s->prob.has_x_max);
  /* cuda.nan_exact changes what the alternatives and the fused call may take */
  key_add(key, cap, &k, ":nanx=%lld", s->nan_exact);
  /* a cache written by a build with fewer alternatives never timed the new ones */
  int alts = 0;
  while (conv_alts[alts]) alts++;
  key_add(key, cap, &k, ":alts=%lld", alts);
}

/* A cached choice, checked against cuDNN before use: the workspace query fails
 * for an algorithm this cuDNN or problem does not have. */
bool conv_cached_algo(const cuda_exec *x, conv_state *s, const char *key) {
  int64_t v[4];
  if (!algo_cache_get(x->algo_cache, key, v)) return false;
  if (v[0] < 0 || v[0] >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT || v[2] < 0) return false;
  size_t ws = 0;
  cudnnSetConvolutionMathType(s->d.conv, (cudnnMathType_t)v[1]);
  if (cudnnGetConvolutionForwardWorkspaceSize(x->cudnn, s->d.x, s->d.w, s->d.conv, s->d.y,
                                              (cudnnConvolutionFwdAlgo_t)v[0],
                                              &ws) != CUDNN_STATUS_SUCCESS ||
      ws != (size_t)v[2] || (x->ws_limit > 0 && (int64_t)ws > x->ws_limit))
    return false;
  s->algo = (cudnnConvolutionFwdAlgo_t)v[0];
  s->algo_ws = ws;
  if (s->prob.has_x_max && v[3] < 2) return false;
  s->use_fused = v[3] == 1 && s->actd;
  if (v[3] >= 2) { /* an alternative implementation, by its index in conv_alts */
    int n = 0;
    while (conv_alts[n]) n++;
    if (v[3] - 2 >= n || !conv_take_alt(x, s, conv_alts[v[3] - 2])) return false;
  }
  return true;
}

/* What the cache keeps of the choice: 0 convolution + epilogue kernel, 1 cuDNN's fused
 * call, 2 + i the alternative conv_alts[i]. */
int64_t conv_variant_code(const conv_state *s) {
  if (!s->alt) return s->use_fused;
  int i = 0;
  while (conv_alts[i] && conv_alts[i] != s->alt) i++;
  return 2 + i;
}
