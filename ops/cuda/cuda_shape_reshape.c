/* cuda_shape_reshape.c: the GPU side of ops/shape_reshape.c: Reshape, Flatten,
 * Squeeze and Unsqueeze only relabel the shape (a device-to-device copy, or nothing
 * where the memory plan aliases the buffers). */
#include "cuda_movement_util.h"

const cuda_op cuda_reshape = {.name = "Reshape", .prepare = mv_view_prepare, .run = mv_view_run};
const cuda_op cuda_flatten = {.name = "Flatten", .prepare = mv_view_prepare, .run = mv_view_run};
const cuda_op cuda_squeeze = {.name = "Squeeze", .prepare = mv_view_prepare, .run = mv_view_run};
const cuda_op cuda_unsqueeze = {.name = "Unsqueeze", .prepare = mv_view_prepare,
                                .run = mv_view_run};
