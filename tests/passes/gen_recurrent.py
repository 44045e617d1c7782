#!/usr/bin/env python3
"""Makes tests/passes/recurrent.onnx: a CRNN-style text recognizer's head exported by
PyTorch (the exporter's own RNN, GRU and LSTM nodes): a convolution over a line image,
its columns as a sequence, a two-layer bidirectional LSTM (as OCR models have), a
reverse GRU with linear_before_reset (PyTorch's form) and a ReLU RNN over its output,
then a per-step Linear; outputs the logits and the LSTM's final hidden and cell states.
The input and PyTorch's float64 outputs are written beside it.

    /usr/bin/python3 tests/passes/gen_recurrent.py   (python3-onnx, python3-torch)
"""
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(5)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d((1, None))  # height to 1: columns are the steps
        self.lstm = nn.LSTM(16, 24, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(48, 20)
        self.rnn = nn.RNN(20, 12, nonlinearity="relu")
        self.fc = nn.Linear(12, 11)

    def forward(self, x):
        f = self.pool(torch.relu(self.conv(x))).squeeze(2)  # N, C, W
        s = f.permute(2, 0, 1)                               # W (steps), N, C
        y, (h, c) = self.lstm(s)
        g, _ = self.gru(torch.flip(y, [0]))                  # the reverse direction's way
        r, _ = self.rnn(g)
        return self.fc(r), h, c


model = Head().eval()
x = torch.randn(2, 3, 8, 19)
path = os.path.join(HERE, "recurrent.onnx")
torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["logits", "h", "c"],
                  opset_version=14)
with torch.no_grad():
    ref = model.double()(x.double())
np.save(os.path.join(HERE, "recurrent_input.npy"), x.numpy())
for name, v in zip(("logits", "h", "c"), ref):
    np.save(os.path.join(HERE, "recurrent_%s.npy" % name), v.numpy().astype(np.float32))
ops = sorted({n.op_type for n in __import__("onnx").load(path).graph.node})
print("wrote recurrent.onnx:", ", ".join(ops))
