"""The C runtime (runtime_c/vendor/accel_sim) loaded into Python, for tests and tools.

`NativeRuntime.build(dir)` compiles accel_sim.c into a shared library with the bundle's
warning flags and wraps aotc_accel_sim_execute / _validate with ctypes, so a program can be
run on numpy buffers and compared with the numpy reference model (refmodel.py).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.paths import runtime_dir
from aot.vendor.accel_sim.refmodel import Stats

_STATS_FIELDS = ["cycles", "dma_bytes", "macs", "int8_macs", "mac_slots", "dma_busy_cycles", "mac_busy_cycles",
                 "vec_busy_cycles"]


class _CStats(ctypes.Structure):
    _fields_ = [*((f, ctypes.c_uint64) for f in _STATS_FIELDS), ("spm_peak_bytes", ctypes.c_uint32),
                ("instructions", ctypes.c_uint32)]


class _CBuffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("bytes", ctypes.c_uint64)]


def runtime_sources() -> list[Path]:
    return [runtime_dir() / "vendor" / "accel_sim" / "accel_sim.c"]


def include_dirs() -> list[Path]:
    return [runtime_dir() / "include", runtime_dir() / "vendor" / "accel_sim"]


@dataclass
class NativeRuntime:
    lib: ctypes.CDLL

    @staticmethod
    def build(workdir: Path, extra_flags: tuple[str, ...] = ()) -> NativeRuntime:
        cc = os.environ.get("CC", "cc")
        out = Path(workdir) / "libaccel_sim.so"
        cmd = [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", *extra_flags,
               *(f"-I{d}" for d in include_dirs()), *map(str, runtime_sources()), "-o", str(out)]
        subprocess.run(cmd, check=True, capture_output=True)
        lib = ctypes.CDLL(str(out))
        lib.aotc_accel_sim_execute.restype = ctypes.c_int32
        lib.aotc_accel_sim_execute.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.POINTER(_CBuffer),
                                               ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint64,
                                               ctypes.POINTER(_CStats)]
        lib.aotc_accel_sim_validate.restype = ctypes.c_int32
        lib.aotc_accel_sim_validate.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
        return NativeRuntime(lib)

    def validate(self, blob: bytes) -> int:
        return self.lib.aotc_accel_sim_validate(blob, len(blob))

    def execute(self, blob: bytes, bound: list[np.ndarray], spm: np.ndarray) -> tuple[int, Stats]:
        """Run `blob` on the buffers in place; returns the error code (0: success) and the stats."""
        for b in [*bound, spm]:
            assert b.flags.c_contiguous and b.flags.writeable
        bufs = (_CBuffer * max(len(bound), 1))(*[_CBuffer(b.ctypes.data, b.nbytes) for b in bound])
        st = _CStats()
        rc = self.lib.aotc_accel_sim_execute(blob, len(blob), bufs, len(bound), spm.ctypes.data, spm.nbytes,
                                             ctypes.byref(st))
        stats = Stats(**{f: int(getattr(st, f)) for f in [*_STATS_FIELDS, "spm_peak_bytes", "instructions"]})
        return int(rc), stats
