"""Manual annotation: the user says which nodes, or which region, go to which target.

The file (JSON) is a list of entries:

    [
      {"target": "cref", "nodes": ["fc1", "relu1"]},                       # these nodes, merged as usual
      {"target": "host", "nodes": ["softmax"]},                            # keep on the host
      {"target": "cref", "region": {"nodes": ["fc2", "relu2", "fc3"]}},    # exactly this region
      {"target": "cref", "region": {"inputs": ["h1"], "outputs": ["h3"]}}, # the region between tensors
      {"target": "host", "rest": true}                                     # every node not named above
    ]

A region entry may name its function's global symbol ("symbol": "mlp_cref_0"): a partition read
back from ONNX keeps the symbols it was written with, and with "rest" the nodes it left on the
host stay there, so `aotc P.onnx` compiles exactly the partition in the file.

Node names are the ONNX node names (a Conv that absorbed its BatchNormalization
answers to either name). Everything is validated: unknown names and targets,
nodes the vendor cannot take, regions that are not convex or whose boundary does
not close are refused with a message naming the nodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from aot.csource.names import is_safe_ident
from aot.errors import AotcError
from aot.ir import Graph, Node
from aot.partition.state import HOST, Region


@dataclass
class Annotations:
    nodes: dict[str, str] = field(default_factory=dict)  # IR node name -> target
    # (target, IR node names, fixed function symbol or None)
    regions: list[tuple[str, tuple[str, ...], str | None]] = field(default_factory=list)

    def placements(self) -> dict[str, str]:
        """Node -> target for every node placed by hand, the nodes of manual regions included."""
        pairs = dict(self.nodes)
        for target, names, _ in self.regions:
            pairs.update({n: target for n in names})
        return pairs

    def manual_regions(self) -> tuple[Region, ...]:
        return tuple(Region(target, names, manual=True, symbol=symbol) for target, names, symbol in self.regions)


def load_annotations(path: str | Path) -> list[dict]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise AotcError(f"cannot read annotation file '{path}': {e}") from e
    if isinstance(data, dict):
        data = data.get("annotations", [])
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise AotcError(f"annotation file '{path}' must hold a list of {{\"target\": ..., \"nodes\": [...]}} entries")
    return data


def resolve(entries: list[dict], graph: Graph, targets: list[str]) -> Annotations:
    """Map the user's entries onto IR nodes, refusing anything that does not fit."""
    by_source: dict[str, list[str]] = {}  # ONNX node -> the IR nodes computing it (a rewrite may make several)
    for n in graph.nodes:
        for s in n.sources():
            by_source.setdefault(s, []).append(n.name)
    ann = Annotations()
    claimed: dict[str, str] = {}
    symbols: set[str] = set()
    rest: str | None = None  # target of the nodes no entry names
    for k, entry in enumerate(entries):
        target = entry.get("target")
        if target != HOST and target not in targets:
            raise AotcError(f"annotation {k}: target '{target}' is not an enabled vendor "
                            f"(enabled: {', '.join(targets) or 'none'}; add --vendor {target})")
        if entry.get("rest"):
            if target != HOST or "nodes" in entry or "region" in entry:
                raise AotcError(f"annotation {k}: \"rest\" keeps the nodes no entry names on the host: "
                                "{\"target\": \"host\", \"rest\": true}, and nothing else")
            rest = HOST
            continue
        if "region" in entry:
            names = _region_nodes(entry["region"], graph, by_source, k)
            if target != HOST:
                check_convex(graph, names, f"annotation {k}: region for {target}")
        elif "nodes" in entry:
            names = _names(entry["nodes"], by_source, k)
        else:
            raise AotcError(f"annotation {k}: needs \"nodes\" or \"region\"")
        for n in names:
            if claimed.get(n, target) != target:
                raise AotcError(f"annotation {k}: node '{n}' is annotated for both {claimed[n]} and {target}")
            claimed[n] = target
        if "region" in entry and target != HOST:
            ann.regions.append((target, tuple(names), _symbol(entry, symbols, k)))
        else:
            ann.nodes.update({n: target for n in names})
    if rest is not None:
        ann.nodes.update({n.name: rest for n in graph.nodes if n.name not in claimed})
    return ann


def _symbol(entry: dict, taken: set[str], k: int) -> str | None:
    symbol = entry.get("symbol")
    if symbol is None:
        return None
    if not isinstance(symbol, str) or not is_safe_ident(symbol):
        raise AotcError(f"annotation {k}: symbol {symbol!r} is not a C identifier aotc may use")
    if symbol in taken:
        raise AotcError(f"annotation {k}: symbol '{symbol}' names two regions")
    taken.add(symbol)
    return symbol


def _names(raw: object, by_source: dict[str, list[str]], k: int, written: bool = False) -> list[str]:
    """The IR nodes computing the named ONNX nodes. A region read from a file aotc wrote (`written`)
    may name ONNX nodes the import dropped (an Identity, a QuantizeLinear -> DequantizeLinear pair
    around a reshape): they are skipped."""
    if not isinstance(raw, list) or not raw:
        raise AotcError(f"annotation {k}: \"nodes\" must be a non-empty list of node names")
    missing = [str(r) for r in raw if r not in by_source]
    if written and len(missing) < len(raw):
        raw = [r for r in raw if r in by_source]
    elif missing:
        raise AotcError(f"annotation {k}: no node named {', '.join(repr(m) for m in missing)} in the model")
    return list(dict.fromkeys(m for r in raw for m in by_source[r]))


def _region_nodes(region: dict, graph: Graph, by_source: dict[str, list[str]], k: int) -> list[str]:
    if "nodes" in region:
        return _names(region["nodes"], by_source, k, bool(region.get("written")))
    ins, outs = set(region.get("inputs", [])), list(region.get("outputs", []))
    unknown = [t for t in list(ins) + outs if t not in graph.tensors]
    if unknown or not outs:
        raise AotcError(f"annotation {k}: region needs \"outputs\" naming tensors of the model"
                        + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    producers = graph.producers()
    names: dict[str, None] = {}  # ordered set
    stack = list(outs)
    seen: set[str] = set()
    while stack:
        t = stack.pop()
        if t in seen or t in ins:
            continue
        seen.add(t)
        p = producers.get(t)
        if p is None:
            if graph.tensors[t].is_const:
                continue
            raise AotcError(f"annotation {k}: region boundary does not close: it reaches model input '{t}', "
                            "which is not among the region's inputs")
        names[p.name] = None
        stack.extend(i for i in p.inputs if i)
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    return sorted(names, key=order.__getitem__)


def check_convex(graph: Graph, names: list[str], what: str) -> None:
    """Refuse a region that a path leaves and re-enters (it could not run as one call)."""
    inside = set(names)
    producers = graph.producers()
    tainted: dict[str, bool] = {}  # node outside the region that depends on the region
    for n in graph.nodes:
        preds = [producers[i] for i in n.inputs if i in producers]
        from_region = any(p.name in inside or tainted.get(p.name, False) for p in preds)
        if n.name in inside:
            bad = [p for p in preds if p.name not in inside and tainted.get(p.name)]
            if bad:
                raise AotcError(f"{what} is not convex: {_desc(bad[0])} takes data from the region and feeds "
                                f"{_desc(n)} back into it; add it to the region or split the region")
        else:
            tainted[n.name] = from_region


def _desc(n: Node) -> str:
    return f"node '{n.name}' ({n.op})"
