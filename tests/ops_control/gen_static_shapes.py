#!/usr/bin/python3
"""Writes OUT_DIR/node/: ONNX backend-style node tests of control flow whose output shapes
the engine derives at build (ops/control_shapes.c), and of some it must not, and
OUT_DIR/dynamic.txt naming the latter (tests/run_control_shapes.sh reads both):

static (every shape known at build, so a CUDA engine plans them and runs the nodes
through the host fallback):
- If on a condition known only at run whose branches agree: both read the main graph's
  x; one computes a Reshape target from Shape (folded inside the branch), the other
  transposes; an If nested in a branch, on another run-time condition; a value_info
  inside a branch that declares a wrong shape (declared shapes are hints the engine does
  not take);
- Scan over axis 1 in reverse, a state and a scan output stacked on axis 1, reading an
  initializer of the main graph;
- Loop with a constant trip count, no condition input and a body that passes its
  condition on, a carried value and a scan output, reading the main graph's x;
- Loop with a trip count known only at run and no scan output (carried values keep
  their shape whatever the count).
dynamic (shapes known only after a run; the CPU runs them as before):
- If whose branches give different shapes;
- Loop whose body's condition can end it early (it depends on the iteration number);
- Loop whose carried value grows every trip.
Every input has rank >= 2 or is a scalar the derivation does not need, so the runner's
retry with constant small inputs (conformance --static-shapes) changes nothing.
Expected outputs are computed with numpy.

    /usr/bin/python3 tests/ops_control/gen_static_shapes.py OUT_DIR   (python3-onnx, numpy)
"""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import gen_ops_control  # its ONNX node-test writer (this directory is on the path)
from gen_ops_control import node, vi

RNG = np.random.default_rng(20261210)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
ROOT = None
DYNAMIC = []


def const(name, a):
    return node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(a), name))


def case(name, nodes, inputs, outputs, static, opset=13, inits=()):
    """inputs/outputs: (name, array); a static case declares its outputs' shapes, a
    dynamic one leaves them unknown."""
    gen_ops_control.case(name, nodes, inputs, outputs, opset, inits,
                         dynamic=() if static else [n for n, _ in outputs], root=ROOT,
                         producer="infer tests/ops_control/gen_static_shapes.py")
    if not static:
        DYNAMIC.append(name)


def if_cases():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    # the outer condition: sum(x) > -100 (true, but known only at run); the inner one
    # in the then branch: max(x) > 100 (false)
    cond = [node("ReduceSum", ["x"], ["sx"], keepdims=0),
            node("Greater", ["sx", "minus100"], ["c"]),
            node("ReduceMax", ["x"], ["mx"], keepdims=0),
            node("Greater", ["mx", "plus100"], ["c2"])]
    inner_then = helper.make_graph([node("Neg", ["x"], ["n0"])], "inner_then", [],
                                   [vi("n0", F, [2, 3])])
    inner_else = helper.make_graph([node("Abs", ["x"], ["n1"])], "inner_else", [],
                                   [vi("n1", F, [2, 3])])
    # then: Reshape(2x) to Shape(x) reversed, [3, 2] (the target folds in the branch);
    # the nested If gives |x| or -x, [2, 3]
    then_g = helper.make_graph(
        [node("Mul", ["x", "two"], ["x2"]),
         node("Shape", ["x"], ["sh"]),
         const("rev_starts", np.array([-1], np.int64)),
         const("rev_ends", np.array([-3], np.int64)),
         const("rev_axes", np.array([0], np.int64)),
         const("rev_steps", np.array([-1], np.int64)),
         node("Slice", ["sh", "rev_starts", "rev_ends", "rev_axes", "rev_steps"], ["target"]),
         node("Reshape", ["x2", "target"], ["t0"]),
         node("If", ["c2"], ["t1"], then_branch=inner_then, else_branch=inner_else)],
        "then", [], [vi("t0", F, [3, 2]), vi("t1", F, [2, 3])],
        [numpy_helper.from_array(np.array(2, np.float32), "two")],
        value_info=[vi("x2", F, [7, 7])])  # wrong on purpose: not to be believed
    # else: Transpose(x - 1), [3, 2]; x + 1, [2, 3]
    else_g = helper.make_graph([node("Sub", ["x", "one"], ["xm"]),
                                node("Transpose", ["xm"], ["e0"], perm=[1, 0]),
                                node("Add", ["x", "one"], ["e1"])],
                               "else", [], [vi("e0", F, [3, 2]), vi("e1", F, [2, 3])])
    inits = [("minus100", np.array(-100, np.float32)), ("plus100", np.array(100, np.float32)),
             ("one", np.array(1, np.float32))]
    nodes = cond + [node("If", ["c"], ["y0", "y1"], then_branch=then_g, else_branch=else_g),
                    node("Relu", ["y0"], ["z"])]  # a reader of a derived shape
    case("test_static_if_branches_agree", nodes, [("x", x)],
         [("z", np.maximum((2 * x).reshape(3, 2), 0)), ("y1", np.abs(x))], True, inits=inits)
    # the branches differ: [2, 3] against [3]
    diff_else = helper.make_graph([const("ax", np.array([0], np.int64)),
                                   node("ReduceSum", ["x", "ax"], ["d0"], keepdims=0)],
                                  "else", [], [vi("d0", F, [3])])
    diff_then = helper.make_graph([node("Neg", ["x"], ["d1"])], "then", [], [vi("d1", F, [2, 3])])
    nodes = cond[:2] + [node("If", ["c"], ["y"], then_branch=diff_then, else_branch=diff_else)]
    case("test_dynamic_if_branches_differ", nodes, [("x", x)], [("y", -x)], False,
         inits=inits[:1])


