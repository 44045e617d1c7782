/* model_check.c: small numeric helpers for tests/run_models.sh, so that the model
 * tests need neither python nor numpy.
 *
 *   model_check absmax REF.npy              prints max |ref| (%.9g)
 *   model_check top1 OUT.npy REF.npy TOL    compares the argmax of each row (first dim
 *                                           = batch, the rest flattened); exit 0 when
 *                                           every row matches, 1 when not, 2 on errors
 *
 *   model_check fp16peer OUT.npy REF.npy PEER_REL AGREE
 *                                           the fp16 rule against PyTorch's own fp16 run
 *                                           (models/torch_fp16_error.py): OUT's error
 *                                           max|out - ref| / max|ref| must be at most
 *                                           max(1.5 x PEER_REL, 2e-2), and OUT's top-1
 *                                           must be REF's on every row where AGREE (one
 *                                           0/1 per row, comma-separated) says PyTorch's
 *                                           fp16 top-1 was; exit 0 ok, 1 not, 2 errors
 *
 *   model_check detections OUT_DIR REF_PREFIX STOL BTOL
 *                                           a detector's boxes, scores and labels
 *                                           (OUT_DIR/{boxes,scores,labels}.npy against
 *                                           REF_PREFIX_{boxes,scores,labels}.npy): the
 *                                           each reference detection, in order, matched
 *                                           to one of infer's of the same label, a score
 *                                           within STOL and every box coordinate within
 *                                           BTOL x max|reference box| (among several
 *                                           such, the nearest box): rows may change
 *                                           places only among scores within STOL of each
 *                                           other (float16 reorders near-ties); a row
 *                                           may pair instead with one of the same label
 *                                           and score that overlaps it by IoU > 0.5 (NMS
 *                                           kept the other of a near-tied pair). Rows left
 *                                           unmatched on either side must score within
 *                                           STOL of the reference's lowest: the cut
 *                                           (detections per image, score threshold) may
 *                                           fall elsewhere in a near-tie. Exit 0 ok, 1
 *                                           not, 2 errors
 *
 * A row whose reference top-1 and top-2 are within 2*TOL of each other may swap within
 * the tolerance the values were checked with: it is reported as ambiguous and not
 * counted. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

static int load(const char *path, infer_tensor *t) {
  infer_status s = infer_tensor_read_file(path, t, NULL);
  if (s != INFER_OK) {
    fprintf(stderr, "model_check: cannot read %s\n", path);
    return 0;
  }
  return 1;
}

/* Index of the largest element of row r and the gap to the second largest. */
static int64_t row_top(const infer_tensor *t, int64_t r, int64_t cols, double *gap) {
  int64_t best = 0;
  double v1 = -INFINITY, v2 = -INFINITY;
  for (int64_t j = 0; j < cols; j++) {
    double v = infer_tensor_get(t, r * cols + j);
    if (v > v1) {
      v2 = v1;
      v1 = v;
      best = j;
    } else if (v > v2) {
      v2 = v;
    }
  }
  if (gap) *gap = v1 - v2;
  return best;
}

#define PEER_FACTOR 1.5
#define PEER_FLOOR 2e-2

