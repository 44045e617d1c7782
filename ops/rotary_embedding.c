/* rotary_embedding.c: ONNX's RotaryEmbedding (opset 23), the position encoding of LLaMA-
 * style transformers, CPU reference. X is [B, heads, S, D] or [B, S, heads * D]
 * (num_heads); the first rotary_embedding_dim (default D) values of each head rotate by
 * the angle of their pair, the rest pass through:
 *   halves (default):  y[k] = c x[k] - s x[k + R/2],  y[k + R/2] = s x[k] + c x[k + R/2]
 *   interleaved:       y[2k] = c x[2k] - s x[2k + 1], y[2k + 1] = s x[2k] + c x[2k + 1]
 * with c, s = cos_cache, sin_cache at row position_ids[b, t] ([max position, R/2]), or
 * without position_ids the caches' own [B, S, R/2] entry. */
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct rope_params {
  int64_t interleaved, rotary_dim, heads;
} rope_params;

static const char *const rope_attrs[] = {"interleaved", "rotary_embedding_dim", "num_heads",
                                         NULL};

static infer_status rope_parse(const node *n, void **params) {
  rope_params v;
  TRY(attr_get_int(n, "interleaved", 0, &v.interleaved));
  TRY(attr_get_int(n, "rotary_embedding_dim", 0, &v.rotary_dim));
  TRY(attr_get_int(n, "num_heads", 0, &v.heads));
  if (v.rotary_dim < 0 || v.heads < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RotaryEmbedding: negative attributes");
  rope_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "RotaryEmbedding: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

typedef struct rope_dims {
  int64_t b, h, s, d, r;
} rope_dims;

static infer_status rope_dims_of(const node *n, const rope_params *p, const tensor *const *in,
                                 rope_dims *g) {
  const tensor *x = in[0], *c = in[1], *sn = in[2];
  const tensor *pos = n->n_inputs > 3 ? in[3] : NULL;
  if (!dtype_is_float(x->dtype) || c->dtype != x->dtype || sn->dtype != x->dtype)
    return infer_fail(INFER_ERR_UNSUPPORTED, "RotaryEmbedding: X and the caches must share a "
                      "float dtype (X is %s)", infer_dtype_name(x->dtype));
  if (x->rank == 4) {
    g->b = x->dims[0];
    g->h = x->dims[1];
    g->s = x->dims[2];
    g->d = x->dims[3];
  } else if (x->rank == 3) {
    if (p->heads < 1 || x->dims[2] % p->heads)
      return infer_fail(INFER_ERR_INVALID_MODEL, "RotaryEmbedding: 3-D X needs num_heads "
                        "dividing its hidden size %lld", (long long)x->dims[2]);
    g->b = x->dims[0];
    g->s = x->dims[1];
    g->h = p->heads;
    g->d = x->dims[2] / p->heads;
  } else {
    return infer_fail(INFER_ERR_INVALID_MODEL, "RotaryEmbedding: X must have rank 3 or 4");
  }
  g->r = p->rotary_dim ? p->rotary_dim : g->d;
  if (g->r > g->d || g->r % 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RotaryEmbedding: rotary_embedding_dim %lld "
                      "(even, at most the head size %lld)", (long long)g->r, (long long)g->d);
  const int64_t half = g->r / 2;
  bool ok = c->rank == sn->rank && memcmp(c->dims, sn->dims, sizeof c->dims[0] * c->rank) == 0;
  if (pos) {
    if (pos->dtype != INFER_DTYPE_INT64 || pos->rank != 2 || pos->dims[0] != g->b ||
        pos->dims[1] != g->s)
      return infer_fail(INFER_ERR_INVALID_MODEL, "RotaryEmbedding: position_ids must be int64 "
                        "[%lld, %lld]", (long long)g->b, (long long)g->s);
    ok = ok && c->rank == 2 && c->dims[1] == half;
  } else {
    ok = ok && c->rank == 3 && c->dims[0] == g->b && c->dims[1] == g->s && c->dims[2] == half;
  }
  if (!ok)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RotaryEmbedding: cos_cache and sin_cache must "
                      "be %s with %lld values a row", pos ? "[positions, R/2]" : "[B, S, R/2]",
                      (long long)half);
  return INFER_OK;
}

static infer_status rope_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  rope_dims g = {0};
  TRY(rope_dims_of(n, params, in, &g));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = in[0]->rank;
  memcpy(out[0]->dims, in[0]->dims, sizeof in[0]->dims[0] * in[0]->rank);
  return INFER_OK;
}

static infer_status rope_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  (void)ws;
  const rope_params *p = params;
  rope_dims g = {0};
  TRY(rope_dims_of(n, p, in, &g));
  const tensor *x = in[0], *cc = in[1], *sc = in[2];
  const tensor *pos = n->n_inputs > 3 ? in[3] : NULL;
  tensor *y = out[0];
  const int64_t half = g.r / 2;
  for (int64_t b = 0; b < g.b; b++)
    for (int64_t t = 0; t < g.s; t++) {
      int64_t row = b * g.s + t; /* the caches' row */
      if (pos) {
        row = tensor_get_i64(pos, b * g.s + t);
        if (row < 0 || row >= cc->dims[0])
          return infer_fail(INFER_ERR_INVALID_INPUT, "RotaryEmbedding: position id %lld "
                            "outside the caches' %lld rows", (long long)row,
                            (long long)cc->dims[0]);
      }
      for (int64_t h = 0; h < g.h; h++) {
        const int64_t base = x->rank == 4 ? ((b * g.h + h) * g.s + t) * g.d
                                          : ((b * g.s + t) * g.h + h) * g.d;
        for (int64_t k = 0; k < half; k++) {
          const double c = tensor_get_f64(cc, row * half + k), s = tensor_get_f64(sc, row * half + k);
          const int64_t i1 = base + (p->interleaved ? 2 * k : k);
          const int64_t i2 = base + (p->interleaved ? 2 * k + 1 : k + half);
          const double x1 = tensor_get_f64(x, i1), x2 = tensor_get_f64(x, i2);
          tensor_set_f64(y, i1, c * x1 - s * x2);
          tensor_set_f64(y, i2, s * x1 + c * x2);
        }
        for (int64_t d = g.r; d < g.d; d++) tensor_set_f64(y, base + d, tensor_get_f64(x, base + d));
      }
    }
  return INFER_OK;
}

const op_desc op_rotary_embedding = {.name = "RotaryEmbedding",
                                     .domain = "",
                                     .since = 23,
                                     .until = OP_OPSET_MAX,
                                     .min_inputs = 3,
                                     .max_inputs = 4,
                                     .min_outputs = 1,
                                     .max_outputs = 1,
                                     .attrs = rope_attrs,
                                     .parse = rope_parse,
                                     .infer = rope_infer,
                                     .run = rope_run};
