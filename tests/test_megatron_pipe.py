"""Megatron's interleaved schedule with ``overlap_p2p_comm`` (rlmcost.perf.megatron_pipe).

Source: NVIDIA/Megatron-LM ``megatron/core/pipeline_parallel/schedules.py``,
``forward_backward_pipelining_with_interleaving`` at 1e05700595 (2025-05-24; the
Megatron-MoE-ModelZoo's code): warm-up lines 1133-1285 (blocking ``send_forward_recv_forward``
at line 1210 without ``overlap_p2p_comm_warmup_flush``; the last warm-up iteration posts the first
gradient receive asynchronously), steady 1F1B lines 1287-1420 (wait the oldest receive before a
pass, post the pass's send and the next receive after it, wait the previous send), cool-down lines
1476-1583 (blocking ``send_backward_recv_backward``). core_v0.8.0 (lines 812-1118) waits its
handles one pass later and ends at the same times in this replay."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import replace

import pytest

from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout, PipelineSchedule
from rlmcost.parallel.shard import stages
from rlmcost.perf.efficiency import Device
from rlmcost.perf.megatron_pipe import exposed_transfers, steady_iterations
from rlmcost.perf.step_pass import StepContext, StepOptions, stage_pass
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch, load_table, predict_row
from rlmcost.specs import get_hardware
from rlmcost.specs.workload import Workload

Op = tuple[str, object, object]


def _chunk(k: int, p: int, v: int, forward: bool) -> int:
    """``get_model_chunk_id``: chunk of virtual micro-batch ``k`` (groups of p per chunk)."""
    c = (k % (p * v)) // p
    return c if forward else v - 1 - c


def _program(r: int, p: int, v: int, m: int) -> list[Op]:
    """Rank ``r``'s computes, posts and waits, in the order the schedule issues them."""
    total = m * v
    warm = min(2 * (p - r - 1) + (v - 1) * p, total)  # get_pp_rank_microbatches
    nxt, prv = (r + 1) % p, (r - 1) % p

    def last(c: int) -> bool:
        return r == p - 1 and c == v - 1

    def first(c: int) -> bool:
        return r == 0 and c == 0

    ops: list[Op] = []
    if r != 0:  # the warm-up's first recv_forward, blocking
        ops += [("post", ["blk"], [("recv", prv)]), ("wait", "blk", None)]
    for k in range(warm):
        ops.append(("C", "f", None))
        recv = not (r == 0 and _chunk(k + 1, p, v, True) == 0) and k != total - 1
        tr = ([] if last(_chunk(k, p, v, True)) else [("send", nxt)])
        tr += [("recv", prv)] if recv else []
        ops += [("post", ["blk"] * len(tr), tr), ("wait", "blk", None)]
        if k == warm - 1 and warm < total and r != p - 1:
            ops.append(("post", ["rn"], [("recv", nxt)]))
    for k in range(total - warm):
        fk = k + warm
        cf, cb = _chunk(fk, p, v, True), _chunk(k, p, v, False)
        recv_prev = _chunk(fk - (p - 1), p, v, True) != v - 1 if r == 0 else True
        recv_prev = recv_prev and k != total - warm - 1
        recv_next = not (r == p - 1 and _chunk(k - (p - 1), p, v, False) == 0)
        ops += [("waitq", "rp", None)] if not first(cf) else []
        ops.append(("C", "f", None))
        tr = ([] if last(cf) else [("send", nxt)]) + ([("recv", prv)] if recv_prev else [])
        names = ([] if last(cf) else ["sn+"]) + (["rp"] if recv_prev else [])
        ops += [("post", names, tr), ("rotate", "sn", None)]
        ops += [("waitq", "rn", None)] if not last(cb) else []
        ops.append(("C", "b", None))
        tr = ([] if first(cb) else [("send", prv)]) + ([("recv", nxt)] if recv_next else [])
        names = ([] if first(cb) else ["sp+"]) + (["rn"] if recv_next else [])
        ops += [("post", names, tr), ("rotate", "sp", None)]
    if warm == total and r != p - 1:
        ops += [("post", ["blk"], [("recv", nxt)]), ("wait", "blk", None)]
    for k in range(total - warm, total):
        cb = _chunk(k, p, v, False)
        ops += [("waitq", "rn", None)] if not last(cb) and k != 0 else []
        recv = not (r == p - 1 and _chunk(k + 1, p, v, False) == v - 1) and k != total - 1
        ops.append(("C", "b", None))
        tr = ([] if first(cb) else [("send", prv)]) + ([("recv", nxt)] if recv else [])
        ops += [("post", ["blk"] * len(tr), tr), ("wait", "blk", None)]
    return ops + [("wait", "sp", None), ("wait", "sn", None)]