static int fp16_peer(char **argv) {
  infer_tensor out, ref;
  if (!load(argv[2], &out)) return 2;
  if (!load(argv[3], &ref)) {
    infer_tensor_clear(&out);
    return 2;
  }
  char *end;
  double peer = strtod(argv[4], &end);
  int64_t n = infer_tensor_count(&ref);
  int rc = 0;
  if (end == argv[4] || *end || !(peer >= 0)) {
    fprintf(stderr, "model_check: bad PyTorch fp16 error '%s'\n", argv[4]);
    rc = 2;
  } else if (ref.rank < 1 || ref.dims[0] <= 0 || infer_tensor_count(&out) != n) {
    fprintf(stderr, "model_check: %s and %s differ in size\n", argv[2], argv[3]);
    rc = 2;
  }
  int64_t rows = rc ? 0 : ref.dims[0], cols = rows ? n / rows : 0;
  double err = 0, scale = 0;
  for (int64_t i = 0; i < n && !rc; i++) {
    double o = infer_tensor_get(&out, i), r = infer_tensor_get(&ref, i);
    double d = fabs(o - r);
    if (!(d <= err)) err = d; /* NaN sticks */
    if (fabs(r) > scale) scale = fabs(r);
  }
  if (!rc) {
    double rel = scale > 0 ? err / scale : err, bound = PEER_FACTOR * peer;
    if (bound < PEER_FLOOR) bound = PEER_FLOOR;
    bool ok = rel <= bound;
    printf("fp16 error: infer %.3g, PyTorch fp16 %.3g (of max|ref| %.3g): bound %.3g = %s -> %s\n",
           rel, peer, scale, bound, PEER_FACTOR * peer >= PEER_FLOOR ? "1.5 x PyTorch's" : "the 2e-2 floor",
           ok ? "ok" : "FAIL");
    if (!ok) rc = 1;
    const char *a = argv[5];
    int64_t checked = 0, same = 0;
    for (int64_t r = 0; r < rows; r++) {
      while (*a == ',' || *a == ' ') a++;
      if (*a != '0' && *a != '1') {
        fprintf(stderr, "model_check: AGREE '%s' has no 0/1 for row %lld\n", argv[5], (long long)r);
        rc = 2;
        break;
      }
      bool peer_agrees = *a++ == '1';
      int64_t want = row_top(&ref, r, cols, NULL), got = row_top(&out, r, cols, NULL);
      if (!peer_agrees) {
        printf("top-1 row %lld: not checked (PyTorch's fp16 top-1 differs from fp32 there too); "
               "infer %s\n", (long long)r, got == want ? "agrees" : "differs");
        continue;
      }
      checked++;
      if (got == want) same++;
      else {
        printf("top-1 row %lld: got %lld, reference %lld, where PyTorch's fp16 agrees\n",
               (long long)r, (long long)got, (long long)want);
        if (rc == 0) rc = 1;
      }
    }
    printf("top-1: %lld of the %lld rows PyTorch's fp16 gets right match\n", (long long)same,
           (long long)checked);
  }
  infer_tensor_clear(&out);
  infer_tensor_clear(&ref);
  return rc;
}

/* Largest |b[j*4+k] - a[i*4+k]| over the four coordinates of box i of a and box j of b. */
static double box_diff(const infer_tensor *a, int64_t i, const infer_tensor *b, int64_t j) {
  double d = 0;
  for (int k = 0; k < 4; k++) {
    double e = fabs(infer_tensor_get(a, i * 4 + k) - infer_tensor_get(b, j * 4 + k));
    if (e > d || isnan(e)) d = e;
  }
  return d;
}

/* Intersection over union of box i of a and box j of b (x1, y1, x2, y2). */
static double box_iou(const infer_tensor *a, int64_t i, const infer_tensor *b, int64_t j) {
  double p[4], q[4];
  for (int k = 0; k < 4; k++) {
    p[k] = infer_tensor_get(a, i * 4 + k);
    q[k] = infer_tensor_get(b, j * 4 + k);
  }
  double w = fmin(p[2], q[2]) - fmax(p[0], q[0]), h = fmin(p[3], q[3]) - fmax(p[1], q[1]);
  double inter = w > 0 && h > 0 ? w * h : 0;
  double uni = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
  return uni > 0 ? inter / uni : 0;
}

