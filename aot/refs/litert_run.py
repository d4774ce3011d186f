"""LiteRT's interpreter on one set of inputs, keeping every tensor: the process `aotc compare` starts for a
.tflite reference (aot/refs/litert.py), so that an interpreter that crashes on a model is an error line, not
the end of aotc.

    python -m aot.refs.litert_run MODEL.tflite IN.npz OUT.npz RESOLVER

IN.npz holds `tensor_<k>` for each input tensor k of the main subgraph and `wanted`, the indices of the
tensors to return; OUT.npz gets `tensor_<k>` for each of those the interpreter has data for. RESOLVER is an
OpResolverType name (BUILTIN_REF, BUILTIN_WITHOUT_DEFAULT_DELEGATES, AUTO). An input given in another shape
than the file's is resized first (ResizeInputTensor, strict), as `aotc --input-shape` resized it. A failure is
one line on stderr, exit 3.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np


def run(model: str, inputs: str, outputs: str, resolver: str) -> None:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    warnings.simplefilter("ignore")  # preserve_all_tensors with AUTO warns that it is for debugging: it is
    interp = Interpreter(model_path=model, experimental_op_resolver_type=OpResolverType[resolver], num_threads=1,
                         experimental_preserve_all_tensors=True)
    with np.load(inputs) as f:
        feeds = {int(k.removeprefix("tensor_")): f[k] for k in f.files if k.startswith("tensor_")}
        wanted = [int(k) for k in f["wanted"]]
    details = interp.get_input_details()
    for d in details:
        x = feeds[d["index"]]
        if tuple(x.shape) != tuple(d["shape"]):
            interp.resize_tensor_input(d["index"], list(x.shape), strict=True)
    interp.allocate_tensors()
    for d in details:
        interp.set_tensor(d["index"], feeds[d["index"]])
    interp.invoke()
    result = {}
    for k in wanted:
        try:
            result[f"tensor_{k}"] = np.array(interp.get_tensor(k))
        except ValueError:  # no data kept (a delegate's internal tensor)
            pass
    np.savez(outputs, **result)


def main(argv: list[str]) -> int:
    try:
        run(*argv)
    except Exception as e:  # the interpreter's errors are RuntimeErrors of several lines; the first says what
        text = str(e).strip().splitlines()
        print(f"{type(e).__name__}: {text[0] if text else ''}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
