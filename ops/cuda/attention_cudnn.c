/* attention_cudnn.c: FusedAttention in float16 through cuDNN's SDPA (attention_cudnn.h).
 *
 * Tensors are 4-D [b, h, rows, cols] as the views give them; K^T is K's view with its
 * last two dims and strides swapped (no copy). The composite graph follows the form
 * cudnn-frontend emits, which is the one cuDNN's fused engine is known to match: the
 * scores, the row max, sum and log-sum-exp are virtual float tensors, the
 * probabilities virtual float16 (the second product's A type must be the I/O type),
 * the scale (and the causal mask's -inf) by-value float scalars. */
#include "attention_cudnn.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../../core/cuda_check.h"
#include "cudnn_backend_util.h"

enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_SCALE, UID_NEG_INF, UID_VIRTUAL = 100 };

#define SD_ALIGN 16     /* byte alignment declared for the bound tensors, checked in run */
#define SD_MAX_CFGS 8   /* engine configs asked of the heuristics, per graph */
#define SD_MAX_PLANS 3  /* plans finalized and timed, per graph */
#define SD_MAX_WS ((int64_t)1 << 30)

typedef struct sdpa_key {
  int device;
  int64_t dims[4][4], strides[4][4]; /* Q, K, V, O */
  float scale;
  int64_t kv_group;
  int causal;
} sdpa_key;

struct sdpa_plan {
  sdpa_key key;
  be_pool pool; /* the chosen graph's descriptors */
  cudnnBackendDescriptor_t cfg, plan;
  int64_t ws;
  int64_t offset[4]; /* of Q, K, V, O in their tensors (elements): per step, see below */
  bool causal, unified;
  float scale, neg_inf; /* the by-value scalars' host memory */
  float ms;             /* one run, as timed at build (0: taken from the algorithm cache) */
  int cfg_index;        /* the heuristics' rank of the config kept */
  pthread_mutex_t lock; /* one enqueue at a time (as conv_cudnn_graph.c's) */
  int refs;
  struct sdpa_plan *next, *shared; /* shared: the entry whose plan this step uses */
};

/* Plans by problem, for every engine of the process: a transformer's layers share one. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static sdpa_plan *cache;

static void key_of(sdpa_key *key, const k_attn_view *const *vw, float scale, int64_t kv_group,
                   int causal) {
  memset(key, 0, sizeof *key);
  if (cudaGetDevice(&key->device) != cudaSuccess) cudaGetLastError();
  for (int t = 0; t < 4; t++) {
    memcpy(key->dims[t], vw[t]->dims, sizeof key->dims[t]);
    memcpy(key->strides[t], vw[t]->strides, sizeof key->strides[t]);
  }
  key->scale = scale;
  key->kv_group = kv_group;
  key->causal = causal;
}

static void free_entry(sdpa_plan *e) {
  if (e->plan) cudnnBackendDestroyDescriptor(e->plan);
  if (e->cfg) cudnnBackendDestroyDescriptor(e->cfg);
  be_pool_release(&e->pool);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

/* ---- the graphs ------------------------------------------------------------------- */

static infer_status bound(be_pool *p, int64_t uid, const k_attn_view *v, bool transpose,
                          cudnnBackendDescriptor_t *out) {
  int64_t d[4], s[4];
  memcpy(d, v->dims, sizeof d);
  memcpy(s, v->strides, sizeof s);
  if (transpose) {
    int64_t t = d[2];
    d[2] = d[3];
    d[3] = t;
    t = s[2];
    s[2] = s[3];
    s[3] = t;
  }
  return be_tensor_strided(p, uid, CUDNN_DATA_HALF, d, s, false, false, SD_ALIGN, out);
}

static infer_status scalar(be_pool *p, int64_t uid, cudnnBackendDescriptor_t *out) {
  static const int64_t one[4] = {1, 1, 1, 1};
  return be_tensor_strided(p, uid, CUDNN_DATA_FLOAT, one, one, false, true, SD_ALIGN, out);
}