def replay(p: int, v: int, m: int, t_f: float, t_b: float, c: float) -> float:
    """Makespan of the interleaved schedule with ``overlap_p2p_comm``: chunk passes of t_f and
    t_b seconds, every transfer c seconds from the later of its send's and its receive's post
    (NCCL matches a pair's sends and receives in order; one at a time per pair)."""
    progs = [_program(r, p, v, m) for r in range(p)]
    pc, now = [0] * p, [0.0] * p
    posts: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    held: list[dict[str, list[tuple[int, int, int]]]] = [defaultdict(list) for _ in range(p)]
    ends: dict[tuple[int, int, int], float] = {}

    def end(s: int, d: int, i: int) -> float | None:
        if (s, d, i) not in ends:
            if i >= min(len(posts["send", s, d]), len(posts["recv", s, d])):
                return None
            before = end(s, d, i - 1) if i else 0.0
            if before is None:
                return None
            start = max(posts["send", s, d][i], posts["recv", s, d][i], before)
            ends[s, d, i] = start + c
        return ends[s, d, i]

    moved = True
    while moved:
        moved = False
        for r in range(p):
            while pc[r] < len(progs[r]):
                kind, a, b = progs[r][pc[r]]
                h = held[r]
                if kind == "C":
                    now[r] += t_f if a == "f" else t_b
                elif kind == "post":
                    for name, (way, peer) in zip(a, b, strict=True):  # type: ignore[call-overload]
                        s, d = (r, peer) if way == "send" else (peer, r)
                        posts[way, s, d].append(now[r])
                        h[name].append((s, d, len(posts[way, s, d]) - 1))
                else:  # wait: all of "wait", the oldest of "waitq", the previous of "rotate"
                    keys = h[a] if kind != "waitq" else h[a][:1]  # type: ignore[index]
                    done = [end(*x) for x in keys]
                    if any(e is None for e in done):
                        break
                    now[r] = max([now[r], *[e for e in done if e is not None]])
                    if kind == "waitq" and keys:  # an empty queue: nothing to wait on
                        h[a].pop(0)  # type: ignore[index]
                    else:
                        h[a] = h.pop(f"{a}+", []) if kind == "rotate" else []  # type: ignore[index]
                pc[r] += 1
                moved = True
    assert pc == [len(x) for x in progs], "the replay deadlocked"
    return max(now)


@pytest.mark.parametrize(("p", "v", "m"), [(4, 2, 8), (4, 3, 8), (8, 4, 16), (8, 3, 32), (3, 2, 6)])
def test_overlap_exposes_the_first_forward_and_last_backward_chains(p: int, v: int, m: int) -> None:
    """Free transfers: the interleaved bubble, (m v + p - 1)(t_f + t_b) (Narayanan et al. 2021
    §2.2). Transfers shorter than either pass: 2 (p v - 1) of them exposed, whatever m; longer
    than the forward: each of the last rank's steady iterations adds the excess."""
    t_f, t_b = 1.0, 2.0
    free = replay(p, v, m, t_f, t_b, 0.0)
    assert free == pytest.approx((m * v + p - 1) * (t_f + t_b))
    assert replay(p, v, m, t_f, t_b, 0.1) - free == pytest.approx(2 * exposed_transfers(p, v) * 0.1)
    c = 1.5  # between t_f and t_b
    extra = 2 * exposed_transfers(p, v) * c + steady_iterations(p, v, m) * (c - t_f)
    assert replay(p, v, m, t_f, t_b, c) - free == pytest.approx(extra)


