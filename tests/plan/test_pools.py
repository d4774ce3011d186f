"""A plan across memory pools (issue 53, aot/plan/pools.py): --memory-pool NAME:BYTES splits the arena's
buffers over pools, fastest first, hottest buffers first, I/O in the first pool, no buffer across two;
a pool too small and a pool name the board lacks are refused in one line; a board's memory map is taken
where no one region holds the arena; without pools nothing changes. Compiled only here: the builds and
runs on the boards are in tests/targets/test_pools_boards.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelcheck import AOTC, aotc
from onnx import TensorProto, helper, numpy_helper
from poolmodels import pooled_model
from test_planner import graph, host_memory

from aot.compiler import Options, compile_file, partition_model, select_and_plan
from aot.errors import AotcError
from aot.passes import HOST_PIPELINE, simplify
from aot.plan import assert_no_overlap, plan_memory
from aot.plan.pools import PoolSpec, assign_pools, parse_pool
from aot.targets import get_target

KIB = 1024


def planned(tmp_path: Path, model: onnx.ModelProto, specs: tuple[PoolSpec, ...], target: str = "host"):
    src = tmp_path / "pooled.onnx"
    onnx.save(model, src)
    parted = partition_model(onnx.load(src), Options(target=target))
    graph = simplify(parted.graph, HOST_PIPELINE)
    _, plan = select_and_plan(graph, target, {})
    one = plan.arena_bytes
    return graph, assign_pools(graph, plan, specs), one


def test_parse_pool_sizes_and_refusals():
    assert parse_pool("RAM:256K") == PoolSpec("RAM", 256 * KIB)
    assert parse_pool("ddr:2M") == PoolSpec("ddr", 2 * 1024 * KIB)
    assert parse_pool("fast_0:4096") == PoolSpec("fast_0", 4096)
    for bad in ("RAM", "RAM:", "1RAM:4K", "RAM:4Q", "RAM:-4", "RAM:0", "a-b:4K"):
        with pytest.raises(AotcError, match="--memory-pool"):
            parse_pool(bad)


def test_two_pools_hot_buffers_first_io_in_the_first(tmp_path):
    graph, plan, one = planned(tmp_path, pooled_model(), (PoolSpec("fast", 64 * KIB), PoolSpec("slow", MIB)))
    assert one > 64 * KIB  # the arena does not fit the fast pool
    fast, slow = plan.pools
    assert plan.arena_bytes == fast.nbytes <= fast.capacity
    assert 0 < slow.nbytes <= slow.capacity and slow.base >= fast.nbytes
    assert fast.nbytes + slow.nbytes >= plan.tight_bound_bytes
    assert_no_overlap(plan)  # one address space: pools never share bytes, nor buffers in one

    def pool_of(t: str) -> str:
        at = plan.offsets[t]
        nbytes = graph.tensors[t].nbytes
        holding = [p for p in plan.pools if p.base <= at and at + nbytes <= p.base + p.nbytes]
        assert len(holding) == 1, t  # whole in one pool
        return holding[0].name

    for t in (*graph.inputs, *graph.outputs):
        assert pool_of(t) == "fast"
    writer = {o: n for n in graph.nodes for o in n.outputs}
    add = next(n for n in graph.nodes if n.op == "Add")
    skip, once = add.inputs  # the skip (read by a conv and the Add) and the conv output read once
    assert "Conv" in writer[skip].op and pool_of(skip) == "fast"
    assert pool_of(once) == "slow"
    for node, off in plan.scratch.items():  # scratch in one pool as well
        b = plan.scratch_buffers[node]
        assert sum(p.base <= off and off + b.nbytes <= p.base + max(p.nbytes, 1) for p in plan.pools) == 1


def test_three_pools_each_within_its_size(tmp_path):
    specs = (PoolSpec("DTCM", 24 * KIB), PoolSpec("SRAM", 40 * KIB), PoolSpec("DDR", MIB))
    graph, plan, _ = planned(tmp_path, pooled_model(), specs)
    assert [p.name for p in plan.pools] == ["DTCM", "SRAM", "DDR"]
    assert all(0 < p.nbytes <= p.capacity for p in plan.pools)
    assert_no_overlap(plan)


def test_pools_that_hold_the_arena_keep_its_plan(tmp_path):
    """A first pool with room for everything: every offset as in the one-arena plan."""
    graph, plan, one = planned(tmp_path, pooled_model(), (PoolSpec("RAM", MIB), PoolSpec("PSRAM", MIB)))
    _, base, _ = planned(tmp_path, pooled_model(), ())
    assert plan.arena_bytes == one and plan.pools[1].nbytes == 0
    assert plan.offsets == base.offsets and plan.scratch == base.scratch


def test_a_buffer_no_pool_holds_is_refused_naming_it_its_op_and_sizes(tmp_path):
    with pytest.raises(AotcError) as e:
        planned(tmp_path, pooled_model(), (PoolSpec("RAM", 32 * KIB), PoolSpec("PSRAM", 20 * KIB)))
    msg = str(e.value)
    assert "\n" not in msg
    assert "tensor '" in msg and "(node conv" in msg and "Conv" in msg
    assert "36,864 bytes" in msg and "RAM 32,768 B" in msg and "PSRAM 20,480 B" in msg


def test_io_beyond_the_first_pool_is_refused(tmp_path):
    with pytest.raises(AotcError, match=r"graph input 'input' needs 9,216 bytes.*stay in the first pool"):
        planned(tmp_path, pooled_model(), (PoolSpec("tiny", 4 * KIB), PoolSpec("big", MIB)))


def test_cli_pool_errors_are_one_line_exit_2(tmp_path):
    src = tmp_path / "pooled.onnx"
    onnx.save(pooled_model(), src)
    r = aotc(src, "-o", tmp_path / "o", "--no-configure", "--target", "mps2-an386", "--memory-pool", "RAM:64K",
             "--memory-pool", "SRAM:1M", check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "board mps2-an386 has no region 'SRAM'" in lines[0]
    assert "RAM (RAM (SSRAM2/3), 4 MiB)" in lines[0] and "PSRAM" in lines[0]
    # argparse refuses this one by exiting (SystemExit, which aotc() in this process does not catch): a process
    r = subprocess.run([*AOTC, str(src), "-o", str(tmp_path / "o"), "--no-configure",
                        "--memory-pool", "RAM=64K"], capture_output=True, text=True)
    assert r.returncode == 2 and "NAME:BYTES" in r.stderr


def test_ram_budget_bounds_the_sum_of_the_pools(tmp_path):
    """The first pool too small for the input and the skip together: the pools' sum (I/O apart from the
    rest) is over the one arena, and a budget of the one arena refuses it in one line."""
    src = tmp_path / "pooled.onnx"
    onnx.save(pooled_model(), src)
    specs = (PoolSpec("RAM", 16 * KIB), PoolSpec("PSRAM", MIB))
    meta = json.loads(compile_file(src, Options(memory_pools=specs)).files["metadata.json"])["memory"]
    total = sum(p["bytes"] for p in meta["pools"])
    assert total > meta["tight_bound_bytes"]
    assert compile_file(src, Options(memory_pools=specs, ram_budget=total))
    with pytest.raises(AotcError, match=r"--ram-budget .*: the memory pools need .* in all \(RAM .* PSRAM"):
        compile_file(src, Options(memory_pools=specs, ram_budget=total - 1))


def test_metadata_header_and_linker_script_report_pools(tmp_path):
    src = tmp_path / "pooled.onnx"
    onnx.save(pooled_model(), src)
    b = compile_file(src, Options(target="mps2-an386", memory_pools=(PoolSpec("RAM", 64 * KIB),
                                                                     PoolSpec("PSRAM", MIB))))
    meta = json.loads(b.files["metadata.json"])
    pools = meta["memory"]["pools"]
    assert [p["name"] for p in pools] == ["RAM", "PSRAM"]
    assert pools[0]["bytes"] == meta["memory"]["arena_bytes"] and pools[0]["section"] is None
    assert pools[1]["section"] == ".bss.aotc_pool_PSRAM" and pools[1]["bytes"] > 0
    assert meta["target_info"]["placement"]["arena"] == "RAM"
    assert meta["target_info"]["placement"]["pools"] == {"PSRAM": {"region": "PSRAM", "bytes": pools[1]["bytes"]}}
    header = b.files["include/pooled.h"]
    assert f"#define POOLED_POOL_PSRAM_SIZE {pools[1]['bytes']}u" in header
    assert f"#define POOLED_ARENA_SIZE {pools[0]['bytes']}u" in header
    c = b.files["src/pooled.c"]
    assert f'pooled_pool_PSRAM[{pools[1]["bytes"]}u] AOTC_POOL_SECTION(".bss.aotc_pool_PSRAM")' in c
    ld = b.files["target/cortex-m/aotc_regions.ld"]
    assert "*(.bss.aotc_pool_PSRAM)" in ld and "} > PSRAM" in ld


def test_without_pools_nothing_is_added(tmp_path):
    src = tmp_path / "pooled.onnx"
    onnx.save(pooled_model(), src)
    b = compile_file(src, Options(target="mps2-an386"))
    meta = json.loads(b.files["metadata.json"])
    assert "pools" not in meta["memory"] and "pools" not in meta["target_info"]["placement"]
    assert "_POOL_" not in b.files["include/pooled.h"] and "aotc_pool" not in b.files["src/pooled.c"]
    assert "SECTIONS" not in b.files["target/cortex-m/aotc_regions.ld"]


def wide_model() -> onnx.ModelProto:
    """Six 3 MiB tensors live at once (a Sum of an Expand and five softmaxes of it, which no pass fuses), a
    small input and output: an arena of 18 MiB, over the 16 MiB PSRAM of an mps2 board, the largest of
    its regions."""
    ops = [("Softmax", 1), ("Softmax", 0), ("LogSoftmax", 1), ("LogSoftmax", 0), ("Hardmax", 1)]
    nodes = [helper.make_node("Expand", ["x", "shape"], ["e"], name="expand")]
    nodes += [helper.make_node(op, ["e"], [f"y{k}"], name=f"f{k}", axis=axis) for k, (op, axis) in enumerate(ops)]
    nodes += [helper.make_node("Sum", ["e", *(f"y{k}" for k in range(len(ops)))], ["s"], name="sum"),
              helper.make_node("ReduceSum", ["s", "axes"], ["out"], name="reduce", keepdims=0)]
    g = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1024])],
                          [numpy_helper.from_array(np.array([768, 1024], np.int64), "shape"),
                           numpy_helper.from_array(np.array([0], np.int64), "axes")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_a_board_splits_an_arena_no_one_region_holds(tmp_path):
    """Without --memory-pool: before pools this model was refused on mps2-an385 (18 MiB of arena, 16 MiB
    of PSRAM); now its buffers go to the board's RAM and PSRAM."""
    src = tmp_path / "wide.onnx"
    onnx.save(wide_model(), src)
    b = compile_file(src, Options(target="mps2-an385"))
    meta = json.loads(b.files["metadata.json"])
    ram, psram = meta["memory"]["pools"]
    assert (ram["name"], psram["name"]) == ("RAM", "PSRAM")
    assert ram["bytes"] >= 3 * MIB and psram["bytes"] <= 16 * MIB
    assert ram["bytes"] + psram["bytes"] > 16 * MIB
    target = get_target("mps2-an385")
    assert psram["bytes"] <= target.region("PSRAM").size


