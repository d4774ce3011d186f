"""Inputs and outputs as .npz files keyed by the model's tensor names."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aot.errors import AotcError


def load_inputs(path: str | Path, meta: dict) -> list[np.ndarray]:
    """The model's inputs from `path`, in model order, checked against the bundle's metadata."""
    try:
        data = np.load(path)
    except Exception as e:
        raise AotcError(f"cannot read inputs '{path}': {e}") from e
    return [check_input(meta, spec, data[spec["name"]] if spec["name"] in data else None)
            for spec in meta["inputs"]]


def check_input(meta: dict, spec: dict, value: np.ndarray | None) -> np.ndarray:
    if value is None:
        raise AotcError(f"inputs have no array named '{spec['name']}' (model {meta['name']} needs "
                        f"{', '.join(s['name'] for s in meta['inputs'])})")
    if list(value.shape) != spec["shape"]:
        raise AotcError(f"input '{spec['name']}' has shape {list(value.shape)}, the model needs {spec['shape']}")
    if value.dtype.name != spec["dtype"]:
        raise AotcError(f"input '{spec['name']}' has dtype {value.dtype.name}, the model needs {spec['dtype']}")
    return np.asarray(value, order="C")


def save_outputs(path: str | Path, outputs: dict[str, np.ndarray]) -> None:
    np.savez(path, **outputs)
