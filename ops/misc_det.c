/* misc_det.c: Det (opset 11), the determinant of each square matrix of [..., M, M], by LU
 * decomposition with partial pivoting in double. */
#include <math.h>
#include <string.h>

#include "op.h"

static infer_status det_check(const tensor *x) {
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Det: input of dtype %s", infer_dtype_name(x->dtype));
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return infer_fail(INFER_ERR_INVALID_MODEL, "Det: input must be [..., M, M]");
  return INFER_OK;
}

static infer_status det_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  (void)n, (void)params;
  TRY(det_check(in[0]));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = in[0]->rank - 2;
  memcpy(out[0]->dims, in[0]->dims, sizeof in[0]->dims[0] * (size_t)out[0]->rank);
  return INFER_OK;
}

static int64_t det_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  (void)n, (void)params, (void)out;
  const int64_t m = in[0]->rank >= 2 ? in[0]->dims[in[0]->rank - 1] : 0;
  return m * m * (int64_t)sizeof(double);
}

static infer_status det_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  (void)n, (void)params;
  TRY(det_check(in[0]));
  const tensor *x = in[0];
  const int64_t m = x->dims[x->rank - 1], count = dims_count(x->rank - 2, x->dims);
  double *a = ws;
  for (int64_t b = 0; b < count; b++) {
    for (int64_t i = 0; i < m * m; i++) a[i] = tensor_get_f64(x, b * m * m + i);
    double det = 1;
    for (int64_t c = 0; c < m && det != 0; c++) {
      int64_t piv = c;
      for (int64_t r = c + 1; r < m; r++)
        if (fabs(a[r * m + c]) > fabs(a[piv * m + c])) piv = r;
      if (a[piv * m + c] == 0) {
        det = 0;
        break;
      }
      if (piv != c) { /* a row swap flips the sign */
        for (int64_t k = 0; k < m; k++) {
          double t = a[c * m + k];
          a[c * m + k] = a[piv * m + k];
          a[piv * m + k] = t;
        }
        det = -det;
      }
      det *= a[c * m + c];
      for (int64_t r = c + 1; r < m; r++) {
        const double f = a[r * m + c] / a[c * m + c];
        for (int64_t k = c; k < m; k++) a[r * m + k] -= f * a[c * m + k];
      }
    }
    tensor_set_f64(out[0], b, det);
  }
  return INFER_OK;
}

const op_desc op_det = {.name = "Det",
                        .domain = "",
                        .since = 11,
                        .until = OP_OPSET_MAX,
                        .min_inputs = 1,
                        .max_inputs = 1,
                        .min_outputs = 1,
                        .max_outputs = 1,
                        .infer = det_infer,
                        .run = det_run,
                        .workspace = det_workspace};
