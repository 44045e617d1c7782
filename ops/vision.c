/* vision.c: the vision family list (ops/vision_params.h): sampling and detection ops. */
#include "op.h"

extern const op_desc op_grid_sample, op_roi_align, op_nms, op_affine_grid;

const op_desc *const ops_vision[] = {&op_grid_sample, &op_roi_align, &op_nms, &op_affine_grid,
                                     NULL};
