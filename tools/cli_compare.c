/* cli_compare.c: output vs reference, reporting the worst absolute and relative error.
 * The relative error is taken over the reference values larger than atol in magnitude:
 * the smaller ones (exact zeros above all) are held to atol, and dividing by them would
 * print 1e+23 for an output that passes. */
#include <math.h>
#include <stdio.h>

#include "cli.h"

bool cli_compare(const char *name, const infer_tensor *out, const infer_tensor *ref,
                 double rtol, double atol, bool quiet) {
  int64_t n = infer_tensor_count(out);
  int64_t bad = 0, worst_at = -1;
  double worst_abs = 0, worst_rel = 0, worst_excess = -1;
  int64_t rel_count = 0; /* values whose relative error counts */
  for (int64_t i = 0; i < n; i++) {
    double o = infer_tensor_get(out, i), r = infer_tensor_get(ref, i);
    if (isnan(o) || isnan(r)) {
      if (isnan(o) && isnan(r)) continue;
      bad++;
      if (worst_excess < INFINITY) { worst_excess = INFINITY; worst_at = i; }
      worst_abs = NAN;
      continue;
    }
    if (fabs(r) > atol) rel_count++;
    if (o == r) continue; /* also equal infinities */
    double abs_err = fabs(o - r);
    if (!(abs_err <= worst_abs)) worst_abs = isnan(worst_abs) ? worst_abs : abs_err;
    if (fabs(r) > atol && fabs(r) > 0 && abs_err / fabs(r) > worst_rel)
      worst_rel = abs_err / fabs(r);
    double excess = abs_err - (atol + rtol * fabs(r));
    if (excess > 0 || isinf(o) || isinf(r)) {
      bad++;
      if (excess > worst_excess) { worst_excess = excess; worst_at = i; }
    }
  }
  char rel[64];
  if (rel_count) snprintf(rel, sizeof rel, "%.3g", worst_rel);
  else snprintf(rel, sizeof rel, "n/a (no |ref| > atol)");
  if (bad) {
    fprintf(stderr, "output '%s': %lld of %lld values differ; max abs err %.3g, max rel err %s",
            name, (long long)bad, (long long)n, worst_abs, rel);
    if (worst_at >= 0)
      fprintf(stderr, "; worst at %lld: got %.9g, expected %.9g", (long long)worst_at,
              infer_tensor_get(out, worst_at), infer_tensor_get(ref, worst_at));
    fprintf(stderr, "\n");
  } else if (!quiet) {
    printf("output '%s': ok (max abs err %.3g, max rel err %s)\n", name, worst_abs, rel);
  }
  return bad == 0;
}
