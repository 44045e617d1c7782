/* passes.h: graph rewrites that run after shape inference and constant folding and
 * before dead-node removal and planning (engine_build):
 *
 *   infer-and-fold -> einsum-to-matmul -> remove-identity -> fold-conv-bn -> bn-to-affine
 *   -> cancel-transposes -> fuse-chains -> fuse-attention-op -> fuse-attention
 *   -> move-row-transposes -> fuse-conv-epilogue -> fuse-matmul-epilogue -> [to-channels-last]
 *   -> [int8-conv] -> fuse-elementwise -> fuse-concat-chain -> fuse-row-gather -> remove-dead -> plan
 *
 * Contract shared by every pass here:
 * - Nodes are never deleted, only marked `removed`; values are never deleted, so
 *   every value id stays valid. A value's `producer` may name a removed node (as
 *   after folding); pass_producer() answers only with live ones.
 * - Consumers are only rewired to values produced earlier (or to inputs and
 *   constants), so the node order stays topological.
 * - A graph output keeps its value id and name. A node that writes a graph output
 *   is bypassed only when the value it forwards is an intermediate, produced by a
 *   live node and itself not a graph output: that producer is then retargeted to
 *   write the graph output directly (its other readers read the output value).
 *   Otherwise (the forwarded value is a graph input, a constant or another graph
 *   output) the node stays.
 * - Each returns INFER_OK, or OUT_OF_MEMORY (the graph is then unchanged or still
 *   consistent), and stores how many nodes it removed in *removed. */
#ifndef INFER_PASSES_H
#define INFER_PASSES_H

#include <stdbool.h>

#include "../core/graph.h"
#include "../core/status.h"

/* Identity; Dropout in inference mode (no training_mode input, or a constant false
 * one) whose mask output is absent or unread; Reshape, Flatten, Squeeze, Unsqueeze
 * whose output shape equals the input's (both known at build time); Cast to the
 * input's dtype; Transpose whose permutation is the identity; Expand and Tile that
 * keep the shape; Pad by zeros; Concat of one input. */
infer_status pass_remove_identity(graph *g, int *removed);

/* Einsum of two float operands that is a batched matrix product ("<batch> m k, <batch>
 * k n -> <batch> m n", each operand's last two letters in either order, same batch dims,
 * no ellipsis) -> MatMul, with a Transpose of the last two axes before an operand given
 * as (k, m) or (n, k) (engine/pass_einsum_matmul.c). *rewritten: Einsums rewritten. */
infer_status pass_einsum_to_matmul(graph *g, int *rewritten);
/* Conv (constant float32/float64 W, optional constant B) whose output is read only
 * by an inference BatchNormalization with constant scale, B, mean and var becomes
 * one Conv: W' = W * a, B' = (B - mean) * a + beta, a = scale / sqrt(var + eps),
 * per output channel. W' and B' are new constant values (the original initializers
 * may be shared and are left untouched). The Conv then writes the BN's output. */
infer_status pass_fold_conv_bn(graph *g, int *removed);

/* Transpose -> Transpose where the first output is read only by the second: the
 * pair becomes one Transpose with the composed permutation, or nothing when the
 * composition is the identity. When the first Transpose has other readers, a pair
 * composing to the identity still lets the second's readers read the first's
 * input (the first stays for its other readers). */
infer_status pass_cancel_transposes(graph *g, int *removed);

/* Chains that compute one op, replaced by it (engine/pass_fuse.c): x * sigmoid(x)
 * -> Swish; the erf form of GELU -> Gelu; LayerNorm written with ReduceMean, Sub,
 * Pow, Add, Sqrt, Div, Mul, Add over the last axis -> LayerNormalization. */
infer_status pass_fuse_chains(graph *g, int *removed);

/* Conv -> [Add(., Z) with Z of Y's shape] -> [Relu | Clip with constant bounds |
 * LeakyRelu | Sigmoid | Tanh | HardSigmoid | Swish | HardSwish | Gelu (erf)]
 * -> one FusedConv (com.microsoft): Y = act(Conv(X, W, B) + Z), written where the
 * chain's last node was (engine/pass_conv_epilogue.c). */
infer_status pass_fuse_conv_epilogue(graph *g, int *removed);

/* MatMul (B a constant matrix) or Gemm -> [Add bias] -> [Add Z] -> [Relu | Gelu] -> one
 * FusedMatMul (domain infer): Y = act(alpha * A . op(B) + bias + Z), written where the
 * chain's last node was (engine/pass_matmul_epilogue.c). */
