"""The partition as an ONNX file: each region an ONNX local function in domain `aotc.<vendor>`.

Writing starts from the model as the frontend folded it (static shapes, constant
chains folded), moves each region's ONNX nodes into a FunctionProto named by the
function's global symbol, and calls it from the main graph. Formal parameter
names equal the tensor names at the call site, and the constants a region reads
are passed in as inputs, so the file is ordinary ONNX (Netron shows the regions;
onnxruntime can run it) and reading it back is a plain splice that yields the
same regions as manual annotations. Reading back keeps the file's decisions whole: each region
keeps its function's symbol, the nodes outside every region stay on the host, and the model's C
name (in metadata_props) is the default name of the bundle, so `aotc P.onnx` compiles exactly the
partition `aotc partition ... -o P.onnx` wrote.
"""

from __future__ import annotations

import onnx
from onnx import helper

from aot.errors import AotcError
from aot.ir import Graph

DOMAIN_PREFIX = "aotc."
NAME_KEY = "aotc.model_name"  # metadata_props: the C name the partition's symbols were made with


def to_onnx(graph: Graph, folded: onnx.ModelProto) -> onnx.ModelProto:
    """`folded` (graph.meta['onnx']) with graph.functions outlined as local functions."""
    model = onnx.ModelProto()
    model.CopyFrom(folded)
    if graph.functions:
        kept = [p for p in model.metadata_props if p.key != NAME_KEY]
        del model.metadata_props[:]
        model.metadata_props.extend(kept)
        model.metadata_props.add(key=NAME_KEY, value=graph.name)
    g = model.graph
    onnx_nodes = {n.name: n for n in g.node}
    consumers: dict[str, set[str]] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, set()).add(n.name)
    init_names = {i.name for i in g.initializer}
    producer = {o: n.name for n in g.node for o in n.output if o}
    member: dict[str, str] = {}
    for symbol, fn in graph.functions.items():
        names = {s for n in fn.graph.nodes for s in n.sources() if s in onnx_nodes}
        # Nodes the IR dropped (Identity, Dropout) between two region nodes belong to the region too.
        changed = True
        while changed:
            changed = False
            for n in g.node:
                if n.name in names or n.name in member:
                    continue
                ins = [i for i in n.input if i and i not in init_names]
                outs_used = set().union(*(consumers.get(o, set()) for o in n.output))
                if ins and all(producer.get(i) in names for i in ins) and outs_used and outs_used <= names:
                    names.add(n.name)
                    changed = True
        member.update({nm: symbol for nm in names})

    opset_imports = list(model.opset_import)
    new_nodes: list[onnx.NodeProto] = []
    placed: set[str] = set()
    for n in g.node:
        symbol = member.get(n.name)
        if symbol is None:
            new_nodes.append(n)
            continue
        if symbol in placed:
            continue
        placed.add(symbol)
        fn = graph.functions[symbol]
        body = [m for m in g.node if member.get(m.name) == symbol]
        produced = {o for m in body for o in m.output if o}
        inputs = list(dict.fromkeys(i for m in body for i in m.input if i and i not in produced))
        used_after = {i for m in g.node if member.get(m.name) != symbol for i in m.input} | {o.name for o in g.output}
        outputs = [o for m in body for o in m.output if o and o in used_after]
        domain = DOMAIN_PREFIX + fn.compiler
        model.functions.append(helper.make_function(domain, symbol, inputs, outputs, body, opset_imports))
        new_nodes.append(helper.make_node(symbol, inputs, outputs, name=symbol, domain=domain))
        if not any(o.domain == domain for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid(domain, 1))
    del g.node[:]
    g.node.extend(_topological(new_nodes, g))
    return model


def _topological(nodes: list[onnx.NodeProto], g: onnx.GraphProto) -> list[onnx.NodeProto]:
    available = {i.name for i in g.input} | {i.name for i in g.initializer} | {""}
    pending, out = list(nodes), []
    while pending:
        for k, n in enumerate(pending):
            if all(i in available for i in n.input):
                out.append(pending.pop(k))
                available.update(n.output)
                break
        else:
            raise AotcError("the partitioned model has a cycle between regions")
    return out


def from_onnx(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[dict], list[str]]:
    """Splice aotc.* local functions back into the graph.

    Returns the plain model, the regions as manual annotations, and the vendors in order of use."""
    functions = {(f.domain, f.name): f for f in model.functions if f.domain.startswith(DOMAIN_PREFIX)}
    if not functions:
        return model, [], []
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes: list[onnx.NodeProto] = []
    annotations: list[dict] = []
    vendors: list[str] = []
    for n in model.graph.node:
        fn = functions.get((n.domain, n.op_type))
        if fn is None:
            nodes.append(n)
            continue
        if list(fn.input) != list(n.input) or list(fn.output) != list(n.output):
            raise AotcError(f"function '{fn.name}' of domain {fn.domain} is called with other names than its "
                            "parameters; aotc reads only partitions it wrote")
        vendor = fn.domain[len(DOMAIN_PREFIX):]
        vendors.append(vendor)
        nodes.extend(fn.node)
        annotations.append({"target": vendor, "region": {"nodes": [m.name for m in fn.node]}, "symbol": fn.name})
    annotations.append({"target": "host", "rest": True})  # what the file left on the host stays there
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    keep = [f for f in out.functions if (f.domain, f.name) not in functions]
    del out.functions[:]
    out.functions.extend(keep)
    keep_ops = [o for o in out.opset_import if not o.domain.startswith(DOMAIN_PREFIX)]
    del out.opset_import[:]
    out.opset_import.extend(keep_ops)
    return out, annotations, list(dict.fromkeys(vendors))


def stored_name(model: onnx.ModelProto) -> str | None:
    """The C name a partitioned file's symbols were made with (None for any other model)."""
    return next((p.value for p in model.metadata_props if p.key == NAME_KEY), None)
