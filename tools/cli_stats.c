/* cli_stats.c: see cli_stats.h. */
#include "cli_stats.h"

#include <math.h>
#include <time.h>

double cli_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int cli_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double cli_percentile(const double *v, long n, double p) {
  long i = (long)ceil(p / 100.0 * (double)n) - 1;
  if (i < 0) i = 0;
  if (i >= n) i = n - 1;
  return v[i];
}
