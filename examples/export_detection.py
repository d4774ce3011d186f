"""An SSD-Lite-style detector as torch.onnx.export writes it (issue 18), for tests/models:

    /work/venvs/rnn-export/bin/python examples/export_detection.py tests/models   # torch 2.13

ssdlite_tiny.onnx: 1 x 3 x 96 x 96 -> a MobileNet-style backbone (3x3 stem, depthwise-separable
blocks with BatchNorm and ReLU6, stride 2 each) -> a top-down path (the 6 x 6 map, 1x1 conv, nearest
Resize x2, added to the 12 x 12 map) -> two heads (3x3 convs, 3 anchors a cell, 4 box deltas and
4 class logits an anchor) -> the box decoding SSD writes (centre and size from the anchors, scaled
by the variances 0.1 / 0.2, exp of the size deltas, corners) -> sigmoid class scores -> per-class
NonMaxSuppression (at most 10 boxes a class, IoU 0.3, score 0.6) -> the kept boxes (Gather by the
box column), their scores (GatherND by the class and box columns) and their classes.

Outputs: boxes [K, 4] (x1, y1, x2, y2 in [0, 1] image units), scores [K], classes [K] (int64), K at
most 40, known at run time (aotc plans 40 and reports K in the outputs struct).

Weights are seeded random, scaled so that the detector keeps a non-trivial, non-saturated set (for
test_image(), 23 of the 40: one class keeps 1, one 2, two stop at 10): the file tests the compiler,
not a trained model.
The NMS node comes from a torch.autograd.Function whose symbolic writes ONNX's NonMaxSuppression
(what torchvision's nms export writes too), so the script needs torch only. Opset 13.
"""

from __future__ import annotations

import sys
from pathlib import Path

SIZE, ANCHORS, CLASSES, MAX_PER_CLASS = 96, 3, 4, 10
IOU, SCORE = 0.3, 0.6


def test_image():  # noqa: ANN201
    """The input the tests run (tests/e2e/test_detection.py makes the same one)."""
    import numpy as np

    return np.random.default_rng(18).random((1, 3, SIZE, SIZE), dtype=np.float32)


