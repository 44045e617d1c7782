/* tensor_limits.c: see tensor_limits.h. */
#include "tensor_limits.h"

#include <stdio.h>

#include "status.h"
#include "tensor.h"

infer_status tensor_check_limits(int rank, const int64_t *dims, const char *what) {
  int64_t n = dims_count(rank, dims);
  if (n >= 0 && n <= TENSOR_MAX_ELEMENTS) return INFER_OK;
  char count[32], shape[160];
  if (n < 0) snprintf(count, sizeof count, "more than 2^63");
  else snprintf(count, sizeof count, "%lld", (long long)n);
  return infer_fail(INFER_ERR_OUT_OF_MEMORY,
                    "%s has %s elements (shape %s), above the limit of %lld elements for one tensor "
                    "(TENSOR_MAX_ELEMENTS)",
                    what, count, dims_format(rank, dims, shape, sizeof shape),
                    (long long)TENSOR_MAX_ELEMENTS);
}
