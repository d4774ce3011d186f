"""torchvision's ssdlite320_mobilenet_v3_large as torch.onnx.export writes it (issue 18): aotc compiles it
and keeps the boxes, scores and labels onnxruntime keeps, in order. The full model is 14 MB (not
committed); `--small` writes the 1 MB one tests/e2e/test_torchvision_detection.py runs:

    /work/venvs/rnn-export/bin/python examples/export_torchvision_ssdlite.py /tmp/tv_ssdlite.onnx
    aotc /tmp/tv_ssdlite.onnx -o /tmp/tvb
    /work/venvs/rnn-export/bin/python examples/export_torchvision_ssdlite.py --small tests/models/tv_ssdlite_small.onnx

Random weights (weights=None, weights_backbone=None; no pretrained weights are cached here), one
3 x 320 x 320 image, opset 17, the TorchScript exporter. torchvision 0.28's C ops do not load against
the venv's CPU torch 2.13 (the wheel pip finds links the CUDA libraries), so its nms op is defined
here in Python first: the export needs only its schema (torchvision's own symbolic writes ONNX
NonMaxSuppression for it).

What the export holds after the backbone and heads, and how aotc plans it (aot/frontend/onnx/bounded.py):
- per class (90 of them): scores > 0.001 as a boolean mask -> NonZero -> Transpose -> GatherND, rows
  bounded by the 3234 anchors; TopK with k = min(300, rows), read from Shape(rows) through Gather,
  Concat and ReduceMin: followed at compile time, planned at 300, its rows min(300, the extent);
- ConstantOfShape(Shape(the kept scores)): the labels, one per kept row (FillRows);
- torch.cat of the 90 per-class results along their rows: planned at 27,000, the extent the sum;
- batched_nms: an If on boxes.numel() == 0 (written at run time from the extent) whose then branch
  gives an empty tensor and whose else branch has boxes.max() over the rows, offsets per class and
  NonMaxSuppression over those rows: the If's output rows are set by the branch taken;
- keep[:300] (a new extent, min(300, rows)), Gather of the joined rows by it, the box rescale (Split
  of columns, Mul, Concat of columns).
"""

from __future__ import annotations

import sys

SMALL_SCORE = 0.9  # a handful of boxes survive on tests/e2e/test_torchvision_detection.py's scenes
HEAD_STD = 0.3  # the class head's scale: scores spread over 0.7..0.97


def main(out: str, small: bool = False) -> None:
    """The full model (random weights), or with `small` the one tests/ commits: the same torchvision
    SSD/SSDLiteHead/postprocess code on MobileNetV3-Large and its extra blocks at width 0.25, 4 classes (+ background),
    He-normal weights, a score threshold of 0.9 and at most 100 candidates a class and 100 detections, so
    that a handful of boxes survive on a synthetic scene and the file stays small (1 MB)."""
    import torch

    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.impl("nms", _nms_for_tracing, "CPU")

    import torchvision.extension

    torchvision.extension._has_ops = _has_ops
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    torch.manual_seed(0)
    if small:  # the extra feature blocks at the backbone's width too (torchvision's factory keeps them at 1.0)
        import functools

        from torchvision.models.detection import ssdlite

        ssdlite.SSDLiteFeatureExtractorMobileNet = functools.partial(ssdlite.SSDLiteFeatureExtractorMobileNet,
                                                                     width_mult=0.25)
        model = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5, width_mult=0.25)
        model.score_thresh, model.topk_candidates, model.detections_per_img = SMALL_SCORE, 100, 100
        with torch.no_grad():  # torchvision's init (std 0.03) leaves every score at 1/5 whatever the image:
            g = torch.Generator().manual_seed(18)  # He-normal convolutions carry the image to the heads
            for m in model.modules():
                if isinstance(m, torch.nn.Conv2d):
                    fan_in = m.weight[0].numel()
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
            for m in model.head.classification_head.modules():
                if isinstance(m, torch.nn.Conv2d) and m.bias is not None:
                    m.weight.mul_(HEAD_STD)
    else:
        model = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    model = model.eval()
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
    args = [a for a in sys.argv[1:] if a != "--small"]
    main(args[0] if args else "tv_ssdlite.onnx", small="--small" in sys.argv[1:])
