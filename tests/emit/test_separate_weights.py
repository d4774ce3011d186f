"""--separate-weights (issue 66): the model's weights in a file of their own, which the library does not link;
firmware hands it to <name>_load_weights from any address, which refuses another model's, a damaged or a
truncated one, and run refuses to start before a load succeeded."""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import aotc, build_bundle, reference, run_bundle

from aot.emit_c.weights_file import ERRORS, HEADER_BYTES, read_header

TFLITE = Path(__file__).parents[1] / "models" / "tflite"

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lenet.h"

static unsigned char file[1 << 20] __attribute__((aligned(64)));
static unsigned char retrained[1 << 20] __attribute__((aligned(64)));
static unsigned char other[1 << 20] __attribute__((aligned(64)));
static unsigned char arena[LENET_ARENA_SIZE] __attribute__((aligned(64)));

static long slurp(const char *path, unsigned char *into) {
    FILE *f = fopen(path, "rb");
    long n;
    if (f == NULL) exit(2);
    n = (long)fread(into, 1, 1 << 20, f);
    fclose(f);
    return n;
}

static void run(const char *what, struct lenet_inputs *in, struct lenet_outputs *out) {
    const float *y = (const float *)out->@out@;
    size_t i;
    float *x = lenet_input_@in@(arena);
    for (i = 0; i < LENET_@IN@_BYTES / sizeof(float); ++i) x[i] = (float)(i % 7u) * 0.25f - 0.75f;
    printf("%s %d", what, (int)lenet_run(in, out, arena));
    for (i = 0; i < LENET_@OUT@_BYTES / sizeof(float); ++i) printf(" %a", (double)y[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    struct lenet_inputs in;
    struct lenet_outputs out;
    long n = slurp(argv[1], file), r = slurp(argv[2], retrained), m = slurp(argv[3], other);
    (void)argc;
    lenet_arena_io(arena, &in, &out);
    if (lenet_init(arena) != 0) return 1;
    printf("not_loaded %d\n", (int)lenet_run(&in, &out, arena));
    printf("garbage %d\n", (int)lenet_load_weights("not a weights file at all, not at all ...........", 64));
    printf("other_model %d\n", (int)lenet_load_weights(other, (size_t)m));
    printf("truncated %d\n", (int)lenet_load_weights(file, (size_t)n - 1));
    memmove(file + 1, file, (size_t)n);
    printf("misaligned %d\n", (int)lenet_load_weights(file + 1, (size_t)n));
    memmove(file, file + 1, (size_t)n);
    file[n - 5] ^= 0x10;
    printf("damaged %d\n", (int)lenet_load_weights(file, (size_t)n));
    file[n - 5] ^= 0x10;
    printf("good %d\n", (int)lenet_load_weights(file, (size_t)n));
    run("first", &in, &out);
    printf("update %d\n", (int)lenet_load_weights(retrained, (size_t)r));
    run("updated", &in, &out);
    return 0;
}
"""


def _model(path: Path, seed: int = 0) -> dict[str, np.ndarray]:
    model = zoo.lenet()
    if seed:  # the same graph, other weights: another model to the header
        for init in model.graph.initializer:
            arr = onnx.numpy_helper.to_array(init)
            init.CopyFrom(onnx.numpy_helper.from_array((arr * 1.5).astype(arr.dtype), init.name))
    onnx.save(model, path)
    return zoo.random_inputs(model)


@pytest.mark.full  # the fast tier's time (a build and run of a model); the compile-only checks stay fast
def test_weights_apart_from_the_library_give_the_same_outputs(tmp_path):
    feeds = _model(tmp_path / "lenet.onnx")
    meta = build_bundle(tmp_path / "lenet.onnx", tmp_path / "sep", "--separate-weights")
    build_bundle(tmp_path / "lenet.onnx", tmp_path / "linked")
    ours, linked = run_bundle(tmp_path / "sep", feeds), run_bundle(tmp_path / "linked", feeds)
    for k in linked:
        np.testing.assert_array_equal(ours[k], linked[k])  # the same code, reading the same bytes elsewhere
    sep = meta["memory"]["separate_weights"]
    data = (tmp_path / "sep" / "bundle" / sep["file"]).read_bytes()
    head = read_header(data)
    assert head["magic"] == b"AOTCWTS\0" and head["nbytes"] == len(data) - HEADER_BYTES == sep["weights_bytes"]
    assert head["crc32"] == zlib.crc32(data[HEADER_BYTES:]) == sep["crc32"]
    assert head["model_id"].hex() == sep["model_id"]
    lib = next((tmp_path / "sep").glob("liblenet.a"))
    nm = subprocess.run(["nm", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "lenet_weights" in nm and " R lenet_weights" not in nm  # a pointer in .bss, not a blob in .rodata
    assert lib.stat().st_size < next((tmp_path / "linked").glob("liblenet.a")).stat().st_size - sep["weights_bytes"] / 2


def test_load_weights_takes_an_update_and_refuses_what_is_not_this_models(tmp_path):
    """The firmware built from lenet's compile: an update of its weights (retrained: the same code) loads and
    computes the retrained model; another model's file, a damaged, truncated or misaligned one are refused."""
    require_tool("gcc")
    _model(tmp_path / "lenet.onnx")
    _model(tmp_path / "retrained.onnx", seed=1)
    onnx.save(zoo.mlp(), tmp_path / "mlp.onnx")
    meta = build_bundle(tmp_path / "lenet.onnx", tmp_path / "sep", "--separate-weights")
    for other in ("retrained", "mlp"):
        aotc(tmp_path / f"{other}.onnx", "-o", tmp_path / other, "--name", "lenet", "--separate-weights",
             "--no-configure")
    i, o = meta["inputs"][0]["field"], meta["outputs"][0]["field"]
    (tmp_path / "harness.c").write_text(HARNESS.replace("@in@", i).replace("@IN@", i.upper())
                                        .replace("@out@", o).replace("@OUT@", o.upper()))
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path / 'sep' / 'bundle' / 'include'}",
                    str(tmp_path / "harness.c"), str(tmp_path / "sep" / "liblenet.a"), "-lm", "-o", str(exe)],
                   check=True)
    files = [tmp_path / d / "bundle" / "src" / "lenet_weights.bin" for d in ("sep", "retrained", "mlp")]
    out = subprocess.run([str(exe), *map(str, files)], capture_output=True, text=True, check=True).stdout
    got = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    codes = {k: int(v[0]) for k, v in got.items()}
    assert codes == {
        "not_loaded": ERRORS["WEIGHTS_NOT_LOADED"], "garbage": ERRORS["WEIGHTS_NOT_AOTC"],
        "other_model": ERRORS["WEIGHTS_OTHER_MODEL"], "truncated": ERRORS["WEIGHTS_SIZE"],
        "misaligned": ERRORS["WEIGHTS_ALIGNMENT"], "damaged": ERRORS["WEIGHTS_CHECKSUM"], "good": 0, "first": 0,
        "update": 0, "updated": 0}
    shape = meta["inputs"][0]["shape"]
    x = ((np.arange(int(np.prod(shape))) % 7) * 0.25 - 0.75).astype(np.float32).reshape(shape)
    for run, model in (("first", "lenet"), ("updated", "retrained")):
        ref = reference(onnx.load(tmp_path / f"{model}.onnx"), {meta["inputs"][0]["name"]: x})[0].reshape(-1)
        ours = np.array([float.fromhex(v) for v in got[run][1:]], np.float32)
        np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))
    assert not np.allclose(*(np.array([float.fromhex(v) for v in got[r][1:]]) for r in ("first", "updated")))


