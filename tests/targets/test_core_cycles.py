"""aotc's cycle estimates for the Cortex-M33, M7 and M55 (runtime_c/tools/qemu_insn_count.c, cycles=m33, m7,
m55) against counts worked out by hand from each model's rules (docs/firmware.md, "How the cycles are
estimated"), on bare-metal loops under qemu-system-arm on the core's board: mps2-an505, mps2-an500, mps3-an547.

As in test_m4_cycles.py, each loop runs N and 2N times in two builds of one program: the difference of the
two counts is N bodies exactly (setup, exit, the first turn's cold loop cache or branch prediction cancel).
The M33: single loads in 1 cycle with the load-use stall, the M4's other rows, P = 1. The M7: a pair of
independent ADDs issuing together and a dependent one not, a load with an ALU op, the load-use stalls (a
byte load's result, a loaded address, a saturating op's result), the MAC's accumulator and a store's data
read late, one store port, single-issue PUSH/POP/UDIV, a predicted BL and a return always refilled. The
M55: Helium's two beats, the overlap of instructions on different pipes (a load and VMLADAVA), none across
scalar code or VPST, and a low-overhead loop whose LE costs nothing once the loop cache holds it; two LE
loops taking turns, each LE's first turn 1 + P; pairs of 16-bit instructions issued together."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import first_fast, require_tool

from aot.bench import CYCLE_MODELS, insn_count_plugin
from aot.build import runner_command
from aot.targets import get_target

P, DIV = "P", "DIV"  # the refill of a taken or mispredicted branch, the UDIV figure: options of the plugin

# the M33 (r0 = data, r1 = scratch RAM, r9 = 8): the M4's loop of test_m4_cycles.py by the M33's rules
M33_BODY: list[tuple[str, list[int | str], str]] = [
    ("ldr r3, [r0]", [1], "a single load: 1 (the address is formed in stage 2)"),
    ("ldr r4, [r0, #4]", [1], ""),
    ("adds r3, r3, r4", [1, 1], "load-use: reads what the load just before loaded"),
    ("str r3, [r1]", [1], ""),
    ("ldr r5, [r1, #4]", [1], ""),
    ("ldr r6, [r0, #8]", [1], ""),
    ("ldr r7, [r6]", [1, 1], "load-use: its address was just loaded"),
    ("add r6, r0, #8", [1], ""),
    ("ldr r7, [r6]", [1, 1], "address from the ALU result just before"),
    ("ldrd r2, r3, [r0]", [3], "LDRD: the M4's 1+N"),
    ("str r3, [r1, r9]", [1], "register offset: 1"),
    ("ldr r5, [r0, r9]", [1], ""),
    ("str r5, [r1, r9]", [1], "stores the register just loaded: its data is read later, no stall"),
    ("mul r2, r3, r4", [1], ""),
    ("smlad r2, r3, r4, r2", [1], ""),
    ("udiv r2, r3, r4", [DIV], ""),
    ("push {r2-r5}", [5], "1+N"),
    ("pop {r2-r5}", [5], "1+N"),
    ("ldr.w r2, [r0, #1]", [1, 2], "a word at an odd address: +2"),
    ("movs r3, #0", [1], ""),
    ("ldrh.w r2, [r0, #3]", [1, 1], "a halfword at an odd address: +1"),
    ("ldr.w r2, [r0, #2]", [1, 1], "a word at a halfword address: +1"),
    ("vldr s0, [r0]", [1], ""),
    ("vldr s1, [r0, #4]", [1], ""),
    ("vmla.f32 s2, s0, s1", [3], ""),
    ("vadd.f32 s3, s0, s1", [1], ""),
    ("vdiv.f32 s4, s0, s1", [14], ""),
    ("vmov r2, s4", [1], ""),
    ("vstr s2, [r1, #8]", [1], ""),
    ("cmp r8, #0", [1], ""),
    ("beq 9f", [1], "not taken"),
    ("it ne", [1], ""),
    ("addne r2, r2, #1", [1], ""),
    ("bl leaf", [1, P], "always a refill"),
    ("subs r8, r8, #1", [1], ""),
    ("bne loop", [1, P], "taken"),
]
M33_LEAF = [("cmp r8, #0", [1], ""), ("it eq", [1], ""), ("bxeq lr", [1], "not taken"), ("bx lr", [1, P], "")]

# the M7: the cycles each instruction adds to its block's issue (0: issued beside the one before)
M7_BODY: list[tuple[str, list[int | str], str]] = [
    ("add r2, r2, #1", [1], "cycle 0"),
    ("add r3, r3, #1", [0], "independent: dual-issued in cycle 0"),
    ("add r4, r4, #1", [1], "cycle 1"),
    ("add r4, r4, #1", [1], "reads the ADD before: cycle 2"),
    ("ldr r5, [r0]", [0], "a load beside an ALU op: cycle 2"),
    ("add r6, r5, #1", [1], "a word load's result a cycle later: cycle 3"),
    ("ldrb r7, [r0, #1]", [0], "cycle 3, paired"),
    ("add r6, r7, #1", [2], "a byte load's result two cycles later: cycle 5"),
    ("ldr r2, [r0, #8]", [0], "cycle 5, paired"),
    ("ldr r5, [r2]", [2], "an address from the load before: read a cycle early, cycle 7"),
    ("smlad r3, r5, r5, r3", [1], "cycle 8"),
    ("smlad r3, r4, r4, r3", [1], "the accumulator forwarded; one MAC: cycle 9"),
    ("str r4, [r1]", [0], "a store beside the MAC: cycle 9"),
    ("str r2, [r1, #4]", [1], "one store port: cycle 10"),
    ("push {r2-r5}", [2], "single-issue, two registers a cycle: cycles 11-12"),
    ("pop {r2-r5}", [2], "cycles 13-14"),
    ("udiv r2, r3, r4", [DIV], "single-issue, the pipe busy for it: cycles 15-21"),
    ("mul r5, r2, r3", [1], "cycle 22"),
    ("str r5, [r1, #8]", [1], "a multiply's result 2 cycles later, a store's data read a cycle late: cycle 23"),
    ("bl leaf", [0], "direct: predicted, no refill; beside the store"),
]
M7_LEAF = [("bx lr", [1, P], "a return: always refilled")]
M7_AFTER = [("subs r8, r8, #1", [1], ""), ("bne loop", [0], "beside the SUBS; predicted taken")]

# the M55 (r0 = data, r1 = scratch): a low-overhead loop of Helium instructions
M55_BODY: list[tuple[str, list[int | str], str]] = [
    ("vldrb.s16 q0, [r0]", [1], "two beats, overlapping the last VMLADAVA's second across the free LE"),
    ("vldrb.s16 q1, [r0, #8]", [2], "the same (load/store) pipe: no overlap"),
    ("vmladava.s16 r2, q0, q1", [1], "the multiply pipe: starts in the load's second beat"),
    ("vmladava.s16 r6, q0, q1", [2], "the same pipe"),
    ("vadd.i16 q2, q0, q1", [1], "the integer pipe after the multiply pipe"),
    ("adds r4, r4, #1", [1], "scalar"),
    ("vstrh.16 q2, [r1]", [2], "after a scalar instruction: no overlap"),
    ("vpst", [1], ""),
    ("vaddt.i16 q3, q0, q1", [2], "after VPST: no overlap"),
    ("vstrh.16 q3, [r1, #16]", [1], "load/store after integer"),
    ("vmladava.s16 r10, q0, q1", [1], "multiply after load/store"),
    ("le lr, loop", [0], "the loop cache holds this loop"),
]
# two LE loops of 3 turns in an outer loop: each evicts the other from the one-entry loop cache
M55_TWO_LOOPS: list[tuple[str, list[int | str], str]] = [
    ("dls lr, r7", [1], ""),
    ("2: adds r4, r4, #1", [3], "3 turns"),
    ("le lr, 2b", [1, P], "the first turn: the cache holds the other loop; then free, and free at the exit"),
    ("dls lr, r7", [1], ""),
    ("3: adds r5, r5, #1", [3], ""),
    ("le lr, 3b", [1, P], ""),
    ("subs r8, r8, #1", [1], ""),
    ("bne loop", [1, P], "taken (SUBS of r8 is 32-bit: no pair)"),
]
# the M55's scalar dual issue: two 16-bit instructions in a cycle when one is a MOV/ADD/SUB #imm, MOV, extend, IT
# or B and the second does not read the first's result
M55_PAIRS: list[tuple[str, list[int | str], str]] = [
    ("movs r2, #1", [1], ""),
    ("adds r3, r3, #1", [0], "beside the MOVS"),
    ("adds r3, r3, #1", [1], "reads the ADDS before (and that one was the second of a pair)"),
    ("ldr r5, [r0]", [1], "a 16-bit load beside the ADDS: 2 cycles, the ADDS's saved"),
    ("adds r6, r5, #1", [1], "reads the load's result"),
    ("uxtb r7, r6", [1], "reads the ADDS's result"),
    ("uxth r2, r3", [0], "beside the UXTB"),
    ("subs r8, r8, #1", [1], "32-bit (r8)"),
    ("bne loop", [1, P], "after a 32-bit instruction: no pair"),
]

BOARDS = {"m33": ("mps2-an505", ["-mcpu=cortex-m33", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"], 0x10000000, 0x38000000),
          "m7": ("mps2-an500", ["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"], 0x00000000, 0x20000000),
          "m55": ("mps3-an547", ["-mcpu=cortex-m55", "-mfloat-abi=hard"], 0x10000000, 0x30000000)}

PROGRAM = """\
    .syntax unified
    .thumb
    .text
    .word {ram:#x} + 0x8000     @ initial stack pointer
    .word reset                 @ reset vector (a .thumb_func: the Thumb bit is set)
    .thumb_func
reset:
    ldr r0, =0xE000ED88         @ CPACR: enable the FPU and Helium (CP10, CP11)
    ldr r1, [r0]
    orr r1, r1, #(0xF << 20)
    str r1, [r0]
    dsb
    isb
    ldr r0, =data
    ldr r1, ={ram:#x} + 0x100
    movs r9, #8
    movs r7, #3
    ldr r8, =ITER
    {setup}
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
    .word 0x3fc00000, 0x40000000, {ram:#x} + 0x100, 0x3f800000
"""


def _cycles(rows: list, p: int, div: int) -> int:
    return sum(p if c == P else div if c == DIV else int(c) for _, costs, _ in rows for c in costs)


def _lines(rows: list) -> str:
    return "\n".join(f"    {a}" for a, _, _ in rows)


def _build(tmp: Path, cpu: str, iterations: int, body: list, leaf: list, setup: str = "") -> Path:
    board, flags, text, ram = BOARDS[cpu]
    src = tmp / f"{cpu}.S"
    src.write_text(PROGRAM.format(body=_lines(body), leaf=_lines(leaf) or "    bx lr", setup=setup, ram=ram))
    elf = tmp / f"{cpu}{iterations}.elf"
    subprocess.run(["arm-none-eabi-gcc", *flags, "-mthumb", "-nostdlib", f"-Wl,-Ttext={text:#x}", "-Wl,--entry=reset",
                    f"-Wa,--defsym,ITER={iterations}", "-o", str(elf), str(src)], check=True, capture_output=True,
                   text=True)
    return elf


def _count(plugin: Path, cpu: str, elf: Path, args: str) -> tuple[int, int]:
    cmd = runner_command(get_target(BOARDS[cpu][0]), elf, [])
    k = cmd.index("-kernel")
    cmd[k:k] = ["-plugin", f"{plugin},arg=cycles={cpu}" + "".join(f",arg={a}" for a in args.split() if a)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return (int(re.search(r"insns: (\d+)", r.stderr).group(1)), int(re.search(r"cycles: (\d+)", r.stderr).group(1)))


def _per_body(tmp: Path, cpu: str, body: list, leaf: list, args: str, setup: str = "", n: int = 10) -> tuple[int, int]:
    """Instructions and estimated cycles of one turn of `body`: (count(2n turns) - count(n turns)) / n."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cc")
    plugin = insn_count_plugin(tmp / "plugin")
    (i1, c1), (i2, c2) = (_count(plugin, cpu, _build(tmp, cpu, k, body, leaf, setup), args) for k in (n, 2 * n))
    assert (i2 - i1) % n == 0 and (c2 - c1) % n == 0, (i2 - i1, c2 - c1)
    return (i2 - i1) // n, (c2 - c1) // n


@pytest.mark.parametrize("args,p,div", first_fast([("", 1, 7), ("p=3 div=12", 3, 12)]))
def test_m33_cycles_of_a_loop_match_its_rules_worked_by_hand(tmp_path, args, p, div):
    insns, cycles = _per_body(tmp_path, "m33", M33_BODY, M33_LEAF, args)
    assert insns == len(M33_BODY) + len(M33_LEAF)
    assert cycles == _cycles(M33_BODY, p, div) + _cycles(M33_LEAF, p, div)


@pytest.mark.full
@pytest.mark.parametrize("args,p,div", [("", 4, 7), ("p=6 div=2", 6, 2)])
def test_m7_dual_issue_and_stalls_match_the_pairing_worked_by_hand(tmp_path, args, p, div):
    body = M7_BODY + M7_AFTER
    insns, cycles = _per_body(tmp_path, "m7", body, M7_LEAF, args)
    assert insns == len(body) + len(M7_LEAF)
    assert cycles == _cycles(body, p, div) + _cycles(M7_LEAF, p, div)


@pytest.mark.full
def test_m7_dependent_adds_take_a_cycle_each_and_independent_ones_pair(tmp_path):
    """The same 8 ADDs: a chain through one register (8 cycles) or 4 independent pairs (4 cycles)."""
    after = [("subs r8, r8, #1", [1], ""), ("bne loop", [0], "")]
    chain = [("add r2, r2, #1", [1], "")] * 8 + after
    pairs = [("add r2, r2, #1", [1], ""), ("add r3, r3, #1", [0], "")] * 4 + after
    assert _per_body(tmp_path / "chain", "m7", chain, [], "") == (10, 9)
    assert _per_body(tmp_path / "pairs", "m7", pairs, [], "") == (10, 5)
    # saturating ops: their result 2 cycles later, one DSP unit (first of a pair only): SSAT, SSAT, SSAT, SSAT in
    # cycles 0, 2, 4, 6, the SUBS beside the last, the BNE in cycle 7
    sats = [("ssat r2, #8, r2", [2], "")] * 4 + after
    assert _per_body(tmp_path / "sats", "m7", sats, [], "") == (6, 8)


@pytest.mark.full
def test_m55_beats_overlap_and_a_free_le_match_the_rules_worked_by_hand(tmp_path):
    insns, cycles = _per_body(tmp_path, "m55", M55_BODY, [], "", setup="dls lr, r8")
    assert insns == len(M55_BODY)
    assert cycles == _cycles(M55_BODY, 2, 7) == 15


@pytest.mark.full
def test_m55_dual_issues_16_bit_pairs_worked_by_hand(tmp_path):
    insns, cycles = _per_body(tmp_path, "m55", M55_PAIRS, [], "")
    assert insns == len(M55_PAIRS)
    assert cycles == _cycles(M55_PAIRS, 2, 7) == 9


@pytest.mark.full
def test_m55_le_of_a_loop_the_cache_does_not_hold_costs_a_refill(tmp_path):
    insns, cycles = _per_body(tmp_path, "m55", M55_TWO_LOOPS, [], "")
    assert insns == 2 * (1 + 3 * 2) + 2  # each inner loop: DLS, then 3 turns of ADDS and LE
    assert cycles == _cycles(M55_TWO_LOOPS, 2, 7)


def test_bench_maps_each_modelled_board_to_its_core():
    assert CYCLE_MODELS == {"mps2-an386": "m4", "mps2-an505": "m33", "mps2-an500": "m7", "mps3-an547": "m55"}
