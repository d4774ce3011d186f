"""Progress on a terminal for long steps; silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def status(what: str) -> Iterator[None]:
    tty = sys.stderr.isatty()
    t0 = time.monotonic()
    if tty:
        print(f"aotc: {what} ...", end="", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        if tty:
            print(f" {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
