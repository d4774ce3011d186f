"""aotc's Cortex-M4 cycle estimate (runtime_c/tools/qemu_insn_count.c, cycles=m4) against counts worked
out by hand from the TRM's rules, on a bare-metal loop under qemu-system-arm -M mps2-an386.

The loop body below is run N and 2N times by two builds of the same program: the difference of the
two counts is N bodies exactly (setup, exit and the last, untaken loop branch cancel), so each rule
shows in the total: a load pipelined after a load, nothing pipelined after a store, the address-
generation stall, LDRD, PUSH/POP 1+N, the multiplies, UDIV, unaligned accesses, the FPU's VLDR/VMLA/
VDIV, IT, a branch not taken, and the refills of BL, BX and the taken loop branch."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import first_fast, require_tool

from aot.bench import insn_count_plugin
from aot.build import runner_command
from aot.targets import get_target

P, DIV = "P", "DIV"  # the refill of a taken branch, the UDIV figure: options of the plugin

# (instruction, its cycles by the TRM's rules, why); r0 = data (aligned), r1 = scratch RAM, r9 = 8
BODY: list[tuple[str, list[int | str], str]] = [
    ("ldr r3, [r0]", [2], "a load after the taken loop branch: not pipelined"),
    ("ldr r4, [r0, #4]", [1], "pipelined after a load"),
    ("adds r3, r3, r4", [1], ""),
    ("str r3, [r1]", [1], "STR with an immediate offset: always 1"),
    ("ldr r5, [r1, #4]", [2], "nothing is pipelined after a store"),
    ("ldr r6, [r0, #8]", [1], "pipelined after a load"),
    ("ldr r7, [r6]", [2], "not pipelined: the load before computed its address"),
    ("add r6, r0, #8", [1], ""),
    ("ldr r7, [r6]", [2, 1], "+1: address from the ALU result just before"),
    ("ldrd r2, r3, [r0]", [3], "LDRD: 1+N, N=2, never pipelined"),
    ("str r3, [r1, r9]", [2], "register offset, not after a single load: 2"),
    ("ldr r5, [r0, r9]", [2], "after a store"),
    ("str r5, [r1, r9]", [1], "register offset, pipelined after a load"),
    ("mul r2, r3, r4", [1], ""),
    ("smlad r2, r3, r4, r2", [1], ""),
    ("udiv r2, r3, r4", [DIV], "the plugin's div= figure (TRM: 2 to 12)"),
    ("push {r2-r5}", [5], "1+N"),
    ("pop {r2-r5}", [5], "1+N"),
    ("ldr.w r2, [r0, #1]", [2, 2], "a word at an odd address: +2"),
    ("movs r3, #0", [1], ""),
    ("ldrh.w r2, [r0, #3]", [2, 1], "a halfword at an odd address: +1"),
    ("ldr.w r2, [r0, #2]", [1, 1], "pipelined after a load; a word at a halfword address: +1"),
    ("vldr s0, [r0]", [1], "VLDR pipelined after a load"),
    ("vldr s1, [r0, #4]", [1], "pipelined after a load"),
    ("vmla.f32 s2, s0, s1", [3], ""),
    ("vadd.f32 s3, s0, s1", [1], ""),
    ("vdiv.f32 s4, s0, s1", [14], ""),
    ("vmov r2, s4", [1], ""),
    ("vstr s2, [r1, #8]", [2], "VSTR, not after a load"),
    ("cmp r8, #0", [1], ""),
    ("beq 9f", [1], "not taken"),
    ("it ne", [1], ""),
    ("addne r2, r2, #1", [1], ""),
    ("bl leaf", [1, P], "always a refill"),
    ("subs r8, r8, #1", [1], ""),
    ("bne loop", [1, P], "taken"),
]
LEAF = [
    ("cmp r8, #0", [1], ""),
    ("it eq", [1], ""),
    ("bxeq lr", [1], "a return in an IT block, not taken: no refill"),
    ("bx lr", [1, P], ""),
]
# a body whose block qemu splits at a 1 KiB page: an LDRD 6 bytes before the boundary (qemu
# 7.2 reports it as 6 bytes long), a load just before the boundary and one just after it
PAGE_BODY = [("nop", [1], "")] * 509 + [
    ("ldrd r2, r3, [r0]", [3], "32-bit, 6 bytes before the page boundary"),
    ("ldr r6, [r0]", [2], "not pipelined after an LDRD"),
    ("ldr r7, [r0, #4]", [1], "the next block's first instruction, pipelined after the load"),
    ("subs r8, r8, #1", [1], ""),
    ("bne loop", [1, P], "taken"),
]

PROGRAM = """\
    .syntax unified
    .cpu cortex-m4
    .fpu fpv4-sp-d16
    .thumb
    .text
    .word 0x20008000            @ initial stack pointer
    .word reset                 @ reset vector (a .thumb_func: the Thumb bit is set)
    .thumb_func
