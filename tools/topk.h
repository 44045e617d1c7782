/* topk.h: class probabilities and the K most probable classes of one output row. */
#ifndef INFER_TOPK_H
#define INFER_TOPK_H

#include <stdbool.h>
#include <stdint.h>

/* True when the n values already form a distribution: none NaN, each in [-1e-6, 1+1e-6]
 * and the sum within 1e-3 of 1 (a model that ends in Softmax). */
bool topk_is_distribution(const double *v, int64_t n);

/* p[i] = exp(v[i] - max) / sum: softmax, computed in double after subtracting the
 * largest value (no overflow). NaN values give NaN probabilities. */
void topk_softmax(const double *v, int64_t n, double *p);

/* idx[0..k) = the indices of the k largest p, largest first; equal values in index
 * order; NaN ranks last. k <= n. */
void topk_select(const double *p, int64_t n, int k, int64_t *idx);

#endif