infer_status pass_fuse_matmul_epilogue(graph *g, int *removed);

/* ONNX's Attention (opset 23, 24) in the form FusedAttention computes (Q, K, V only, Y
 * the only output used, no softcap, float32/float16, fixed shapes) -> FusedAttention
 * (domain infer) with GQA as kv_group and is_causal as its causal mask, rewritten in
 * place (engine/pass_attention_onnx.c). *rewritten: Attention nodes rewritten. */
infer_status pass_fuse_attention_op(graph *g, int *rewritten);

/* MatMul -> [scale] -> Softmax(last axis) -> MatMul, with the movement ops around its
 * operands and its output folded into strided views, -> one FusedAttention (domain
 * infer) (engine/pass_attention.c). */
infer_status pass_fuse_attention(graph *g, int *removed);

/* After fuse-attention: a Transpose of the leading axes (the last kept) read only by
 * row-wise ops (MatMul by a constant, Gemm, elementwise with a row constant, unary) that
 * end in FusedAttention inputs, or reached from a FusedAttention output through such ops
 * and reshapes of the rows, goes: the attention's views take the other row order
 * (engine/pass_row_permute.c). */
infer_status pass_move_row_transposes(graph *g, int *removed);

/* Chains of elementwise ops (and an existing FusedChain growing from its end) -> one
 * FusedChain (domain infer) (engine/pass_ew_chain.c). */
infer_status pass_fuse_elementwise(graph *g, int *removed);

/* After fuse-elementwise: a Concat along the last axis read only as a FusedChain's first
 * operand goes into the chain (attribute concat), which reads the parts in place
 * (engine/pass_concat_chain.c). */
infer_status pass_fuse_concat_chain(graph *g, int *removed);

/* Last: groups of data-movement nodes (Concat, Transpose, Slice, Split and reshapes)
 * that keep to the trailing dims -> one RowGather (domain infer) whose outputs are the
 * group's values read elsewhere; each element read and written once
 * (engine/pass_row_gather.c). */
infer_status pass_fuse_row_gather(graph *g, int *removed);

/* Conv / FusedConv reading a per-tensor int8 DequantizeLinear (zero point 0), with float
 * weights that are per-channel symmetric int8 values times their scale, group 1 and
 * channel counts that are multiples of 4 (channels-last ones only, with
 * channels_last_only) -> Int8Conv (domain infer) on the int8 tensors, in place; one
 * whose only reader is a per-tensor QuantizeLinear to int8 (zero point 0) then writes
 * its output quantized, the QuantizeLinear removed (engine/pass_int8_conv.c).
 * *rewritten: convolutions rewritten; *absorbed: QuantizeLinears so removed. */
infer_status pass_int8_conv(graph *g, bool channels_last_only, int *rewritten, int *absorbed);

/* An inference BatchNormalization left unfolded -> FusedChain x * a[c] + b[c]
 * (engine/pass_bn_affine.c). *rewritten: nodes rewritten. */
infer_status pass_bn_to_affine(graph *g, int *rewritten);

/* fp16 GPU builds only (after the others): 2-D convolutions and the elementwise
 * ops, Concats and pools between them on NHWC data; Transposes where NCHW readers
 * remain, and copies of a per-tensor Q/DQ whose output both layouts read
 * (engine/pass_channels_last.c). *added: Transpose nodes added. */
infer_status pass_to_channels_last(graph *g, int *added);

/* After to-channels-last: a FusedConv ending in Clip(0, b) whose only reader is a
 * channels-last depthwise FusedConv ends in Relu instead, and the reader clamps its
 * input at b (its input_max): the same values, without a clip that pointwise GEMM
 * epilogues lack (engine/pass_defer_clip.c). *changed: convolutions rewritten. */
infer_status pass_defer_clip(graph *g, int *changed);

/* Mixed precision (engine/pass_fp32.c): marks the outputs of the nodes of op types
 * `ops` (comma-separated; "auto", the default when NULL, adds the overflow policy;
 * "none" nothing) and of the nodes named in `nodes` keep_fp32, before the fusion passes;
 * an entry naming no op / no node of the model is refused. */
infer_status pass_mark_fp32(graph *g, const char *ops, const char *nodes, int *marked);
/* After them: every live node writing a kept value computes in float32; with
 * place_casts (GPU fp16 storage) Casts convert between float16- and float32-stored
 * values where a node reads the other kind. *n_fp32: float32 nodes; *added: Casts placed. */
infer_status pass_place_fp32(graph *g, bool place_casts, int *n_fp32, int *added);

