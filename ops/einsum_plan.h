/* einsum_plan.h: Einsum (12+): the parsed equation (the node's params) and its plan for
 * concrete input shapes, shared by shape inference, the CPU run (ops/einsum.c) and a
 * later GPU side.
 *
 * Equation: comma-separated input terms, optionally "->" and the output term; each term
 * is letters (a-z, A-Z; case matters) with at most one "..." (the dims not named by
 * letters, broadcast numpy-style across inputs). Spaces are ignored. A letter repeated
 * within a term takes the diagonal; letters absent from the output are summed over.
 * Without "->" the output is "..." (if any input has one) followed by the letters that
 * appear exactly once, in ASCII order (upper case first), as numpy does.
 *
 * Labels are small integers: letters 0..51 (ASCII order), then the ellipsis dims
 * EINSUM_ELL.. (right-aligned: the last ellipsis dim of every input is the same label). */
#ifndef INFER_EINSUM_PLAN_H
#define INFER_EINSUM_PLAN_H

#include <stdint.h>

#include "op.h"

#define EINSUM_MAX_OPERANDS 16
#define EINSUM_LETTERS 52
#define EINSUM_ELL EINSUM_LETTERS
#define EINSUM_LABELS (EINSUM_LETTERS + INFER_MAX_RANK)

typedef struct einsum_term {
  int n;           /* letters in the term */
  int ellipsis_at; /* "..." before letter ellipsis_at (0..n), or -1 */
  uint8_t label[INFER_MAX_RANK];
} einsum_term;

/* The node's params. */
typedef struct einsum_params {
  int n_operands;
  einsum_term in[EINSUM_MAX_OPERANDS];
  einsum_term out; /* explicit, or the implicit output written out */
} einsum_params;

/* The equation applied to concrete shapes. */
typedef struct einsum_plan {
  int ell_rank;                /* dims the ellipsis stands for (the most of any input) */
  int64_t size[EINSUM_LABELS]; /* per label; -1 when not used */
  int out_rank;
  uint8_t out_label[INFER_MAX_RANK];
  int n_sum; /* labels summed over */
  uint8_t sum_label[EINSUM_LABELS];
  /* element stride of operand k along label l: 0 when the operand lacks it or
   * broadcasts it; a repeated label adds its strides (the diagonal) */
  int64_t stride[EINSUM_MAX_OPERANDS][EINSUM_LABELS];
} einsum_plan;

/* Parses equation eq for n_operands inputs into p (INVALID_MODEL naming what is wrong). */
infer_status einsum_parse_equation(const char *eq, int n_operands, einsum_params *p);

/* The plan for inputs in[0..p->n_operands) (only shapes read); INVALID_MODEL when the
 * shapes do not fit the equation. */
infer_status einsum_make_plan(const einsum_params *p, const tensor *const *in, einsum_plan *pl);

/* The two-operand contraction as batched GEMMs: out[b, m, n] = sum_k A[b, m, k] B[b, k, n]
 * where each of b, m, n, k is a group of labels (a_sum / b_sum: labels only one operand
 * has and the output lacks, summed while packing that operand). Labels of size 1 are
 * left out. */
typedef struct einsum_gemm {
  int nb, nm, nn, nk, na_sum, nb_sum;
  uint8_t b[EINSUM_LABELS], m[EINSUM_LABELS], n[EINSUM_LABELS], k[EINSUM_LABELS];
  uint8_t a_sum[EINSUM_LABELS], b_sum[EINSUM_LABELS];
  int64_t B, M, N, K; /* products of the groups' sizes */
} einsum_gemm;

/* True (and g filled) when the plan is a two-operand contraction with no empty label:
 * then the CPU runs it through cpu_sgemm for float32/float16/bfloat16. */
bool einsum_gemm_split(const einsum_plan *pl, int n_operands, einsum_gemm *g);

#endif
