/* control_params.h: what If, Loop and Scan parse from their attributes (ops/control.c),
 * shared with the derivation of their output shapes at build (ops/control_shapes.c). */
#ifndef INFER_CONTROL_PARAMS_H
#define INFER_CONTROL_PARAMS_H

#include "op.h"

enum { SCAN_MAX = 16 }; /* scan inputs or outputs of a Scan node (the arrays below) */

typedef struct control_params {
  const graph *then_g, *else_g; /* If */
  const graph *body;            /* Loop, Scan */
  int n_declared;               /* the op's own inputs (before the captures) */
  int n_carried, n_scans;       /* Loop, Scan: N carried values (states), K scan outputs */
  int n_scan_in;                /* Scan: M scan inputs */
  int64_t in_axis[SCAN_MAX], in_rev[SCAN_MAX], out_axis[SCAN_MAX], out_rev[SCAN_MAX];
} control_params;

/* Loop's iteration number or condition as body input i receives it: a scalar of the
 * rank the body declares for that input (0, or 1 for [1]) over `data`. */
void control_body_scalar(const graph *body, int i, infer_dtype dt, void *data, tensor *t);

/* Runs subgraph b, which takes no formal inputs (an If branch, a HostRegion), with node
 * n's inputs as the captures' source; out[k] get its first n->n_outputs results. */
infer_status control_run_branch(const node *n, const graph *b, const tensor *const *in,
                                tensor *const *out, op_exec *x);

/* op_desc.infer of If, Loop and Scan (control_shapes.c): the output shapes where they do
 * not depend on run-time data, else OP_NEEDS_DATA. */
infer_status control_if_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out);
infer_status control_loop_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out);
infer_status control_scan_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out);

#endif
