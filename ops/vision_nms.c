/* vision_nms.c: NonMaxSuppression (10+): boxes [B, N, 4], scores [B, C, N] (float32),
 * optional max_output_boxes_per_class (int64; absent or 0: nothing selected),
 * iou_threshold (float; default 0) and score_threshold (float; default none). Output
 * selected_indices [S, 3] int64 rows (batch, class, box), in batch, class, then
 * selection order. How many boxes survive depends on the data, so the shape is known
 * only once every input is (OP_NEEDS_DATA before); shape inference then runs the
 * selection to count, and the run repeats it to write. Box geometry and IoU are computed
 * in float as ONNX Runtime and the ONNX reference do, so ties with the threshold come
 * out the same. */
#include <stdlib.h>
#include <string.h>

#include "vision_params.h"

static const char *const nms_attrs[] = {"center_point_box", NULL};

static infer_status nms_parse(const node *n, void **params) {
  int64_t c;
  TRY(attr_get_int(n, "center_point_box", 0, &c));
  if (c != 0 && c != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "NonMaxSuppression: center_point_box %lld must be 0 or 1", (long long)c);
  nms_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "NonMaxSuppression: out of memory");
  p->center_point_box = c == 1;
  *params = p;
  return INFER_OK;
}

static const tensor *opt_input(int n_inputs, const tensor *const *in, int i) {
  return i < n_inputs && in[i] && dims_count(in[i]->rank, in[i]->dims) > 0 ? in[i] : NULL;
}

infer_status nms_read_limits(int n_inputs, const tensor *const *in, nms_limits *lim) {
  const tensor *m = opt_input(n_inputs, in, 2), *iou = opt_input(n_inputs, in, 3),
               *sc = opt_input(n_inputs, in, 4);
  memset(lim, 0, sizeof *lim);
  if (m) {
    if (m->dtype != INFER_DTYPE_INT64)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "NonMaxSuppression: max_output_boxes_per_class must be int64, not %s",
                        infer_dtype_name(m->dtype));
    int64_t v = ((const int64_t *)m->data)[0];
    lim->max_per_class = v > 0 ? v : 0;
  }
  if (iou) {
    if (iou->dtype != INFER_DTYPE_FLOAT32)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "NonMaxSuppression: iou_threshold must be float32, not %s",
                        infer_dtype_name(iou->dtype));
    lim->iou_threshold = ((const float *)iou->data)[0];
  }
  if (sc) {
    if (sc->dtype != INFER_DTYPE_FLOAT32)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "NonMaxSuppression: score_threshold must be float32, not %s",
                        infer_dtype_name(sc->dtype));
    lim->has_score_threshold = true;
    lim->score_threshold = ((const float *)sc->data)[0];
  }
  return INFER_OK;
}

typedef struct nms_candidate {
  float score;
  int64_t box;
} nms_candidate;

int64_t nms_scratch_bytes(const tensor *boxes) {
  int64_t b;
  if (boxes->rank != 3 || !size_mul(boxes->dims[1],
                                    (int64_t)(sizeof(nms_candidate) + sizeof(int64_t)), &b))
    return -1;
  return b;
}

/* Higher score first; equal scores: lower box index first. */
static int candidate_cmp(const void *pa, const void *pb) {
  const nms_candidate *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->box < b->box ? -1 : a->box > b->box;
}

typedef struct nms_box {
  float x0, x1, y0, y1; /* x0 <= x1, y0 <= y1 */
} nms_box;

static nms_box box_at(const float *b, bool center) {
  nms_box r;
  if (center) {
    float hw = b[2] / 2, hh = b[3] / 2;
    r.x0 = b[0] - hw;
    r.x1 = b[0] + hw;
    r.y0 = b[1] - hh;
    r.y1 = b[1] + hh;
  } else {
    r.y0 = b[0] < b[2] ? b[0] : b[2];
    r.y1 = b[0] < b[2] ? b[2] : b[0];
    r.x0 = b[1] < b[3] ? b[1] : b[3];
    r.x1 = b[1] < b[3] ? b[3] : b[1];
  }
  return r;
}

/* IoU(a, b) > threshold; degenerate boxes (no area, no overlap) never suppress. */
static bool suppresses(nms_box a, nms_box b, float threshold) {
  float ix0 = a.x0 > b.x0 ? a.x0 : b.x0, ix1 = a.x1 < b.x1 ? a.x1 : b.x1;
  if (!(ix1 > ix0)) return false;
  float iy0 = a.y0 > b.y0 ? a.y0 : b.y0, iy1 = a.y1 < b.y1 ? a.y1 : b.y1;
  if (!(iy1 > iy0)) return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float area_a = (a.x1 - a.x0) * (a.y1 - a.y0), area_b = (b.x1 - b.x0) * (b.y1 - b.y0);
  float uni = area_a + area_b - inter;
  if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
  return inter / uni > threshold;
}