/* A virtual packed tensor of dims d. */
static infer_status virt(be_pool *p, int64_t *uid, cudnnDataType_t dt, const int64_t *d,
                         cudnnBackendDescriptor_t *out) {
  int64_t s[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  return be_tensor_strided(p, (*uid)++, dt, d, s, true, false, SD_ALIGN, out);
}

/* cuDNN's SDPA operation: Q, K (not transposed), V, O and the scale. */
static infer_status graph_unified(be_pool *p, cudnnHandle_t h, const k_attn_view *const *vw,
                                  cudnnBackendDescriptor_t *og) {
  cudnnBackendDescriptor_t q, k, v, o, sc, op;
  TRY(bound(p, UID_Q, vw[0], false, &q));
  TRY(bound(p, UID_K, vw[1], false, &k));
  TRY(bound(p, UID_V, vw[2], false, &v));
  TRY(bound(p, UID_O, vw[3], false, &o));
  TRY(scalar(p, UID_SCALE, &sc));
  TRY(be_create(p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, &op));
  CUDNN_TRY(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &q));
  CUDNN_TRY(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &k));
  CUDNN_TRY(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v));
  CUDNN_TRY(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o));
  CUDNN_TRY(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &sc));
  CUDNN_TRY(cudnnBackendFinalize(op));
  return be_graph(p, h, &op, 1, og);
}

/* The composite pattern: S = Q.K^T, S *= scale, [S = row >= col ? S : -inf],
 * m = max S, E = exp(S - m), z = sum E, lse = m + log z, P = E / z, O = P.V. */
static infer_status graph_composite(be_pool *p, cudnnHandle_t h, const k_attn_view *const *vw,
                                    bool causal, cudnnBackendDescriptor_t *og) {
  const cudnnDataType_t F = CUDNN_DATA_FLOAT;
  const int64_t b = vw[0]->dims[0], hq = vw[0]->dims[1], sq = vw[0]->dims[2];
  const int64_t skv = vw[1]->dims[2];
  const int64_t ss[4] = {b, hq, sq, skv}, row[4] = {b, hq, sq, 1};
  int64_t uid = UID_VIRTUAL;
  cudnnBackendDescriptor_t q, kt, v, o, sc, ninf = NULL;
  cudnnBackendDescriptor_t s1, s2, s3, m, sub, ex, z, logz, lse, pr;
  cudnnBackendDescriptor_t ops[14];
  int n = 0;
  TRY(bound(p, UID_Q, vw[0], false, &q));
  TRY(bound(p, UID_K, vw[1], true, &kt));
  TRY(bound(p, UID_V, vw[2], false, &v));
  TRY(bound(p, UID_O, vw[3], false, &o));
  TRY(scalar(p, UID_SCALE, &sc));
  TRY(virt(p, &uid, F, ss, &s1));
  TRY(be_matmul(p, q, kt, s1, F, &ops[n++]));
  TRY(virt(p, &uid, F, ss, &s2));
  TRY(be_pointwise_ext(p, CUDNN_POINTWISE_MUL, F, -1, s1, sc, NULL, s2, &ops[n++]));
  s3 = s2;
  if (causal) {
    cudnnBackendDescriptor_t ri, ci, mask;
    TRY(scalar(p, UID_NEG_INF, &ninf));
    TRY(virt(p, &uid, CUDNN_DATA_INT32, ss, &ri));
    TRY(be_pointwise_ext(p, CUDNN_POINTWISE_GEN_INDEX, F, 2, s2, NULL, NULL, ri, &ops[n++]));
    TRY(virt(p, &uid, CUDNN_DATA_INT32, ss, &ci));
    TRY(be_pointwise_ext(p, CUDNN_POINTWISE_GEN_INDEX, F, 3, s2, NULL, NULL, ci, &ops[n++]));
    TRY(virt(p, &uid, CUDNN_DATA_BOOLEAN, ss, &mask));
    TRY(be_pointwise_ext(p, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, ri, ci, NULL, mask,
                         &ops[n++]));
    TRY(virt(p, &uid, F, ss, &s3));
    TRY(be_pointwise_ext(p, CUDNN_POINTWISE_BINARY_SELECT, F, -1, s2, ninf, mask, s3,
                         &ops[n++]));
  }
  TRY(virt(p, &uid, F, row, &m));
  TRY(be_reduction(p, CUDNN_REDUCE_TENSOR_MAX, F, s3, m, &ops[n++]));
  TRY(virt(p, &uid, F, ss, &sub));
  TRY(be_pointwise_ext(p, CUDNN_POINTWISE_SUB, F, -1, s3, m, NULL, sub, &ops[n++]));
  TRY(virt(p, &uid, F, ss, &ex));
  TRY(be_pointwise_ext(p, CUDNN_POINTWISE_EXP, F, -1, sub, NULL, NULL, ex, &ops[n++]));
  TRY(virt(p, &uid, F, row, &z));
  TRY(be_reduction(p, CUDNN_REDUCE_TENSOR_ADD, F, ex, z, &ops[n++]));
  TRY(virt(p, &uid, F, row, &logz));
  TRY(be_pointwise_ext(p, CUDNN_POINTWISE_LOG, F, -1, z, NULL, NULL, logz, &ops[n++]));
  TRY(virt(p, &uid, F, row, &lse));
  TRY(be_pointwise_ext(p, CUDNN_POINTWISE_ADD, F, -1, m, logz, NULL, lse, &ops[n++]));
  TRY(virt(p, &uid, CUDNN_DATA_HALF, ss, &pr));
  TRY(be_pointwise_ext(p, CUDNN_POINTWISE_DIV, F, -1, ex, z, NULL, pr, &ops[n++]));
  TRY(be_matmul(p, pr, v, o, F, &ops[n++]));
  return be_graph(p, h, ops, n, og);
}

