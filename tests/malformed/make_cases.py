#!/usr/bin/env python3
"""Writes the malformed-input cases of `infer` into tests/malformed/cases/.

Every file is small and deterministic (fixed seeds), so the folder is committed and this
script only has to be re-run when a case is added or changed. Each case is one line of
tests/malformed/cases.txt, read by tests/run_malformed.sh.

Needs /usr/bin/python3 with onnx (1.12) and numpy. Run from anywhere:
    /usr/bin/python3 tests/malformed/make_cases.py

The cases that need the file system at test time (models truncated at many offsets,
external data reached through a symbolic link) are made by run_malformed.sh itself,
in a temporary folder, from models/sample.onnx and cases/ext_ok.onnx.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
OPSET = 13

FLOAT = TensorProto.FLOAT


def write(name, data):
    with open(os.path.join(CASES, name), "wb") as f:
        f.write(data)


def save(name, model):
    write(name, model.SerializeToString())


def model_of(graph, opset=OPSET):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="infer tests/malformed/make_cases.py")
    m.ir_version = 8
    return m


def vi(name, dims, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


W = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5


def w_init(name="W"):
    return numpy_helper.from_array(W, name)


def add_graph(nodes=None, inits=None, inputs=None, outputs=None, name="tiny"):
    """Y = X + W with X, W, Y float [2, 3]; every part can be replaced."""
    if nodes is None:
        nodes = [helper.make_node("Add", ["X", "W"], ["Y"], name="add0")]
    if inits is None:
        inits = [w_init()]
    if inputs is None:
        inputs = [vi("X", [2, 3])]
    if outputs is None:
        outputs = [vi("Y", [2, 3])]
    return helper.make_graph(nodes, name, inputs, outputs, inits)


def raw_tensor(name, dims, data_type=FLOAT, raw=None, location=None):
    """A TensorProto built field by field, so it can say things make_tensor refuses."""
    t = TensorProto()
    t.name = name
    t.dims.extend(dims)
    if data_type is not None:
        t.data_type = data_type
    if raw is not None:
        t.raw_data = raw
    if location is not None:
        t.data_location = TensorProto.EXTERNAL
        for k, v in location:
            e = t.external_data.add()
            e.key, e.value = k, v
    return t


def npy_bytes(arr):
    import io
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def npy_with_header(dict_text, data=b"", version=(1, 0), header_len=None):
    """A .npy whose header says dict_text (padded like numpy), for shapes numpy cannot make."""
    text = dict_text.encode()
    prefix = 10 if version[0] == 1 else 12
    pad = 64 - (prefix + len(text) + 1) % 64
    hdr = text + b" " * pad + b"\n"
    n = len(hdr) if header_len is None else header_len
    size = n.to_bytes(2 if version[0] == 1 else 4, "little")
    return b"\x93NUMPY" + bytes(version) + size + hdr + data


def main():
    if os.path.isdir(CASES):
        shutil.rmtree(CASES)
    os.makedirs(CASES)
    rng = np.random.default_rng(20261201)

    # ---- valid baseline model, input, references -------------------------------------
    save("good.onnx", model_of(add_graph()))
    onnx.checker.check_model(model_of(add_graph()))
    x = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 3
    write("good_input.npy", npy_bytes(x))
    write("good_input.pb", numpy_helper.from_array(x, "X").SerializeToString())
    write("good_ref.npy", npy_bytes(x + W))
    write("wrong_ref.npy", npy_bytes(x + W + 1))
    write("wrong_ref_shape.npy", npy_bytes((x + W).reshape(3, 2)))
    # symbolic batch dim, for --batch / unbound-dim cases
    save("symbolic.onnx", model_of(add_graph(
        inits=[numpy_helper.from_array(W[:1], "W")],
        inputs=[vi("X", ["batch", 3])], outputs=[vi("Y", ["batch", 3])])))

    # ---- not a model at all -----------------------------------------------------------
    write("empty.onnx", b"")
    for i, n in enumerate([16, 200, 1500, 6000]):
        write("random_%d.onnx" % i, rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    write("text.onnx", b"this is not an ONNX model, only text\n" * 4)

    # ---- model-level structure --------------------------------------------------------
    m = model_of(add_graph())
    m.ClearField("graph")
    save("no_graph.onnx", m)
    m = model_of(add_graph())
    del m.opset_import[:]
    save("no_opset.onnx", m)
    m = model_of(add_graph())
    m.opset_import.add().domain = "com.example"  # no version
    save("opset_no_version.onnx", m)
    m = model_of(add_graph())
    m.opset_import.add().CopyFrom(helper.make_opsetid("", 13))
    save("opset_twice.onnx", m)
    save("no_outputs.onnx", model_of(add_graph(outputs=[])))

    # ---- dims and data ----------------------------------------------------------------
    save("init_neg_dim.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [-1, 3], raw=b"")])))
    save("input_neg_dim.onnx", model_of(add_graph(inputs=[vi("X", [2, -3])])))
    big = 1 << 32
    save("init_dims_overflow.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [big, big, big], raw=b"\0" * 24)])))
    save("input_dims_overflow.onnx", model_of(add_graph(
        inputs=[vi("X", [1 << 40, 1 << 40])])))
    # 2^50 floats = 4 PiB: the count fits int64, but no data is there to back it
    save("init_huge_no_data.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [1 << 20, 1 << 20, 1 << 10])])))
    save("init_huge_typed.onnx", model_of(add_graph(inits=[_typed_huge()])))
    save("raw_data_short.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [2, 3], raw=W.tobytes()[:20])])))
    save("raw_data_long.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [2, 3], raw=W.tobytes() + b"\0\0\0\0")])))
    t = raw_tensor("W", [2, 3])
    t.float_data.extend([1, 2, 3, 4, 5])
    save("typed_data_count.onnx", model_of(add_graph(inits=[t])))
    save("init_undefined_dtype.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [2, 3], data_type=None, raw=W.tobytes())])))
    save("input_undefined_dtype.onnx", model_of(add_graph(
        inputs=[vi("X", [2, 3], elem=TensorProto.UNDEFINED)])))
    save("init_bad_dtype_number.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [2, 3], data_type=99, raw=W.tobytes())])))
    save("init_rank9.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [1] * 9, raw=b"\0" * 4)])))
    save("init_twice.onnx", model_of(add_graph(inits=[w_init(), w_init()])))
    save("init_no_name.onnx", model_of(add_graph(inits=[w_init(), w_init("")])))

    # ---- graph structure --------------------------------------------------------------
    save("node_input_undefined.onnx", model_of(add_graph(
        nodes=[helper.make_node("Add", ["X", "nowhere"], ["Y"], name="add0")])))
    save("cyc2.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "b"], ["a"], name="first"),
        helper.make_node("Add", ["a", "W"], ["b"], name="second"),
        helper.make_node("Add", ["a", "W"], ["Y"], name="third")])))
    save("cyc1.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "a"], ["a"], name="loop"),
        helper.make_node("Add", ["a", "W"], ["Y"], name="last")])))
    save("two_writers.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["Y"], name="writer1"),
        helper.make_node("Sub", ["X", "W"], ["Y"], name="writer2")])))
    save("output_listed_twice.onnx", model_of(add_graph(outputs=[vi("Y", [2, 3]),
                                                                   vi("Y", [2, 3])])))
    save("node_writes_input.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["Y"], name="add0"),
        helper.make_node("Sub", ["Y", "W"], ["X"], name="overwrites_x")])))
    save("node_writes_initializer.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["Y"], name="add0"),
        helper.make_node("Sub", ["Y", "X"], ["W"], name="overwrites_w")])))
    save("output_undefined.onnx", model_of(add_graph(outputs=[vi("Y", [2, 3]),
                                                               vi("Z", [2, 3])])))
    save("input_listed_twice.onnx", model_of(add_graph(inputs=[vi("X", [2, 3]),
                                                                vi("X", [2, 3])])))
    save("node_no_op_type.onnx", model_of(add_graph(
        nodes=[helper.make_node("", ["X", "W"], ["Y"], name="blank")])))
    save("domain_not_imported.onnx", model_of(add_graph(
        nodes=[helper.make_node("Add", ["X", "W"], ["Y"], name="add0",
                                domain="com.example")])))
    n = helper.make_node("Add", ["X", "W"], ["Y"], name="add0")
    n.attribute.extend([helper.make_attribute("foo", 1), helper.make_attribute("foo", 2)])
    save("attr_twice.onnx", model_of(add_graph(nodes=[n])))
    m = model_of(add_graph())
    vt = m.graph.input[0].type
    vt.ClearField("tensor_type")
    vt.sequence_type.elem_type.tensor_type.elem_type = FLOAT
    save("input_sequence_type.onnx", m)

    # ---- external data ----------------------------------------------------------------
    def ext_model(location_pairs, dims=(2, 3)):
        return model_of(add_graph(inits=[raw_tensor("W", list(dims), location=location_pairs)]))

    write("ext_ok.bin", W.tobytes())
    save("ext_ok.onnx", ext_model([("location", "ext_ok.bin")]))
    os.makedirs(os.path.join(CASES, "sub"))
    write("sub/w.bin", W.tobytes())
    save("ext_subdir.onnx", ext_model([("location", "sub/w.bin")]))
    save("ext_dotdot.onnx", ext_model([("location", "../x.bin")]))
    save("ext_dotdot_inner.onnx", ext_model([("location", "sub/../../x.bin")]))
    save("ext_absolute.onnx", ext_model([("location", "/etc/passwd")]))
    write("ext_short.bin", W.tobytes()[:8])
    save("ext_past_end.onnx", ext_model([("location", "ext_short.bin")]))
    save("ext_offset_past_end.onnx", ext_model([("location", "ext_ok.bin"), ("offset", "16")]))
    save("ext_length_mismatch.onnx", ext_model([("location", "ext_ok.bin"), ("length", "12")]))
    save("ext_bad_offset.onnx", ext_model([("location", "ext_ok.bin"), ("offset", "-4")]))
    save("ext_missing_file.onnx", ext_model([("location", "nothere.bin")]))
    save("ext_no_location.onnx", ext_model([("offset", "0")]))
    save("ext_directory.onnx", ext_model([("location", "sub")]))
    save("ext_huge.onnx", ext_model([("location", "ext_ok.bin")], dims=(1 << 20, 1 << 20, 1 << 10)))

    # ---- unsupported op / attribute / dtype (exit 3) ----------------------------------
    save("unsupported_op.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["a"], name="add0"),
        helper.make_node("FrobnicateTensor", ["a"], ["Y"], name="mystery")])))
    # nodes listed in a valid topological order that a queue-based sort reorders:
    # the message must still give the node's index in the model (1)
    save("unsupported_op_reorder.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["a"], name="add0"),
        helper.make_node("FrobnicateTensor", ["a"], ["Y"], name="mystery"),
        helper.make_node("Sub", ["X", "W"], ["Z"], name="sub2")],
        outputs=[vi("Y", [2, 3]), vi("Z", [2, 3])])))
    m = model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["a"], name="add0"),
        helper.make_node("Fancy", ["a"], ["Y"], name="custom", domain="com.example")]))
    m.opset_import.add().CopyFrom(helper.make_opsetid("com.example", 1))
    save("unsupported_domain_op.onnx", m)
    # several unsupported ops: one message must list every one, with its first node and
    # how many nodes use it
    m = model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["a"], name="add0"),
        helper.make_node("FrobnicateTensor", ["a"], ["b"], name="frob_first"),
        helper.make_node("BlurTensor", ["b"], ["c"], name="blur"),
        helper.make_node("FrobnicateTensor", ["c"], ["d"], name="frob_second"),
        helper.make_node("Fancy", ["d"], ["Y"], name="custom", domain="com.example")]))
    m.opset_import.add().CopyFrom(helper.make_opsetid("com.example", 1))
    save("unsupported_several_ops.onnx", m)
    # more unsupported ops than one message can name: the rest are counted
    chain = [helper.make_node("Add", ["X", "W"], ["t0"], name="add0")]
    for i in range(60):
        chain.append(helper.make_node("UnknownOperatorNumber%02d" % i, ["t%d" % i],
                                      ["t%d" % (i + 1) if i < 59 else "Y"], name="u%02d" % i))
    save("unsupported_many_ops.onnx", model_of(add_graph(nodes=chain)))
    # Add did not exist before opset 1, and opset 1's Add has legacy attributes:
    # use a version the registry cannot hold (far in the future)
    save("unsupported_opset.onnx", model_of(add_graph(), opset=999))
    save("unsupported_attr.onnx", model_of(add_graph(nodes=[
        helper.make_node("Add", ["X", "W"], ["Y"], name="add0", frobnication_level=3)])))
    st = TensorProto()
    st.name, st.data_type = "W", TensorProto.STRING
    st.dims.extend([2])
    st.string_data.extend([b"a", b"b"])
    save("init_str.onnx", model_of(add_graph(inits=[st])))
    save("init_c64.onnx", model_of(add_graph(
        inits=[raw_tensor("W", [2, 3], data_type=TensorProto.COMPLEX64, raw=b"\0" * 48)])))
    save("input_c64.onnx", model_of(add_graph(
        inputs=[vi("X", [2, 3], elem=TensorProto.COMPLEX64)])))

    # ---- input files ------------------------------------------------------------------
    good = npy_bytes(x)
    write("bad_magic.npy", b"\x93NUMPZ" + good[6:])
    write("bad_magic_text.npy", b"PK\x03\x04 this is a zip, not npy")
    write("bad_version.npy", good[:6] + b"\x07\x00" + good[8:])
    write("absurd_header_len.npy", npy_with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", x.tobytes(),
        version=(2, 0), header_len=0xFFFFFFF0))
    write("shape_overflow.npy", npy_with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"))
    write("shape_int64_overflow.npy", npy_with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"))
    write("short_data.npy", good[:-5])
    write("long_data.npy", good + b"\0\0\0\0")
    write("bad_header_dict.npy", npy_with_header("{'descr': '<f4', 'shape': (2, 3), }",
                                                 x.tobytes()))
    write("neg_shape.npy", npy_with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", x.tobytes()))
    write("cplx_in.npy", npy_bytes(x.astype(np.complex64)))
    write("f_order.npy", npy_with_header(
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", x.tobytes()))
    write("wrong_shape.npy", npy_bytes(x.reshape(3, 2)))
    write("wrong_rank.npy", npy_bytes(x.reshape(6)))
    write("wrong_dtype.npy", npy_bytes(x.astype(np.float64)))
    write("wrong_dtype_int.npy", npy_bytes(np.arange(6, dtype=np.int64).reshape(2, 3)))
    write("input_truncated.pb", numpy_helper.from_array(x, "X").SerializeToString()[:-7])
    write("input_random.pb", rng.integers(0, 256, 300, dtype=np.uint8).tobytes())
    t = raw_tensor("X", [2, 3], data_type=None, raw=x.tobytes())
    write("input_undefined_dtype.pb", t.SerializeToString())
    write("input_raw_short.pb", raw_tensor("X", [2, 3], raw=x.tobytes()[:12]).SerializeToString())
    write("input_external.pb", raw_tensor("X", [2, 3], location=[("location", "ext_ok.bin")])
          .SerializeToString())
    write("empty.npy", b"")

    # ---- index values outside their range (exit 2 at run time, naming the op) ----------
    I64 = TensorProto.INT64
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    # inputs first: initializers follow the graph inputs in each node's input list
    save("gathernd.onnx", model_of(helper.make_graph(
        [helper.make_node("GatherND", ["data", "indices"], ["Y"], name="gnd")], "gnd",
        [vi("indices", [2, 2], I64)], [vi("Y", [2])], [numpy_helper.from_array(data, "data")]),
        opset=18))
    write("gathernd_ok.npy", npy_bytes(np.array([[0, 1], [-1, 3]], np.int64)))
    write("gathernd_bad.npy", npy_bytes(np.array([[0, 1], [3, 0]], np.int64)))
    save("scatternd.onnx", model_of(helper.make_graph(
        [helper.make_node("ScatterND", ["data", "indices", "upd"], ["Y"], name="snd")], "snd",
        [vi("indices", [1, 1], I64)], [vi("Y", [3, 4])],
        [numpy_helper.from_array(data, "data"),
         numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")]), opset=18))
    write("scatternd_bad.npy", npy_bytes(np.array([[-4]], np.int64)))
    save("scatter_elements.onnx", model_of(helper.make_graph(
        [helper.make_node("ScatterElements", ["data", "indices", "upd"], ["Y"], name="sel",
                          axis=1)], "sel",
        [vi("indices", [2, 2], I64)], [vi("Y", [3, 4])],
        [numpy_helper.from_array(data, "data"),
         numpy_helper.from_array(np.ones((2, 2), np.float32), "upd")]), opset=18))
    write("scatter_elements_bad.npy", npy_bytes(np.array([[0, 1], [2, 7]], np.int64)))
    save("roialign.onnx", model_of(helper.make_graph(
        [helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], name="roi")], "roi",
        [vi("batch_indices", [1], I64)], [vi("Y", [1, 1, 1, 1])],
        [numpy_helper.from_array(np.ones((1, 1, 4, 4), np.float32), "X"),
         numpy_helper.from_array(np.array([[0, 0, 2, 2]], np.float32), "rois")]), opset=16))
    write("roialign_bad.npy", npy_bytes(np.array([2], np.int64)))
    save("topk.onnx", model_of(helper.make_graph(
        [helper.make_node("TopK", ["X", "K"], ["Y", "I"], name="topk")], "topk",
        [vi("K", [1], I64)], [vi("Y", None), vi("I", None, I64)],
        [numpy_helper.from_array(data, "X")]), opset=18))
    write("topk_bad.npy", npy_bytes(np.array([9], np.int64)))
    save("cumsum.onnx", model_of(helper.make_graph(
        [helper.make_node("CumSum", ["X", "axis"], ["Y"], name="cum")], "cum",
        [vi("axis", [], I64)], [vi("Y", [3, 4])], [numpy_helper.from_array(data, "X")]),
        opset=14))
    write("cumsum_bad.npy", npy_bytes(np.array(2, np.int64)))
    save("einsum_bad_equation.onnx", model_of(add_graph(nodes=[
        helper.make_node("Einsum", ["X", "W"], ["Y"], name="ein", equation="ij,ij->iz")])))

    # ---- hostile: a few bytes that ask for gigabytes (issue 15) ----
    # Tile of a 1-element input by 3e9: shape inference makes a 12 GB output, which the
    # per-tensor element cap refuses before the arena is planned or allocated
    rep = lambda n: numpy_helper.from_array(np.array([n], np.int64), "R")
    save("tile_huge.onnx", model_of(helper.make_graph(
        [helper.make_node("Tile", ["X", "R"], ["Y"], name="tile")], "tile",
        [vi("X", [1])], [vi("Y", None)], [rep(3000000000)])))
    # the same with a constant X: folding it would allocate 12 GB; refused the same way
    save("tile_huge_folded.onnx", model_of(helper.make_graph(
        [helper.make_node("Tile", ["C", "R"], ["Y"], name="tile")], "tile",
        [], [vi("Y", None)],
        [rep(3000000000), numpy_helper.from_array(np.ones([1], np.float32), "C")])))
    # under the cap (2.5e8 elements, 1 GB of arena): fine without a limit, refused by
    # --max-memory before the context allocates it
    save("tile_1gb.onnx", model_of(helper.make_graph(
        [helper.make_node("Tile", ["X", "R"], ["Y"], name="tile")], "tile",
        [vi("X", [1])], [vi("Y", None)], [rep(250000000)])))
    save("tile_1gb_folded.onnx", model_of(helper.make_graph(
        [helper.make_node("Tile", ["C", "R"], ["Y"], name="tile")], "tile",
        [], [vi("Y", None)],
        [rep(250000000), numpy_helper.from_array(np.ones([1], np.float32), "C")])))
    # a graph without nodes: its output is its input (graph_sort's NULL memcpy)
    save("no_nodes.onnx", model_of(helper.make_graph([], "empty", [vi("X", [2, 3])],
                                                     [vi("X", [2, 3])])))
    # control flow (ops/control.c): subgraphs nested too deep, a Loop that never ends,
    # a condition of the wrong type at run time, an unsupported op inside a branch
    def nested_ifs(levels):
        leaf = helper.make_graph([helper.make_node("Identity", ["X"], ["r"])], "leaf", [],
                                 [vi("r", [2, 3])])
        g = leaf
        for _ in range(levels - 1):  # nested through then_branch only: linear in size
            g = helper.make_graph([helper.make_node("If", ["C"], ["r"], then_branch=g,
                                                    else_branch=leaf)], "level", [],
                                  [vi("r", [2, 3])])
        return g
    deep = nested_ifs(70)
    save("if_too_deep.onnx", model_of(helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], name="if0", then_branch=deep,
                          else_branch=nested_ifs(1))],
        "deep", [vi("C", [], TensorProto.BOOL), vi("X", [2, 3])], [vi("Y", [2, 3])])))
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"])], "body",
                             [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL)],
                             [vi("c_out", [], TensorProto.BOOL)])
    save("loop_never_ends.onnx", model_of(add_graph(nodes=[
        helper.make_node("Loop", ["", ""], [], name="loop0", body=body),
        helper.make_node("Add", ["X", "W"], ["Y"], name="add0")])))
    leaf = helper.make_graph([helper.make_node("Identity", ["X"], ["r"])], "leaf", [],
                             [vi("r", [2, 3])])
    save("if_float_cond.onnx", model_of(helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], name="if0", then_branch=leaf, else_branch=leaf)],
        "ifc", [vi("C", [1]), vi("X", [2, 3])], [vi("Y", [2, 3])])))
    write("if_float_cond_c.npy", npy_bytes(np.ones(1, np.float32)))
    write("if_float_cond_x.npy", npy_bytes(np.ones((2, 3), np.float32)))
    odd = helper.make_graph([helper.make_node("Frobnicate", ["X"], ["r"])], "odd", [],
                            [vi("r", [2, 3])])
    save("if_branch_unknown_op.onnx", model_of(helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], name="if0", then_branch=odd, else_branch=leaf)],
        "ifo", [vi("C", [], TensorProto.BOOL), vi("X", [2, 3])], [vi("Y", [2, 3])])))

    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(CASES) for f in fs)
    print("wrote %d files, %d bytes, into %s" % (
        sum(len(fs) for _, _, fs in os.walk(CASES)), total, CASES))


def _typed_huge():
    """An initializer whose float_data holds 2 values while its dims claim 2^50."""
    t = raw_tensor("W", [1 << 20, 1 << 20, 1 << 10])
    t.float_data.extend([1.0, 2.0])
    return t


if __name__ == "__main__":
    main()
