#!/usr/bin/env python3
"""Builds the tiny models of tests/test_failures.c: graphs whose run fails for some
input values only, so the test can check that a failed run returns a status, leaves
no readable outputs, and that the context keeps working for valid inputs.

  gather_oob.onnx       out = Gather(table[5x3], indices[2], axis 0) * 2; an index
                        outside [-5, 5) fails the run.
  reshape_runtime.onnx  y = Reshape(x[6], shape[2]) with the shape a graph input, so
                        the output shape is known only during the run; a shape
                        whose product is not 6 fails the run.

Needs python3-onnx and python3-numpy. Run from anywhere:
    /usr/bin/python3 tests/failures/make_failures.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(graph, name, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="infer tests/failures/make_failures.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(HERE, name))
    print("wrote", name)


def main():
    table = np.arange(15, dtype=np.float32).reshape(5, 3) + 0.5  # row r = 3r+0.5 .. 3r+2.5
    two = np.array(2, dtype=np.float32)
    save(helper.make_graph(
        [helper.make_node("Gather", ["table", "indices"], ["rows"], name="gather", axis=0),
         helper.make_node("Mul", ["rows", "two"], ["out"], name="double")],
        "gather_oob",
        [helper.make_tensor_value_info("indices", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(two, "two")]),
        "gather_oob.onnx")
    save(helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
        "reshape_runtime",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r0", "r1"])]),
        "reshape_runtime.onnx")


if __name__ == "__main__":
    main()
