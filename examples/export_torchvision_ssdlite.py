"""torchvision's ssdlite320_mobilenet_v3_large as torch.onnx.export writes it (issue 18, item 5), to see
what aotc still lacks for it (the file is 14 MB: not committed):

    /work/venvs/rnn-export/bin/python examples/export_torchvision_ssdlite.py /tmp/tv_ssdlite.onnx
    aotc /tmp/tv_ssdlite.onnx -o /tmp/tvb

Random weights (weights=None, weights_backbone=None), one 3 x 320 x 320 image, opset 17, the
TorchScript exporter. torchvision 0.28's C ops do not load against the venv's CPU torch 2.13 (the
wheel pip finds links the CUDA libraries), so its nms op is defined here in Python first: the export
needs only its schema (torchvision's own symbolic writes ONNX NonMaxSuppression for it).

What the export holds after the backbone and heads, and what aotc does with it (issue 18):
- per class (90 of them): scores > 0.001 as a boolean mask -> NonZero -> Transpose -> GatherND (compiled:
  bounded by the 3234 anchors), then TopK with k = min(300, rows): Shape of the bounded rows read as a
  value (ReduceMin) -- refused first, at the Gather of that Shape. TopK over bounded rows with a run-time
  k is not compiled;
- ConstantOfShape(Shape(the kept scores)): the labels, of the run-time length;
- torch.cat of the 90 per-class results along their rows, each with its own extent (Concat along the
  bounded axis, extent = the sum);
- batched_nms: an If on boxes.numel() == 0 (ReduceProd of the Shape of bounded rows) whose else branch
  has the coordinate trick: boxes.max() (ReduceMax over bounded rows), offsets per class, and
  NonMaxSuppression whose input boxes are themselves bounded rows; then keep[:300] (Slice of rows) and
  Gather of bounded rows by the kept indices;
- the box rescale (Split of columns, Mul, Concat of columns): the kinds aotc runs on rows, except
  Split, which is not among them yet.
"""

from __future__ import annotations

import sys


def main(out: str) -> None:
    import torch

    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.impl("nms", _nms_for_tracing, "CPU")

    import torchvision.extension

    torchvision.extension._has_ops = _has_ops
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    torch.manual_seed(0)
    model = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    image = torch.rand(3, 320, 320)
    torch.onnx.export(model, ([image],), out, opset_version=17, input_names=["image"], dynamo=False)
    print(f"wrote {out}")


def _nms_for_tracing(dets, scores, iou_threshold):  # noqa: ANN001, ANN202, ARG001
    """Tracing records the op, not its values: any plausible indices do."""
    import torch

    return torch.argsort(-scores, stable=True)[:100]


def _has_ops() -> bool:  # a def, not a lambda: torchvision scripts the functions that call it
    return True


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tv_ssdlite.onnx")
