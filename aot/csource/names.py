"""The one rule for C identifiers made from ONNX names, and the escaping of names in C text.

ONNX names are any strings. Every identifier the generated C declares from one goes through
`c_ident` (a safe identifier: only [A-Za-z0-9_], never a C or C++ keyword, a libc macro or
name, an identifier the C standard reserves, or one of the bundle's own names) and then through
a `CNames` scope (unique within the scope, case-insensitively where the identifier also
becomes part of an upper-case macro). The ONNX name itself only appears in comments
(`c_comment`), C string literals (`c_string`) and metadata.json (JSON-escaped).
"""

from __future__ import annotations

import hashlib
import re

MAX_IDENT = 64  # longer names are cut and given a hash of the whole name (stays unique, stays readable)
ESCAPE_PREFIX = "v_"  # put before an identifier that the rules below refuse

_C_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
alignas alignof bool constexpr false nullptr static_assert thread_local true typeof typeof_unqual
_BitInt _Decimal32 _Decimal64 _Decimal128 asm
""".split()
# The public header is valid C++ (extern "C"): its struct fields must not be C++ keywords either.
_CXX_KEYWORDS = """
and and_eq bitand bitor catch char8_t char16_t char32_t class compl concept consteval constinit const_cast
co_await co_return co_yield decltype delete dynamic_cast explicit export friend mutable namespace new
noexcept not not_eq operator or or_eq private protected public reinterpret_cast requires static_cast
template this throw try typeid typename using virtual wchar_t xor xor_eq final override import module
""".split()
# Lower-case macros and names of the C library and compilers that generated code may meet (the
# upper-case ones are all refused by the rule on upper-case identifiers below).
_LIBC = """
errno stdin stdout stderr assert offsetof va_arg va_start va_end va_copy setjmp longjmp
complex imaginary noreturn math_errhandling unix linux i386 environ main
size_t ssize_t ptrdiff_t wchar_t intptr_t uintptr_t intmax_t uintmax_t max_align_t nullptr_t FILE
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t float_t double_t clock_t time_t
fpos_t va_list div_t ldiv_t lldiv_t mbstate_t wint_t sig_atomic_t jmp_buf
""".split()

RESERVED: frozenset[str] = frozenset(_C_KEYWORDS + _CXX_KEYWORDS + _LIBC)
# Prefixes of the runtime (aotc_*; AOTC_* is upper case) and of dlpack (DL*, kDL*).
_RESERVED_PREFIX = re.compile(r"aotc_|kDL|DL")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UPPER = re.compile(r"[A-Z][A-Z0-9_]*")  # object-like macros are upper case: NULL, EOF, SIZE_MAX, E2BIG ...


def is_reserved(ident: str) -> bool:
    """True when `ident` may clash with C, C++, the C library, the compiler or the bundle."""
    return (not ident or ident in RESERVED or ident[0] == "_" or ident[0].isdigit()
            or _UPPER.fullmatch(ident) is not None or _RESERVED_PREFIX.match(ident) is not None)


def c_ident(name: str, prefix: str = "") -> str:
    """A valid, safe C identifier made from `name` (not unique: give it to a CNames scope).

    Characters outside [A-Za-z0-9_] become '_'; a name longer than MAX_IDENT is cut and ends in a
    hash of the whole; `prefix` goes first; a result the rules refuse (`is_reserved`) gets 'v_'
    before it, so `int` -> `v_int`, `NULL` -> `v_NULL`, `3x` -> `v_3x`."""
    ident = prefix + re.sub(r"[^0-9A-Za-z_]", "_", name)
    if len(ident) > MAX_IDENT:
        digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        ident = f"{ident[:MAX_IDENT - 9]}_{digest}"
    return ESCAPE_PREFIX + ident if is_reserved(ident) else ident


def is_safe_ident(ident: str) -> bool:
    """True for a valid C identifier that the rules allow (what c_ident and CNames give)."""
    return _IDENT.fullmatch(ident) is not None and not is_reserved(ident)


class CNames:
    """One scope of generated identifiers: each name asked for once gets one identifier, unique in
    the scope (`x`, then `x_1`, `x_2` ...). With `fold_case`, identifiers also differ in more than
    case (they become parts of upper-case macros). `taken` are identifiers the scope already has
    (names the generated code declares itself); any identifier starting with one of `prefixes`
    is escaped like a reserved word (e.g. the model's own `<model>_` functions)."""

    def __init__(self, taken: tuple[str, ...] | list[str] | set[str] = (), *, fold_case: bool = False,
                 prefixes: tuple[str, ...] = ()):
        self.fold_case = fold_case
        self.prefixes = tuple(p for p in prefixes if p)
        self._taken: set[str] = set()
        self._by_key: dict[object, str] = {}
        for t in taken:
            self._taken.add(self._norm(t))

    def _norm(self, ident: str) -> str:
        return ident.lower() if self.fold_case else ident

    def __contains__(self, ident: str) -> bool:
        return self._norm(ident) in self._taken

    def get(self, key: object) -> str | None:
        return self._by_key.get(key)

    def name(self, key: object, name: str, prefix: str = "") -> str:
        """The identifier for `key` (any hashable, e.g. ("tensor", onnx_name)): made from `name` with
        `prefix` by c_ident the first time, the same one after."""
        if key in self._by_key:
            return self._by_key[key]
        ident = self._by_key[key] = self.fresh(name, prefix)
        return ident

    def fresh(self, name: str, prefix: str = "") -> str:
        """A new identifier made from `name`, unique in the scope (no key: every call is new)."""
        base = c_ident(name, prefix)
        if base.startswith(self.prefixes):
            base = ESCAPE_PREFIX + base
        ident, k = base, 1
        while self._norm(ident) in self._taken:
            ident, k = f"{base}_{k}", k + 1
        self._taken.add(self._norm(ident))
        return ident


_COMMENT_BREAKS = {"*/": "* /", "/*": "/ *"}


def c_comment(text: str) -> str:
    """`text` safe inside a /* */ comment on one line: `*/` and `/*` broken, newlines and every
    other unprintable character shown as escapes (\\n, \\x01, \\u2028), so the comment neither ends
    early, nor nests, nor spans lines (for C or for the tools that count lines of the file)."""
    out = []
    for ch in str(text):
        if ch.isprintable() or ch == " ":
            out.append(ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    s = "".join(out)
    while "*/" in s or "/*" in s:
        for bad, good in _COMMENT_BREAKS.items():
            s = s.replace(bad, good)
    return s


def c_string(text: str) -> str:
    """`text` as a C string literal (UTF-8; quotes, backslashes, '?' (no trigraphs), '%' is kept:
    pass the literal as a printf argument, never as the format) and control bytes escaped."""
    out = []
    for b in str(text).encode("utf-8", "surrogatepass"):
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= b < 127 and ch != "?":
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'
