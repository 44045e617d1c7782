#!/usr/bin/env python3
"""Writes tests/ops_index/node/: ONNX backend-style node tests (model.onnx and
test_data_set_0/{input,output}_K.pb) of the index and vision op families
(ops/index_params.h, ops/einsum_plan.h, ops/vision_params.h), run by the CTest entry
ops_index_node through tests/conformance.

The ONNX backend node tests cover one or two dtypes per op at one opset; these add the
other dtypes the spec allows (float16, bfloat16, float64, int32/int64, uint8, bool),
older opsets (TopK-1/10, Scatter-10, DepthToSpace-1, GridSample-16, RoiAlign-10),
batch_dims, reductions with duplicate indices, negative and float indices, constant and
run-time K / depth, data-dependent output shapes, Einsum equations of every kind (the
GEMM path of ops/einsum.c and the plain loop), GridSample in 2-D and 3-D with every
mode and padding, RoiAlign in both coordinate modes, and NonMaxSuppression with both box
formats, several batches and classes.

Expected outputs come from independent implementations: numpy (np.einsum, np.cumsum,
sorting, fancy indexing), torch.nn.functional.grid_sample, torchvision.ops.roi_align
and torchvision.ops.nms. float16/bfloat16 cases use small integer or dyadic values so
the expected results are exact in those types.

Needs /usr/bin/python3 with onnx 1.12, numpy, torch and torchvision. Run from anywhere:
    /usr/bin/python3 tests/ops_index/gen_ops_index.py
The output is deterministic (fixed seeds); the folder is committed.
"""
import os
import shutil

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "node")
RNG = np.random.default_rng(20261201)


