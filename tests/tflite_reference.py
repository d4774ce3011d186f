"""Run a .tflite model with LiteRT's reference kernels (BUILTIN_REF): a subprocess of its own, since
the interpreter can crash on a model.

    python tests/tflite_reference.py MODEL.tflite IN.npz OUT.npz

IN.npz holds the inputs by position (input_0, ...); OUT.npz gets the outputs by position (output_0, ...)
and, with --all, every tensor the interpreter keeps, by tensor index (tensor_<k>), for op-by-op checks.
With --runs, each input holds one more leading axis, one entry per inference, and so do the outputs.
With --builtin, LiteRT's default (optimised) kernels instead, for a builtin the reference resolver lacks
(ROUND). An input given in another shape than the file's is resized first (ResizeInputTensor, strict: only
the dimensions its shape signature leaves -1), as a package that feeds a dynamic model does.

Tests call reference() below: it runs this script as above, in a process of its own, and returns what it wrote.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np


def reference(model: Path, feeds: list[np.ndarray], workdir: Path, *, builtin: bool = False, every: bool = False,
              runs: bool = False) -> dict[str, np.ndarray]:
    """This script on `model` and `feeds` (the inputs in the model's order; with `runs`, each stacked over the calls)
    in a process of its own, its .npz files in `workdir`: output_<k> in order (values() lists them), with `every`
    also tensor_<k>. `builtin`, `every` and `runs` are --builtin, --all and --runs."""
    inputs, outputs = workdir / f"{model.stem}_ref_in.npz", workdir / f"{model.stem}_ref_out.npz"
    np.savez(inputs, **{f"input_{k}": v for k, v in enumerate(feeds)})
    flags = [flag for flag, on in (("--builtin", builtin), ("--all", every), ("--runs", runs)) if on]
    run = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(model), str(inputs), str(outputs), *flags],
                         capture_output=True, text=True)
    assert run.returncode == 0, f"LiteRT failed on {model.name}: {run.stderr[-2000:]}"
    with np.load(outputs) as out:
        return {k: out[k] for k in out.files}


def main(model: str, inputs: str, outputs: str, every: bool = False, runs: bool = False, builtin: bool = False) -> None:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    resolver = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if builtin else OpResolverType.BUILTIN_REF
    interp = Interpreter(model_path=model, experimental_op_resolver_type=resolver,
                         num_threads=1, experimental_preserve_all_tensors=every)
    feeds = np.load(inputs)
    for k, d in enumerate(interp.get_input_details()):  # an input given another size: resized, as a user does
        shape = feeds[f"input_{k}"].shape[1 if runs else 0:]
        if tuple(shape) != tuple(d["shape"]):
            interp.resize_tensor_input(d["index"], list(shape), strict=True)
    interp.allocate_tensors()
    ins, outs = interp.get_input_details(), interp.get_output_details()
    if runs:
        results: list[list[np.ndarray]] = [[] for _ in outs]
        for r in range(len(feeds["input_0"])):
            for k, d in enumerate(ins):
                interp.set_tensor(d["index"], feeds[f"input_{k}"][r])
            interp.invoke()
            for k, d in enumerate(outs):
                results[k].append(interp.get_tensor(d["index"]).copy())
        np.savez(outputs, **{f"output_{k}": np.stack(v) for k, v in enumerate(results)})
        return
    for k, d in enumerate(ins):
        interp.set_tensor(d["index"], feeds[f"input_{k}"])
    interp.invoke()
    result = {f"output_{k}": interp.get_tensor(d["index"]) for k, d in enumerate(outs)}
    if every:
        for d in interp.get_tensor_details():
            try:
                result[f"tensor_{d['index']}"] = interp.get_tensor(d["index"])
            except ValueError:  # a tensor the interpreter does not keep
                pass
    np.savez(outputs, **result)


if __name__ == "__main__":
    flags = sys.argv[4:]
    main(*sys.argv[1:4], every="--all" in flags, runs="--runs" in flags, builtin="--builtin" in flags)
