"""ONNX Loops as exporters write them (issue 26), for tests/models. Two halves, each in the venv that has
its framework (aotc needs neither; CI reads the committed files):

    /work/venvs/tf/bin/python examples/export_loops.py keras tests/models        # TF 2.21, Keras 3, tf2onnx 1.17
    /work/venvs/rnn-export/bin/python examples/export_loops.py torch tests/models  # torch 2.13

keras writes, through `tf2onnx.convert.from_keras` as a user calls it (Keras 3 runs recurrent layers
as a while loop, which tf2onnx 1.17 writes as one ONNX Loop, not an LSTM/GRU node):

- kws_lstm_keras.onnx, kws_gru_keras.onnx: 49 x 10 MFCCs -> one 64-unit LSTM / GRU layer -> the
  last step -> Dense(12): the sizes of kws_lstm.onnx / kws_gru.onnx (the same net as an ONNX LSTM /
  GRU node, examples/export_recurrent.py). The Loop's condition is two counters compared with
  constants; the weights are loop-carried and passed through; the input sequence is read from the
  outer scope with a Gather on a counter; the output sequence is a scan output.
- kws_lstm_keras_stream.onnx: the LSTM one frame a call, its state (h, c) graph inputs and outputs:
  a Loop of one step (docs/firmware.md shows the C calls).
- loop_while_data.onnx: a `tf.while_loop` whose condition depends on the data: it halves a vector
  until its norm is under a threshold input, at most 16 times (a run-time condition).

torch writes, through `torch.jit.script` and the TorchScript exporter:

- loop_script.onnx: an Elman cell over 49 frames in a Python for loop (the carried state only);
- loop_list.onnx: an Elman cell whose outputs a Python list collects, then torch.stack (SequenceEmpty,
  SequenceInsert each step, ConcatFromSequence: compiled as the Loop's scan output);
- loop_nested.onnx: a loop over 5 chunks, each an inner loop over 6 frames (the inner loop reads
  the outer iteration number and the outer state).

Weights are seeded random: the files test the compiler, not a trained model. Opset 17.
"""

from __future__ import annotations

import sys
from pathlib import Path

FRAMES, MFCC, HIDDEN, KEYWORDS = 49, 10, 64, 12


def keras_models(out: Path) -> None:
    import keras
    import onnx
    import tensorflow as tf
    import tf2onnx

    for cell in ("lstm", "gru"):
        keras.utils.set_random_seed(0)
        inp = keras.Input((FRAMES, MFCC), batch_size=1, name="mfcc")
        layer = keras.layers.LSTM(HIDDEN) if cell == "lstm" else keras.layers.GRU(HIDDEN)
        model = keras.Model(inp, keras.layers.Dense(KEYWORDS, name="logits")(layer(inp)))
        spec = (tf.TensorSpec((1, FRAMES, MFCC), tf.float32, name="mfcc"),)
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=17)
        onnx.save(proto, out / f"kws_{cell}_keras.onnx")
    # streaming: one frame a call, the state in and out (as a stateful layer is exported)
    frame, h, c = (keras.Input(s, batch_size=1, name=n) for s, n in (((1, MFCC), "frame"), ((HIDDEN,), "h"),
                                                                       ((HIDDEN,), "c")))
    keras.utils.set_random_seed(0)
    y, h_next, c_next = keras.layers.LSTM(HIDDEN, return_state=True)(frame, initial_state=[h, c])
    model = keras.Model([frame, h, c], [keras.layers.Dense(KEYWORDS, name="logits")(y), h_next, c_next])
    spec = (tf.TensorSpec((1, 1, MFCC), tf.float32, name="frame"), tf.TensorSpec((1, HIDDEN), tf.float32, name="h"),
            tf.TensorSpec((1, HIDDEN), tf.float32, name="c"))
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=17)
    onnx.save(proto, out / "kws_lstm_keras_stream.onnx")

    @tf.function(input_signature=[tf.TensorSpec((8,), tf.float32, name="x"),
                                  tf.TensorSpec((), tf.float32, name="threshold")])
    def halve(x: tf.Tensor, threshold: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        def cond(i: tf.Tensor, v: tf.Tensor) -> tf.Tensor:
            return tf.norm(v) > threshold

        def body(i: tf.Tensor, v: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            return i + 1, v * 0.5

        steps, y = tf.while_loop(cond, body, (tf.constant(0), x), maximum_iterations=16)
        return tf.identity(y, name="y"), tf.identity(steps, name="steps")

    proto, _ = tf2onnx.convert.from_function(halve, input_signature=halve.input_signature, opset=17)
    onnx.save(proto, out / "loop_while_data.onnx")


def torch_models(out: Path) -> None:
    import torch
    from torch import nn

    class Elman(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell = nn.Linear(MFCC + 32, 32)
            self.head = nn.Linear(32, 4)

        def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
            for t in range(x.size(1)):
                h = torch.tanh(self.cell(torch.cat([x[:, t], h], 1)))
            return self.head(h)

    class Nested(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell = nn.Linear(MFCC + 16, 16)
            self.head = nn.Linear(16, 4)

        def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            for i in range(x.size(1)):
                g = h
                for j in range(x.size(2)):
                    g = torch.tanh(self.cell(torch.cat([x[:, i, j], g], 1)))
                h = h + 0.5 * g
            return self.head(h), h

    class Stacked(nn.Module):
        """Each step's output appended to a Python list, stacked on axis 1 (a sequence in ONNX)."""

        def __init__(self) -> None:
            super().__init__()
            self.cell = nn.Linear(MFCC + 16, 16)

        def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
            outs = []
            for t in range(x.size(1)):
                h = torch.tanh(self.cell(torch.cat([x[:, t], h], 1)))
                outs.append(h)
            return torch.stack(outs, 1)

    torch.manual_seed(0)
    for module, name, args, outs in (
            (Stacked(), "loop_list", (torch.randn(1, 12, MFCC), torch.zeros(1, 16)), ["y"]),
            (Elman(), "loop_script", (torch.randn(1, FRAMES, MFCC), torch.zeros(1, 32)), ["y"]),
            (Nested(), "loop_nested", (torch.randn(1, 5, 6, MFCC), torch.zeros(1, 16)), ["y", "h_out"])):
        torch.onnx.export(torch.jit.script(module), args, str(out / f"{name}.onnx"), opset_version=17,
                          input_names=["x", "h"], output_names=outs, dynamo=False)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("keras", "torch"):
        sys.exit(f"usage: {sys.argv[0]} keras|torch OUT_DIR")
    target = Path(sys.argv[2])
    target.mkdir(parents=True, exist_ok=True)
    (keras_models if sys.argv[1] == "keras" else torch_models)(target)
