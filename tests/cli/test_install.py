"""aotc as a user installs it: the wheel and the sdist, each in a fresh virtual environment with its
dependencies from the package index (so the CMake wheel sits in the same site-packages as aot/),
used from a folder outside the checkout. Every other test imports the source tree (pip install -e),
so only this one sees what a user gets."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import require_tool

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
import zoo  # noqa: E402

# a wheel and fresh virtual environments: the whole file in the full tier (tests/README.md)
pytestmark = pytest.mark.full

# what pip installs from PyPI is the wheel; the sdist (built in every run by `dists`) is installed and run in --tier all
DISTS = ("wheel", pytest.param("sdist", marks=pytest.mark.slow))


def _run(cmd: list, cwd: Path, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} -> {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The wheel and the sdist, built by `python -m build` as a release would be."""
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # the machine's, not ours
    r = _run([sys.executable, "-m", "build", "--outdir", out, REPO], cwd=out, env=env)
    warnings = [line for line in (r.stdout + r.stderr).splitlines()
                if "warn" in line.lower() and "pip" not in line.lower() and "Location '" not in line]
    assert not warnings, "python -m build warned:\n" + "\n".join(warnings)
    found = {"wheel": sorted(out.glob("aotc-*.whl")), "sdist": sorted(out.glob("aotc-*.tar.gz"))}
    assert all(len(v) == 1 for v in found.values()), found
    return {k: v[0] for k, v in found.items()}


@pytest.fixture(scope="module")
def venvs(dists, tmp_path_factory) -> dict[str, Path]:
    """A fresh virtual environment per distribution, with the dnnl extra (oneDNN from the index), made
    the first time a test asks for it (a run without the sdist's tests makes no sdist venv)."""
    class Venvs(dict):
        def __missing__(self, kind: str) -> Path:
            venv = tmp_path_factory.mktemp(f"venv-{kind}")
            _run([sys.executable, "-m", "venv", venv], cwd=venv)
            # without PYTHONPATH: a source tree on it (with its build's aotc.egg-info) would make pip
            # think aotc is installed already, and skip it
            _run([venv / "bin" / "python", "-m", "pip", "install", "-q", f"{dists[kind]}[dnnl]"], cwd=venv,
                 env=user_env(venv))
            self[kind] = venv
            return venv

    return Venvs()


def user_env(venv: Path) -> dict[str, str]:
    """The environment of a user who activated the venv: its aotc and cmake first, no source tree."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DNNL_ROOT")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


def test_wheel_holds_every_file_and_no_tests(dists):
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    expected = {f"aot/_data/{p.relative_to(REPO).as_posix()}" for top in ("runtime_c", "cmake")
                for p in (REPO / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    expected |= {p.relative_to(REPO).as_posix() for p in (REPO / "aot").rglob("*")
                 if p.is_file() and p.suffix in (".py", ".j2") and "__pycache__" not in p.parts}
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"
    assert not [n for n in names if n.startswith(("tests/", "bench/", "examples/"))]
    assert any(n.endswith("licenses/LICENSE") for n in names)


@pytest.mark.parametrize("kind", DISTS)
def test_version_matches_the_package(venvs, kind):
    venv = venvs[kind]
    env = user_env(venv)
    version = _run([venv / "bin" / "python", "-c", "import importlib.metadata as m; print(m.version('aotc'))"],
                   cwd=venv, env=env).stdout.strip()
    assert _run([venv / "bin" / "aotc", "--version"], cwd=venv, env=env).stdout.strip() == f"aotc {version}"


# (compile options, tools the target needs): the host, a Cortex-M board under qemu, each shipped vendor
FLOWS = {
    "host": ([], ()),
    "mps2-an386": (["--target", "mps2-an386"], ("arm-none-eabi-gcc", "qemu-system-arm")),
    "cref": (["--vendor", "cref"], ()),
    "accel_sim": (["--vendor", "accel_sim"], ()),
    "dnnl": (["--vendor", "dnnl"], ()),
}


@pytest.mark.parametrize("flow", FLOWS)
@pytest.mark.parametrize("kind", DISTS)
def test_installed_aotc_compiles_builds_and_runs(venvs, kind, flow, tmp_path):
    """From a folder outside the checkout: aotc -> cmake --build -> aotc run, matching onnxruntime."""
    options, tools = FLOWS[flow]
    require_tool("gcc", *tools)
    venv = venvs[kind]
    env = user_env(venv)
    model = zoo.build("lenet")
    onnx.save(model, tmp_path / "lenet.onnx")
    x = np.random.default_rng(0).standard_normal((1, 1, 28, 28)).astype(np.float32)
    np.savez(tmp_path / "in.npz", **{model.graph.input[0].name: x})
    compiled = _run([venv / "bin" / "aotc", "lenet.onnx", "-o", "out", *options], cwd=tmp_path, env=env)
    assert "build with" in compiled.stdout
    _run([venv / "bin" / "cmake", "--build", "out"], cwd=tmp_path, env=env)
    _run([venv / "bin" / "aotc", "run", "out", "--inputs", "in.npz", "--outputs", "got.npz"], cwd=tmp_path, env=env)
    got = np.load(tmp_path / "got.npz")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for spec, ref in zip(sess.get_outputs(), sess.run(None, {model.graph.input[0].name: x}), strict=True):
        np.testing.assert_allclose(got[spec.name], ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))
