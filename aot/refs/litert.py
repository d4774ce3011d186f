"""LiteRT as `aotc compare`'s reference for a bundle compiled from a .tflite file.

The interpreter keeps every tensor (experimental_preserve_all_tensors) and runs once on the bundle's inputs, in a
process of its own (litert_run.py). A tapped tensor is matched with a TFLite tensor of the main subgraph by the
name the frontend gave it (aot/frontend/tflite/builder.py: the tensor's own name, made unique, for its value as
the file holds it; `<name>_nchw` for the NCHW value a float conv computes, transposed back here). A value the
frontend or the compiler made up (a fused activation's input, a Flatten before FULLY_CONNECTED) has no TFLite
tensor and is not compared; a TFLite tensor aotc folded away has no tap.

The kernels (--reference-kernels):

- ref: LiteRT's reference kernels (OpResolverType.BUILTIN_REF), which the bundle's integer kernels follow bit for
  bit (docs/tflite.md, "Exactness") and TFLM's reference kernels too: the default;
- builtin: its optimised builtin kernels without a delegate (BUILTIN_WITHOUT_DEFAULT_DELEGATES);
- default: what LiteRT runs when nothing is asked (AUTO): the optimised kernels with the XNNPACK delegate on the
  ops it takes (with every tensor kept, one delegate per op). XNNPACK's int8 convolutions round otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from aot.errors import AotcError
from aot.frontend.tflite.builder import NCHW, TO_NCHW, tensor_of, unique_names
from aot.npz import bundle_outputs, dequantize_io, pinned_value
from aot.progress import status

RESOLVERS = {  # --reference-kernels -> (OpResolverType, what the table's last line calls it)
    "ref": ("BUILTIN_REF", "LiteRT's reference kernels"),
    "builtin": ("BUILTIN_WITHOUT_DEFAULT_DELEGATES", "LiteRT's optimised builtin kernels"),
    "default": ("AUTO", "LiteRT's default kernels (XNNPACK)"),
}
# LiteRT's reference resolver registers these builtins only up to the version given, while the converter marks
# their int8 forms one later (the same kernels: the optimised resolver has them at that version)
REF_VERSIONS = {"TILE": 2, "DEPTH_TO_SPACE": 1}


class LiteRT:
    nodes = "TFLite ops"
    lsb = 0  # the bundle's contract is bit-exactness with the reference kernels: show the first LSB apart
    keeps_state = True  # an LSTM's h and c, resource variables: inside the interpreter, from their start

    def __init__(self, model: Path, kernels: str = "ref"):
        if kernels not in RESOLVERS:
            raise AotcError(f"--reference-kernels must be one of {', '.join(RESOLVERS)}, not '{kernels}'")
        try:
            import ai_edge_litert.interpreter  # noqa: F401
        except ImportError as e:
            from aot.paths import install_command

            raise AotcError(f"comparing with LiteRT needs ai-edge-litert; install it with: "
                            f"{install_command('tflite')}") from e
        self.model, self.kernels = model, kernels
        self.resolver, self.what = RESOLVERS[kernels]
        self._file = _read(model)
        sg = self._file.subgraphs[0]
        from ai_edge_litert import schema_py_generated as sch

        from aot.frontend.tflite.reader import NUMPY_DTYPE, op_code_name, tensor_name

        self.names = unique_names([tensor_name(t, k) for k, t in enumerate(sg.tensors or [])], set())
        self.index = {n: k for k, n in enumerate(self.names)}
        self.inputs = [int(i) for i in (sg.inputs if sg.inputs is not None else [])]
        self.dtypes = [NUMPY_DTYPE.get(int(t.type)) for t in sg.tensors or []]
        builtins = {v: k for k, v in vars(sch.BuiltinOperator).items() if not k.startswith("_")}
        codes = [op_code_name(c, builtins) for c in self._file.operatorCodes or []]
        # the main subgraph's ops as the frontend names their nodes (TflOp.name: CONV_2D_3)
        self.ops = {f"{codes[op.opcodeIndex].split(':')[-1]}_{j}" for j, op in enumerate(sg.operators or [])}
        self._matched: dict[str, tuple[int, str]] = {}
        self._by_index: dict[int, np.ndarray] | None = None  # every tensor the interpreter computed (prepare)

    def source_nodes(self, nodes: list[str]) -> list[str]:
        """The TFLite ops whose nodes (the frontend's: CONV_2D_3, CONV_2D_3_relu for its fused activation)
        `nodes` are, in order; `nodes` themselves when they are none's (a layout transpose)."""
        ops = [next((n[:k] for k in range(len(n), 0, -1) if n[:k] in self.ops and n[k:k + 1] in ("", "_")), None)
               for n in nodes]
        found = list(dict.fromkeys(o for o in ops if o))
        return found or nodes

    def counterpart(self, tensor: str) -> str | None:
        k, layout = self._matched.get(tensor, (None, None))
        if k is None:
            return None
        return f"TFLite tensor {k}" + (", transposed to NCHW" if layout == NCHW else "")

    def prepare(self, meta: dict, inputs: list[np.ndarray]) -> None:
        """Run the interpreter now, before the bundle's debug variant is built, keeping every tensor an op
        computes: a model LiteRT cannot run (a kernel it lacks) is refused before anything is built."""
        sg = self._file.subgraphs[0]
        buffers = self._file.buffers or []
        computed = [k for k, t in enumerate(sg.tensors or []) if not (
            0 < t.buffer < len(buffers) and (buffers[t.buffer].data is not None and len(buffers[t.buffer].data)
                                             or buffers[t.buffer].offset > 1))]
        feeds = self._feeds(meta, inputs)
        with tempfile.TemporaryDirectory(prefix="aotc-litert-") as tmp:
            model, fed, got = self._runnable(Path(tmp)), Path(tmp) / "in.npz", Path(tmp) / "out.npz"
            np.savez(fed, wanted=np.array(computed, np.int64), **{f"tensor_{k}": x for k, x in feeds.items()})
            with status(f"running {self.what} on {self.model.name}, every tensor kept"):
                r = subprocess.run([sys.executable, "-m", "aot.refs.litert_run", str(model), str(fed), str(got),
                                    self.resolver], capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                raise AotcError(self._failure(r))
            with np.load(got) as f:
                self._by_index = {int(k.removeprefix("tensor_")): f[k] for k in f.files}

    def values(self, meta: dict, inputs: list[np.ndarray], tensors: list[str]) -> dict[str, np.ndarray]:
        if self._by_index is None:
            self.prepare(meta, inputs)
        self._matched = {t: m for t in tensors if (m := tensor_of(t, self.index)) is not None}
        refs = {}
        for t, (k, layout) in self._matched.items():
            v = self._by_index.get(k)
            if v is not None:
                refs[t] = np.ascontiguousarray(v.transpose(TO_NCHW)) if layout == NCHW and v.ndim == 4 else v
        return bundle_outputs(meta, refs)

    def _feeds(self, meta: dict, inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
        """The interpreter's inputs by tensor index, from the bundle's (by name): a quantized integer input of a
        bundle compiled with --quantized-io dequantized where the file's is float, a pinned one its value."""
        given = {s["name"]: (s, x) for s, x in zip(meta["inputs"], inputs, strict=True)}
        given.update({s["name"]: (s, pinned_value(s)) for s in meta.get("pinned_inputs", [])})
        given.update({s["name"]: (s, np.zeros(s["shape"], s["dtype"])) for s in meta.get("pruned_inputs", [])})
        feeds = {}
        for k in self.inputs:
            name = self.names[k]
            if name not in given:
                raise AotcError(f"the bundle has no input '{name}' of '{self.model}': compare it with the model it "
                                f"was compiled from (bundle inputs: {', '.join(given) or 'none'})")
            spec, x = given[name]
            want = self.dtypes[k]
            if want in ("float32", "float64") and x.dtype.kind in "iu" and "scale" in spec:
                x = dequantize_io(spec, x).astype(want)
            t = self._file.subgraphs[0].tensors[k]
            shape = [int(d) for d in (t.shape if t.shape is not None else [])]
            free = [int(d) < 0 for d in (t.shapeSignature if t.shapeSignature is not None else [])]
            fits = len(shape) == x.ndim and all(d == e or (free[i] if i < len(free) else False)
                                                for i, (d, e) in enumerate(zip(shape, x.shape, strict=True)))
            if x.dtype != np.dtype(want or x.dtype) or not fits:
                raise AotcError(f"input '{name}' of '{self.model}' is {want}{shape}, the bundle's {x.dtype}"
                                f"{list(x.shape)}: compare the bundle with the model it was compiled from")
            feeds[k] = x
        return feeds

    def _runnable(self, tmp: Path) -> Path:
        """The file as LiteRT's chosen resolver runs it: itself, or a copy with what LiteRT refuses and the
        model does not need reset: REF_VERSIONS for the reference kernels, and the quantized_dimension older
        files (TFLM's person_detect) set on per-tensor parameters (TFLM ignores it; LiteRT refuses the file)."""
        m, changed = self._file, False
        from ai_edge_litert import schema_py_generated as sch

        if self.resolver == "BUILTIN_REF":
            versions = {getattr(sch.BuiltinOperator, op): v for op, v in REF_VERSIONS.items()}
            for c in m.operatorCodes or []:
                if c.version > versions.get(c.builtinCode, c.version):
                    c.version, changed = versions[c.builtinCode], True
        for g in m.subgraphs:
            for t in g.tensors or []:
                q = t.quantization
                if q is not None and t.shape is not None and q.quantizedDimension >= max(len(t.shape), 1):
                    q.quantizedDimension, changed = 0, True
        if not changed:
            return self.model
        import flatbuffers

        fb = flatbuffers.Builder(0)
        fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
        path = tmp / f"litert_{self.model.name}"
        path.write_bytes(bytes(fb.Output()))
        return path

    def _failure(self, r: subprocess.CompletedProcess) -> str:
        lines = [line for line in r.stderr.strip().splitlines() if line.strip() and not line.startswith("INFO:")]
        why = lines[-1].removeprefix("ValueError: ").removeprefix("RuntimeError: ") if lines else \
            f"exit {r.returncode}"
        if r.returncode < 0:
            why = f"it crashed (signal {-r.returncode})"
        builtin = re.search(r"Didn't find op for builtin opcode '(\w+)' version '(\d+)'", why)
        if builtin:
            return (f"{self.what} have no kernel for {builtin[1]} (version {builtin[2]}), which '{self.model.name}' "
                    "uses" + (": compare with --reference-kernels builtin" if self.kernels == "ref" else ""))
        custom = re.search(r"unresolved custom op: ([^.\s]+)", why)
        if custom:
            return (f"LiteRT has no kernel for the custom op {custom[1]}, which '{self.model.name}' uses: there is "
                    "no LiteRT reference for this model")
        return f"{self.what} could not run '{self.model}': {why}"


def _read(model: Path):
    from ai_edge_litert import schema_py_generated as sch

    try:
        buf = model.read_bytes()
        if not sch.Model.ModelBufferHasIdentifier(buf, 0):
            raise ValueError("no TFL3 file identifier")
        m = sch.ModelT.InitFromPackedBuf(buf, 0)
    except Exception as e:
        raise AotcError(f"cannot read the TFLite model '{model}': {str(e).splitlines()[0] if str(e) else e}") from e
    if not m.subgraphs:
        raise AotcError(f"cannot read the TFLite model '{model}': it has no subgraph")
    return m