/* ---- search ----------------------------------------------------------------------- */

/* The bound tensors of a run, in uid order (the views' offsets added to the bases, the
 * scalars' host memory); their count. */
static int io(const sdpa_plan *e, const int64_t *offset, const void *q, const void *k,
              const void *v, void *o, int64_t *uids, void **ptrs) {
  const void *base[4] = {q, k, v, o};
  int n = 0;
  for (int t = 0; t < 4; t++) {
    uids[n] = UID_Q + t;
    ptrs[n++] = (char *)base[t] + offset[t] * 2;
  }
  uids[n] = UID_SCALE;
  ptrs[n++] = (void *)&e->scale;
  if (e->causal && !e->unified) {
    uids[n] = UID_NEG_INF;
    ptrs[n++] = (void *)&e->neg_inf;
  }
  return n;
}

/* Builds one graph into cand (unified or composite), finalizes the first plans the
 * heuristics give and keeps the fastest on the scratch tensors; only >= 0: that config
 * alone, untimed (a cached choice). cand->plan stays NULL when none runs. */
static void search(cudnnHandle_t h, cudaStream_t st, const k_attn_view *const *vw,
                   sdpa_plan *cand, const void *const *scratch, int only) {
  cudnnBackendDescriptor_t og = NULL;
  infer_status gs = cand->unified ? graph_unified(&cand->pool, h, vw, &og)
                                  : graph_composite(&cand->pool, h, vw, cand->causal, &og);
  if (gs != INFER_OK) return;
  cudnnBackendDescriptor_t cfgs[SD_MAX_CFGS];
  int nc = 0, tried = 0;
  if (be_heuristics(og, CUDNN_HEUR_MODE_A, SD_MAX_CFGS, cfgs, &nc) != INFER_OK) return;
  int64_t uids[6];
  void *ptrs[6];
  int n_io = io(cand, cand->offset, scratch[0], scratch[1], scratch[2], (void *)scratch[3],
                uids, ptrs);
  for (int i = 0; i < nc; i++) {
    cudnnBackendDescriptor_t plan = NULL;
    int64_t ws = 0;
    bool keep = false;
    if (only >= 0 && i == only && be_plan(h, cfgs[i], &plan, &ws) == INFER_OK) {
      if (ws <= SD_MAX_WS) {
        cand->plan = plan;
        cand->cfg = cfgs[i];
        cand->ws = ws;
        cand->ms = 0;
        cand->cfg_index = i;
        continue;
      }
      cudnnBackendDestroyDescriptor(plan);
      plan = NULL;
    }
    if (only < 0 && tried < SD_MAX_PLANS && be_plan(h, cfgs[i], &plan, &ws) == INFER_OK) {
      tried++;
      void *wsp = NULL;
      float ms = -1;
      if (ws <= SD_MAX_WS && (ws == 0 || cudaMalloc(&wsp, (size_t)ws) == cudaSuccess)) {
        ms = be_time(h, st, plan, n_io, uids, ptrs, wsp);
        if (wsp) cudaFree(wsp);
      }
      cudaGetLastError();
      if (ms >= 0 && (!cand->plan || ms < cand->ms)) {
        if (cand->plan) cudnnBackendDestroyDescriptor(cand->plan);
        if (cand->cfg) cudnnBackendDestroyDescriptor(cand->cfg);
        cand->plan = plan;
        cand->cfg = cfgs[i];
        cand->ws = ws;
        cand->ms = ms;
        cand->cfg_index = i;
        keep = true;
      } else {
        cudnnBackendDestroyDescriptor(plan);
      }
    }
    if (!keep) cudnnBackendDestroyDescriptor(cfgs[i]);
  }
}

