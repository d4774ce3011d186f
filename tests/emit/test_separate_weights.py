"""--separate-weights (issue 66): the model's weights in a file of their own, which the library does not link;
firmware hands it to <name>_load_weights from any address, which refuses another model's, a damaged or a
truncated one, and run refuses to start before a load succeeded."""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import aotc, build_bundle, run_bundle

from aot.emit_c.weights_file import ERRORS, HEADER_BYTES, read_header

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lenet.h"

static unsigned char file[1 << 20] __attribute__((aligned(64)));
static unsigned char other[1 << 20] __attribute__((aligned(64)));
static unsigned char arena[LENET_ARENA_SIZE] __attribute__((aligned(64)));

static long slurp(const char *path, unsigned char *into) {
    FILE *f = fopen(path, "rb");
    long n;
    if (f == NULL) return -1;
    n = (long)fread(into, 1, 1 << 20, f);
    fclose(f);
    return n;
}

int main(int argc, char **argv) {
    struct lenet_inputs in;
    struct lenet_outputs out;
    long n = slurp(argv[1], file), m = slurp(argv[2], other);
    (void)argc;
    lenet_arena_io(arena, &in, &out);
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
    if (lenet_init(arena) != 0) return 1;
    printf("run %d\n", (int)lenet_run(&in, &out, arena));
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


def test_load_weights_refuses_what_is_not_this_models(tmp_path):
    require_tool("gcc")
    _model(tmp_path / "lenet.onnx")
    _model(tmp_path / "other.onnx", seed=1)
    build_bundle(tmp_path / "lenet.onnx", tmp_path / "sep", "--separate-weights")
    aotc(tmp_path / "other.onnx", "-o", tmp_path / "other", "--name", "lenet", "--separate-weights", "--no-configure")
    (tmp_path / "harness.c").write_text(HARNESS)
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path / 'sep' / 'bundle' / 'include'}",
                    str(tmp_path / "harness.c"), str(tmp_path / "sep" / "liblenet.a"), "-lm", "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe), str(tmp_path / "sep" / "bundle" / "src" / "lenet_weights.bin"),
                          str(tmp_path / "other" / "bundle" / "src" / "lenet_weights.bin")],
                         capture_output=True, text=True, check=True).stdout
    got = dict(line.split() for line in out.splitlines())
    assert {k: int(v) for k, v in got.items()} == {
        "not_loaded": ERRORS["WEIGHTS_NOT_LOADED"], "garbage": ERRORS["WEIGHTS_NOT_AOTC"],
        "other_model": ERRORS["WEIGHTS_OTHER_MODEL"], "truncated": ERRORS["WEIGHTS_SIZE"],
        "misaligned": ERRORS["WEIGHTS_ALIGNMENT"], "damaged": ERRORS["WEIGHTS_CHECKSUM"], "good": 0, "run": 0}


@pytest.mark.full
def test_weights_from_another_address_on_cortex_m_under_qemu(tmp_path):
    """The runner copies the file into a RAM buffer of its own (AOTC_RUNNER_WEIGHTS_IN_RAM) and loads it from
    there, as firmware reading the weights from external flash does."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    feeds = _model(tmp_path / "lenet.onnx")
    build_bundle(tmp_path / "lenet.onnx", tmp_path / "m4", "--separate-weights", target="mps2-an386",
                 cmake_args=("-DAOTC_RUNNER_WEIGHTS_IN_RAM=ON",))
    build_bundle(tmp_path / "lenet.onnx", tmp_path / "linked", target="mps2-an386")
    ours, linked = run_bundle(tmp_path / "m4", feeds), run_bundle(tmp_path / "linked", feeds)
    for k in linked:
        np.testing.assert_array_equal(ours[k], linked[k])