def build(out: Path) -> None:
    import numpy as np
    import torch
    from torch import nn

    torch.manual_seed(18)

    class NMS(torch.autograd.Function):
        """ONNX NonMaxSuppression; eager: the same algorithm in torch (for tracing only)."""

        @staticmethod
        def forward(ctx, boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:  # noqa: ARG004
            rows = []
            for c in range(scores.shape[1]):
                s = scores[0, c]
                order = [int(i) for i in torch.argsort(-s, stable=True) if s[i] > SCORE]
                kept: list[int] = []
                for i in order:
                    if len(kept) == MAX_PER_CLASS:
                        break
                    if all(_iou(boxes[0, i], boxes[0, j]) <= IOU for j in kept):
                        kept.append(i)
                rows += [[0, c, i] for i in kept]
            return torch.tensor(rows or [[0, 0, 0]], dtype=torch.int64)

        @staticmethod
        def symbolic(g, boxes, scores):  # noqa: ANN001, ANN205
            return g.op("NonMaxSuppression", boxes, scores,
                        g.op("Constant", value_t=torch.tensor([MAX_PER_CLASS], dtype=torch.int64)),
                        g.op("Constant", value_t=torch.tensor([IOU], dtype=torch.float32)),
                        g.op("Constant", value_t=torch.tensor([SCORE], dtype=torch.float32)))

    def _iou(a: torch.Tensor, b: torch.Tensor) -> float:
        ix = max(0.0, float(min(a[2], b[2]) - max(a[0], b[0])))
        iy = max(0.0, float(min(a[3], b[3]) - max(a[1], b[1])))
        inter = ix * iy
        union = float((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1])) - inter
        return inter / union if union > 0 else 0.0

    def separable(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cin, 3, 2, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU6(),
            nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU6())

    def anchors(cells: int, scales: tuple[float, ...]) -> np.ndarray:
        c = (np.arange(cells) + 0.5) / cells
        cy, cx = np.meshgrid(c, c, indexing="ij")
        a = [np.stack([cx, cy, np.full_like(cx, s), np.full_like(cx, s * r)], -1)
             for s, r in zip(scales, (1.0, 0.5, 2.0), strict=True)]
        return np.stack(a, 2).reshape(-1, 4)  # [cells * cells * ANCHORS, (cx, cy, w, h)], anchor innermost

    class SSDLite(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
            self.b1, self.b2, self.b3 = separable(16, 24), separable(24, 32), separable(32, 48)
            self.lateral = nn.Conv2d(48, 32, 1)
            self.box12 = nn.Conv2d(32, ANCHORS * 4, 3, padding=1)
            self.cls12 = nn.Conv2d(32, ANCHORS * CLASSES, 3, padding=1)
            self.box6 = nn.Conv2d(48, ANCHORS * 4, 3, padding=1)
            self.cls6 = nn.Conv2d(48, ANCHORS * CLASSES, 3, padding=1)
            a = np.concatenate([anchors(12, (0.15, 0.2, 0.25)), anchors(6, (0.35, 0.45, 0.6))]).astype(np.float32)
            self.register_buffer("anchors", torch.from_numpy(a))

        def head(self, x: torch.Tensor, conv: nn.Conv2d, k: int) -> torch.Tensor:
            y = conv(x)  # [1, A * k, H, W] -> [1, H * W * A, k]
            return y.permute(0, 2, 3, 1).reshape(1, -1, k)

        def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            f12 = self.b2(self.b1(self.stem(image)))  # 12 x 12 x 32
            f6 = self.b3(f12)  # 6 x 6 x 48
            f12 = f12 + nn.functional.interpolate(self.lateral(f6), scale_factor=2.0, mode="nearest")
            deltas = torch.cat([self.head(f12, self.box12, 4), self.head(f6, self.box6, 4)], 1)
            logits = torch.cat([self.head(f12, self.cls12, CLASSES), self.head(f6, self.cls6, CLASSES)], 1)
            a = self.anchors
            centre = a[:, :2] + deltas[..., :2] * 0.1 * a[:, 2:]
            size = a[:, 2:] * torch.exp(deltas[..., 2:] * 0.2)
            boxes = torch.cat([centre - 0.5 * size, centre + 0.5 * size], -1)  # [1, N, 4] x1 y1 x2 y2
            scores = torch.sigmoid(logits).permute(0, 2, 1)  # [1, C, N]
            selected = NMS.apply(boxes, scores)  # [K, 3]: batch, class, box
            box_index, class_index = selected[:, 2], selected[:, 1]
            kept = boxes[0].index_select(0, box_index)
            kept_scores = scores[0][class_index, box_index]  # torch writes Shape(rows) for the Reshape
            return kept, kept_scores, class_index

    model = SSDLite()
    with torch.no_grad():  # BatchNorm statistics away from the identity; class logits about -0.5 +- 1.2
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.8, 1.2)
        for conv in (model.cls12, model.cls6):
            conv.weight.mul_(25.0)
            conv.bias.fill_(-1.0)
        for conv in (model.box12, model.box6):
            conv.weight.mul_(0.5)
    model.eval()
    image = torch.from_numpy(test_image())
    path = out / "ssdlite_tiny.onnx"
    torch.onnx.export(model, (image,), str(path), opset_version=13, input_names=["image"],
                      output_names=["boxes", "scores", "classes"], dynamo=False)
    kept, s, c = model(image)
    print(f"{path}: {path.stat().st_size} bytes; eager keeps {len(c)} boxes, classes {c.tolist()}, "
          f"scores {[round(float(v), 3) for v in s]}")


if __name__ == "__main__":
    build(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/models"))
