"""The reference side of `aotc compare` (aot/compare.py): what computes, on the bundle's inputs, the value each
tapped tensor should have.

A reference is chosen by the model the bundle was compiled from: onnxruntime for an ONNX model (ort.py), LiteRT
for a .tflite file (litert.py, its interpreter in a process of its own: litert_run.py), with the kernels the user
picks. aot/compare.py builds and runs the debug variant, reads the taps and makes the table; a reference only
answers `values`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from aot.errors import AotcError

KERNELS = ("ref", "builtin", "default")  # LiteRT's (--reference-kernels), see litert.py


class Reference(Protocol):
    what: str  # for the table's last line, e.g. "onnxruntime", "LiteRT's reference kernels"
    nodes: str  # what the node column lists: "ONNX nodes", "TFLite ops"
    lsb: int  # the difference in LSB an integer tensor may have by default (--lsb)
    keeps_state: bool  # state inputs start where the model starts them (LiteRT keeps its variables inside)

    def prepare(self, meta: dict, inputs: list[np.ndarray]) -> None:
        """What it can run before the bundle's debug variant is built, on the same inputs, so that a model it
        cannot run is refused before a build (LiteRT's interpreter: everything); `values` runs the rest."""
        ...

    def values(self, meta: dict, inputs: list[np.ndarray], tensors: list[str]) -> dict[str, np.ndarray]:
        """Its value of each tapped tensor it has (by the bundle's name), on the bundle's `inputs` (in
        metadata.json's order), keyed by that name and laid out as the bundle holds it."""
        ...

    def source_nodes(self, nodes: list[str]) -> list[str]:
        """The model's nodes the bundle's node computes, as the reference's user knows them, from the nodes the
        frontend wrote (metadata.json's source map: ONNX nodes, or a TFLite op's nodes)."""
        ...

    def counterpart(self, tensor: str) -> str | None:
        """What the reference calls `tensor` when that is not its own name (a TFLite tensor's index and
        layout), for the verdict; None otherwise."""
        ...


def reference_for(source: Path, kernels: str | None = None) -> Reference:
    """The reference for a bundle compiled from `source` (or compared with it: `aotc compare MODEL OUT`)."""
    from aot.frontend.tflite import is_tflite

    if is_tflite(source):
        from aot.refs.litert import LiteRT

        return LiteRT(source, kernels or "ref")
    if kernels is not None:
        raise AotcError(f"--reference-kernels chooses LiteRT's kernels, for a .tflite model; '{source}' is run by "
                        "onnxruntime")
    from aot.refs.ort import OnnxRuntime

    return OnnxRuntime(source)


__all__ = ["KERNELS", "Reference", "reference_for"]
