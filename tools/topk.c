/* topk.c: softmax and top-K selection for `infer --top K`. */
#include "topk.h"

#include <math.h>

bool topk_is_distribution(const double *v, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!(v[i] >= -1e-6 && v[i] <= 1 + 1e-6)) return false; /* also NaN */
    sum += v[i];
  }
  return n > 0 && fabs(sum - 1.0) <= 1e-3;
}

void topk_softmax(const double *v, int64_t n, double *p) {
  double max = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    if (v[i] > max) max = v[i];
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += p[i] = isnan(v[i]) ? 0 : exp(v[i] - max);
  for (int64_t i = 0; i < n; i++) p[i] = isnan(v[i]) ? NAN : p[i] / sum;
}

/* a ranks before b */
static bool ranks_before(double a, int64_t ia, double b, int64_t ib) {
  if (isnan(a)) return false;
  if (isnan(b)) return true;
  return a > b || (a == b && ia < ib);
}

void topk_select(const double *p, int64_t n, int k, int64_t *idx) {
  /* insertion into a sorted list of k: K is small (5 by default) */
  int have = 0;
  for (int64_t i = 0; i < n; i++) {
    if (have == k && !ranks_before(p[i], i, p[idx[k - 1]], idx[k - 1])) continue;
    int j = have < k ? have++ : k - 1;
    while (j > 0 && ranks_before(p[i], i, p[idx[j - 1]], idx[j - 1])) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = i;
  }
}
