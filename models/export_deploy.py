#!/usr/bin/env python3
"""Exports the torchvision models people deploy beyond image classification (detection,
segmentation, windowed-attention backbones, a video classifier of 3-D convolutions) with
seeded random weights to ONNX, with a
reference input and PyTorch's outputs, for the model tests (tests/run_deploy_model.sh).

    /usr/bin/python3 models/export_deploy.py OUT_DIR [--models a,b] [--opset 17] [--seed S]

Writes per model OUT_DIR/NAME.onnx, NAME_input.npy and one NAME_<output>.npy per output
(named as in the ONNX file): detection models give boxes, scores and labels (float32,
float32, int64), the others one float32 output. Nothing is downloaded (weights=None,
weights_backbone=None). The export is the TorchScript one (torch.onnx.export, dynamo=False
where the argument exists), the only one of torch 1.x, at opset 17 by default.

Random weights alone make the tests prove little, so (as models/export_zoo.py does):
- BatchNorm running statistics are calibrated on random data (export_zoo.calibrate);
- detectors: random heads score every anchor near the prior (RetinaNet's 0.01 focal
  prior, under the 0.05 threshold), so zero boxes would come out and the comparison
  would mean nothing. The classification heads' last biases are raised and spread per
  class (a seeded uniform draw) and the score threshold is 0.2, so that tens of boxes
  with distinct scores pass, and detections_per_img is 20 (the order is by score, so the
  test checks count and order: same boxes, scores and labels row by row).
Input sizes are kept small for the CPU CI run: detectors see a 3x256x320 image (resized
by the model's own transform to 320 on the short side; RetinaNet gets min_size=320,
max_size=416 instead of 800/1333), DeepLabV3 and LR-ASPP 1x3x256x256, Swin-T and MaxViT-T
1x3x224x224 (MaxViT's partitions need a multiple of 224/ 7*32), R3D-18 a 1x3x8x112x112 clip.
The last line is "exported K of N; failed: NAMES" (or "failed: none"); the exit status
is 1 when any export failed.
"""
import argparse
import os
import sys
import time
import traceback
import warnings
import zlib

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_zoo import calibrate, export_params  # noqa: E402  (BatchNorm statistics from random data)

DETECTORS = ("ssdlite320_mobilenet_v3_large", "fasterrcnn_mobilenet_v3_large_320_fpn",
             "retinanet_resnet50_fpn")
SEGMENTERS = ("deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large")
MODELS = DETECTORS + SEGMENTERS + ("swin_t", "maxvit_t", "r3d_18")
SCORE_THRESH = 0.2
DETECTIONS = 20
FRCNN_WEIGHT_SCALE = 20.0


def build(name):
    fn = getattr(torchvision.models.detection, name, None) or \
        getattr(torchvision.models.segmentation, name, None) or \
        getattr(torchvision.models.video, name, None) or getattr(torchvision.models, name)
    if name in DETECTORS:
        kw = dict(weights=None, weights_backbone=None)
        if name == "retinanet_resnet50_fpn":
            kw.update(min_size=320, max_size=416, score_thresh=SCORE_THRESH,
                      detections_per_img=DETECTIONS)
        elif name == "ssdlite320_mobilenet_v3_large":
            kw.update(score_thresh=SCORE_THRESH, detections_per_img=DETECTIONS)
        else:  # Faster R-CNN's names
            kw.update(box_score_thresh=SCORE_THRESH, box_detections_per_img=DETECTIONS)
        return fn(**kw)
    if name.startswith("deeplab"):
        return fn(weights=None, weights_backbone=None, aux_loss=False)
    if name in SEGMENTERS:  # LR-ASPP has no auxiliary head
        return fn(weights=None, weights_backbone=None)
    return fn(weights=None)


