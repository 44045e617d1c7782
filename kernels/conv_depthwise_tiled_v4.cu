// conv_depthwise_tiled_v4.cu: the variants of the tiled depthwise kernel
// (conv_depthwise_tiled.cuh) with 4 channels per thread, C % 4 == 0.
#include "conv_depthwise_tiled.cuh"

const dwt_fn dwt_fns_v4[8] = {DWT_VARIANTS(4)};
