/* precision_compare.c: infer_compare_values, every value two runs of one model both
 * kept (config keep_values=1), matched by ONNX name, compared element by element and
 * ranked by how much error each step adds to what it was given.
 *
 * Growth: a value's relative error (max |test - ref| / max |ref|) divided by the largest
 * relative error among the compared values it was computed from in the test engine
 * (through values that were fused away or not kept, back to the nearest compared ones;
 * graph inputs and constants count as exact), that divisor floored at GROWTH_FLOOR so
 * that a first step given exact inputs is measured against float16's own rounding. The
 * step where error first grows is the top of the ranking; its descendants, which only
 * carry the error along, have growths near 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "backend.h"
#include "engine_internal.h"

#define GROWTH_FLOOR 1e-4 /* about float16's half-ulp at 1 (4.9e-4) over 5 */
#define FP16_MAX 65504.0

static void stats(const float *ref, const float *test, int64_t n, infer_value_error *r) {
  double sum = 0, scale = 0;
  r->ref_min = r->test_min = INFINITY;
  r->ref_max = r->test_max = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double a = ref[i], b = test[i];
    if (!isfinite(a)) r->ref_nonfinite++;
    if (isnan(b)) r->test_nan++;
    else if (isinf(b)) r->test_inf++;
    if (isfinite(a)) {
      if (fabs(a) > FP16_MAX) r->fp16_overflow++;
      if (fabs(a) > scale) scale = fabs(a);
      if (a < r->ref_min) r->ref_min = a;
      if (a > r->ref_max) r->ref_max = a;
    }
    if (isfinite(b)) {
      if (b < r->test_min) r->test_min = b;
      if (b > r->test_max) r->test_max = b;
    }
    if (!isfinite(a) || !isfinite(b)) {
      if (!(isnan(a) && isnan(b)) && a != b) r->max_abs = INFINITY; /* only one is finite */
      continue;
    }
    double d = fabs(a - b);
    sum += d;
    if (d > r->max_abs) r->max_abs = d;
  }
  r->count = n;
  r->mean_abs = n ? sum / (double)n : 0;
  r->scale = scale;
  r->rel = scale > 0 ? r->max_abs / scale : r->max_abs > 0 ? INFINITY : 0;
}

static int by_rank(const void *pa, const void *pb) {
  const infer_value_error *a = pa, *b = pb;
  if (a->growth != b->growth) return a->growth > b->growth ? -1 : 1;
  return a->step - b->step;
}

/* One value of the test engine against the reference's value of the same name; false
 * when the reference has no such value or its shape differs (nothing to compare). */
static infer_status compare_one(infer_context *ref, infer_context *test, int v, bool *compared,
                                infer_value_error *row) {
  const infer_engine *re = context_engine(ref), *te = context_engine(test);
  const value *tv = &te->g->values[v];
  *compared = false;
  int rv = engine_kept_value(re, tv->name);
  if (rv < 0) return INFER_OK;
  const value *rval = &re->g->values[rv];
  int64_t n = dims_count(tv->t.rank, tv->t.dims);
  if (n < 0 || n != dims_count(rval->t.rank, rval->t.dims) || tv->t.rank != rval->t.rank)
    return INFER_OK;
  float *a = malloc((size_t)(n ? n : 1) * sizeof(float));
  float *b = malloc((size_t)(n ? n : 1) * sizeof(float));
  infer_status st = a && b ? INFER_OK : infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (st == INFER_OK) st = context_read_value_onnx(ref, rv, a);
  if (st == INFER_OK) st = context_read_value_onnx(test, v, b);
  if (st == INFER_OK) {
    stats(a, b, n, row);
    *compared = true;
  }
  free(a);
  free(b);
  return st;
}

infer_status infer_compare_values(infer_context *ref, infer_context *test,
                                  infer_value_error **rows_out, int *n_rows) {
  if (!ref || !test || !rows_out || !n_rows)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_compare_values: NULL argument");
  *rows_out = NULL;
  *n_rows = 0;
  const infer_engine *te = context_engine(test);
  const graph *g = te->g;
  const char *no = NULL;
  if (!config_flag(&context_engine(ref)->opts.cfg, "keep_values", false)) no = "reference";
  if (!config_flag(&te->opts.cfg, "keep_values", false)) no = "test";
  if (no)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_compare_values: the %s engine keeps no "
                      "intermediate values (build both with config keep_values=1)", no);
  infer_value_error *rows = calloc((size_t)g->n_values + 1, sizeof *rows);
  double *carried = calloc((size_t)g->n_values + 1, sizeof(double)); /* error reaching v */
  if (!rows || !carried) {
    free(rows);
    free(carried);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  infer_status st = INFER_OK;
  int nr = 0;
  for (int i = 0; st == INFER_OK && i < g->n_inputs; i++) {
    int v = g->inputs[i];
    bool ok = false;
    infer_value_error *r = &rows[nr];
    st = compare_one(ref, test, v, &ok, r);
    if (!ok) continue;
    r->name = g->values[v].name;
    r->node = "";
    r->op = "(input)";
    r->impl = "input";
    r->step = -1;
    r->growth = r->rel / GROWTH_FLOOR;
    carried[v] = r->rel;
    nr++;
  }
  for (int s = 0; st == INFER_OK && s < te->n_steps; s++) {
    const node *n = &g->nodes[te->steps[s]];
    double given = 0;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && carried[n->inputs[k]] > given) given = carried[n->inputs[k]];
    for (int k = 0; st == INFER_OK && k < n->n_outputs; k++) {
      int v = n->outputs[k];
      if (v < 0) continue;
      carried[v] = given;
      bool ok = false;
      infer_value_error *r = &rows[nr];
      if (g->values[v].has_type && dtype_is_float(g->values[v].t.dtype))
        st = compare_one(ref, test, v, &ok, r);
      if (!ok) continue;
      r->name = g->values[v].name;
      r->node = n->name ? n->name : "";
      r->op = n->op_type;
      r->impl = te->be->step_impl(te, s);
      r->step = s;
      /* an error already infinite that stays so is carried, not grown */
      r->growth = isinf(given) ? (isinf(r->rel) ? 1 : 0)
                               : r->rel / (given > GROWTH_FLOOR ? given : GROWTH_FLOOR);
      carried[v] = r->rel;
      nr++;
    }
  }
  free(carried);
  if (st != INFER_OK) {
    free(rows);
    return st;
  }
  qsort(rows, (size_t)nr, sizeof *rows, by_rank);
  *rows_out = rows;
  *n_rows = nr;
  return INFER_OK;
}
