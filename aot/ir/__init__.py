"""What every stage shares: the IR (graph.py), the symbolic extents of rows known only at run time
(extents.py), one ONNX node evaluated by onnx's reference (evaluate.py), initializer values held
apart from their protos (held.py), and aotc's own op schemas (schemas.py; its TFLite integer ops,
tflite_ops.py). Nothing here imports a stage (tests/structure/test_layering.py)."""

from aot.ir.graph import CONTROL_MARKERS, DTYPES, Function, Graph, GraphInfo, Node, Tensor, np_dtype

__all__ = ["CONTROL_MARKERS", "DTYPES", "Function", "Graph", "GraphInfo", "Node", "Tensor", "np_dtype"]