reset:
    ldr r0, =0xE000ED88         @ CPACR: enable the FPU (CP10, CP11)
    ldr r1, [r0]
    orr r1, r1, #(0xF << 20)
    str r1, [r0]
    dsb
    isb
    ldr r0, =data
    ldr r1, =0x20000100
    movs r9, #8
    ldr r8, =ITER
    {align}
loop:
{body}
9:
    movs r0, #0x18              @ semihosting SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    .thumb_func
leaf:
{leaf}
    .ltorg
    .align 2
data:
    .word 0x3fc00000, 0x40000000, 0x20000100, 0x3f800000
"""


def _cycles(rows: list[tuple[str, list[int | str], str]], p: int, div: int) -> int:
    return sum(p if c == P else div if c == DIV else int(c) for _, costs, _ in rows for c in costs)


def _build(tmp: Path, iterations: int, body: list, align: str = "") -> Path:
    src = tmp / "loop.S"
    src.write_text(PROGRAM.format(body="\n".join(f"    {a}" for a, _, _ in body), align=align,
                                  leaf="\n".join(f"    {a}" for a, _, _ in LEAF)))
    elf = tmp / f"loop{iterations}.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
                    "-nostdlib", "-Wl,-Ttext=0", "-Wl,--entry=reset", f"-Wa,--defsym,ITER={iterations}",
                    "-o", str(elf), str(src)], check=True, capture_output=True, text=True)
    return elf


def _count(plugin: Path, elf: Path, args: str) -> tuple[int, int]:
    cmd = runner_command(get_target("mps2-an386"), elf, [])
    k = cmd.index("-kernel")
    cmd[k:k] = ["-plugin", f"{plugin},arg=cycles=m4" + "".join(f",arg={a}" for a in args.split() if a)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return (int(re.search(r"insns: (\d+)", r.stderr).group(1)), int(re.search(r"cycles: (\d+)", r.stderr).group(1)))


@pytest.mark.parametrize("args,p,div", first_fast([("", 2, 7), ("p=3 div=12", 3, 12), ("p=1 div=2", 1, 2)]))
def test_m4_cycles_of_a_loop_match_the_trm_rules_worked_by_hand(tmp_path, args, p, div):
    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cc")
    plugin = insn_count_plugin(tmp_path / "plugin")
    n = 10
    (i1, c1), (i2, c2) = (_count(plugin, _build(tmp_path, k, BODY), args) for k in (n, 2 * n))
    assert i2 - i1 == n * (len(BODY) + len(LEAF))
    assert c2 - c1 == n * (_cycles(BODY, p, div) + _cycles(LEAF, p, div)), (c2 - c1) / n


@pytest.mark.full
def test_m4_cycles_across_a_page_boundary(tmp_path):
    """qemu ends a block at each 1 KiB page and reports the 32-bit instruction 6 bytes before it as
    6 bytes long: it is still one LDRD, and the load after the boundary still pipelines."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cc")
    plugin = insn_count_plugin(tmp_path / "plugin")
    n = 10
    (i1, c1), (i2, c2) = (_count(plugin, _build(tmp_path, k, PAGE_BODY, ".balign 1024"), "") for k in (n, 2 * n))
    assert i2 - i1 == n * len(PAGE_BODY)
    assert c2 - c1 == n * _cycles(PAGE_BODY, 2, 7), (c2 - c1) / n


# the body's data accesses to RAM (r1's scratch, the word r0 + 8 points at, the stack): STR, LDR r5,
# LDR r7 through r6 = [r0 + 8], two STR with a register offset, PUSH and POP of 4 words, VSTR
RAM_ACCESSES = 1 + 1 + 1 + 2 + 4 + 4 + 1


@pytest.mark.full
@pytest.mark.parametrize("ws", [1, 3])
def test_m4_wait_states_charge_each_access_to_their_range(tmp_path, ws):
    """ws=ORIGIN:SIZE:N (aotc bench --wait-state, memory pools): N more cycles per data access in the
    range, here the board's RAM; the loop's loads from flash and its instruction fetches cost nothing more."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cc")
    plugin = insn_count_plugin(tmp_path / "plugin")
    n = 10
    elfs = [_build(tmp_path, k, BODY) for k in (n, 2 * n)]
    (_, c1), (_, c2) = (_count(plugin, elf, f"ws=20000000:400000:{ws}") for elf in elfs)
    assert c2 - c1 == n * (_cycles(BODY, 2, 7) + _cycles(LEAF, 2, 7) + ws * RAM_ACCESSES), (c2 - c1) / n
