"""`aotc run OUT --inputs IN.npz --header vectors.h`: a test vector as C arrays, which a C program compiled
against the bundle reproduces (issue 66: "test vectors as C headers, a command writes them")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import aotc, build_bundle

TFLITE = Path(__file__).parents[1] / "models" / "tflite"

CHECK = r"""
#include <stdio.h>
#include <string.h>
#include "@name@.h"
#include "vectors.h"

static unsigned char arena[@NAME@_ARENA_SIZE] __attribute__((aligned(64)));

int main(void) {
    struct @name@_inputs in;
    struct @name@_outputs out;
    @name@_arena_io(arena, &in, &out);
    if (@name@_init(arena) != 0) return 2;
    memcpy(@name@_input_@in@(arena), @name@_vector_input_@in@, sizeof @name@_vector_input_@in@);
    if (@name@_run(&in, &out, arena) != 0) return 3;
    /* the same code: exact */
    return memcmp(out.@out@, @name@_vector_expected_@out@, sizeof @name@_vector_expected_@out@) != 0;
}
"""


@pytest.mark.full  # a build and a C program per model (the fast tier's time)
@pytest.mark.parametrize("model", ["mlp", "excite_int8"])
def test_header_vector_is_reproduced_by_the_bundle_in_c(tmp_path, model):
    require_tool("gcc")
    if model == "mlp":
        src = tmp_path / "mlp.onnx"
        onnx.save(zoo.mlp(), src)
    else:
        src = TFLITE / f"{model}.tflite"
    meta = build_bundle(src, tmp_path / "out")
    rng = np.random.default_rng(0)
    feeds = {i["name"]: (rng.integers(-128, 128, i["shape"]) if i["dtype"] == "int8"
                         else rng.standard_normal(i["shape"])).astype(i["dtype"]) for i in meta["inputs"]}
    np.savez(tmp_path / "in.npz", **feeds)
    aotc("run", tmp_path / "out", "--inputs", tmp_path / "in.npz", "--header", tmp_path / "vectors.h")
    text = (tmp_path / "vectors.h").read_text()
    integer = meta["outputs"][0]["dtype"] != "float32"
    assert ("exactly (integer outputs)" in text) == integer
    name, i, o = meta["name"], meta["inputs"][0]["field"], meta["outputs"][0]["field"]
    (tmp_path / "check.c").write_text(CHECK.replace("@name@", name).replace("@NAME@", name.upper())
                                      .replace("@in@", i).replace("@out@", o))
    bundle = tmp_path / "out" / "bundle"
    exe = tmp_path / "check"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{bundle / 'include'}", f"-I{tmp_path}",
                    str(tmp_path / "check.c"), str(tmp_path / "out" / f"lib{name}.a"), "-lm", "-lpthread",
                    "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)]).returncode == 0
    assert json.loads((bundle / "metadata.json").read_text())["name"] == name


def test_header_text_names_the_arrays_and_says_how_to_compare():
    """The header alone (no build): arrays named after the I/O fields, exact for integer outputs."""
    from aot.vectors import vectors_header

    meta = {"name": "kws", "target": "mps2-an386",
            "inputs": [{"name": "input", "field": "input", "dtype": "int8", "shape": [1, 4]}],
            "outputs": [{"name": "Identity", "field": "identity", "dtype": "int8", "shape": [1, 2]}]}
    text = vectors_header(meta, [np.array([[1, -2, 3, -4]], np.int8)], {"Identity": np.array([[5, -6]], np.int8)},
                          "in.npz")
    assert "static const int8_t kws_vector_input_input[4] = {" in text
    assert "static const int8_t kws_vector_expected_identity[2] = {" in text
    assert "#define KWS_VECTOR_INPUT_INPUT_COUNT 4u" in text and "exactly (integer outputs)" in text
