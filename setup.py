"""Packaging details pyproject.toml cannot express: runtime_c/ and cmake/ (which live beside aot/
in the source tree) ship inside the wheel as aot/_data/, where aot/paths.py finds them."""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
data = {}
for top in ("runtime_c", "cmake"):
    for d in [HERE / top, *sorted(p for p in (HERE / top).rglob("*") if p.is_dir())]:
        rel = d.relative_to(HERE).as_posix()
        data["aot._data." + rel.replace("/", ".")] = rel

setup(
    packages=find_packages(include=["aot", "aot.*"]) + ["aot.emit_c.templates", "aot.packages.templates"] + list(data),
    package_dir=data,
    package_data={"aot.emit_c.templates": ["*.j2"], "aot.packages.templates": ["*.j2"], **{pkg: ["*"] for pkg in data}},
)
