/* cuda_concat_in_place.h: Concat parts their producers write in place (cuda_concat_in_place.c). */
#ifndef INFER_CUDA_CONCAT_IN_PLACE_H
#define INFER_CUDA_CONCAT_IN_PLACE_H

#include "../engine_internal.h"
#include "cuda_internal.h"

/* Before the steps prepare: sets ce->into, into_off and out_pitch (per value) for every
 * part of a channels-last float16 Concat a convolution could write in place; *asked
 * counts them. */
infer_status concat_in_place_find(const infer_engine *e, cuda_engine *ce, int *asked);

/* After step n prepared: whether it took its output's pitch; a refused part is copied
 * by its Concat as before. */
void concat_in_place_answer(cuda_engine *ce, const node *n, bool taken);

/* Parts written in place. */
int concat_in_place_count(const infer_engine *e, const cuda_engine *ce);

#endif
