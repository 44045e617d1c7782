#!/usr/bin/env python3
"""Writes tests/ops_control/node/: ONNX backend-style node tests of control flow (If,
Loop; ops/control.c, engine/cpu/cpu_subgraph.c), run by the CTest entry ops_control_node
through tests/conformance. The ONNX node tests (test_if, test_loop11, Range expanded)
read no value of the enclosing graph; these do, the way exported detectors do:

- If whose branches read values computed by the outer graph, give outputs of different
  shapes per branch, pass an outer value straight through, hold their own Constant nodes
  and initializers (both conditions);
- Loop with a trip count only, a condition only (the body computes when to stop), both,
  zero trips, loop-carried values and scan outputs, reading an outer value each trip;
- an If inside a Loop body reading a value of the main graph (two levels out) and a
  loop-carried one; Ifs nested eight deep, each reading the main graph's input;
- shapes known only at run (NonZero) and what is computed from them, with nodes before
  and beside, as engine/pass_outline_dynamic.c outlines them.
Expected outputs are computed here with numpy, step by step as the spec describes.

Needs /usr/bin/python3 with onnx 1.12 and numpy. The output is deterministic; the
folder is committed:
    /usr/bin/python3 tests/ops_control/gen_ops_control.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "node")
RNG = np.random.default_rng(20261202)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def elem(a):
    return {np.dtype(np.float32): F, np.dtype(np.int64): I64, np.dtype(bool): B}[a.dtype]


def case(name, nodes, inputs, outputs, opset=13, inits=(), dynamic=(), root=None,
         producer="infer tests/ops_control/gen_ops_control.py"):
    """inputs/outputs: (name, array); `dynamic`: outputs whose shape the model leaves
    unknown (it depends on the branch taken or the trip count). Written as ONNX's node
    tests are, into root (default ROOT)/name."""
    g = helper.make_graph(nodes, name, [vi(n, elem(a), list(a.shape)) for n, a in inputs],
                          [vi(n, elem(a), None if n in dynamic else list(a.shape))
                           for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name=producer)
    model.ir_version = 8
    d = os.path.join(root or ROOT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def const(name, a):
    return node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(a), name))


def if_cases():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    k = RNG.standard_normal((2, 3)).astype(np.float32)
    a, b = x + x, x * x
    # then: a + k (k an initializer of the branch), and x itself (an outer value passed
    # straight through); else: row sums of b ([2], another shape), and a
    then_g = helper.make_graph([node("Add", ["a", "k"], ["t0"])], "then",
                               [], [vi("t0", F, [2, 3]), vi("x", F, [2, 3])],
                               [numpy_helper.from_array(k, "k")])
    else_g = helper.make_graph([const("axes", np.array([1], np.int64)),
                                node("ReduceSum", ["b", "axes"], ["e0"], keepdims=0)],
                               "else", [], [vi("e0", F, [2]), vi("a", F, [2, 3])])
    nodes = [node("Add", ["x", "x"], ["a"]), node("Mul", ["x", "x"], ["b"]),
             node("If", ["c"], ["y0", "y1"], then_branch=then_g, else_branch=else_g),
             node("Neg", ["y0"], ["z"])]  # a consumer of a data-dependent shape
    for cond in (True, False):
        y0 = a + k if cond else b.sum(axis=1)
        y1 = x if cond else a
        case("test_if_outer_scope_%s" % ("true" if cond else "false"), nodes,
             [("c", np.array(cond)), ("x", x)], [("y1", y1), ("z", -y0)],
             dynamic=("y1", "z"))


def loop_body(nodes, carried, scans, extra_in=()):
    """A body graph: inputs i (int64 scalar), cond_in (bool), carried (name, type,
    shape); outputs cond_out, the carried' names, scans (name, type, shape)."""
    ins = [vi("i", I64, []), vi("cond_in", B, [])] + [vi(n, t, s) for n, t, s in carried]
    outs = [vi("cond_out", B, [])] + [vi(n + "_next", t, s) for n, t, s in carried] + \
        [vi(n, t, s) for n, t, s in scans]
    return helper.make_graph(nodes, "body", ins, outs)


