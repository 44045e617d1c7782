// conv_depthwise_tiled_v21.cu: the variants of the tiled depthwise kernel
// (conv_depthwise_tiled.cuh) with 2 channels per thread (C % 2 == 0), then with 1 (any
// C, windows as run-time sizes only).
#include "conv_depthwise_tiled.cuh"

const dwt_fn dwt_fns_v21[10] = {DWT_VARIANTS(2), dwt_kernel<1, 7, 1, true>,
                                dwt_kernel<1, 7, 2, true>};