def dominant_biases(bias, gen, softmax):
    """Classification biases that make a few classes score above SCORE_THRESH: three
    classes (never the background, 0) at 6, 5 and 4, the rest uniform in [-4, 0] (a
    seeded draw; for sigmoid heads the three at 3, 2, 1). Returns the chosen classes."""
    n = bias.shape[0]
    bias.copy_(torch.empty_like(bias).uniform_(-4.0, 0.0, generator=gen))
    picks = (torch.randperm(n - 1, generator=gen)[:3] + 1).tolist()
    for c, b in zip(picks, (6.0, 5.0, 4.0) if softmax else (3.0, 2.0, 1.0)):
        bias[c] = b
    return picks


def spread_class_biases(model, name, gen):
    """Raises the last classification biases of a detector so that boxes pass the score
    threshold (see the module docstring); returns what it changed."""
    with torch.no_grad():
        if name == "retinanet_resnet50_fpn":  # sigmoid per class and anchor
            conv = model.head.classification_head.cls_logits
            a = model.head.classification_head.num_anchors
            c = model.head.classification_head.num_classes
            b = conv.bias.view(a, c)
            picks = dominant_biases(b[0], gen, False)
            for i in range(1, a):
                b[i].copy_(b[0])
            return "cls_logits biases: classes %s raised" % picks
        if name == "fasterrcnn_mobilenet_v3_large_320_fpn":  # softmax per proposal
            # Biases alone give every proposal nearly the same score (top 20 of hundreds
            # of near-ties: any rounding reorders them): the classifier's and the RPN's
            # weights are scaled up so that scores follow the features.
            cls = model.roi_heads.box_predictor.cls_score
            picks = dominant_biases(cls.bias, gen, True)
            cls.weight.mul_(FRCNN_WEIGHT_SCALE)
            model.rpn.head.cls_logits.weight.mul_(FRCNN_WEIGHT_SCALE)
            return "cls_score biases: classes %s raised; cls_score and RPN objectness " \
                "weights x%g" % (picks, FRCNN_WEIGHT_SCALE)
        # SSDLite: one head per feature map, softmax over classes per anchor
        picks = None
        seed = int(torch.randint(1 << 30, (1,), generator=gen))
        for m in model.head.classification_head.module_list:
            b = m[-1].bias.view(-1, model.head.classification_head.num_columns)
            for i in range(b.shape[0]):  # the same classes for every anchor and map
                picks = dominant_biases(b[i], torch.Generator().manual_seed(seed), True)
        return "classification biases: classes %s raised" % picks


def image_shape(name):
    if name in DETECTORS:
        return (3, 256, 320)
    if name in SEGMENTERS:
        return (1, 3, 256, 256)
    if name == "r3d_18":  # a clip: 8 frames of 112 x 112
        return (1, 3, 8, 112, 112)
    return (1, 3, 224, 224)


def register_roi_align_opset16():
    """torchvision 0.14 exports torchvision::roi_align with its opset-11 symbolic at any
    opset: RoiAlign without coordinate_transformation_mode, which from opset 16 on means
    half_pixel, while the model's aligned=False is output_half_pixel (boxes shift by half
    a pixel: Faster R-CNN's box features differ by 5.5 and its detections all differ).
    torchvision 0.15+ registers an opset-16 symbolic that writes the mode; this is that
    symbolic, registered here when the installed torchvision lacks it."""
    from torch.onnx import register_custom_op_symbolic, symbolic_helper
    from torch.onnx.symbolic_opset11 import select, squeeze

    @symbolic_helper.parse_args("v", "v", "f", "i", "i", "i", "i")
    def roi_align16(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                    aligned):
        batch_indices = g.op("Cast", squeeze(g, select(g, rois, 1, g.op(
            "Constant", value_t=torch.tensor([0], dtype=torch.long))), 1), to_i=7)
        rois = select(g, rois, 1, g.op("Constant", value_t=torch.tensor([1, 2, 3, 4],
                                                                        dtype=torch.long)))
        return g.op("RoiAlign", input, rois, batch_indices,
                    coordinate_transformation_mode_s="half_pixel" if aligned else
                    "output_half_pixel",
                    spatial_scale_f=spatial_scale, output_height_i=pooled_height,
                    output_width_i=pooled_width, sampling_ratio_i=max(sampling_ratio, 0))

    import torchvision.ops._register_onnx_ops as tv_onnx
    if not hasattr(tv_onnx, "_ONNX_OPSET_VERSION_16"):  # torchvision < 0.15
        register_custom_op_symbolic("torchvision::roi_align", roi_align16, 16)
        return True
    return False