def loop_cases():
    x = RNG.standard_normal(3).astype(np.float32)
    # trip count only: s' = s + w (w = 2x, outer), scan s' * i
    body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                      node("Add", ["s", "w"], ["s_next"]),
                      node("Cast", ["i"], ["fi"], to=F),
                      node("Mul", ["s_next", "fi"], ["scan"])],
                     [("s", F, [3])], [("scan", F, [3])])
    nodes = [node("Mul", ["x", "two"], ["w"]),
             node("Loop", ["M", "", "x"], ["s_final", "scans"], body=body)]
    for trips in (4, 1, 0):
        s, scans = x.copy(), []
        for i in range(trips):
            s = s + 2 * x
            scans.append(s * np.float32(i))
        scans = np.array(scans, np.float32).reshape(trips, 3)
        case("test_loop_outer_scope_trips%d" % trips, nodes,
             [("M", np.array(trips, np.int64)), ("x", x)],
             [("s_final", s.astype(np.float32)), ("scans", scans)],
             inits=[("two", np.array(2, np.float32))], dynamic=("scans",))
    # condition only: v' = v + step (outer), go on while v' < limit (outer); scan v'
    body = loop_body([node("Add", ["v", "step"], ["v_next"]),
                      node("Less", ["v_next", "limit"], ["cond_out"]),
                      node("Identity", ["v_next"], ["vs"])],
                     [("v", I64, [])], [("vs", I64, [])])
    nodes = [node("Loop", ["", "go", "v0"], ["v_final", "vs_all"], body=body)]
    for go, step, limit in ((True, 3, 10), (False, 3, 10), (True, 1, 1)):
        v, vs = 0, []
        cond = go
        while cond:
            v += step
            vs.append(v)
            cond = v < limit
        case("test_loop_cond_only_%s_%d_%d" % ("go" if go else "stop", step, limit), nodes,
             [("go", np.array(go)), ("v0", np.array(0, np.int64)), ("step", np.array(step, np.int64)),
              ("limit", np.array(limit, np.int64))],
             [("v_final", np.array(v, np.int64)), ("vs_all", np.array(vs, np.int64))],
             dynamic=("vs_all",))
    # both: at most M trips, stopping early when the running sum passes a bound
    body = loop_body([node("ReduceSum", ["acc_next"], ["total"], keepdims=0),
                      node("Add", ["acc", "x"], ["acc_next"]),
                      node("Less", ["total", "bound"], ["cond_out"])],
                     [("acc", F, [3])], [])
    nodes = [node("Loop", ["M", "go", "acc0"], ["acc_final"], body=body)]
    xp = np.abs(x) + np.float32(0.5)
    for trips, bound in ((10, 4.0), (2, 100.0)):
        acc, it, cond = np.zeros(3, np.float32), 0, True
        while it < trips and cond:
            acc = acc + xp
            cond = acc.sum() < bound
            it += 1
        case("test_loop_trips_and_cond_%d" % trips, nodes,
             [("M", np.array(trips, np.int64)), ("go", np.array(True)),
              ("acc0", np.zeros(3, np.float32)), ("x", xp), ("bound", np.array(bound, np.float32))],
             [("acc_final", acc)])


def nested_cases():
    y = RNG.standard_normal(2).astype(np.float32)
    s0 = RNG.standard_normal(2).astype(np.float32)
    # Loop body: s' = If(i > 0) then s + y else s - y; y is the main graph's (two levels)
    then_g = helper.make_graph([node("Add", ["s", "y"], ["r"])], "then", [], [vi("r", F, [2])])
    else_g = helper.make_graph([node("Sub", ["s", "y"], ["r"])], "else", [], [vi("r", F, [2])])
    body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                      node("Greater", ["i", "zero"], ["pos"]),
                      node("If", ["pos"], ["s_next"], then_branch=then_g, else_branch=else_g),
                      node("Identity", ["s_next"], ["trace"])],
                     [("s", F, [2])], [("trace", F, [2])])
    nodes = [node("Loop", ["M", "", "s0"], ["s_final", "traces"], body=body)]
    s, traces = s0.copy(), []
    for i in range(3):
        s = s + y if i > 0 else s - y
        traces.append(s)
    case("test_loop_nested_if_outer_scope", nodes,
         [("M", np.array(3, np.int64)), ("s0", s0), ("y", y)],
         [("s_final", s), ("traces", np.array(traces, np.float32))],
         inits=[("zero", np.array(0, np.int64))], dynamic=("traces",))
    # Ifs nested eight deep, each level adding the main graph's x to what the level
    # below gives (the innermost gives x): 9 x on the true path
    x = RNG.standard_normal(4).astype(np.float32)
    g = helper.make_graph([node("Identity", ["x"], ["r8"])], "level8", [], [vi("r8", F, [4])])
    for level in range(7, -1, -1):
        inner = node("If", ["c"], ["q%d" % level], then_branch=g, else_branch=g)
        g = helper.make_graph([inner, node("Add", ["q%d" % level, "x"], ["r%d" % level])],
                              "level%d" % level, [], [vi("r%d" % level, F, [4])])
    nodes = [node("If", ["c"], ["out"], then_branch=g, else_branch=g)]
    case("test_if_nested_8_outer_scope", nodes, [("c", np.array(True)), ("x", x)],
         [("out", (x * 9).astype(np.float32))], dynamic=("out",))


def outline_cases():
    """Data-dependent shapes outlined into one host region (engine/pass_outline_dynamic.c):
    NonZero and everything computed from it (the Size, the Add, the Range it bounds, the
    Cast and the Mul reading it: a value computed from one of unknown shape has its shape
    inferred only at run) go into the region, the Greater before it and the Neg beside it
    stay out; four outputs of the region, all of shapes known only at run."""
    x = RNG.standard_normal(8).astype(np.float32)
    nodes = [node("Greater", ["x", "zero_f"], ["pos"]),
             node("NonZero", ["pos"], ["nz"]),
             node("Size", ["nz"], ["count"]),
             node("Add", ["count", "one"], ["count1"]),
             node("Range", ["zero_i", "count1", "one"], ["r"]),
             node("Cast", ["count1"], ["count_f"], to=F),
             node("Mul", ["x", "count_f"], ["w"]),
             node("Neg", ["x"], ["minus_x"])]
    nz = np.array(np.nonzero(x > 0), np.int64)
    count1 = np.int64(nz.size + 1)
    case("test_outline_between_dynamic", nodes, [("x", x)],
         [("r", np.arange(0, count1, 1, dtype=np.int64)), ("w", (x * np.float32(count1))),
          ("nz", nz), ("minus_x", -x)],
         inits=[("zero_f", np.array(0, np.float32)), ("zero_i", np.array(0, np.int64)),
                ("one", np.array(1, np.int64))], dynamic=("r", "nz"))


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    for gen in (if_cases, loop_cases, nested_cases, outline_cases):
        gen()
    print("wrote", len(os.listdir(ROOT)), "tests into", ROOT)


if __name__ == "__main__":
    main()
