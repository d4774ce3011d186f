"""A run-time If as torch.onnx.export writes it, for tests/models (aotc and CI read the committed file):

    /work/venvs/rnn-export/bin/python examples/export_branches.py tests/models   # torch 2.13

- vad_cond.onnx: a voice-activity detector shaped like the ones that ship as ONNX with their state
  (issue 15): 512 samples and a sample-rate input; `torch.cond` on the rate picks one of two strided
  Conv1d stems (a wide one for 16 kHz, a narrow one for 8 kHz; the same output shape), then a mean
  over time, a GRU cell over the state given in and returned, and a sigmoid probability. The dynamo
  exporter (opset 18) writes the choice as one ONNX If on `Equal(sr, 16000)`, known only at run time.

Weights are seeded random: the file tests the compiler, not a trained model.
"""

from __future__ import annotations

import sys
from pathlib import Path

SAMPLES, CHANNELS, HIDDEN = 512, 16, 32


def vad_cond(out: Path) -> None:
    import torch
    from torch import nn

    class Vad(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem16 = nn.Conv1d(1, CHANNELS, 64, stride=32, padding=16)
            self.stem8 = nn.Conv1d(1, CHANNELS, 32, stride=32)
            self.cell = nn.GRUCell(CHANNELS, HIDDEN)
            self.head = nn.Linear(HIDDEN, 1)

        def forward(self, x: torch.Tensor, sr: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            def wide(x: torch.Tensor) -> torch.Tensor:
                return torch.relu(self.stem16(x))

            def narrow(x: torch.Tensor) -> torch.Tensor:
                return torch.relu(self.stem8(x))

            f = torch.cond(sr == 16000, wide, narrow, (x,)).mean(dim=2)
            h = self.cell(f, h)
            return torch.sigmoid(self.head(h)), h

    torch.manual_seed(0)
    model = Vad().eval()
    args = (torch.randn(1, 1, SAMPLES), torch.tensor(16000), torch.zeros(1, HIDDEN))
    torch.onnx.export(model, args, str(out / "vad_cond.onnx"), input_names=["x", "sr", "h"],
                      output_names=["prob", "h_out"], opset_version=18, dynamo=True)
    import onnx  # the dynamo exporter writes the weights beside the file: one file instead

    path = out / "vad_cond.onnx"
    onnx.save(onnx.load(str(path)), str(path), save_as_external_data=False)
    (out / "vad_cond.onnx.data").unlink(missing_ok=True)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/models")
    target.mkdir(parents=True, exist_ok=True)
    vad_cond(target)
