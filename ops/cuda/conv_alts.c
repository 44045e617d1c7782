/* conv_alts.c: the list of alternative convolution implementations the Conv search
 * (conv_algo_search.c) times against cuDNN's legacy API at build. New ones go last: the algorithm cache
 * stores a choice by its index here. */
#include "conv_alt.h"

extern const conv_alt conv_alt_gemm_1x1; /* conv_gemm_1x1.c */
extern const conv_alt conv_alt_cudnn_graph; /* conv_cudnn_graph.c */
extern const conv_alt conv_alt_depthwise; /* conv_depthwise.c */
extern const conv_alt conv_alt_pointwise; /* conv_pointwise.c */
extern const conv_alt conv_alt_depthwise3x3; /* conv_depthwise.c */
extern const conv_alt conv_alt_patch_gemm; /* conv_patch_gemm.c */
extern const conv_alt conv_alt_depthwise_tiled; /* conv_depthwise_tiled.c */
extern const conv_alt conv_alt_pointwise_stream; /* conv_pointwise_stream.c */
extern const conv_alt conv_alt_channel_pad; /* conv_channel_pad.c */
extern const conv_alt conv_alt_stem_mma; /* conv_stem_mma.c */
extern const conv_alt conv_alt_space_to_depth; /* conv_fold.c */
extern const conv_alt conv_alt_width_fold; /* conv_fold.c */

const conv_alt *const conv_alts[] = {
    &conv_alt_gemm_1x1,
    &conv_alt_cudnn_graph,
    &conv_alt_depthwise,
    &conv_alt_pointwise,
    &conv_alt_depthwise3x3,
    &conv_alt_patch_gemm,
    &conv_alt_depthwise_tiled,
    &conv_alt_pointwise_stream,
    &conv_alt_channel_pad,
    &conv_alt_stem_mma,
    &conv_alt_space_to_depth,
    &conv_alt_width_fold,
    NULL};
