"""Run a .tflite model with LiteRT's reference kernels (BUILTIN_REF): a subprocess of its own, since
the interpreter can crash on a model.

    python tests/tflite_reference.py MODEL.tflite IN.npz OUT.npz

IN.npz holds the inputs by position (input_0, ...); OUT.npz gets the outputs by position (output_0, ...).
"""

from __future__ import annotations

import sys

import numpy as np


def main(model: str, inputs: str, outputs: str) -> None:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_path=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         num_threads=1)
    interp.allocate_tensors()
    feeds = np.load(inputs)
    for k, d in enumerate(interp.get_input_details()):
        interp.set_tensor(d["index"], feeds[f"input_{k}"])
    interp.invoke()
    np.savez(outputs, **{f"output_{k}": interp.get_tensor(d["index"])
                         for k, d in enumerate(interp.get_output_details())})


if __name__ == "__main__":
    main(*sys.argv[1:4])