static sdpa_plan *new_entry(const sdpa_key *key, const k_attn_view *const *vw, float scale,
                            bool causal, bool unified) {
  sdpa_plan *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  if (pthread_mutex_init(&e->lock, NULL) != 0) {
    free(e);
    return NULL;
  }
  e->key = *key;
  for (int t = 0; t < 4; t++) e->offset[t] = vw[t]->offset;
  e->causal = causal;
  e->unified = unified;
  e->scale = scale;
  e->neg_inf = -INFINITY;
  e->ms = -1;
  e->refs = 1;
  return e;
}

infer_status sdpa_cudnn_prepare(cudnnHandle_t h, const k_attn_view *q, const k_attn_view *k,
                                const k_attn_view *v, const k_attn_view *o, float scale,
                                int64_t kv_group, int causal, int64_t causal_offset,
                                cudaStream_t st, const void *const *scratch, int cached,
                                sdpa_plan **plan, int64_t *ws_bytes, float *ms) {
  *plan = NULL;
  *ws_bytes = 0;
  *ms = -1;
  const k_attn_view *vw[4] = {q, k, v, o};
  if (causal && causal_offset != 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: a causal mask with an offset");
  if (q->dims[3] % 8 || v->dims[3] % 8 || q->dims[3] > 256 || v->dims[3] > 256)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: head dims %lld, %lld (multiples of 8 "
                      "up to 256)", (long long)q->dims[3], (long long)v->dims[3]);
  if (k->dims[2] < 2)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: a single key");
  for (int t = 0; t < 4; t++) {
    if (vw[t]->strides[3] != 1 || vw[t]->offset % (SD_ALIGN / 2))
      return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: a view not aligned to %d bytes",
                        SD_ALIGN);
    for (int d = 0; d < 3; d++)
      if (vw[t]->strides[d] <= 0 || vw[t]->strides[d] % 8)
        return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: a stride that is not a positive "
                          "multiple of 8 elements");
  }
  if (q->dims[0] > 65535 || q->dims[1] > 65535)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: more than 65535 batch entries or heads");
  sdpa_key key;
  key_of(&key, vw, scale, kv_group, causal);
  /* the step's own record: its offsets, sharing a cached plan */
  sdpa_plan *mine = new_entry(&key, vw, scale, causal, false);
  if (!mine) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  pthread_mutex_lock(&cache_lock);
  sdpa_plan *hit = cache;
  while (hit && memcmp(&hit->key, &key, sizeof key) != 0) hit = hit->next;
  if (!hit) {
    /* cuDNN's operation first (no mask: it takes a causal one from 9.21 only), then the
     * composite graph; the faster plan stays */
    sdpa_plan *best = NULL;
    if (cached >= 0) { /* the cached graph and config, untimed, when it still builds */
      sdpa_plan *cand = new_entry(&key, vw, scale, causal, (cached & 1) != 0);
      if (cand) search(h, st, vw, cand, scratch, cached >> 1);
      if (cand && cand->plan) best = cand;
      else if (cand) free_entry(cand);
    }
    for (int u = causal ? 0 : 1; !best && u >= 0; u--) {
      sdpa_plan *cand = new_entry(&key, vw, scale, causal, u == 1);
      if (!cand) break;
      search(h, st, vw, cand, scratch, -1);
      if (cand->plan && (!best || cand->ms < best->ms)) {
        if (best) free_entry(best);
        best = cand;
      } else {
        free_entry(cand);
      }
    }
    if (best) { /* held by the steps that use it: freed with the last */
      best->refs = 0;
      best->next = cache;
      cache = best;
    }
    hit = best;
  }
  if (hit) hit->refs++;
  pthread_mutex_unlock(&cache_lock);
  if (!hit) {
    free_entry(mine);
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuDNN SDPA: no engine takes this attention");
  }
  mine->shared = hit;
  mine->unified = hit->unified;
  mine->cfg_index = hit->cfg_index;
  *plan = mine;
  *ws_bytes = hit->ws;
  *ms = hit->ms;
  return INFER_OK;
}

