#!/usr/bin/env python3
"""make_nesting.py OUT.onnx DEPTH: writes an ONNX model whose graph nests DEPTH levels of
subgraphs (node attribute 'body' of type GRAPH holding a graph with one such node, ...).

200000 levels make a 4.7 MB file that crashed the loader (protobuf-c recurses once per
nested message, without a limit; issue 15). The protobuf bytes are written directly, in
one pass (each level is a prefix of lengths and tags before the next level), so this
needs no onnx package and runs in a second for any depth. The main graph is
Y = Identity(X) with X, Y float [1]; Identity has no attribute 'body', so a model shallow
enough to be decoded is refused for that attribute, by name.
"""
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_len(num, payload):  # wire type 2
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_int(num, v):  # wire type 0
    return varint(num << 3) + varint(v)


def value_info(name):
    dim = field_int(1, 1)                                     # Dimension.dim_value
    shape = field_len(1, dim)                                 # TensorShapeProto.dim
    tensor = field_int(1, 1) + field_len(2, shape)            # elem_type FLOAT, shape
    return field_len(1, name) + field_len(2, field_len(1, tensor))  # name, type.tensor_type


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_nesting.py OUT.onnx DEPTH")
    out, depth = sys.argv[1], int(sys.argv[2])
    # graph level k (0 = main) holds one node whose attribute holds graph level k+1;
    # graph level `depth` is empty. Built from the inside out as lengths only.
    prefixes = []
    inner = 0  # length of graph level k+1
    for k in range(depth - 1, -1, -1):
        attr_head = field_len(1, b"body") + field_int(20, 5) + varint(6 << 3 | 2) + varint(inner)
        attr_len = len(attr_head) + inner
        node_head = field_len(4, b"Identity")
        if k == 0:
            node_head = field_len(1, b"X") + field_len(2, b"Y") + node_head
        node_head += varint(5 << 3 | 2) + varint(attr_len)
        node_len = len(node_head) + attr_len
        graph_head = varint(1 << 3 | 2) + varint(node_len) + node_head + attr_head
        # graph level k: its head (tag, node length, node head, attribute head), the inner
        # graph; level 0 adds its input and output after the node
        inner = len(graph_head) + (attr_len - len(attr_head))
        prefixes.append(graph_head)
    suffix = field_len(11, value_info(b"X")) + field_len(12, value_info(b"Y"))
    main_len = inner + len(suffix)
    opset = field_len(8, field_int(2, 13))
    model_head = field_int(1, 8) + opset + varint(7 << 3 | 2) + varint(main_len)
    with open(out, "wb") as f:
        f.write(model_head)
        for p in reversed(prefixes):
            f.write(p)
        f.write(suffix)


if __name__ == "__main__":
    main()
