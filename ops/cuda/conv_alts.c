/* conv_alts.c: the list of alternative convolution implementations cuda_conv.c
 * times against cuDNN's legacy API at build. */
#include "conv_alt.h"

const conv_alt *const conv_alts[] = {NULL};
