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

import json
from dataclasses import replace

import onnx
from onnx import helper, numpy_helper

from aot.errors import AotcError
from aot.ir import Function, Graph, Node, Tensor
from aot.ir.held import initializer_value

DOMAIN_PREFIX = "aotc."
NAME_KEY = "aotc.model_name"  # metadata_props: the C name the partition's symbols were made with


def to_onnx(graph: Graph, folded: onnx.ModelProto, transformed: dict[str, Function] | None = None) -> onnx.ModelProto:
    """`folded` (graph.info.folded_onnx) with graph.functions outlined as local functions. A function in
    `transformed` (its vendor's transform applied) is written as that: the vendor's own nodes,
    their constants as initializers passed in; its ONNX nodes go into an uncalled function of
    domain `aotc.<vendor>.source`, which reading the file splices back as usual."""
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
    kept = {s for n in graph.nodes for s in n.sources()} | \
        {s for fn in graph.functions.values() for n in fn.graph.nodes for s in n.sources()}
    for symbol, fn in graph.functions.items():
        names = {s for n in fn.graph.nodes for s in n.sources() if s in onnx_nodes}
        # Nodes the IR dropped (Identity, Dropout, a QuantizeLinear -> DequantizeLinear pair around a
        # reshape) between two region nodes belong to the region too: a chain of them joins from its start.
        changed = True
        while changed:
            changed = False
            for n in g.node:
                if n.name in names or n.name in member or n.name in kept:
                    continue
                ins = [i for i in n.input if i and i not in init_names]
                outs_used = set().union(*(consumers.get(o, set()) for o in n.output))
                dropped = {c for c in outs_used if c not in kept and c not in member}
                if ins and all(producer.get(i) in names for i in ins) and outs_used \
                        and outs_used <= names | dropped:
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
        done = (transformed or {}).get(symbol)
        if done is None:
            model.functions.append(helper.make_function(domain, symbol, inputs, outputs, body, opset_imports))
            new_nodes.append(helper.make_node(symbol, inputs, outputs, name=symbol, domain=domain))
        else:
            model.functions.append(helper.make_function(domain + SOURCE_SUFFIX, symbol, inputs, outputs, body,
                                                        opset_imports))
            proto, consts = _transformed_proto(done, domain, inputs, outputs, opset_imports)
            known = {i.name for i in g.initializer}
            g.initializer.extend(numpy_helper.from_array(data, name) for name, data in consts if name not in known)
            new_nodes.append(helper.make_node(symbol, list(proto.input), outputs, name=symbol, domain=domain))
            model.functions.append(proto)
        if not any(o.domain == domain for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid(domain, 1))
    del g.node[:]
    g.node.extend(_topological(new_nodes, g))
    return model


SOURCE_SUFFIX = ".source"  # domain of the ONNX nodes of a function written after its vendor's transform
_ORIGIN = "aotc_origin"  # attribute of a vendor node: the ONNX nodes it computes


def _transformed_proto(fn: Function, domain: str, inputs: list[str], outputs: list[str],
                       opset_imports: list) -> tuple[onnx.FunctionProto, list[tuple[str, object]]]:
    """A transformed function as a FunctionProto of its vendor's nodes (op `<vendor>.<Op>` is `<Op>` in
    the vendor's domain), and the constants they read (passed in after the region's inputs)."""
    g = fn.graph
    prefix = fn.compiler + "."
    consts = list(dict.fromkeys(i for n in g.nodes for i in n.inputs if i and g.const(i) is not None))
    nodes = []
    for n in g.nodes:
        attrs = {k: v for k, v in n.attrs.items() if v is not None and v != []}
        if n.origin:
            attrs[_ORIGIN] = list(n.origin)
        op = n.op[len(prefix):] if n.op.startswith(prefix) else n.op
        nodes.append(helper.make_node(op, n.inputs, n.outputs, name=n.name, domain=domain, **attrs))
    if set(g.outputs) != set(outputs):
        raise AotcError(f"cannot write function {fn.global_symbol} after its transform: its outputs "
                        f"({', '.join(g.outputs)}) are not its ONNX nodes' ({', '.join(outputs)})")
    # the ONNX nodes' inputs first (reading the file splices those nodes back), then what the IR reads
    # instead (a quantized tensor where the ONNX nodes dequantize it), then the constants
    ins = [*[i for i in inputs if i not in consts],
           *[i for i in g.inputs if i not in inputs and i not in consts], *consts]
    own = [*opset_imports, *([] if any(o.domain == domain for o in opset_imports)
                             else [helper.make_opsetid(domain, 1)])]
    proto = helper.make_function(domain, fn.global_symbol, ins, outputs, nodes, own)
    transformed = g.info.vendor_passes or g.info.vendor_options  # a vendor transform's record, both or neither
    proto.doc_string = json.dumps({"vendor_passes": g.info.vendor_passes, "vendor_options": g.info.vendor_options}
                                  if transformed else {})
    return proto, [(c, g.const(c)) for c in consts]


