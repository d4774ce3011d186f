"""Issue 64: a dynamically quantized three-layer LSTM embedder on the host, aotc against onnxruntime.

The shape of the speaker and utterance embedders PyPI packages ship (a d-vector encoder: 40 mel bands in,
three LSTM layers of 256, a linear projection with ReLU and an L2 normalisation of the last step), exported
with torch.onnx.export's TorchScript exporter (which writes ONNX LSTM nodes) and quantized by onnxruntime's
quantize_dynamic with its defaults (int8 weights): each LSTM becomes a com.microsoft DynamicQuantizeLSTM, the
projection a DynamicQuantizeLinear / MatMulInteger pair.

Two steps, in two Pythons (aotc's own needs neither torch nor TensorFlow):

    # torch (a CPU wheel), onnx, onnxscript and onnxruntime in a venv of their own
    /tmp/torchvenv/bin/python bench/lstm_embedder.py --make [DIR]
    # aotc's Python: compile, build, then `aotc bench` (one thread, medians of per-round ratios, CPU time too)
    python3 bench/lstm_embedder.py [--dir DIR] [--frames 160] [--rounds 7]

DIR defaults to bench/models/large/ (git-ignored). Weights are seeded random: the file tests speed, not a model.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "bench" / "models" / "large"
MELS, HIDDEN, LAYERS, EMBED = 40, 256, 3, 256
AOTC = [sys.executable, "-m", "aot.cli"]


def make(out: Path, frames: int) -> Path:
    """Writes lstm_embedder.float.onnx and lstm_embedder.qdyn.onnx into `out`; returns the latter."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from torch import nn

    class Embedder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(MELS, HIDDEN, LAYERS, batch_first=True)
            self.linear = nn.Linear(HIDDEN, EMBED)

        def forward(self, mels: torch.Tensor) -> torch.Tensor:
            _, (hidden, _) = self.lstm(mels)
            embeds = torch.relu(self.linear(hidden[-1]))
            return embeds / torch.norm(embeds, dim=1, keepdim=True)

    torch.manual_seed(64)
    out.mkdir(parents=True, exist_ok=True)
    model = Embedder().eval()
    fp32 = out / "lstm_embedder.float.onnx"
    torch.onnx.export(model, (torch.randn(1, frames, MELS),), str(fp32), input_names=["mels"],
                      output_names=["embedding"], opset_version=14, dynamo=False)
    qdyn = out / "lstm_embedder.qdyn.onnx"
    quantize_dynamic(str(fp32), str(qdyn), weight_type=QuantType.QInt8)
    import onnx
    ops = sorted({n.op_type for n in onnx.load(qdyn).graph.node})
    print(f"{qdyn}: {', '.join(ops)}")
    return qdyn


def bench(model: Path, rounds: int, work: Path) -> str:
    """aotc MODEL for the host, built, then `aotc bench` against onnxruntime on one thread: its report."""
    out = work / model.stem.replace(".", "_")
    subprocess.run([*AOTC, str(model), "-o", str(out)], check=True)
    subprocess.run(["cmake", "--build", str(out)], check=True, capture_output=True)
    return subprocess.run([*AOTC, "bench", str(out), "--rounds", str(rounds)], check=True, capture_output=True,
                          text=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", nargs="?", const=str(DEFAULT_DIR), metavar="DIR", help="write the models (torch)")
    ap.add_argument("--dir", default=str(DEFAULT_DIR))
    ap.add_argument("--frames", type=int, default=160, help="mel frames in (--make)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--forms", nargs="+", default=["qdyn", "float"])
    args = ap.parse_args()
    if args.make:
        make(Path(args.make), args.frames)
        return
    with tempfile.TemporaryDirectory(prefix="aotc_lstm_") as tmp:
        for form in args.forms:
            model = Path(args.dir) / f"lstm_embedder.{form}.onnx"
            if not model.exists():
                raise SystemExit(f"{model} is missing: make it with --make (see the docstring)")
            print(f"== {model.name}\n{bench(model, args.rounds, Path(tmp))}")


if __name__ == "__main__":
    main()
