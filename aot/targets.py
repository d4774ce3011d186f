"""Targets: what `--target` names. A target is a CMake toolchain file (none for the host)
plus how to run its binaries (directly, or under an emulator)."""

from __future__ import annotations

from dataclasses import dataclass

from aot.errors import AotcError


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    toolchain: str | None = None  # file in cmake/, None for the host compiler
    emulator: tuple[str, ...] = ()  # command prefix that runs a built binary
    flash_bytes: int | None = None
    ram_bytes: int | None = None


TARGETS: dict[str, Target] = {
    "host": Target("host", "the machine aotc runs on, with its default C compiler"),
}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise AotcError(f"unknown target '{name}' (known: {', '.join(TARGETS)})") from None