def _small(overlap: bool, v: int = 2) -> tuple[float, float, float]:
    """A GPT of 16 layers on 8 H100s, PP 4 interleaved over v chunks, 8 micro-batches."""
    arch = gpt_arch(16, 2048, 16, 51200, 2048)
    schedule = PipelineSchedule.INTERLEAVED if v > 1 else PipelineSchedule.ONE_F_ONE_B
    layout = Layout(dp=2, pp=4, micro_batch=1, schedule=schedule, virtual_stages=v)
    hw, wl = get_hardware("h100-sxm"), Workload()
    options = StepOptions(pp_overlap_p2p=overlap)
    step = train_step_time(arch, layout, 16, 2048, hw, wl, options)
    share = data_share(layout, 16, 2048)
    c = StepContext.of(arch, layout, 2048, share, Device(hw, wl.compute_dtype), options, wl)
    p = stage_pass(c, stages(arch, layout)[step.slowest_stage])
    return step.step_s, p.fwd["pp"] / v, p.bwd["pp"] / v


def test_hand_case_overlapped_vs_exposed_sends() -> None:
    """PP 4, v 2, m 8: without overlap every chunk's send sits in its slot, (m v + p - 1) = 19
    forward and 19 backward transfers; with it 2 (p v - 1) = 14 in all, 7 each way (the warm-up's
    chain, core_v0.8.0 schedules.py lines 812 and 880-911, and the flush's, lines 1095-1118; the
    steady sends of lines 931-1015 hide behind the opposite pass)."""
    exposed, c_f, c_b = _small(False)
    hidden, c_f2, c_b2 = _small(True)
    assert (c_f, c_b) == (c_f2, c_b2) and c_f > 0
    assert exposed - hidden == pytest.approx((19 - 7) * (c_f + c_b), rel=1e-9)


def test_no_overlap_without_interleaving() -> None:
    """Megatron-LM forces overlap_p2p_comm off for the non-interleaved schedule
    (megatron/training/arguments.py): 1F1B prices the same either way."""
    assert _small(True, v=1)[0] == _small(False, v=1)[0]


def test_rows_before_the_option_keep_exposed_sends() -> None:
    """overlap_p2p_comm arrived in Megatron-LM f9283c5a8a (2023-05-31): the interleaved rows of
    Narayanan et al. 2021 and Korthikanti et al. 2022 set it off, the ModelZoo's and
    Megatron-Bridge's interleaved rows leave it on (Megatron-LM's store_false default;
    Bridge's CommOverlapConfig with VP > 1)."""
    rows = [r for r in load_table()["rows"] if r["layout"]["virtual_stages"] > 1]
    old = {"narayanan2021", "korthikanti2022"}
    assert len(rows) >= 12
    for r in rows:
        assert r["options"].get("pp_overlap_p2p", True) is (r["source"] not in old), r["id"]
    row = next(r for r in rows if r["id"] == "modelzoo-h100-qwen3-235b-ep8-pp32-a2a")
    off = copy.deepcopy(row)
    off["options"]["pp_overlap_p2p"] = False
    on_s, off_s = predict_row(row).step, predict_row(off).step
    # PP 32, v 3, m 512: 95 + 95 exposed transfers instead of 1567 + 1567
    assert on_s.exposed_comm_s["pp"] < off_s.exposed_comm_s["pp"] / 10
    assert on_s.step_s < off_s.step_s


def test_frameworks_read_their_megatron_default() -> None:
    """NeMo RL leaves Megatron-core's overlap_p2p_comm False; verl sets it with VPP > 1; slime
    runs Megatron-LM's arguments (rlmcost's default)."""
    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.pass_options import step_options

    nemo = step_options(Deployment(framework="nemo-rl"))
    verl = step_options(Deployment(framework="verl"))
    assert nemo is not None and not nemo.pp_overlap_p2p
    assert verl is not None and verl.pp_overlap_p2p
    assert (step_options(Deployment(framework="slime")) or StepOptions()).pp_overlap_p2p
    assert replace(StepOptions(), pp_overlap_p2p=False) != StepOptions()
