"""One weight store, one blob policy: how constant arrays get into generated C.

The host emitter and every vendor codegen hand their constants to a `WeightStore`
and print what it gives back, so a bundle holds its weights one way wherever they
come from:

    store = WeightStore("mlp_cref_0")
    w = store.add("w_fc1", weights, 'initializer "fc1.weight": float32[64,784]')  # -> "w_fc1"
    ... C code reads w (a `const float *`, whichever way it is stored) ...
    store.declarations()   # C text: arrays, or #defines into the blob
    store.blob             # the bytes of the blob (little-endian, bit-exact; a bytearray)
    store.files()          # blob + its .incbin unit, for a vendor's Artifact.files

Policy (DESIGN.md: a 100 MB model never passes through the C compiler as text):
while the arrays total at most INLINE_WEIGHTS_LIMIT bytes they are all printed as C
arrays (exact hex floats, 16-byte aligned); above it, each array larger than
SMALL_WEIGHT_BYTES goes into one binary blob, each at a WEIGHT_ALIGN-byte offset,
linked in with the assembler's `.incbin`. The choice depends on the total, so the
layout is fixed when it is first read; adding after that is an error.

An array larger than SMALL_WEIGHT_BYTES is copied into the blob's buffer when added, at the offset
it takes if there is a blob, and not kept: a caller that drops its array after adding it (the host
emitter's packed weights) never holds it beside the blob. If the total stays under the limit after
all, such arrays are read back from the buffer and printed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from aot.csource.format import C_TYPES, c_array_body, c_comment, c_ident
from aot.csource.names import is_safe_ident

INLINE_WEIGHTS_LIMIT = 64 * 1024  # arrays totalling at most this are all printed as C
SMALL_WEIGHT_BYTES = 1024  # above the limit, arrays up to this size are still printed
WEIGHT_ALIGN = 64  # alignment of the blob and of every array in it (a cache line, any SIMD load)
INLINE_ALIGN = 16  # alignment of printed arrays (AOTC_ALIGNED, aotc_common.h)
# What the text of declarations() needs in scope.
C_INCLUDES = ("#include <stdint.h>", '#include "aotc_common.h"')


@dataclass(frozen=True)
class StoredArray:
    ident: str  # C identifier the code reads
    data: np.ndarray
    comment: str  # says what the array is (e.g. the ONNX initializer it comes from)


class WeightStore:
    """Named constant arrays in, C declarations and a blob out (see the module docstring).

    `prefix` names the blob: symbol `<prefix>_weights`, files `<prefix>_weights.bin` and
    `<prefix>_weights.c`; give each store of a bundle its own prefix (the model name for
    the host, the function's symbol for a vendor). `link_file` is the file that the
    declarations' comment says links the blob in (the host ships its own .S).
    """

    def __init__(self, prefix: str, *, link_file: str | None = None, separate: bool = False):
        self.prefix = prefix if is_safe_ident(prefix) else c_ident(prefix)
        # every array in the blob, which is not linked: the code reads it through a pointer set at run time
        # (aotc --separate-weights: the weights apart from the code, aot/emit_c/weights_file.py)
        self.separate = separate
        self.symbol = f"{self.prefix}_weights"
        self.link_file = link_file or f"{self.symbol}.c"
        self._arrays: list[StoredArray] = []
        self._taken: set[str] = set()
        self._inline: list[StoredArray] | None = None
        self._blob_offsets: dict[str, tuple[int, StoredArray]] = {}
        self._blob: bytes | bytearray = b""
        self._buffer = bytearray()  # the large arrays, laid out as in the blob
        self._buffered: dict[int, tuple[int, np.dtype, tuple[int, ...]]] = {}  # index in _arrays -> where
        self._total = 0

    # --- adding -------------------------------------------------------------------
    def add(self, ident: str, data: np.ndarray, comment: str = "", *, in_code: bool = False) -> str:
        """Store `data` (any dtype of C_TYPES) and return the C expression to read it with: an
        identifier that is an array or a pointer into the blob. `ident` is made a valid C name
        and, if this store already holds it, unique (`_1`, `_2`, ...). `in_code`: a separate store
        prints it anyway (a static initializer takes its address, which must be a constant)."""
        if self._inline is not None:
            raise RuntimeError(f"weight store {self.prefix}: add() after its layout was read")
        arr = np.asarray(data)
        if arr.dtype.name not in C_TYPES:
            raise TypeError(f"weight store {self.prefix}: no C type for dtype {arr.dtype.name}")
        base = var = ident if is_safe_ident(ident) else c_ident(ident)
        k = 1
        while var in self._taken:
            var, k = f"{base}_{k}", k + 1
        self._taken.add(var)
        arr = np.ascontiguousarray(arr)
        self._total += arr.nbytes
        big = arr.nbytes > SMALL_WEIGHT_BYTES
        if (big or self.separate) and not (self.separate and in_code):  # into the buffer now
            self._buffer += b"\0" * (-len(self._buffer) % WEIGHT_ALIGN)
            self._buffered[len(self._arrays)] = (len(self._buffer), arr.dtype, arr.shape)
            little = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"), copy=False))
            self._buffer += memoryview(little.reshape(-1).view(np.uint8))
            arr = np.empty(0, arr.dtype)  # a stand-in (not a view: that would keep the array); read back in _layout
        self._arrays.append(StoredArray(var, arr, comment))
        return var

    # --- the layout (fixed on first read) --------------------------------------------
    def _layout(self) -> list[StoredArray]:
        if self._inline is not None:
            return self._inline
        inline: list[StoredArray] = []
        buffer = self._buffer
        for k, a in enumerate(self._arrays):
            if k in self._buffered:  # read back: a view of the buffer, which no longer grows
                offset, dtype, shape = self._buffered[k]
                data = np.frombuffer(buffer, dtype.newbyteorder("<"), int(np.prod(shape, dtype=np.int64)), offset)
                a = StoredArray(a.ident, data.reshape(shape).astype(dtype, copy=False), a.comment)
                if self._total > INLINE_WEIGHTS_LIMIT or self.separate:  # (a separate store buffers no in_code one)
                    self._blob_offsets[a.ident] = (offset, a)
                    continue
            inline.append(a)
        if self._blob_offsets:
            self._blob = buffer
        self._buffer, self._buffered = bytearray(), {}
        self._inline = inline
        return inline

    def blob_layout(self) -> list[tuple[str, int, str, int]]:
        """(ident, offset, dtype, bytes) of each array in the blob, in offset order."""
        self._layout()
        return sorted(((i, off, a.data.dtype.name, a.data.nbytes) for i, (off, a) in self._blob_offsets.items()),
                      key=lambda r: r[1])

    @property
    def inline(self) -> list[StoredArray]:
        """Arrays printed as C, in the order added."""
        return list(self._layout())

    @property
    def blob_offsets(self) -> dict[str, tuple[int, StoredArray]]:
        """ident -> (byte offset in the blob, array), for the arrays in the blob."""
        self._layout()
        return dict(self._blob_offsets)

    @property
    def blob(self) -> bytes | bytearray:
        """The blob's bytes (a bytearray: the buffer the large arrays were copied into)."""
        self._layout()
        return self._blob

    @property
    def nbytes(self) -> int:
        """Bytes of constant data (printed arrays + blob, padding included)."""
        return sum(a.data.nbytes for a in self._layout()) + len(self._blob)

    def __len__(self) -> int:
        return len(self._arrays)

    # --- C text ---------------------------------------------------------------------
    def declarations(self) -> list[str]:
        """One C declaration per printed array, then (when there is a blob) its extern symbol and a
        #define per array in it. Needs C_INCLUDES in scope."""
        out = []
        for a in self._layout():
            body = c_array_body(a.data) if a.data.size else "    0"
            out.append(f"/* {c_comment(a.comment)} */\n" if a.comment else "")
            out[-1] += (f"static const {C_TYPES[a.data.dtype.name]} {a.ident}[{max(a.data.size, 1)}] "
                        f"AOTC_ALIGNED({INLINE_ALIGN}) = {{\n{body}\n}};")
        if self.separate:
            out.append(f"/* the weights: {len(self._blob)} bytes in {self.symbol}.bin, apart from the code; "
                       f"{self.prefix}_load_weights points this at them */\n"
                       f"static const uint8_t *{self.symbol};")
        elif self._blob_offsets:
            out.append(f"/* large weights: {len(self._blob)} bytes in {self.symbol}.bin, "
                       f"linked in by {self.link_file} */\n"
                       f"extern const uint8_t {self.symbol}[];")
        if self._blob_offsets:
            for ident, (off, a) in self._blob_offsets.items():
                out.append(f"#define {ident} ((const {C_TYPES[a.data.dtype.name]} *)({self.symbol} + "
                           f"{off}u)) /* {c_comment(a.comment)} */")
        return out

    def link_source(self) -> str:
        """A C file that links the blob in: `.incbin` in a file-scope asm statement (GCC and Clang,
        every target's assembler). It is C rather than a .S so a vendor's CMake need not enable
        ASM; the compiler finds the .bin through the include path (-I passes to the assembler)."""
        s = self.symbol
        return "\n".join([
            f"/* Links {s}.bin ({len(self.blob)} bytes, little-endian, bit-exact) into the library as the",
            f" * read-only symbol {s}, so large weights never pass through the C compiler as text.",
            " * Place the section .rodata.aotc_weights with your linker script.",
            f" * sha256 of the blob: {hashlib.sha256(self.blob).hexdigest()}",
            " * (a compiler cache hashes this file, not the blob: the digest keeps it from taking another",
            " * model's object for it) */",
            "#include <stdint.h>", "",
            f"extern const uint8_t {s}[];  /* what the generated code reads; defined below */", "",
            "__asm__(\".pushsection .rodata.aotc_weights,\\\"a\\\"\\n\"",
            f"        \".balign {WEIGHT_ALIGN}\\n\"",
            f"        \".globl {s}\\n\"",
            f"        \".hidden {s}\\n\"",
            f"        \".type {s}, %object\\n\"",
            f"        \"{s}:\\n\"",
            f"        \".incbin \\\"{s}.bin\\\"\\n\"",
            f"        \".size {s}, . - {s}\\n\"",
            "        \".popsection\\n\");",
            ""])

    # --- what ships -------------------------------------------------------------------
    def files(self) -> dict[str, str | bytes | bytearray]:
        """The blob and the C file that links it (nothing when every array is printed)."""
        if not self.blob:
            return {}
        return {f"{self.symbol}.bin": self.blob, self.link_file: self.link_source()}

    def sources(self) -> list[str]:
        """Which of files() a library compiles."""
        return [self.link_file] if self.blob else []

    def cmake(self, directory: str) -> str:
        """CMake lines for a bundle whose files() sit in `directory` (bundle-relative): rebuild the
        link unit when the blob changes."""
        if not self.blob:
            return ""
        return (f"set_source_files_properties({directory}/{self.link_file} PROPERTIES\n"
                f"  OBJECT_DEPENDS ${{CMAKE_CURRENT_SOURCE_DIR}}/{directory}/{self.symbol}.bin)\n")
