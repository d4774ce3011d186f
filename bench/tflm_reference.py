"""Run a .tflite file in TFLM's own interpreter (pip install tflite-micro, in a venv of its own: it needs
numpy 2) on the inputs of an .npz, one invoke per run of one interpreter, so the state TFLM keeps
(the signal library's noise estimate, variables) carries from run to run as in firmware:

    /work/venvs/tflm/bin/python bench/tflm_reference.py MODEL IN.npz OUT.npz

IN.npz holds input_<k> with a leading axis of runs (those past the file's inputs, a bundle's state, are
ignored); OUT.npz gets output_<k> the same way. The reference
bench/tflm_models.py --tflm-python uses for the files LiteRT cannot run (TFLM's signal ops).
"""

import sys

import numpy as np
from tflite_micro.python.tflite_micro import runtime


def main() -> None:
    model, inputs, out = sys.argv[1:4]
    feeds = np.load(inputs)
    interp = runtime.Interpreter.from_file(model, arena_size=1 << 22)
    n_in = 0
    while f"input_{n_in}" in feeds.files:
        try:
            interp.get_input_details(n_in)
        except Exception:  # past the file's inputs: a bundle's state inputs
            break
        n_in += 1
    runs = feeds["input_0"].shape[0]
    outs: dict[int, list[np.ndarray]] = {}
    for r in range(runs):
        for k in range(n_in):
            interp.set_input(feeds[f"input_{k}"][r], k)
        interp.invoke()
        k = 0
        while True:
            try:
                outs.setdefault(k, []).append(interp.get_output(k).copy())
            except Exception:  # no output k: TFLM's runtime raises past the last
                outs.pop(k, None)
                break
            k += 1
    np.savez(out, **{f"output_{k}": np.stack(v) for k, v in outs.items()})


if __name__ == "__main__":
    main()