MIB = 1024 * KIB


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 64), st.integers(0, 3), st.integers(0, 40)), min_size=1, max_size=20),
       st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.booleans())
def test_random_graphs_split_over_pools_within_their_sizes(spec, fast_share, mid_share, bounded):
    """Chains reading their predecessor and maybe one earlier tensor, with random scratch, over a fast
    pool of a random share of the arena, a middle one and a slow one (bounded or not): the split is
    refused in one line, or every buffer lies whole in one pool within its size, I/O in the first, and
    no two buffers live at once share a byte."""
    nodes, names = [], ["x"]
    for k, (n, back, _) in enumerate(spec):
        ins = [names[-1]] + ([names[-1 - back]] if back and len(names) > back else [])
        out = "out" if k == len(spec) - 1 else f"t{k}"
        nodes.append(("Opaque", ins, out, n))
        names.append(out)
    scratch = {f"n{k}": s * 4 for k, (_, _, s) in enumerate(spec)}
    g = graph(nodes)
    plan = plan_memory(g, host_memory(g, lambda n, g, budget: scratch[n.name]))
    arena = plan.arena_bytes
    specs = (PoolSpec("fast", max(int(arena * fast_share), 16)), PoolSpec("mid", max(int(arena * mid_share), 16)),
             PoolSpec("slow", arena // 2 + 16 if bounded else 4 * arena + 64))
    try:
        plan = assign_pools(g, plan, specs)
    except AotcError as e:
        assert "\n" not in str(e) and "memory pools:" in str(e)
        return
    assert [p.name for p in plan.pools] == ["fast", "mid", "slow"] and plan.arena_bytes == plan.pools[0].nbytes
    assert all(p.nbytes <= p.capacity for p in plan.pools)
    assert_no_overlap(plan)

    def pool_of(start: int, end: int) -> str:
        holding = [p.name for p in plan.pools if p.base <= start and end <= p.base + p.nbytes]
        assert len(holding) == 1, (start, end)
        return holding[0]

    for b in plan.buffers:
        pool_of(b.offset, b.offset + max(d + n for d, n, _, _ in b.segs))
    for t in ("x", "out"):
        assert pool_of(plan.offsets[t], plan.offsets[t] + g.tensors[t].nbytes) == "fast"
