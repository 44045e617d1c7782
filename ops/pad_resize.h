/* pad_resize.h: Pad and Resize descriptors, listed by the data-movement family
 * (ops_movement) although they live in ops/pad.c and ops/resize.c. */
#ifndef INFER_PAD_RESIZE_H
#define INFER_PAD_RESIZE_H

#include "op.h"

extern const op_desc op_pad, op_resize;

#endif