def transformed_functions(model: onnx.ModelProto) -> dict[str, onnx.FunctionProto]:
    """The functions of a file `aotc partition --transform` wrote as their vendor's nodes, by symbol."""
    sources = {f.name for f in model.functions
               if f.domain.startswith(DOMAIN_PREFIX) and f.domain.endswith(SOURCE_SUFFIX)}
    return {f.name: f for f in model.functions if f.domain.startswith(DOMAIN_PREFIX)
            and not f.domain.endswith(SOURCE_SUFFIX) and f.name in sources}


def function_from_proto(proto: onnx.FunctionProto, fn: Function, model: onnx.ModelProto) -> Function:
    """A transformed function read back: `fn` (the same region, partitioned again from the source nodes)
    with the vendor's nodes of `proto` as its body, their constants from the model's initializers."""
    inits = {i.name: i for i in model.graph.initializer}
    tensors = dict(fn.graph.tensors)
    read = {i for pn in proto.node for i in pn.input}
    for name in proto.input:
        if name not in fn.graph.inputs and name in read:
            if name not in inits:
                raise AotcError(f"function '{proto.name}' reads '{name}', which is neither its input nor a constant")
            data = initializer_value(inits[name])
            tensors[name] = Tensor(name, tuple(data.shape), str(data.dtype), data)
    nodes = []
    for pn in proto.node:
        attrs = {}
        for a in pn.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, list):
                v = [x.decode() if isinstance(x, bytes) else x for x in v]
            attrs[a.name] = v
        origin = tuple(attrs.pop(_ORIGIN, ()))
        nodes.append(Node(f"{fn.compiler}.{pn.op_type}", pn.name, list(pn.input), list(pn.output), attrs, origin))
    info = replace(fn.graph.info, **(json.loads(proto.doc_string) if proto.doc_string else {}))
    graph = Graph(fn.graph.name, nodes, tensors, list(fn.graph.inputs), list(fn.graph.outputs), info=info)
    return Function(fn.global_symbol, fn.compiler, graph, fn.composite)


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
    sources = {(f.domain[:-len(SOURCE_SUFFIX)], f.name): f for f in model.functions
               if f.domain.startswith(DOMAIN_PREFIX) and f.domain.endswith(SOURCE_SUFFIX)}
    functions = {(f.domain, f.name): sources.get((f.domain, f.name), f) for f in model.functions
                 if f.domain.startswith(DOMAIN_PREFIX) and not f.domain.endswith(SOURCE_SUFFIX)}
    if not functions:
        return model, [], []
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes: list[onnx.NodeProto] = []
    annotations: list[dict] = []
    vendors: list[str] = []
    extra: set[str] = set()  # the constants of vendor nodes, which no ONNX node reads
    for n in model.graph.node:
        fn = functions.get((n.domain, n.op_type))
        if fn is None:
            nodes.append(n)
            continue
        # written after the transform: the ONNX nodes are the source's; the call passes the region's
        # inputs, then the constants of the vendor's nodes, which the ONNX nodes do not read
        call_inputs = list(n.input[:len(fn.input)]) if fn.domain.endswith(SOURCE_SUFFIX) else list(n.input)
        if list(fn.input) != call_inputs or list(fn.output) != list(n.output):
            raise AotcError(f"function '{fn.name}' of domain {fn.domain} is called with other names than its "
                            "parameters; aotc reads only partitions it wrote")
        extra.update(n.input[len(fn.input):])
        vendor = n.domain[len(DOMAIN_PREFIX):]
        vendors.append(vendor)
        nodes.extend(fn.node)
        annotations.append({"target": vendor, "region": {"nodes": [m.name for m in fn.node], "written": True},
                            "symbol": fn.name})
    annotations.append({"target": "host", "rest": True})  # what the file left on the host stays there
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    read = {i for m in nodes for i in m.input}
    inits = [i for i in out.graph.initializer if i.name not in extra or i.name in read]
    del out.graph.initializer[:]
    out.graph.initializer.extend(inits)
    keep = [f for f in out.functions if (f.domain, f.name) not in functions and not f.domain.startswith(DOMAIN_PREFIX)]
    del out.functions[:]
    out.functions.extend(keep)
    keep_ops = [o for o in out.opset_import if not o.domain.startswith(DOMAIN_PREFIX)]
    del out.opset_import[:]
    out.opset_import.extend(keep_ops)
    return out, annotations, list(dict.fromkeys(vendors))


def stored_name(model: onnx.ModelProto) -> str | None:
    """The C name a partitioned file's symbols were made with (None for any other model)."""
    return next((p.value for p in model.metadata_props if p.key == NAME_KEY), None)