infer_status sdpa_cudnn_run(cudnnHandle_t h, const sdpa_plan *p, const void *q, const void *k,
                            const void *v, void *o, void *ws) {
  const sdpa_plan *e = p ? p->shared : NULL;
  if (!e || !e->plan) return infer_fail(INFER_ERR_INTERNAL, "cuDNN SDPA: run without a plan");
  if (e->ws > 0 && !ws) return infer_fail(INFER_ERR_INTERNAL, "cuDNN SDPA: no workspace");
  int64_t uids[6];
  void *ptrs[6];
  /* this step's offsets; the scalars' host memory is the shared entry's, which lives as
   * long as this step */
  int n = io(e, p->offset, q, k, v, o, uids, ptrs);
  for (int t = 0; t < 4; t++)
    if ((uintptr_t)ptrs[t] % SD_ALIGN)
      return infer_fail(INFER_ERR_RUNTIME, "cuDNN SDPA: a tensor is not %d-byte aligned",
                        SD_ALIGN);
  pthread_mutex_t *lock = (pthread_mutex_t *)&e->lock;
  if (pthread_mutex_lock(lock) != 0)
    return infer_fail(INFER_ERR_RUNTIME, "cuDNN SDPA: cannot take the plan's lock");
  infer_status st = be_execute(h, e->plan, n, uids, ptrs, e->ws > 0 ? ws : NULL);
  pthread_mutex_unlock(lock);
  return st;
}

int sdpa_cudnn_choice(const sdpa_plan *p) { return p->cfg_index << 1 | (p->unified ? 1 : 0); }

const char *sdpa_cudnn_name(const sdpa_plan *p) {
  return p && p->unified ? "cudnn-sdpa" : "cudnn-sdpa-graph";
}

void sdpa_cudnn_release(sdpa_plan *p) {
  if (!p) return;
  if (p->shared) { /* a step's record: drop its reference to the shared plan */
    sdpa_plan *e = p->shared;
    free_entry(p);
    p = e;
  }
  pthread_mutex_lock(&cache_lock);
  bool last = --p->refs == 0;
  if (last) {
    sdpa_plan **at = &cache;
    while (*at && *at != p) at = &(*at)->next;
    if (*at) *at = p->next;
  }
  pthread_mutex_unlock(&cache_lock);
  if (last) free_entry(p);
}