class BF16:
    """A float32 array stored as bfloat16 (values must be exact in bfloat16)."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=np.float32)
        bits = self.a.view(np.uint32)
        assert np.all((bits & 0xFFFF) == 0), "value not exact in bfloat16"
        self.shape = self.a.shape


def to_tensor(name, a):
    if isinstance(a, BF16):
        t = TensorProto()
        t.name, t.data_type = name, TensorProto.BFLOAT16
        t.dims.extend(a.shape)
        t.raw_data = (a.a.view(np.uint32) >> 16).astype(np.uint16).tobytes()
        return t
    return numpy_helper.from_array(np.asarray(a), name)


def elem_type(a):
    if isinstance(a, BF16):
        return TensorProto.BFLOAT16
    return helper.np_dtype_to_tensor_dtype(np.asarray(a).dtype) if hasattr(
        helper, "np_dtype_to_tensor_dtype") else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[
            np.asarray(a).dtype]


def case(name, nodes, inputs, outputs, opset=18, inits=(), dynamic=()):
    """inputs/outputs: lists of (name, array); `dynamic` names outputs whose shape is
    left unknown in the model (data-dependent); inits: (name, array) initializers."""
    vi_in = [helper.make_tensor_value_info(n, elem_type(a), list(a.shape)) for n, a in inputs]
    vi_out = [helper.make_tensor_value_info(n, elem_type(a), None if n in dynamic else
                                            list(a.shape)) for n, a in outputs]
    graph = helper.make_graph(nodes, name, vi_in, vi_out,
                              [to_tensor(n, a) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="infer tests/ops_index/gen_ops_index.py")
    model.ir_version = 8
    d = os.path.join(ROOT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(to_tensor(n, a).SerializeToString())


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def ints(shape, lo=-8, hi=8, dtype=np.float32):
    return RNG.integers(lo, hi, size=shape).astype(dtype)


# ---- TopK ----------------------------------------------------------------------------------

def topk_ref(x, k, axis, largest):
    """Best k along axis, ties to the lower index (spec); values and int64 indices."""
    xm = np.moveaxis(x, axis, -1)
    flat = xm.reshape(-1, xm.shape[-1])
    vals, idxs = [], []
    for row in flat:
        order = sorted(range(len(row)), key=lambda i: ((-row[i] if largest else row[i]), i))
        order = order[:k]
        idxs.append(order)
        vals.append(row[order])
    shape = xm.shape[:-1] + (k,)
    v = np.array(vals, dtype=x.dtype).reshape(shape)
    i = np.array(idxs, dtype=np.int64).reshape(shape)
    return np.moveaxis(v, -1, axis), np.moveaxis(i, -1, axis)


def topk_cases():
    for dt, tag in ((np.float32, "float"), (np.float16, "float16"), (np.float64, "double"),
                    (np.int32, "int32"), (np.int64, "int64"), (np.uint8, "uint8")):
        x = ints((3, 7, 4), 0 if dt == np.uint8 else -5, 6, dt)  # many ties
        for largest in (1, 0):
            v, i = topk_ref(x.astype(np.float64) if dt == np.uint8 else x, 3, 1, largest)
            case("test_topk_%s_%s" % (tag, "largest" if largest else "smallest"),
                 [node("TopK", ["x", "k"], ["values", "indices"], axis=1, largest=largest)],
                 [("x", x), ("k", np.array([3], np.int64))],
                 [("values", v.astype(dt)), ("indices", i)], opset=11)
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    v, i = topk_ref(x, 4, -1, 1)
    case("test_topk_k_constant", [node("TopK", ["x", "k"], ["values", "indices"])],
         [("x", x)], [("values", v), ("indices", i)], opset=11,
         inits=[("k", np.array([4], np.int64))])
    v, i = topk_ref(x, 9, 2, 1)
    case("test_topk_k_all", [node("TopK", ["x", "k"], ["values", "indices"])],
         [("x", x), ("k", np.array([9], np.int64))], [("values", v), ("indices", i)], opset=11)
    v, i = topk_ref(x, 2, 0, 1)
    case("test_topk_opset1", [node("TopK", ["x"], ["values", "indices"], axis=0, k=2)],
         [("x", x)], [("values", v), ("indices", i)], opset=1)
    v, i = topk_ref(x, 5, 2, 1)
    case("test_topk_opset10", [node("TopK", ["x", "k"], ["values", "indices"])],
         [("x", x), ("k", np.array([5], np.int64))], [("values", v), ("indices", i)], opset=10)
    xb = ints((4, 6), -4, 4)
    v, i = topk_ref(xb, 3, 1, 1)
    case("test_topk_bfloat16", [node("TopK", ["x", "k"], ["values", "indices"])],
         [("x", BF16(xb)), ("k", np.array([3], np.int64))],
         [("values", BF16(v)), ("indices", i)], opset=24)
    # NaN ranks above every number
    xn = np.array([[1.0, np.nan, 3.0, -np.inf, 2.0]], np.float32)
    case("test_topk_nan", [node("TopK", ["x", "k"], ["values", "indices"], axis=1)],
         [("x", xn), ("k", np.array([3], np.int64))],
         [("values", np.array([[np.nan, 3.0, 2.0]], np.float32)),
          ("indices", np.array([[1, 2, 4]], np.int64))], opset=11)


# ---- NonZero -------------------------------------------------------------------------------

def nonzero_cases():
    b = RNG.integers(0, 2, size=(3, 4, 2)).astype(bool)
    case("test_nonzero_bool_3d", [node("NonZero", ["x"], ["y"])], [("x", b)],
         [("y", np.array(np.nonzero(b), np.int64))], opset=13, dynamic=("y",))
    f = np.array([[0.0, -0.0, 1.5], [np.nan, 0.0, -2.0]], np.float32)
    case("test_nonzero_float_signed_zero_nan", [node("NonZero", ["x"], ["y"])], [("x", f)],
         [("y", np.array(np.nonzero(f), np.int64))], opset=13, dynamic=("y",))
    h = f.astype(np.float16)
    case("test_nonzero_float16", [node("NonZero", ["x"], ["y"])], [("x", h)],
         [("y", np.array(np.nonzero(h), np.int64))], opset=13, dynamic=("y",))
    i = ints((5,), -1, 2, np.int64)
    case("test_nonzero_int64_1d", [node("NonZero", ["x"], ["y"])], [("x", i)],
         [("y", np.array(np.nonzero(i), np.int64))], opset=13, dynamic=("y",))
    z = np.zeros((2, 3), np.int32)
    case("test_nonzero_all_zero", [node("NonZero", ["x"], ["y"])], [("x", z)],
         [("y", np.zeros((2, 0), np.int64))], opset=13, dynamic=("y",))


# ---- GatherND / ScatterND ------------------------------------------------------------------

def gather_nd_ref(data, idx, b):
    bshape = idx.shape[:b]
    out = []
    m = idx.shape[-1]
    for bi in np.ndindex(*bshape) if b else [()]:
        d = data[bi]
        ii = idx[bi].reshape(-1, m)
        out.append(np.stack([d[tuple(t)] for t in ii]))
    res = np.stack(out)
    return res.reshape(idx.shape[:-1] + data.shape[b + m:])


def gather_nd_cases():
    data = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    idx = np.array([[[0, -1], [2, 3]], [[-3, 0], [1, 1]]], np.int64)  # [2, 2, 2]
    case("test_gathernd_negative_indices", [node("GatherND", ["data", "indices"], ["y"])],
         [("data", data), ("indices", idx)], [("y", gather_nd_ref(data, idx, 0))], opset=13)
    idx3 = np.array([[1, 2, 3], [0, -1, -5], [2, 0, 4]], np.int64)
    case("test_gathernd_full_tuples", [node("GatherND", ["data", "indices"], ["y"])],
         [("data", data), ("indices", idx3)], [("y", gather_nd_ref(data, idx3, 0))], opset=13)
    data4 = ints((2, 3, 4, 2), -9, 9, np.int64)
    idxb = RNG.integers(0, 4, size=(2, 3, 5, 1)).astype(np.int64)
    case("test_gathernd_batch_dims_2_int64",
         [node("GatherND", ["data", "indices"], ["y"], batch_dims=2)],
         [("data", data4), ("indices", idxb)], [("y", gather_nd_ref(data4, idxb, 2))], opset=13)
    h = ints((2, 3, 4), -9, 9, np.float16)
    idx1 = np.array([[[1, 3]], [[2, 0]]], np.int64)  # [2, 1, 2] with batch_dims 1
    case("test_gathernd_batch_dims_1_float16",
         [node("GatherND", ["data", "indices"], ["y"], batch_dims=1)],
         [("data", h), ("indices", idx1)], [("y", gather_nd_ref(h, idx1, 1))], opset=13)
    bo = RNG.integers(0, 2, size=(4, 3)).astype(bool)
    idxbo = np.array([[3], [0], [3]], np.int64)
    case("test_gathernd_bool", [node("GatherND", ["data", "indices"], ["y"])],
         [("data", bo), ("indices", idxbo)], [("y", gather_nd_ref(bo, idxbo, 0))], opset=13)


def scatter_nd_ref(data, idx, upd, red):
    out = data.copy()
    m = idx.shape[-1]
    ii = idx.reshape(-1, m)
    uu = upd.reshape((ii.shape[0],) + data.shape[m:])
    f = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply,
         "max": np.maximum, "min": np.minimum}[red]
    for t, u in zip(ii, uu):
        out[tuple(t)] = f(out[tuple(t)], u)
    return out


def scatter_nd_cases():
    data = ints((4, 3, 2), -5, 5, np.float32)
    idx = np.array([[1], [-1], [1]], np.int64)  # duplicates
    upd = ints((3, 3, 2), -5, 5, np.float32)
    for red in ("add", "mul", "max", "min"):
        case("test_scatternd_duplicates_%s" % red,
             [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=red)],
             [("data", data), ("indices", idx), ("updates", upd)],
             [("y", scatter_nd_ref(data, idx, upd, red))], opset=18)
    di = ints((3, 4), -50, 50, np.int32)
    idx2 = np.array([[0, 1], [2, -1], [0, 1]], np.int64)
    ui = ints((3,), -50, 50, np.int32)
    case("test_scatternd_int32_add_elements",
         [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="add")],
         [("data", di), ("indices", idx2), ("updates", ui)],
         [("y", scatter_nd_ref(di, idx2, ui, "add"))], opset=16)
    dd = RNG.standard_normal((2, 5)).astype(np.float64)
    idx3 = np.array([[1, 4], [0, 0]], np.int64)
    ud = RNG.standard_normal((2,)).astype(np.float64)
    case("test_scatternd_double_opset11",
         [node("ScatterND", ["data", "indices", "updates"], ["y"])],
         [("data", dd), ("indices", idx3), ("updates", ud)],
         [("y", scatter_nd_ref(dd, idx3, ud, "none"))], opset=11)
    dh = ints((3, 4), -8, 8, np.float16)
    idx4 = np.array([[2], [0]], np.int64)
    uh = ints((2, 4), -8, 8, np.float16)
    case("test_scatternd_float16_mul",
         [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="mul")],
         [("data", dh), ("indices", idx4), ("updates", uh)],
         [("y", scatter_nd_ref(dh, idx4, uh, "mul"))], opset=18)
    db = ints((3, 4), -8, 8)
    ub = ints((2, 4), -8, 8)
    case("test_scatternd_bfloat16_max",
         [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="max")],
         [("data", BF16(db)), ("indices", idx4), ("updates", BF16(ub))],
         [("y", BF16(scatter_nd_ref(db, idx4, ub, "max")))], opset=18)


# ---- ScatterElements / Scatter ---------------------------------------------------------------

def scatter_elements_ref(data, idx, upd, axis, red):
    out = data.copy()
    f = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply,
         "max": np.maximum, "min": np.minimum}[red]
    axis = axis % data.ndim
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[axis] = idx[p] % data.shape[axis]
        q = tuple(q)
        out[q] = f(out[q], upd[p])
    return out


def scatter_elements_cases():
    data = ints((3, 4, 5), -5, 5, np.float32)
    for axis, ishape in ((0, (2, 4, 3)), (1, (3, 2, 5)), (-1, (3, 3, 4))):
        dim = data.shape[axis]
        dup = RNG.integers(-dim, dim, size=ishape).astype(np.int64)  # with duplicates
        # no duplicates along the axis, for reduction none (their order is undefined):
        # a random permutation of the axis per position of the other dims
        rest = tuple(np.delete(np.array(ishape), axis % 3))
        perm = np.argsort(RNG.random(rest + (dim,)), axis=-1)[..., :ishape[axis]]
        uniq = np.moveaxis(perm, -1, axis).astype(np.int64) - dim * RNG.integers(0, 2, ishape)
        upd = ints(ishape, -5, 5, np.float32)
        for red in ("none", "add", "max"):
            idx = uniq if red == "none" else dup
            case("test_scatter_elements_axis%d_%s" % (axis, red),
                 [node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=axis,
                       reduction=red)],
                 [("data", data), ("indices", idx), ("updates", upd)],
                 [("y", scatter_elements_ref(data, idx, upd, axis, red))], opset=18)
    di = ints((2, 6), -9, 9, np.int64)
    idx32 = np.array([[5, 0, -1], [1, 1, 1]], np.int32)
    ui = ints((2, 3), -9, 9, np.int64)
    case("test_scatter_elements_int64_mul_int32_indices",
         [node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1,
               reduction="mul")],
         [("data", di), ("indices", idx32), ("updates", ui)],
         [("y", scatter_elements_ref(di, idx32, ui, 1, "mul"))], opset=16)
    dh = ints((4, 3), -8, 8, np.float16)
    idxh = np.array([[3, 0, 1]], np.int64)
    uh = ints((1, 3), -8, 8, np.float16)
    case("test_scatter_elements_float16_min",
         [node("ScatterElements", ["data", "indices", "updates"], ["y"], reduction="min")],
         [("data", dh), ("indices", idxh), ("updates", uh)],
         [("y", scatter_elements_ref(dh, idxh, uh, 0, "min"))], opset=18)
    du = RNG.integers(0, 200, size=(3, 3)).astype(np.uint8)
    idxu = np.array([[2, 0, 1]], np.int64)
    uu = RNG.integers(0, 200, size=(1, 3)).astype(np.uint8)
    case("test_scatter_opset10_uint8",
         [node("Scatter", ["data", "indices", "updates"], ["y"], axis=0)],
         [("data", du), ("indices", idxu), ("updates", uu)],
         [("y", scatter_elements_ref(du, idxu, uu, 0, "none"))], opset=10)


# ---- OneHot --------------------------------------------------------------------------------

def onehot_ref(idx, depth, values, axis):
    idx = np.trunc(np.asarray(idx, np.float64))
    r = idx.ndim
    axis = axis % (r + 1)
    valid = (idx >= -depth) & (idx < depth)
    cls = np.where(idx < 0, idx + depth, idx)
    hot = (np.arange(depth).reshape((-1,) + (1,) * r) == cls[None]) & valid[None]
    hot = np.moveaxis(hot, 0, axis)
    return np.where(hot, values[1], values[0]).astype(values.dtype)


def onehot_cases():
    idx = np.array([[0, -1, 3], [7, -4, 2]], np.int64)  # 7, -4: outside depth 4 -> all off
    vals = np.array([-1, 5], np.int32)
    for axis in (0, 1, -1):
        case("test_onehot_int64_axis%d" % axis,
             [node("OneHot", ["indices", "depth", "values"], ["y"], axis=axis)],
             [("indices", idx), ("depth", np.array(4, np.int64)), ("values", vals)],
             [("y", onehot_ref(idx, 4, vals, axis))], opset=11)
    fidx = np.array([1.7, -0.5, -2.2, 2.9], np.float32)  # truncated: 1, 0, -2, 2
    hv = np.array([0.5, 2.0], np.float16)
    case("test_onehot_float_indices_float16_values",
         [node("OneHot", ["indices", "depth", "values"], ["y"])],
         [("indices", fidx), ("depth", np.array([3.0], np.float32)), ("values", hv)],
         [("y", onehot_ref(fidx, 3, hv, -1))], opset=11)
    i32 = np.array([2, 0, 1], np.int32)
    bv = np.array([False, True])
    case("test_onehot_depth_constant_bool_values",
         [node("OneHot", ["indices", "depth", "values"], ["y"], axis=0)],
         [("indices", i32), ("values", bv)], [("y", onehot_ref(i32, 5, bv, 0))], opset=9,
         inits=[("depth", np.array(5, np.int32))])


# ---- CumSum / CumProd ------------------------------------------------------------------------

def cum_ref(x, axis, exclusive, reverse, prod):
    f = np.cumprod if prod else np.cumsum
    y = np.flip(x, axis) if reverse else x
    c = f(y, axis=axis, dtype=x.dtype)
    if exclusive:
        first = np.ones_like(np.take(c, [0], axis)) if prod else np.zeros_like(
            np.take(c, [0], axis))
        c = np.concatenate([first, np.take(c, range(c.shape[axis] - 1), axis)], axis)
    return np.flip(c, axis) if reverse else c


def cum_cases():
    for prod, op, opset in ((False, "CumSum", 14), (True, "CumProd", 26)):
        lo, hi = (-3, 4) if prod else (-20, 20)
        for dt, tag in ((np.float32, "float"), (np.float16, "float16"), (np.int32, "int32"),
                        (np.int64, "int64"), (np.float64, "double")):
            x = ints((2, 4, 3), lo, hi, dt)
            for axis, ex, rev in ((1, 0, 0), (-1, 1, 0), (0, 1, 1), (1, 0, 1)):
                case("test_%s_%s_axis%d_ex%d_rev%d" % (op.lower(), tag, axis, ex, rev),
                     [node(op, ["x", "axis"], ["y"], exclusive=ex, reverse=rev)],
                     [("x", x), ("axis", np.array(axis, np.int32 if ex else np.int64))],
                     [("y", cum_ref(x, axis, ex, rev, prod))], opset=opset)
        xb = ints((3, 4), lo, hi)
        case("test_%s_bfloat16" % op.lower(), [node(op, ["x", "axis"], ["y"])],
             [("x", BF16(xb)), ("axis", np.array(1, np.int64))],
             [("y", BF16(cum_ref(xb, 1, 0, 0, prod)))], opset=opset)


# ---- DepthToSpace / SpaceToDepth ------------------------------------------------------------

def d2s_ref(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def s2d_ref(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def depth_cases():
    x = np.arange(2 * 18 * 2 * 3).reshape(2, 18, 2, 3)
    for mode in ("DCR", "CRD"):
        for dt, tag in ((np.float32, "float"), (np.uint8, "uint8"), (np.float16, "float16")):
            case("test_depthtospace_%s_b3_%s" % (mode.lower(), tag),
                 [node("DepthToSpace", ["x"], ["y"], blocksize=3, mode=mode)],
                 [("x", (x % 251).astype(dt))], [("y", d2s_ref((x % 251).astype(dt), 3, mode))],
                 opset=13)
    x8 = np.arange(1 * 8 * 3 * 2).reshape(1, 8, 3, 2).astype(np.int64)
    case("test_depthtospace_opset1_int64", [node("DepthToSpace", ["x"], ["y"], blocksize=2)],
         [("x", x8)], [("y", d2s_ref(x8, 2, "DCR"))], opset=1)
    xs = np.arange(2 * 3 * 6 * 9).reshape(2, 3, 6, 9)
    for dt, tag in ((np.float32, "float"), (np.int32, "int32"), (np.bool_, "bool")):
        v = (xs % 7 > 3) if dt == np.bool_ else xs.astype(dt)
        case("test_spacetodepth_b3_%s" % tag,
             [node("SpaceToDepth", ["x"], ["y"], blocksize=3)], [("x", v)],
             [("y", s2d_ref(v, 3))], opset=13)
    xr = RNG.standard_normal((1, 4, 4, 6)).astype(np.float64)
    case("test_spacetodepth_depthtospace_roundtrip",
         [node("SpaceToDepth", ["x"], ["t"], blocksize=2),
          node("DepthToSpace", ["t"], ["y"], blocksize=2, mode="DCR")],
         [("x", xr)], [("y", xr)], opset=13)


# ---- Einsum --------------------------------------------------------------------------------

EINSUM = [
    # name, equation, shapes
    ("matmul", "ij,jk->ik", [(5, 7), (7, 3)]),
    ("matmul_implicit", "ij,jk", [(4, 6), (6, 5)]),
    ("batch_matmul", "bij,bjk->bik", [(3, 4, 6), (3, 6, 2)]),
    ("attention_scores", "bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 4, 8)]),
    ("attention_values", "bhqk,bhkd->bqhd", [(2, 3, 5, 4), (2, 3, 4, 8)]),
    ("bilinear", "bn,anm,bm->ba", [(4, 5), (3, 5, 6), (4, 6)]),
    ("outer", "i,j->ij", [(5,), (4,)]),
    ("inner", "i,i->", [(9,), (9,)]),
    ("transpose_matmul", "ji,kj->ik", [(6, 4), (3, 6)]),
    ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ellipsis_implicit", "...ij,...jk", [(3, 4, 5), (3, 5, 2)]),
    ("ellipsis_middle", "a...c,c...->a...", [(2, 3, 4, 5), (5, 3, 4)]),
    ("diagonal", "ii->i", [(5, 5)]),
    ("trace", "ii", [(6, 6)]),
    ("diagonal_3d", "iji->ij", [(4, 3, 4)]),
    ("diag_times_matrix", "iij,jk->ik", [(3, 3, 4), (4, 5)]),
    ("sum_all", "ijk->", [(3, 4, 5)]),
    ("reduce_middle", "ijk->ik", [(3, 4, 5)]),
    ("permute", "abcd->dbca", [(2, 3, 4, 5)]),
    ("a_only_sum", "abc,cd->d", [(2, 3, 4), (4, 5)]),
    ("b_only_sum", "ij,jkl->il", [(3, 4), (4, 5, 2)]),
    ("three_operands", "ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("uppercase", "Ab,bC->CA", [(3, 4), (4, 2)]),
    ("broadcast_size1", "ij,jk->ik", [(3, 1), (4, 5)]),
    ("empty_sum", "ij,jk->ik", [(3, 0), (0, 4)]),
    ("spaces", " b i j , b j k -> b i k ", [(2, 3, 4), (2, 4, 5)]),
]


def einsum_cases():
    for name, eq, shapes in EINSUM:
        xs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
        if name == "broadcast_size1":  # numpy needs the size-1 dim broadcast by hand
            y = np.einsum(eq.replace(" ", ""), np.broadcast_to(xs[0], (3, 4)), xs[1])
        else:
            y = np.einsum(eq.replace(" ", ""), *[x.astype(np.float64) for x in xs])
        names = ["x%d" % i for i in range(len(xs))]
        case("test_einsum_%s" % name, [node("Einsum", names, ["y"], equation=eq)],
             list(zip(names, xs)), [("y", np.asarray(y, np.float32))], opset=12)
    # other dtypes, with exact (small integer) data
    for dt, tag in ((np.float16, "float16"), (np.float64, "double"), (np.int32, "int32"),
                    (np.int64, "int64")):
        for name, eq, shapes in (("matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
                                 ("diag_sum", "ii,ij->j", [(3, 3), (3, 4)])):
            xs = [ints(s, -4, 5, dt) for s in shapes]
            y = np.einsum(eq, *[x.astype(np.int64) for x in xs]).astype(dt)
            case("test_einsum_%s_%s" % (name, tag),
                 [node("Einsum", ["x0", "x1"], ["y"], equation=eq)],
                 [("x0", xs[0]), ("x1", xs[1])], [("y", y)], opset=12)
    xs = [ints(s, -4, 5) for s in ((2, 3, 4), (2, 4, 5))]
    case("test_einsum_matmul_bfloat16", [node("Einsum", ["x0", "x1"], ["y"],
                                               equation="bij,bjk->bik")],
         [("x0", BF16(xs[0])), ("x1", BF16(xs[1]))],
         [("y", BF16(np.einsum("bij,bjk->bik", *xs)))], opset=12)
    # a constant weight: the common export of Linear layers as Einsum
    w = RNG.standard_normal((6, 8)).astype(np.float32)
    x = RNG.standard_normal((2, 5, 8)).astype(np.float32)
    case("test_einsum_weight_initializer", [node("Einsum", ["x", "w"], ["y"],
                                                  equation="bsd,hd->bsh")],
         [("x", x)], [("y", np.einsum("bsd,hd->bsh", x, w))], opset=12, inits=[("w", w)])


# ---- GridSample ------------------------------------------------------------------------------

def grid_sample_cases():
    x2 = torch.from_numpy(RNG.standard_normal((2, 3, 5, 6)).astype(np.float32))
    g2 = torch.from_numpy(RNG.uniform(-1.3, 1.3, size=(2, 4, 7, 2)).astype(np.float32))
    # Cubic with border padding: ONNX (its reference implementation, and ONNX Runtime)
    # first clamps a point outside the border onto it, PyTorch clamps each tap instead
    # (onnxruntime issue 10607); they agree for points inside [-1, 1], which this case
    # keeps to.
    g2_inside = torch.clamp(g2, -1, 1)
    for mode, tmode in (("linear", "bilinear"), ("nearest", "nearest"), ("cubic", "bicubic")):
        for pad in ("zeros", "border", "reflection"):
            g = g2_inside if (mode, pad) == ("cubic", "border") else g2
            for ac in (0, 1):
                y = torch.nn.functional.grid_sample(x2, g, mode=tmode, padding_mode=pad,
                                                    align_corners=bool(ac))
                case("test_gridsample_2d_%s_%s_ac%d" % (mode, pad, ac),
                     [node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=pad,
                           align_corners=ac)],
                     [("X", x2.numpy()), ("grid", g.numpy())], [("Y", y.numpy())], opset=20)
    x3 = torch.from_numpy(RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32))
    g3 = torch.from_numpy(RNG.uniform(-1.2, 1.2, size=(1, 2, 3, 4, 3)).astype(np.float32))
    for mode, tmode in (("linear", "bilinear"), ("nearest", "nearest")):
        for pad in ("zeros", "border", "reflection"):
            for ac in (0, 1):
                y = torch.nn.functional.grid_sample(x3, g3, mode=tmode, padding_mode=pad,
                                                    align_corners=bool(ac))
                case("test_gridsample_3d_%s_%s_ac%d" % (mode, pad, ac),
                     [node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=pad,
                           align_corners=ac)],
                     [("X", x3.numpy()), ("grid", g3.numpy())], [("Y", y.numpy())], opset=20)
    # opset 16 spells the modes bilinear / bicubic
    for tmode, g in (("bilinear", g2), ("bicubic", g2_inside)):
        y = torch.nn.functional.grid_sample(x2, g, mode=tmode, padding_mode="border",
                                            align_corners=False)
        case("test_gridsample_opset16_%s" % tmode,
             [node("GridSample", ["X", "grid"], ["Y"], mode=tmode, padding_mode="border")],
             [("X", x2.numpy()), ("grid", g.numpy())], [("Y", y.numpy())], opset=16)
    xd, gd = x2.double(), g2.double()
    y = torch.nn.functional.grid_sample(xd, gd, mode="bicubic", padding_mode="reflection",
                                        align_corners=True)
    case("test_gridsample_double_cubic", [node("GridSample", ["X", "grid"], ["Y"], mode="cubic",
                                                padding_mode="reflection", align_corners=1)],
         [("X", xd.numpy()), ("grid", gd.numpy())], [("Y", y.numpy())], opset=20)
    # float16 X with a float32 grid landing on pixel centres (exact results)
    xh = ints((1, 2, 4, 4), -8, 8, np.float16)
    gx = (np.array([0, 1, 3, 2]) * 2 + 1) / 4.0 - 1  # centres of columns 0, 1, 3, 2
    gy = (np.array([2, 0, 1]) * 2 + 1) / 4.0 - 1
    gh = np.stack(np.broadcast_arrays(gx[None, :], gy[:, None]), -1)[None].astype(np.float32)
    yh = xh[:, :, [2, 0, 1], :][:, :, :, [0, 1, 3, 2]]
    case("test_gridsample_float16_pixel_centres",
         [node("GridSample", ["X", "grid"], ["Y"], mode="linear")],
         [("X", xh), ("grid", gh)], [("Y", yh)], opset=20)


# ---- RoiAlign --------------------------------------------------------------------------------

def roi_align_cases():
    x = torch.from_numpy(RNG.standard_normal((2, 3, 12, 10)).astype(np.float32))
    boxes = np.array([[0.5, 1.0, 7.3, 9.8], [2.0, 2.0, 2.4, 2.6], [-3.0, 4.0, 12.5, 14.0],
                      [4.1, 0.2, 9.0, 5.5]], np.float32)
    bi = np.array([0, 1, 1, 0], np.int64)
    rois = torch.from_numpy(np.concatenate([bi[:, None].astype(np.float32), boxes], 1))
    for aligned, ctm in ((True, "half_pixel"), (False, "output_half_pixel")):
        for sr, scale, (oh, ow) in ((2, 1.0, (3, 4)), (0, 0.5, (2, 2)), (1, 2.0, (5, 3))):
            y = torchvision.ops.roi_align(x, rois, (oh, ow), spatial_scale=scale,
                                          sampling_ratio=sr, aligned=aligned)
            case("test_roialign_%s_sr%d_scale%g" % (ctm, sr, scale),
                 [node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"],
                       coordinate_transformation_mode=ctm, output_height=oh, output_width=ow,
                       sampling_ratio=sr, spatial_scale=scale)],
                 [("X", x.numpy()), ("rois", boxes), ("batch_indices", bi)],
                 [("Y", y.numpy())], opset=16)
    y = torchvision.ops.roi_align(x, rois, (2, 3), spatial_scale=1.0, sampling_ratio=2,
                                  aligned=False)
    case("test_roialign_opset10", [node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"],
                                        output_height=2, output_width=3, sampling_ratio=2)],
         [("X", x.numpy()), ("rois", boxes), ("batch_indices", bi)], [("Y", y.numpy())],
         opset=10)
    xd, rd = x.double(), rois.double()
    y = torchvision.ops.roi_align(xd, rd, (3, 3), spatial_scale=1.0, sampling_ratio=0,
                                  aligned=True)
    case("test_roialign_double", [node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"],
                                       output_height=3, output_width=3)],
         [("X", xd.numpy()), ("rois", boxes.astype(np.float64)), ("batch_indices", bi)],
         [("Y", y.numpy())], opset=16)


# ---- NonMaxSuppression -------------------------------------------------------------------------

def nms_ref(boxes, scores, max_out, iou, score_thr, center):
    """torchvision.ops.nms per batch and class on the boxes above the score threshold."""
    sel = []
    for b in range(boxes.shape[0]):
        bx = boxes[b].astype(np.float32)
        if center:
            xy = np.stack([bx[:, 0] - bx[:, 2] / 2, bx[:, 1] - bx[:, 3] / 2,
                           bx[:, 0] + bx[:, 2] / 2, bx[:, 1] + bx[:, 3] / 2], 1)
        else:  # [y1, x1, y2, x2], any two opposite corners
            xy = np.stack([np.minimum(bx[:, 1], bx[:, 3]), np.minimum(bx[:, 0], bx[:, 2]),
                           np.maximum(bx[:, 1], bx[:, 3]), np.maximum(bx[:, 0], bx[:, 2])], 1)
        for c in range(scores.shape[1]):
            s = scores[b, c]
            cand = np.nonzero(s > score_thr)[0] if score_thr is not None else np.arange(len(s))
            if len(cand) == 0 or max_out == 0:
                continue
            keep = torchvision.ops.nms(torch.from_numpy(xy[cand]), torch.from_numpy(s[cand]),
                                       iou)
            for k in cand[keep.numpy()][:max_out]:
                sel.append((b, c, k))
    return np.array(sel, np.int64).reshape(-1, 3)


def nms_cases():
    B, C, N = 2, 3, 40
    centers = RNG.uniform(0, 10, size=(B, N, 2))
    sizes = RNG.uniform(0.5, 4, size=(B, N, 2))
    scores = RNG.random((B, C, N)).astype(np.float32)  # distinct: no ties
    yx0 = centers - sizes / 2
    yx1 = centers + sizes / 2
    corners = np.concatenate([yx0, yx1], -1).astype(np.float32)  # [y1, x1, y2, x2]
    flip = RNG.random((B, N)) < 0.5  # half the boxes give the other two corners
    corners[flip] = corners[flip][:, [2, 3, 0, 1]]
    center = np.concatenate([centers[..., ::-1], sizes[..., ::-1]], -1).astype(np.float32)
    for name, bx, cpb in (("corners", corners, 0), ("center", center, 1)):
        for max_out, iou, thr in ((5, 0.3, 0.2), (100, 0.5, None), (3, 0.0, 0.6)):
            ins = [("boxes", bx), ("scores", scores),
                   ("max_output_boxes_per_class", np.array([max_out], np.int64)),
                   ("iou_threshold", np.array([iou], np.float32))]
            if thr is not None:
                ins.append(("score_threshold", np.array([thr], np.float32)))
            case("test_nms_%s_max%d_iou%g_thr%s" % (name, max_out, iou, thr),
                 [node("NonMaxSuppression", [n for n, _ in ins], ["selected"],
                       center_point_box=cpb)],
                 ins, [("selected", nms_ref(bx, scores, max_out, iou, thr, cpb))],
                 opset=11, dynamic=("selected",))
    # constant limits: the shape is known once boxes and scores are
    case("test_nms_constant_limits",
         [node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "thr"], ["selected"])],
         [("boxes", corners), ("scores", scores)],
         [("selected", nms_ref(corners, scores, 4, 0.4, 0.1, 0))], opset=11,
         inits=[("m", np.array([4], np.int64)), ("iou", np.array([0.4], np.float32)),
                ("thr", np.array([0.1], np.float32))], dynamic=("selected",))
    # no max_output_boxes_per_class: nothing is selected
    case("test_nms_no_max_output", [node("NonMaxSuppression", ["boxes", "scores"],
                                         ["selected"])],
         [("boxes", corners), ("scores", scores)], [("selected", np.zeros((0, 3), np.int64))],
         opset=10, dynamic=("selected",))


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    for gen in (topk_cases, nonzero_cases, gather_nd_cases, scatter_nd_cases,
                scatter_elements_cases, onehot_cases, cum_cases, depth_cases, einsum_cases,
                grid_sample_cases, roi_align_cases, nms_cases):
        gen()
    print("wrote", len(os.listdir(ROOT)), "tests into", ROOT)


if __name__ == "__main__":
    main()
