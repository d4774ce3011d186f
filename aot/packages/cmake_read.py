"""What a bundle's CMakeLists.txt builds into its library, read from the file itself.

A platform package must compile what `cmake --build` compiles, with the same definitions, and nothing else:
guessing from the folder (every .c in runtime/) would miss a source a vendor adds or a definition a
--flash-budget level appends. The file is aotc's own (aot/emit_c/templates/CMakeLists.txt.j2, plus what
aot/flash.py adds), so a small reader suffices: it splits the file into commands, follows if/else by the
answers a cross build for a platform gives (not the top-level project, cross compiled, a GCC-compatible
compiler, no runner, no taps), and collects what the library target gets. A command or condition it does not
know is refused by name rather than skipped, so a later template change cannot make packages that compile
less than the bundle does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aot.errors import AotcError


@dataclass
class CMakeLibrary:
    """The library target as the bundle's CMakeLists.txt defines it for a cross build."""
    name: str
    sources: list[str] = field(default_factory=list)  # bundle-relative, in the file's order (C and ASM)
    public_includes: list[str] = field(default_factory=list)
    private_includes: list[str] = field(default_factory=list)
    definitions: list[tuple[str, str]] = field(default_factory=list)  # (PRIVATE|PUBLIC, NAME=VALUE)
    c_options: list[str] = field(default_factory=list)  # options for its C sources (a --flash-budget's -Os)
    asm_include_dirs: list[str] = field(default_factory=list)  # where the assembler's .incbin looks (-Wa,-I)
    asm_depends: dict[str, str] = field(default_factory=dict)  # ASM source -> the file it .incbin's
    link_libraries: list[str] = field(default_factory=list)
    c_standard: str | None = None  # "c99" or "gnu99": C_STANDARD and C_EXTENSIONS


_SRC_DIR = "${CMAKE_CURRENT_SOURCE_DIR}/"
# Options that serve aotc's own tools (warnings, `aotc footprint`'s stack files, a host build's -march=native):
# a platform sets its own warnings, and these change no code.
_TOOL_OPTIONS = re.compile(r"_WARNING_FLAGS|-fstack-usage|-fcallgraph-info|-march=native")
_C_ONLY = re.compile(r"^\$<\$<COMPILE_LANGUAGE:C>:(.*)>$")
_ASM_ONLY = re.compile(r"^\$<\$<COMPILE_LANGUAGE:ASM>:(.*)>$")
# Commands that configure the project or the runner, never the library's compile.
_IGNORED = {"cmake_minimum_required", "project", "option", "set", "unset", "include", "message", "enable_testing",
            "check_c_compiler_flag", "check_c_source_compiles", "cmake_push_check_state", "cmake_pop_check_state"}


