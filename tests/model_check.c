/* model_check.c: small numeric helpers for tests/run_models.sh, so that the model
 * tests need neither python nor numpy.
 *
 *   model_check absmax REF.npy              prints max |ref| (%.9g)
 *   model_check top1 OUT.npy REF.npy TOL    compares the argmax of each row (first dim
 *                                           = batch, the rest flattened); exit 0 when
 *                                           every row matches, 1 when not, 2 on errors
 *
 * A row whose reference top-1 and top-2 are within 2*TOL of each other may swap within
 * the tolerance the values were checked with: it is reported as ambiguous and not
 * counted. */
#include <math.h>
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
  fprintf(stderr, "usage: model_check absmax REF.npy | model_check top1 OUT.npy REF.npy TOL\n");
  return 2;
}
