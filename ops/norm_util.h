/* norm_util.h: checks shared by the normalization ops (internal to ops/). */
#ifndef INFER_NORM_UTIL_H
#define INFER_NORM_UTIL_H

#include "op.h"

/* t must be a float tensor of `count` elements (a per-channel parameter); any
 * shape with that many elements is accepted, the order being the same. */
infer_status norm_check_vector(const tensor *t, int64_t count, const char *op,
                               const char *name);

#endif