def _commands(text: str) -> list[tuple[str, list[str], int]]:
    """(command, arguments, line) for each command: comments dropped, quoted arguments kept whole (quotes off),
    parentheses inside the arguments nested."""
    out: list[tuple[str, list[str], int]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        else:
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*\(").match(text, i)
            if m is None:
                raise AotcError(f"the bundle's CMakeLists.txt, line {line}: cannot read '{text[i:i + 30]}'")
            name, start, i = m.group(0)[:-1].strip().lower(), line, m.end()
            args, word, depth, quoted = [], "", 1, False
            while i < n:
                c = text[i]
                if c == "\n":
                    line += 1
                if quoted:
                    if c == "\\" and i + 1 < n:
                        word += text[i:i + 2]
                        i += 2
                        continue
                    if c == '"':
                        quoted = False
                    else:
                        word += c
                elif c == '"':
                    quoted = True
                elif c == "#":
                    while i < n and text[i] != "\n":
                        i += 1
                    continue
                elif c == "(":
                    depth += 1
                    word += c
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                    word += c
                elif c.isspace():
                    if word:
                        args.append(word)
                    word = ""
                else:
                    word += c
                i += 1
            else:
                raise AotcError(f"the bundle's CMakeLists.txt, line {start}: {name}( is never closed")
            if word:
                args.append(word)
            out.append((name, args, start))
    return out


def _condition(args: list[str], name: str, line: int) -> bool:
    """The value of an if() of aotc's CMakeLists.txt in a platform's cross build of the library alone."""
    text = " ".join(args)
    upper = name.upper()
    if text.startswith("CMAKE_SOURCE_DIR STREQUAL CMAKE_CURRENT_SOURCE_DIR"):
        return False  # the bundle is not the top-level project: the platform's build is
    if text.startswith("NOT CMAKE_CROSSCOMPILING"):
        return False
    known = {
        'CMAKE_C_COMPILER_ID MATCHES GNU|Clang': True,  # the platforms' compilers are GCC (or clang)
        'CMAKE_C_COMPILER_ID STREQUAL GNU': True,
        'CMAKE_C_COMPILER_VERSION VERSION_GREATER_EQUAL 10': True,
        "NOT AOTC_BUILD_HAS_AVX512F": True,  # no microcontroller has AVX-512F
        "NOT MSVC": True,
        "AOTC_WARNINGS_AS_ERRORS": False,
        "AOTC_NATIVE": False,
        "AOTC_TAPS": False,
        "AOTC_RUNNER_WEIGHTS_IN_RAM": False,
        f"{upper}_BUILD_RUNNER": False,
        "COMMAND aotc_board_executable": False,
        "COMMAND aotc_board_add_test": False,
    }
    if text in known:
        return known[text]
    raise AotcError(f"the bundle's CMakeLists.txt, line {line}: if({text}) is not a condition a platform package "
                    "knows the value of; package a bundle written by this aotc version")


def _path(arg: str) -> str:
    return arg.removeprefix(_SRC_DIR)


def read_cmake(text: str, name: str) -> CMakeLibrary:
    """The library `name` as `text` (a bundle's CMakeLists.txt) builds it in a cross build, the runner left out.
    Refused in one line when the file asks for something a package cannot carry (find_package: a vendor's
    library or the thread pool) or that this reader does not know."""
    lib = CMakeLibrary(name)
    stack: list[tuple[bool, bool]] = []  # (this branch active, a branch of this if() was taken)
    active = True
    for cmd, args, line in _commands(text):
        if cmd == "if":
            value = active and _condition(args, name, line)
            stack.append((active, value))
            active = value
            continue
        if cmd in ("elseif", "else"):
            if not stack:
                raise AotcError(f"the bundle's CMakeLists.txt, line {line}: {cmd}() without if()")
            outer, taken = stack[-1]
            value = outer and not taken and (cmd == "else" or _condition(args, name, line))
            stack[-1] = (outer, taken or value)
            active = value
            continue
        if cmd == "endif":
            if not stack:
                raise AotcError(f"the bundle's CMakeLists.txt, line {line}: endif() without if()")
            active = stack.pop()[0]
            continue
        if not active or cmd in _IGNORED:
            continue
        if cmd == "find_package":
            what = "the --threads pool (POSIX threads)" if args[:1] == ["Threads"] else \
                f"{args[0]} (a vendor's library)"
            raise AotcError(f"the bundle needs {what}, which a platform package cannot bring: compile the model "
                            "without it (platform packages are single-threaded C with no outside library)")
        _library_command(lib, cmd, args, line)
    return lib


def _library_command(lib: CMakeLibrary, cmd: str, args: list[str], line: int) -> None:
    """One active command of the file: what it gives the library, or a refusal naming it."""
    if cmd in ("add_library", "target_sources", "target_include_directories", "target_compile_definitions",
               "target_compile_options", "target_link_libraries", "set_target_properties") and \
            (not args or args[0] != lib.name):
        raise AotcError(f"the bundle's CMakeLists.txt, line {line}: {cmd}({' '.join(args[:2])} ...) is for a "
                        f"target other than the library {lib.name}, which a platform package cannot build")
    if cmd == "add_library":
        lib.sources += [_path(a) for a in args[1:] if a not in ("STATIC", "OBJECT")]
    elif cmd == "target_sources":
        lib.sources += [_path(a) for a in args[1:] if a not in ("PRIVATE", "PUBLIC", "INTERFACE")]
    elif cmd == "target_include_directories":
        scope = "PUBLIC"
        for a in args[1:]:
            if a in ("PUBLIC", "PRIVATE", "INTERFACE"):
                scope = a
            else:
                (lib.private_includes if scope == "PRIVATE" else lib.public_includes).append(_path(a))
    elif cmd == "target_compile_definitions":
        scope = "PRIVATE"
        for a in args[1:]:
            if a in ("PUBLIC", "PRIVATE", "INTERFACE"):
                scope = a
            else:
                lib.definitions.append((scope, a))
    elif cmd == "target_compile_options":
        for a in args[1:]:
            if a in ("PUBLIC", "PRIVATE", "INTERFACE") or _TOOL_OPTIONS.search(a):
                continue
            if (m := _ASM_ONLY.match(a)) and m.group(1).startswith("-Wa,-I"):
                lib.asm_include_dirs.append(_path(m.group(1).removeprefix("-Wa,-I")))  # the weights' .incbin
                continue
            m = _C_ONLY.match(a)
            if m is None:
                raise AotcError(f"the bundle's CMakeLists.txt, line {line}: compile option '{a}' of the library is "
                                "not one a platform package knows how to carry")
            lib.c_options.append(m.group(1))
    elif cmd == "target_link_libraries":
        for a in args[1:]:
            if a in ("PUBLIC", "PRIVATE", "INTERFACE"):
                continue
            if a != "m":
                raise AotcError(f"the bundle's CMakeLists.txt, line {line}: the library links '{a}', which a "
                                "platform package cannot bring")
            lib.link_libraries.append(a)
    elif cmd == "set_target_properties":
        props = dict(zip(args[2::2], args[3::2], strict=False))
        if "C_STANDARD" in props:
            ext = props.get("C_EXTENSIONS", "ON").upper() not in ("OFF", "FALSE", "0", "NO")
            lib.c_standard = ("gnu" if ext else "c") + props["C_STANDARD"]
    elif cmd == "set_source_files_properties":
        source = _path(args[0])
        props = args[args.index("PROPERTIES") + 1:]
        for key, value in zip(props[::2], props[1::2], strict=False):
            if key == "OBJECT_DEPENDS":
                lib.asm_depends[source] = _path(value)
            else:
                raise AotcError(f"the bundle's CMakeLists.txt, line {line}: source property {key} of {source} is "
                                "not one a platform package knows how to carry")
    else:
        raise AotcError(f"the bundle's CMakeLists.txt, line {line}: {cmd}() is not a command a platform package "
                        "knows how to carry")
