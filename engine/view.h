/* view.h: strided views: how the elements of a value lie in the bytes of another.
 *
 * Movement ops (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Slice, Gather of
 * one constant index) move no
 * arithmetic, only positions. A consumer that reads its operands through strides (the
 * fused attention) can read the value at the start of such a chain directly, and a
 * producer that writes through strides can write where the chain would have copied its
 * result. view_of() follows a chain back to the value that holds the bytes.
 *
 * A dim of a view may not have one stride: merging heads [B, H] into B*H of a sliced QKV
 * projection gives b * 3E + h * D. So each dim is a run of atoms, each a (size, stride)
 * pair, outermost first; a reshape splits and merges atoms, a transpose permutes dims,
 * and adjacent atoms that are contiguous are merged. */
#ifndef INFER_VIEW_H
#define INFER_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/graph.h"

#define VIEW_MAX_ATOMS 16

typedef struct view_atom {
  int64_t size, stride;
} view_atom;

typedef struct view {
  int base;       /* the value whose (contiguous) bytes hold the elements */
  int64_t offset; /* element offset of the view's first element in base */
  int rank;
  int n_atoms[INFER_MAX_RANK];                    /* atoms of each dim */
  view_atom atoms[INFER_MAX_RANK][VIEW_MAX_ATOMS]; /* outermost first */
} view;

/* The contiguous view of value v (shape known). */
void view_whole(const graph *g, int v, view *out);
/* Dim i's size. */
int64_t view_dim(const view *w, int i);
/* Dim i as one stride when it has one (its atoms merge), else false. */
bool view_dim_stride(const view *w, int i, int64_t *stride);
/* The view permuted as Transpose(perm) permutes its input. */
void view_transpose(view *w, const int64_t *perm);
/* The view seen with other dims of the same element count: atoms split and merge
 * (false when a new dim does not fall on atom factors). */
bool view_reshape(view *w, int rank, const int64_t *dims);
/* Whether node n is a movement op view_of can follow. */
bool view_follows(const graph *g, const node *n);
/* ... and one that drops no element (a Transpose or a reshape), so that view_into can
 * run it backwards. */
bool view_invertible(const graph *g, const node *n);

/* The view of value v in the value its bytes come from: back through live movement
 * nodes while their input is an intermediate or a graph input, at most max_steps of them.
 * Returns the number of nodes followed (0: v itself). */
int view_of(const graph *g, int v, int max_steps, view *out);
/* The inverse direction: the view of value `from` (an earlier value on a chain of
 * Transposes and reshapes that ends at `to`) in the bytes of `to`. false when the chain
 * holds another node or a reshape the atoms refuse. */
bool view_into(const graph *g, int from, int to, view *out);

#endif
