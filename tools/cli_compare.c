/* cli_compare.c: output vs reference, reporting the worst absolute and relative error. */
#include <math.h>
#include <stdio.h>

#include "cli.h"

bool cli_compare(const char *name, const infer_tensor *out, const infer_tensor *ref,
                 double rtol, double atol, bool quiet) {
  int64_t n = infer_tensor_count(out);
  int64_t bad = 0, worst_at = -1;
  double worst_abs = 0, worst_rel = 0, worst_excess = -1;
  for (int64_t i = 0; i < n; i++) {
    double o = infer_tensor_get(out, i), r = infer_tensor_get(ref, i);
    if (isnan(o) || isnan(r)) {
      if (isnan(o) && isnan(r)) continue;
      bad++;
      if (worst_excess < INFINITY) { worst_excess = INFINITY; worst_at = i; }
      worst_abs = NAN;
      continue;
    }
    if (o == r) continue; /* also equal infinities */
    double abs_err = fabs(o - r), rel = abs_err / (fabs(r) > 0 ? fabs(r) : 1e-30);
    if (!(abs_err <= worst_abs)) worst_abs = isnan(worst_abs) ? worst_abs : abs_err;
    if (rel > worst_rel) worst_rel = rel;
    double excess = abs_err - (atol + rtol * fabs(r));
    if (excess > 0 || isinf(o) || isinf(r)) {
      bad++;
      if (excess > worst_excess) { worst_excess = excess; worst_at = i; }
    }
  }
  if (bad) {
    fprintf(stderr, "output '%s': %lld of %lld values differ; max abs err %.3g, max rel err %.3g",
            name, (long long)bad, (long long)n, worst_abs, worst_rel);
    if (worst_at >= 0)
      fprintf(stderr, "; worst at %lld: got %.9g, expected %.9g", (long long)worst_at,
              infer_tensor_get(out, worst_at), infer_tensor_get(ref, worst_at));
    fprintf(stderr, "\n");
  } else if (!quiet) {
    printf("output '%s': ok (max abs err %.3g, max rel err %.3g)\n", name, worst_abs, worst_rel);
  }
  return bad == 0;
}
