/* misc.c: the family list of the smaller ops that real models and the conformance
 * suite use, each living beside its relatives: Hardmax (reduce_softmax.c),
 * LpNormalization and MeanVarianceNormalization (norm_lp.c), LpPool (pool_lp.c),
 * EyeLike (shape_eyelike.c), Compress (movement_compress.c), ReverseSequence
 * (movement_reverse.c), CenterCropPad (movement_crop_pad.c), Col2Im (conv_col2im.c),
 * Upsample (resize_upsample.c), Unique (movement_unique.c) and the two losses
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (loss.c), Det (misc_det.c),
 * MaxUnpool (pool_unpool.c). */
#include "op.h"

extern const op_desc op_hardmax_1, op_hardmax_13, op_lp_normalization,
    op_mean_variance_normalization, op_lp_pool, op_eyelike, op_compress, op_reverse_sequence,
    op_center_crop_pad, op_col2im, op_upsample, op_unique, op_nll_loss,
    op_softmax_cross_entropy_loss, op_det, op_max_unpool;

const op_desc *const ops_misc[] = {&op_hardmax_1,
                                   &op_hardmax_13,
                                   &op_lp_normalization,
                                   &op_mean_variance_normalization,
                                   &op_lp_pool,
                                   &op_eyelike,
                                   &op_compress,
                                   &op_reverse_sequence,
                                   &op_center_crop_pad,
                                   &op_col2im,
                                   &op_upsample,
                                   &op_unique,
                                   &op_nll_loss,
                                   &op_softmax_cross_entropy_loss,
                                   &op_det,
                                   &op_max_unpool,
                                   NULL};