static int detections(char **argv) {
  static const char *const parts[3] = {"boxes", "scores", "labels"};
  infer_tensor out[3], ref[3];
  memset(out, 0, sizeof out);
  memset(ref, 0, sizeof ref);
  int rc = 0;
  char path[4096];
  for (int p = 0; p < 3 && rc == 0; p++) {
    snprintf(path, sizeof path, "%s/%s.npy", argv[2], parts[p]);
    if (!load(path, &out[p])) rc = 2;
    snprintf(path, sizeof path, "%s_%s.npy", argv[3], parts[p]);
    if (rc == 0 && !load(path, &ref[p])) rc = 2;
  }
  const double stol = atof(argv[4]), btol = atof(argv[5]);
  int64_t n = rc == 0 ? infer_tensor_count(&ref[1]) : 0;
  int64_t m = rc == 0 ? infer_tensor_count(&out[1]) : 0;
  if (rc == 0 && (infer_tensor_count(&out[2]) != m || infer_tensor_count(&out[0]) != 4 * m ||
                  infer_tensor_count(&ref[0]) != 4 * n || infer_tensor_count(&ref[2]) != n)) {
    printf("detections: boxes, scores and labels disagree in count\n");
    rc = 2;
  }
  double scale = 1, cutoff = 0;
  for (int64_t i = 0; rc == 0 && i < 4 * n; i++)
    if (fabs(infer_tensor_get(&ref[0], i)) > scale) scale = fabs(infer_tensor_get(&ref[0], i));
  for (int64_t i = 0; rc == 0 && i < n; i++)
    if (i == 0 || infer_tensor_get(&ref[1], i) < cutoff) cutoff = infer_tensor_get(&ref[1], i);
  bool *used = rc == 0 ? calloc((size_t)m + 1, 1) : NULL;
  if (rc == 0 && !used) rc = 2;
  int64_t in_place = 0, elsewhere = 0, missing_near = 0, swapped = 0;
  double worst_box = 0, worst_score = 0;
  bool *unmatched = rc == 0 ? calloc((size_t)n + 1, 1) : NULL;
  if (rc == 0 && !unmatched) rc = 2;
  for (int64_t i = 0; rc == 0 && i < n; i++) {
    const double si = infer_tensor_get(&ref[1], i);
    int64_t best = -1;
    double best_d = 0;
    for (int64_t j = 0; j < m; j++) {
      if (used[j] || infer_tensor_get(&out[2], j) != infer_tensor_get(&ref[2], i) ||
          !(fabs(infer_tensor_get(&out[1], j) - si) <= stol))
        continue;
      double d = box_diff(&ref[0], i, &out[0], j);
      if (best < 0 || d < best_d) best = j, best_d = d;
    }
    if (best >= 0 && best_d <= btol * scale) {
      used[best] = true;
      if (best == i) in_place++;
      else elsewhere++;
      double ds = fabs(infer_tensor_get(&out[1], best) - si);
      if (best_d > worst_box) worst_box = best_d;
      if (ds > worst_score) worst_score = ds;
    } else {
      unmatched[i] = true;
    }
  }
  /* NMS keeps one of two boxes that overlap past its threshold (0.5 or more in the
   * detectors here): between near-tied scores, float16 may keep the other. A reference
   * row left over pairs with a left-over row of infer's of the same label, a score within
   * stol and IoU > 0.5 with it. */
  for (int64_t i = 0; rc == 0 && i < n; i++) {
    if (!unmatched[i]) continue;
    const double si = infer_tensor_get(&ref[1], i);
    for (int64_t j = 0; j < m && unmatched[i]; j++)
      if (!used[j] && infer_tensor_get(&out[2], j) == infer_tensor_get(&ref[2], i) &&
          fabs(infer_tensor_get(&out[1], j) - si) <= stol && box_iou(&ref[0], i, &out[0], j) > 0.5) {
        used[j] = true;
        unmatched[i] = false;
        swapped++;
      }
    if (!unmatched[i]) continue;
    if (si <= cutoff + stol) {
      missing_near++; /* at the cut (detections per image, score threshold): a near-tie */
      continue;
    }
    printf("detections: reference row %lld (label %g, score %.6g) has no match in infer's "
           "(same label, score within %g, box within %g x %g = %g px, or one NMS kept in "
           "its place: IoU > 0.5)\n", (long long)i, infer_tensor_get(&ref[2], i), si, stol,
           btol, scale, btol * scale);
    rc = 1;
  }
  int64_t extra_near = 0;
  for (int64_t j = 0; rc == 0 && j < m; j++) {
    if (used[j]) continue;
    if (infer_tensor_get(&out[1], j) <= cutoff + stol) {
      extra_near++;
      continue;
    }
    printf("detections: infer's row %lld (label %g, score %.6g) matches no reference row\n",
           (long long)j, infer_tensor_get(&out[2], j), infer_tensor_get(&out[1], j));
    rc = 1;
  }
  if (rc == 0)
    printf("detections: %lld of the reference's %lld matched (%lld in their own row, %lld "
           "among scores within %g elsewhere), %lld by an overlapping box NMS kept instead; "
           "%lld of its and %lld of infer's %lld left unmatched at the cut (scores within %g "
           "of the lowest, %.6g); worst box %.3g px, worst score %.3g\n",
           (long long)(in_place + elsewhere), (long long)n, (long long)in_place,
           (long long)elsewhere, stol, (long long)swapped, (long long)missing_near,
           (long long)extra_near, (long long)m, stol, cutoff, worst_box, worst_score);
  free(used);
  free(unmatched);
  for (int p = 0; p < 3; p++) {
    infer_tensor_clear(&out[p]);
    infer_tensor_clear(&ref[p]);
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "absmax") == 0) {
    infer_tensor t;
    if (!load(argv[2], &t)) return 2;
    double m = 0;
    for (int64_t i = 0, n = infer_tensor_count(&t); i < n; i++) {
      double v = fabs(infer_tensor_get(&t, i));
      if (v > m || isnan(v)) m = v;
    }
    printf("%.9g\n", m);
    infer_tensor_clear(&t);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "top1") == 0) {
    infer_tensor out, ref;
    if (!load(argv[2], &out)) return 2;
    if (!load(argv[3], &ref)) {
      infer_tensor_clear(&out);
      return 2;
    }
    double tol = atof(argv[4]);
    int64_t n = infer_tensor_count(&ref);
    int rc = 0;
    if (ref.rank < 1 || ref.dims[0] <= 0 || infer_tensor_count(&out) != n) {
      fprintf(stderr, "model_check: %s and %s differ in size\n", argv[2], argv[3]);
      rc = 2;
    } else {
      int64_t rows = ref.dims[0], cols = n / rows, same = 0, ambiguous = 0;
      for (int64_t r = 0; r < rows; r++) {
        double gap;
        int64_t want = row_top(&ref, r, cols, &gap), got = row_top(&out, r, cols, NULL);
        if (got == want) {
          same++;
        } else if (gap <= 2 * tol) {
          ambiguous++;
          printf("top-1 row %lld: got %lld, reference %lld (ambiguous: gap %.3g <= 2*tol)\n",
                 (long long)r, (long long)got, (long long)want, gap);
        } else {
          printf("top-1 row %lld: got %lld, reference %lld (gap %.3g)\n", (long long)r,
                 (long long)got, (long long)want, gap);
          rc = 1;
        }
      }
      printf("top-1: %lld of %lld rows match (%lld ambiguous)\n", (long long)same,
             (long long)rows, (long long)ambiguous);
    }
    infer_tensor_clear(&out);
    infer_tensor_clear(&ref);
    return rc;
  }
  if (argc == 6 && strcmp(argv[1], "fp16peer") == 0) return fp16_peer(argv);
  if (argc == 6 && strcmp(argv[1], "detections") == 0) return detections(argv);
  fprintf(stderr, "usage: model_check absmax REF.npy | model_check top1 OUT.npy REF.npy TOL | "
                  "model_check fp16peer OUT.npy REF.npy PEER_REL AGREE | "
                  "model_check detections OUT_DIR REF_PREFIX STOL BTOL\n");
  return 2;
}