def scan_case():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    s0 = RNG.standard_normal((3,)).astype(np.float32).reshape(1, 3)
    k = np.array(0.5, np.float32)
    # body: s' = s + slice (a [1, 3] state, slices [3]); scan output s' * k (k the main
    # graph's initializer)
    body = helper.make_graph([node("Add", ["s", "xt"], ["s_next"]),
                              node("Mul", ["s_next", "k"], ["o"])], "body",
                             [vi("s", F, [1, 3]), vi("xt", F, [3])],
                             [vi("s_next", F, [1, 3]), vi("o", F, [1, 3])])
    nodes = [node("Scan", ["s0", "x"], ["s_final", "outs"], body=body, num_scan_inputs=1,
                  scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1])]
    s, parts = s0.copy(), []
    for t in range(5):
        s = s + x[:, 4 - t]
        parts.append(s * k)
    outs = np.stack(parts, axis=1)  # [1, 5, 3]
    case("test_static_scan_reverse_axis1", nodes, [("s0", s0), ("x", x)],
         [("s_final", s), ("outs", outs.astype(np.float32))], True, opset=11,
         inits=[("k", k)])


def loop_body(nodes, carried, scans):
    ins = [vi("i", I64, []), vi("cond_in", B, [])] + [vi(n, t, s) for n, t, s in carried]
    outs = [vi("cond_out", B, [])] + [vi(n + "_next", t, s) for n, t, s in carried] + \
        [vi(n, t, s) for n, t, s in scans]
    return helper.make_graph(nodes, "body", ins, outs)


def loop_cases():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    # a constant trip count, no condition input: y' = y + x (x the main graph's), scan
    # the row sums of y'
    body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                      node("Add", ["y", "x"], ["y_next"]),
                      const("axes", np.array([1], np.int64)),
                      node("ReduceSum", ["y_next", "axes"], ["rows"], keepdims=0)],
                     [("y", F, [2, 3])], [("rows", F, [2])])
    nodes = [node("Loop", ["M", "", "x"], ["y_final", "rows_all"], body=body)]
    y, rows = x.copy(), []
    for _ in range(4):
        y = y + x
        rows.append(y.sum(axis=1))
    case("test_static_loop_constant_trips", nodes, [("x", x)],
         [("y_final", y), ("rows_all", np.array(rows, np.float32))], True,
         inits=[("M", np.array(4, np.int64))])
    # a trip count known only at run, no scan output: the carried value keeps its shape
    body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                      node("Mul", ["y", "x"], ["y_next"])], [("y", F, [2, 3])], [])
    nodes = [node("Loop", ["M", "", "x"], ["y_final"], body=body)]
    case("test_static_loop_run_time_trips", nodes, [("M", np.array(3, np.int64)), ("x", x)],
         [("y_final", x * x * x * x)], True)
    # the body's condition may end the loop early (i < 2): its scan outputs' length is
    # known only at run
    body = loop_body([node("Less", ["i", "two"], ["cond_out"]),
                      node("Add", ["y", "x"], ["y_next"]),
                      node("Identity", ["y_next"], ["trace"])],
                     [("y", F, [2, 3])], [("trace", F, [2, 3])])
    nodes = [node("Loop", ["M", "", "x"], ["y_final", "traces"], body=body)]
    y, traces = x.copy(), []
    for i in range(5):
        y = y + x
        traces.append(y)
        if not i < 2:
            break
    case("test_dynamic_loop_condition_ends_early", nodes, [("x", x)],
         [("y_final", y), ("traces", np.array(traces, np.float32))], False,
         inits=[("M", np.array(5, np.int64)), ("two", np.array(2, np.int64))])
    # the carried value grows by a row each trip
    body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                      node("Concat", ["y", "x"], ["y_next"], axis=0)], [("y", F, None)], [])
    nodes = [node("Loop", ["M", "", "x"], ["y_final"], body=body)]
    case("test_dynamic_loop_carried_grows", nodes, [("x", x)],
         [("y_final", np.concatenate([x, x, x], axis=0))], False,
         inits=[("M", np.array(2, np.int64))])


def main():
    global ROOT
    if len(sys.argv) != 2:
        sys.exit("usage: gen_static_shapes.py OUT_DIR")
    ROOT = os.path.join(sys.argv[1], "node")
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    for gen in (if_cases, scan_case, loop_cases):
        gen()
    with open(os.path.join(sys.argv[1], "dynamic.txt"), "w") as f:
        f.write("# shapes known only at run (tests/ops_control/gen_static_shapes.py)\n")
        f.write("".join(n + "\n" for n in DYNAMIC))
    print("wrote", len(os.listdir(ROOT)), "tests into", ROOT)


if __name__ == "__main__":
    main()
