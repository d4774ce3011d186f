"""The weights blob as a C source, for build systems that cannot give the assembler an include path.

The bundle links its large weights by `.incbin "NAME_weights.bin"` from NAME_weights.S, and its CMakeLists.txt
passes `-Wa,-I<src>` so the assembler finds the file. Arduino has no per-library flags at all, PlatformIO's
library flags are relative to the project (not the library) for the assembler, and a CMSIS-Pack is built by
IDEs whose assemblers take other syntaxes (IAR's). There the same bytes go in a C array with the .S's symbol,
section and alignment: the same object contents, so the model's `extern const uint8_t NAME_weights[]` links
to it unchanged. It is compiled as text (about 4 characters a byte), which costs compile time on large models.
"""

from __future__ import annotations

import hashlib

from aot.packages.library import Blob

PER_LINE = 24


def c_array(symbol: str, data: bytes, *, section: str | None, align: int, comment: str) -> str:
    """`const uint8_t symbol[] = {...}` holding `data`, in `section` (GCC and clang) at `align` bytes."""
    lines = [",".join(str(b) for b in data[i:i + PER_LINE]) for i in range(0, len(data), PER_LINE)]
    attrs = [f"aligned({align})", "used"] + ([f'section("{section}")'] if section else [])
    return (f"/* {comment} */\n"
            "#include <stdint.h>\n\n"
            "#if defined(__GNUC__)\n"
            f"__attribute__(({', '.join(attrs)}))\n"
            "#elif defined(__ICCARM__)\n"
            f"#pragma data_alignment = {align}\n"
            "#endif\n"
            f"const uint8_t {symbol}[{max(len(data), 1)}] = {{\n" + ",\n".join(lines or ["0"]) + "\n};\n")


def blob_source(blob: Blob, data: bytes, version: str) -> str:
    """The C file that stands for `blob`'s .S and .bin."""
    digest = hashlib.sha256(data).hexdigest()
    return c_array(blob.symbol, data, section=blob.section, align=blob.align, comment=(
        f"Written by aotc {version} (aotc package) from {blob.asm} and {blob.data}: the {len(data)} bytes the .S "
        f"links by .incbin, as C, with its symbol, section ({blob.section}) and alignment ({blob.align}).\n * "
        f"sha256 of the bytes: {digest}"))
