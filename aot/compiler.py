"""The pipeline, one plain function per stage: ONNX -> IR -> simplified -> planned C bundle."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import onnx

from aot.emit_c import Bundle, build_bundle
from aot.frontend import import_model, load_model, sanitize
from aot.ir import Graph
from aot.passes import simplify
from aot.targets import get_target


@dataclass(frozen=True)
class Options:
    name: str | None = None  # C prefix of the bundle; default: the model file's stem
    target: str = "host"


def compile_model(model: onnx.ModelProto, options: Options = Options(), source: str = "model.onnx") -> Bundle:
    name = sanitize(options.name or Path(source).stem)
    graph = import_model(model, name)
    graph = simplify(graph)
    return build_bundle(graph, name, target=options.target, source=source)


def compile_file(path: str | Path, options: Options = Options()) -> Bundle:
    get_target(options.target)  # an unknown target is refused before any work
    return compile_model(load_model(path), options, source=str(Path(path).resolve()))


def lower(model: onnx.ModelProto, name: str = "model") -> Graph:
    """The IR as the code generator sees it (for tests and tools)."""
    return simplify(import_model(model, name))
