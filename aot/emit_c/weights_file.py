"""The weights apart from the code (--separate-weights): one file with a header that <name>_load_weights
checks before the bundle reads a byte of it, so firmware can keep the model in external flash, a file or an
update partition and refuse one of another model or a damaged copy.

    offset  bytes  field (little-endian)
    0       8      magic "AOTCWTS\\0"
    8       4      format version (FORMAT_VERSION)
    12      4      header bytes (HEADER_BYTES): the weights start here, WEIGHT_ALIGN-aligned in the file
    16      8      weights bytes
    24      16     model id: the first 16 bytes of sha256(name, the code that reads the weights)
    40      4      CRC-32 (IEEE, zlib's) of the weights
    44      4      the alignment the weights' address needs (WEIGHT_ALIGN)
    48      16     zero

The model id is a hash of the code that reads the file: the model's C name, where each array lies in the file
(its offset, type and size: the #defines) and the code itself (shapes, the quantization constants it prints,
the arrays it keeps in flash because a parameter table points at them). The weights' values are not in it: a
model retrained with the same architecture and compiled again by the same aotc gives the same code, hence the
same id, and its weights file loads into firmware built from the first compile (an update over the air, without
relinking); anything that changes the code changes the id, and the old firmware refuses that file.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass

from aot.csource.weights import WEIGHT_ALIGN

MAGIC = b"AOTCWTS\0"
FORMAT_VERSION = 1
HEADER_BYTES = 64
LOAD_ALIGN = 16  # what <name>_load_weights asks of the blob's address: every array's type (SIMD loads need 16)
_LAYOUT = struct.Struct("<8sIIQ16sII16x")

# <name>_load_weights' return codes (and <name>_run's before the weights are loaded), in the header as macros
ERRORS = {
    "WEIGHTS_NOT_AOTC": -20,  # no aotc weights file (magic)
    "WEIGHTS_VERSION": -21,  # a format version this bundle does not read
    "WEIGHTS_SIZE": -22,  # the size given, or the header's, is not this model's
    "WEIGHTS_OTHER_MODEL": -23,  # the weights of another model, or of a compile whose code differs
    "WEIGHTS_CHECKSUM": -24,  # damaged: the CRC-32 differs
    "WEIGHTS_ALIGNMENT": -25,  # the blob's address is not LOAD_ALIGN-aligned
    "WEIGHTS_NOT_LOADED": -26,  # run before a load succeeded
}
assert HEADER_BYTES % WEIGHT_ALIGN == 0 or WEIGHT_ALIGN % HEADER_BYTES == 0


@dataclass(frozen=True)
class WeightsFile:
    data: bytes  # header + weights, as written to src/<name>_weights.bin
    model_id: bytes  # 16 bytes
    crc32: int
    nbytes: int  # the weights' bytes (after the header)


def model_id(name: str, layout: list[tuple[str, int, str, int]], code: str) -> bytes:
    """16 bytes naming the code that reads the file: the C name, each array's (ident, offset, dtype, bytes), the
    code's text (the module docstring says why the weights' values are not in it)."""
    h = hashlib.sha256(name.encode() + b"\0")
    for ident, offset, dtype, nbytes in layout:
        h.update(f"{ident}:{offset}:{dtype}:{nbytes};".encode())
    h.update(code.encode())
    return h.digest()[:16]


def weights_file(name: str, layout: list[tuple[str, int, str, int]], weights: bytes, code: str) -> WeightsFile:
    ident = model_id(name, layout, code)
    crc = zlib.crc32(weights) & 0xFFFFFFFF
    header = _LAYOUT.pack(MAGIC, FORMAT_VERSION, HEADER_BYTES, len(weights), ident, crc, LOAD_ALIGN)
    assert len(header) == HEADER_BYTES
    return WeightsFile(header + bytes(weights), ident, crc, len(weights))


def read_header(data: bytes) -> dict:
    """The header's fields (for tests and tools)."""
    magic, version, header, nbytes, ident, crc, align = _LAYOUT.unpack_from(data)
    return {"magic": magic, "version": version, "header_bytes": header, "nbytes": nbytes, "model_id": ident,
            "crc32": crc, "alignment": align}
