"""Recurrent keyword spotters exported as users export them (issue 15): torch.onnx.export writes
ONNX LSTM and GRU nodes (with the Slice/Squeeze/Transpose glue it adds around them).

    python -m venv /tmp/export && /tmp/export/bin/pip install torch onnx   # torch is not an aotc dependency
    /tmp/export/bin/python examples/export_recurrent.py tests/models

writes, into the given directory:

- kws_gru.onnx, kws_lstm.onnx: 49 x 10 MFCCs -> one 64-unit GRU / LSTM layer -> the last step's
  state -> a Dense head of 12 keywords (the MLPerf Tiny KWS sizes), TorchScript exporter;
- kws_gru_stream.onnx, kws_lstm_stream.onnx: the same layers one frame per call, the state a
  graph input and a graph output (h, and c for the LSTM), as a streaming detector runs them;
- kws_gru_dynamo.onnx: the GRU model through the dynamo exporter, when it works here (it needs
  onnxscript; it is skipped with a message otherwise).

With --unrolled, also kws_lstm_unrolled.onnx: the LSTM spotter written out step by step in plain
ops (not committed; bench/recurrent.py compares its compile time with the LSTM node's).

Weights are seeded random: the files test the compiler, not a trained model. Opset 14 (the dynamo
exporter writes 18).
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
import torch
from torch import nn

FRAMES, MFCC, HIDDEN, KEYWORDS = 49, 10, 64, 12


class Spotter(nn.Module):
    """MFCC frames [1, 49, 10] -> keyword logits [1, 12], from the recurrent layer's last state."""

    def __init__(self, cell: str):
        super().__init__()
        self.rnn = (nn.GRU if cell == "gru" else nn.LSTM)(MFCC, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, KEYWORDS)

    def forward(self, mfcc: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(mfcc)
        return self.head(out[:, -1])


class GruStep(nn.Module):
    """One frame and the state in; logits and the new state out."""

    def __init__(self, spotter: Spotter):
        super().__init__()
        self.rnn, self.head = spotter.rnn, spotter.head

    def forward(self, frame: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out, h_next = self.rnn(frame, h)
        return self.head(out[:, -1]), h_next


class LstmStep(nn.Module):
    def __init__(self, spotter: Spotter):
        super().__init__()
        self.rnn, self.head = spotter.rnn, spotter.head

    def forward(self, frame: torch.Tensor, h: torch.Tensor,
                c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        out, (h_next, c_next) = self.rnn(frame, (h, c))
        return self.head(out[:, -1]), h_next, c_next


class UnrolledLstm(nn.Module):
    """The LSTM spotter as a Python loop over LSTMCell: the exporter writes every step out in plain ops
    (MatMul, Add, Sigmoid, Tanh, Mul, ...), the form users had before aotc compiled LSTM."""

    def __init__(self, spotter: Spotter):
        super().__init__()
        lstm = spotter.rnn
        self.cell = nn.LSTMCell(MFCC, HIDDEN)
        self.cell.weight_ih, self.cell.weight_hh = lstm.weight_ih_l0, lstm.weight_hh_l0
        self.cell.bias_ih, self.cell.bias_hh = lstm.bias_ih_l0, lstm.bias_hh_l0
        self.head = spotter.head

    def forward(self, mfcc: torch.Tensor) -> torch.Tensor:
        h = c = torch.zeros(1, HIDDEN)
        for t in range(FRAMES):
            h, c = self.cell(mfcc[:, t], (h, c))
        return self.head(h)


def export(module: nn.Module, args: tuple, path: Path, inputs: list[str], outputs: list[str],
           dynamo: bool = False) -> None:
    module.eval()
    torch.onnx.export(module, args, str(path), input_names=inputs, output_names=outputs, opset_version=14,
                      dynamo=dynamo)
    data = path.with_name(path.name + ".data")
    if data.exists():  # the dynamo exporter keeps weights beside the model: one self-contained file instead
        onnx.save(onnx.load(str(path)), str(path))
        data.unlink()
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def main(out: Path, unrolled: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for k, cell in enumerate(("gru", "lstm")):
        torch.manual_seed(15 + k)
        spotter = Spotter(cell)
        mfcc = torch.randn(1, FRAMES, MFCC)
        export(spotter, (mfcc,), out / f"kws_{cell}.onnx", ["mfcc"], ["logits"])
        frame, h = torch.randn(1, 1, MFCC), torch.zeros(1, 1, HIDDEN)
        if cell == "gru":
            export(GruStep(spotter), (frame, h), out / "kws_gru_stream.onnx", ["frame", "h"], ["logits", "h_next"])
        else:
            export(LstmStep(spotter), (frame, h, h.clone()), out / "kws_lstm_stream.onnx", ["frame", "h", "c"],
                   ["logits", "h_next", "c_next"])
        if cell == "lstm" and unrolled:
            export(UnrolledLstm(spotter), (mfcc,), out / "kws_lstm_unrolled.onnx", ["mfcc"], ["logits"])
        if cell == "gru":
            try:
                export(spotter, (mfcc,), out / "kws_gru_dynamo.onnx", ["mfcc"], ["logits"], dynamo=True)
            except Exception as e:  # noqa: BLE001 - the dynamo exporter is optional here
                print(f"dynamo exporter: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--unrolled"]
    main(Path(args[0] if args else "tests/models"), unrolled="--unrolled" in sys.argv)