class Single(torch.nn.Module):
    """A detector takes a list of images and returns a list of dicts; the export sees
    one image tensor and three outputs. DeepLab and LR-ASPP return a dict: its 'out'."""

    def __init__(self, model, detector):
        super().__init__()
        self.model, self.detector = model, detector

    def forward(self, x):
        if self.detector:
            d = self.model([x])[0]
            return d["boxes"], d["scores"], d["labels"]
        y = self.model(x)
        return y["out"] if isinstance(y, dict) else y


def export_one(name, args):
    seed = (args.seed * 1000003 + zlib.crc32(name.encode())) & 0x7FFFFFFF
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    t0 = time.time()
    model = build(name)
    detector = name in DETECTORS
    notes = []
    # BatchNorm statistics from random images of the model's size (detectors resize
    # inside: calibrate the backbone on 320x320)
    net = model.backbone if detector else model
    if detector:
        class Backbone(torch.nn.Module):
            def __init__(self, b):
                super().__init__()
                self.b = b

            def forward(self, x):
                return self.b(x)
        calibrate(Backbone(net), 320, gen, 4, 2)
        notes.append(spread_class_biases(model, name, gen))
    else:
        calibrate(model, image_shape(name)[1:], gen, 4, 2)
    model.eval()
    wrapped = Single(model, detector).eval()
    x = torch.rand(image_shape(name), generator=gen)
    with torch.no_grad():
        ys = wrapped(x)
    ys = ys if isinstance(ys, tuple) else (ys,)
    out_names = ["boxes", "scores", "labels"] if detector else ["out"]
    path = os.path.join(args.out_dir, name + ".onnx")
    tmp = os.path.join(args.out_dir, name + ".part.onnx")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kwargs = dict(opset_version=args.opset, input_names=["image"],
                          output_names=out_names, do_constant_folding=True)
            params = export_params()
            if params is None or "dynamo" in params:
                # torch >= 2.9 defaults to the dynamo exporter, which writes opset 18 and
                # fails to convert the detectors back to 17 (torch 2.11 on the H200 host)
                kwargs["dynamo"] = False
            torch.onnx.export(wrapped, (x,), tmp, **kwargs)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    np.save(os.path.join(args.out_dir, name + "_input.npy"), x.numpy())
    for n, y in zip(out_names, ys):
        np.save(os.path.join(args.out_dir, "%s_%s.npy" % (name, n)), y.numpy())
    shapes = ", ".join("%s %s" % (n, tuple(y.shape)) for n, y in zip(out_names, ys))
    print("%s: %s (%.1f s)%s" % (name, shapes, time.time() - t0,
                                 "; " + "; ".join(notes) if notes else ""), flush=True)
    if detector and ys[0].shape[0] == 0:
        raise RuntimeError("no detections: the comparison would mean nothing")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.opset >= 16 and register_roi_align_opset16():
        print("note: RoiAlign exported with its opset-16 mode (torchvision %s writes none)" %
              torchvision.__version__, flush=True)
    names = [m for m in args.models.split(",") if m]
    failed = []
    for name in names:
        if name not in MODELS:
            print("%s FAILED: not one of %s" % (name, ", ".join(MODELS)))
            failed.append(name)
            continue
        try:
            export_one(name, args)
        except Exception as ex:  # one line per failure, the others go on
            traceback.print_exc(limit=3)
            print("%s FAILED: %s: %s" % (name, type(ex).__name__, str(ex).splitlines()[0]
                                         if str(ex) else ""), flush=True)
            failed.append(name)
    print("exported %d of %d; failed: %s" % (len(names) - len(failed), len(names),
                                             ", ".join(failed) or "none"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
