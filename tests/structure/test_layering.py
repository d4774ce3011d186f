"""Which part of the compiler may import which: the pipeline's stages read the shared base (aot/ir/
and the helpers beside it) and the typed values of the stages before them, never another stage's
internals (DESIGN.md: "no stage reaches back into an earlier one"). Read from the source with ast,
imports inside functions included, so a lazy import cannot hide a dependency."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

AOT = Path(__file__).resolve().parents[2] / "aot"

# What every stage may read: the IR and its schemas, errors and limits, C formatting, the quantisation
# arithmetic, where the package's files are, progress lines.
BASE = {"aot", "ir", "errors", "limits", "unsupported", "qmath", "csource", "paths", "user_paths", "progress"}

# stage -> the other parts it may import besides BASE. The stages run frontend -> passes -> partition
# -> select (over the kernel table) -> plan -> emit_c; vendors plug into partition and emit_c.
ALLOWED: dict[str, set[str]] = {
    "frontend": set(),
    "passes": set(),
    "partition": {"passes", "vendor"},         # runs the simplification passes; asks vendors what they take
    "kernels": set(),
    "plan": set(),
    "select": {"kernels", "plan"},             # picks from the kernel table; the plan's view of each op's memory
    "emit_c": {"kernels", "plan", "select", "vendor"},  # writes what the stages before it chose
    "vendor": {"partition", "passes", "plan", "targets"},  # patterns, its passes, its workspace plan, its target
    "targets": {"emit_c"},                      # fits a written bundle to a board (the Bundle type alone)
    # the base itself imports nothing above it
    **{b: set() for b in BASE - {"aot"}},
}


def _part(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "aot":
        return None
    return parts[1] if len(parts) > 1 else "aot"


def _module(path: Path) -> str:
    rel = path.relative_to(AOT.parent).with_suffix("")
    name = ".".join(rel.parts)
    return name.removesuffix(".__init__")


def _statements(body: list[ast.stmt], typing: bool) -> Iterator[ast.stmt]:
    """Every statement of `body` at any depth (imports are statements: no need to walk the expressions, which
    made three walks of the package 14 s); `typing=False` leaves out the bodies of `if TYPE_CHECKING:`."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            typing_only = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            if field == "body" and typing_only and not typing:
                continue
            yield from _statements(getattr(node, field, []), typing)


def _imports(path: Path, typing: bool = True) -> set[str]:
    """The aot modules `path` imports, at any depth of its code; `typing=False` leaves out those under
    `if TYPE_CHECKING:` (for annotations alone, never run)."""
    out: set[str] = set()
    for node in _statements(ast.parse(path.read_text()).body, typing):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("aot"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("aot"):
            for a in node.names:  # `from aot.x import y`: y may be a module of its own
                sub = f"{node.module}.{a.name}"
                is_module = (AOT.parent / Path(*sub.split("."))).with_suffix(".py").is_file() or \
                    (AOT.parent / Path(*sub.split("."))).is_dir()
                out.add(sub if is_module else node.module)
    return out


@functools.cache
def _graph(typing: bool = True) -> dict[str, set[str]]:
    return {_module(p): _imports(p, typing) for p in sorted(AOT.rglob("*.py"))}


def test_stages_import_only_what_they_may():
    wrong = []
    for module, imports in _graph().items():
        src = _part(module)
        if src not in ALLOWED:
            continue  # the drivers (compiler, cli, build, bench, ...) sit above every stage
        for imp in sorted(imports):
            dst = _part(imp)
            if dst and dst != src and dst not in BASE | ALLOWED[src]:
                wrong.append(f"{module} imports {imp} ({src} -> {dst})")
    assert not wrong, "imports across stages that the layering does not allow:\n" + "\n".join(wrong)


# Import circles still to be broken; each must exist (a circle broken comes off this list).
KNOWN_CIRCLES: list[set[str]] = []


def _circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_import_circles_are_only_the_known_ones():
    graph = _graph(typing=False)
    # a package's __init__ re-exporting its modules is not a circle with them
    graph = {m: {i for i in imps if not (m.startswith(i + ".") or i.startswith(m + "."))} for m, imps in graph.items()}
    found = _circles(graph)
    new = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert not new, f"new import circles: {new}"
    assert not gone, f"circles broken (take them off KNOWN_CIRCLES): {gone}"


def test_fused_and_elementwise_kernels_cover_their_schemas():
    """The op names aot/ir/schemas.py declares are the ones the kernels implement, both ways."""
    from aot.ir import schemas
    from aot.kernels import elementwise, fused

    assert set(elementwise.OPS) == schemas.ELEMENTWISE_OPS
    assert set(fused.UNARY) == schemas.FUSED_UNARY and set(fused.BINARY) == schemas.FUSED_BINARY


def test_tflite_int8_kernels_cover_their_schemas():
    """The TFLite ops aot/ir/tflite_ops.py declares are the ones the kernels implement, both ways."""
    from aot.ir import tflite_ops
    from aot.kernels import detect, hash, philox, tflite_hybrid, tflite_int8, tflm_signal

    detect_ops = {tflite_ops.DETECTION_POSTPROCESS, tflite_ops.NON_MAX_SUPPRESSION}
    assert set(tflite_int8.OPS) | set(tflite_hybrid.OPS) | detect_ops | set(tflm_signal.OPS) | set(hash.OPS) \
        | set(philox.OPS) == set(tflite_ops.SCHEMAS)
    assert detect_ops <= set(detect.OPS)  # the custom op and NMS, by the detect family


def test_parts_listed_exist():
    parts = defaultdict(int)
    for module in _graph():
        parts[_part(module)] += 1
    assert set(ALLOWED) <= set(parts), set(ALLOWED) - set(parts)