/* Data-dependent shapes (engine/pass_outline_dynamic.c), after remove-dead: every node
 * with a value of unknown shape, and every node between two such, moved into one
 * HostRegion node (ops/control_region.c) whose subgraph reads all outside values as
 * captures; *moved: the nodes moved (0: every shape known); first: the first of them,
 * described (node_describe), for the log. */
infer_status pass_outline_dynamic(graph *g, int *moved, char *first, int first_cap);

/* ---- helpers the passes share (engine/pass_util.c) ------------------------------- */

/* readers[v] = how many input slots of live nodes read value v (malloc'ed; NULL
 * when out of memory). */
int *pass_count_readers(const graph *g);
bool pass_is_graph_output(const graph *g, int v);
/* True when node n is live and is the default-domain op `op_type`. */
bool pass_node_is(const node *n, const char *op_type);
/* The live node that writes v, or -1 (inputs, constants, orphaned values). */
int pass_producer(const graph *g, int v);
/* Every live node's input `from` reads `to` instead; readers is kept up to date. */
void pass_replace_uses(graph *g, int from, int to, int *readers);
/* Marks node i removed and releases its reads from readers. */
void pass_remove_node(graph *g, int i, int *readers);
/* Whether node i can be dropped with its output y replaced by value x (which holds
 * the same tensor): see the graph output rule above. Shapes and dtypes known on
 * both sides must agree. */
bool pass_can_bypass(const graph *g, int i, int x, int y, const int *readers);
/* Drops node i so that readers of y read x (pass_can_bypass must hold). */
void pass_bypass(graph *g, int i, int x, int y, int *readers);
/* Turns node i into `op_type` of `domain` ("" = ai.onnx) at `opset`, reading `inputs`,
 * with `attrs` (taken over), and parses it again; its first output is kept. The
 * caller keeps `readers` right. */
infer_status pass_rewrite_node(graph *g, int i, const char *domain, const char *op_type,
                               int64_t opset, const int *inputs, int n_inputs, attr *attrs,
                               int n_attrs);
/* Sets (adds or replaces) an integer-list / integer attribute of n; re-parse after. */
infer_status pass_set_attr_ints(node *n, const char *name, const int64_t *v, int count);
infer_status pass_set_attr_int(node *n, const char *name, int64_t v);
infer_status pass_set_attr_float(node *n, const char *name, float v);
infer_status pass_set_attr_string(node *n, const char *name, const char *v);
/* Drops n's attribute `name` if it has one; re-parse after. */
void pass_remove_attr(node *n, const char *name);
/* v is a constant whose data, dtype and shape are known at build. */
bool pass_is_constant(const graph *g, int v);
/* Transpose node n's permutation (perm[i]: the input axis of output axis i) of rank
 * *rank; false when unknown (no perm attribute and the input's rank not known at build
 * time) or malformed. */
bool pass_transpose_perm(const graph *g, const node *n, int *rank, int *perm);
/* The one live node reading v, when v has one reader and is not a graph output; else -1. */
int pass_sole_reader(const graph *g, int v, const int *readers);
/* Parses n's attributes again into its params (after an attribute changed). */
infer_status pass_reparse(node *n);
/* Orders the nodes by key[i] (stable; key per current node index) and renumbers
 * the values' producers. */
infer_status pass_reorder_nodes(graph *g, const double *key);
/* A new constant value named after value `base` + suffix, of the given dtype and shape,
 * data malloc'ed (uninitialized); -1 when out of memory. */
int pass_add_constant(graph *g, int base, const char *suffix, infer_dtype dt, int rank,
                      const int64_t *dims);
/* A name not used by any value: base + suffix, then base + suffix + "_N" (malloc'ed). */
char *pass_unique_name(const graph *g, const char *base, const char *suffix);
/* A new Transpose node (opset 13) reading value v with `perm` (v's rank) into a new value
 * named after v + suffix, of v's type with the dims permuted; the node's index in *node.
 * Returns the new value, -1 when out of memory. The caller places the node. */
int pass_add_transpose(graph *g, int v, const int64_t *perm, const char *suffix, int *node);
/* Turns node i into FusedAttention (ops/attention_fused.h) reading Q, K, V = ins[0..2],
 * with p's views, scale, output shape, kv_group and causal mask as its attributes, and
 * parses it; its first output is kept. The caller keeps `readers` right. */
struct fused_attention_params;
infer_status pass_rewrite_fused_attention(graph *g, int i, const int *ins,
                                          const struct fused_attention_params *p);

#endif