@pytest.mark.full
@pytest.mark.parametrize("model", ["lenet", "excite_int8"])
def test_weights_from_another_address_on_cortex_m_under_qemu(tmp_path, model):
    """The runner copies the file into a RAM buffer of its own (AOTC_RUNNER_WEIGHTS_IN_RAM) and loads it from
    there, as firmware reading the weights from external flash does. excite_int8.tflite: int8 kernels whose
    parameter tables point at arrays, which stay with the code."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    if model == "lenet":
        src = tmp_path / "lenet.onnx"
        feeds = _model(src)
    else:
        src = TFLITE / f"{model}.tflite"
        aotc(src, "-o", tmp_path / "probe", "--no-configure")
        meta = json.loads((tmp_path / "probe" / "bundle" / "metadata.json").read_text())
        rng = np.random.default_rng(0)
        feeds = {i["name"]: rng.integers(-128, 128, i["shape"]).astype(i["dtype"]) if i["dtype"] == "int8"
                 else rng.standard_normal(i["shape"]).astype(i["dtype"]) for i in meta["inputs"]}
    build_bundle(src, tmp_path / "m4", "--separate-weights", target="mps2-an386",
                 cmake_args=("-DAOTC_RUNNER_WEIGHTS_IN_RAM=ON",))
    build_bundle(src, tmp_path / "linked", target="mps2-an386")
    ours, linked = run_bundle(tmp_path / "m4", feeds), run_bundle(tmp_path / "linked", feeds)
    for k in linked:
        np.testing.assert_array_equal(ours[k], linked[k])