void nms_select(const nms_params *p, const nms_limits *lim, const tensor *boxes,
                const tensor *scores, void *scratch, int64_t *out, int64_t cap, int64_t *count) {
  int64_t B = boxes->dims[0], N = boxes->dims[1], C = scores->dims[1], total = 0;
  nms_candidate *cand = scratch;
  int64_t *kept = (int64_t *)(cand + N);
  const float *bx = boxes->data, *sc = scores->data;
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = 0; c < C; c++) {
      if (lim->max_per_class == 0) continue;
      const float *s = sc + (b * C + c) * N, *bb = bx + b * N * 4;
      int64_t nc = 0, nk = 0;
      for (int64_t i = 0; i < N; i++)
        if (!lim->has_score_threshold || s[i] > lim->score_threshold)
          cand[nc++] = (nms_candidate){s[i], i};
      if (nc > 1) qsort(cand, (size_t)nc, sizeof *cand, candidate_cmp);
      for (int64_t i = 0; i < nc && nk < lim->max_per_class; i++) {
        nms_box cb = box_at(bb + cand[i].box * 4, p->center_point_box);
        bool keep = true;
        for (int64_t j = 0; j < nk && keep; j++)
          keep = !suppresses(cb, box_at(bb + kept[j] * 4, p->center_point_box),
                             lim->iou_threshold);
        if (!keep) continue;
        kept[nk++] = cand[i].box;
        if (out && total < cap) {
          out[total * 3 + 0] = b;
          out[total * 3 + 1] = c;
          out[total * 3 + 2] = cand[i].box;
        }
        total++;
      }
    }
  *count = total;
}

static infer_status nms_check(int n_inputs, const tensor *const *in) {
  const tensor *boxes = in[0], *scores = in[1];
  char a[160], b[160];
  if (boxes->dtype != INFER_DTYPE_FLOAT32 || scores->dtype != INFER_DTYPE_FLOAT32)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "NonMaxSuppression: boxes (%s) and scores (%s) must be float32",
                      infer_dtype_name(boxes->dtype), infer_dtype_name(scores->dtype));
  if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
      scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return infer_fail(INFER_ERR_INVALID_MODEL, "NonMaxSuppression: boxes %s must be [B, N, 4] "
                      "and scores %s [B, C, N]", dims_format(boxes->rank, boxes->dims, a, sizeof a),
                      dims_format(scores->rank, scores->dims, b, sizeof b));
  for (int i = 2; i < n_inputs && i < 5; i++)
    if (in[i] && dims_count(in[i]->rank, in[i]->dims) > 1)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "NonMaxSuppression: input %d must hold one value", i);
  return INFER_OK;
}

static infer_status nms_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  TRY(nms_check(n->n_inputs, in));
  out[0]->dtype = INFER_DTYPE_INT64;
  out[0]->rank = 2;
  out[0]->dims[1] = 3;
  for (int i = 0; i < n->n_inputs; i++)
    if (in[i] && !in[i]->data) return OP_NEEDS_DATA;
  nms_limits lim;
  TRY(nms_read_limits(n->n_inputs, in, &lim));
  /* counting needs the run's scratch; shape inference is not inside a run, so it may
   * allocate */
  int64_t bytes = nms_scratch_bytes(in[0]);
  void *scratch = bytes >= 0 ? malloc(bytes > 0 ? (size_t)bytes : 1) : NULL;
  if (!scratch)
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "NonMaxSuppression: cannot allocate %lld bytes",
                      (long long)bytes);
  nms_select(params, &lim, in[0], in[1], scratch, NULL, 0, &out[0]->dims[0]);
  free(scratch);
  return INFER_OK;
}

static int64_t nms_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  return nms_scratch_bytes(in[0]);
}

static infer_status nms_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  nms_limits lim;
  int64_t count;
  TRY(nms_read_limits(n->n_inputs, in, &lim));
  nms_select(params, &lim, in[0], in[1], ws, out[0]->data, out[0]->dims[0], &count);
  if (count != out[0]->dims[0])
    return infer_fail(INFER_ERR_INTERNAL, "NonMaxSuppression: %lld boxes selected, %lld inferred",
                      (long long)count, (long long)out[0]->dims[0]);
  return INFER_OK;
}

const op_desc op_nms = {.name = "NonMaxSuppression",
                        .domain = "",
                        .since = 10,
                        .until = OP_OPSET_MAX,
                        .min_inputs = 2,
                        .max_inputs = 5,
                        .min_outputs = 1,
                        .max_outputs = 1,
                        .attrs = nms_attrs,
                        .parse = nms_parse,
                        .infer = nms_infer,
                        .run = nms_run,
                        .workspace = nms_workspace};
