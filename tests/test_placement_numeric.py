"""Placements on real models: exact bytes and FLOPs, hand-derived fusion gain, waves, sync."""

from fractions import Fraction
from functools import cache
from math import ceil

import pytest

from rlmcost import blocks as bl
from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.cost import invocation_cost
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.choices import Head
from rlmcost.parallel.layout import ZeroStage
from rlmcost.parallel.memory import Mode, memory_per_rank
from rlmcost.placement.device_groups import Task
from rlmcost.placement.inputs import IDEAL
from rlmcost.placement.lengths import parse_length_dist
from rlmcost.placement.rollout import DecodeCost, timeline
from rlmcost.placement.task_work import work_over_lengths
from rlmcost.reports.estimate import estimate
from rlmcost.reports.placement import placement_estimate
from rlmcost.specs import get_model

GPT2 = get_model("gpt-2").arch()
# GPT-2 small (Radford et al. 2019; transformers GPT2Config defaults): L=12, d=768, d_ff=3072,
# h=12, V=50257, tied embeddings
L, D, D_FF, V = 12, 768, 3072, 50257
SMALL = dict(batch=8, prompt_len=64, response_len=128, hardware="h100", tp=1)


@cache
def est(alg: str, model: str = "gpt-2", **kw):
    # the paper's placement model (Table IX): the idealized deployment
    return placement_estimate(alg, model, **{**SMALL, "deployment": IDEAL, **dict(kw)})


def test_fixed_lengths_reproduce_the_colocated_estimate_exactly():
    # same layout (1 GPU, no ZeRO), same roofline: the baseline placement is reports.estimate
    e = est("ppo", gpus=1, zero=ZeroStage.NONE)
    ref = estimate("ppo", "gpt-2", batch=8, prompt_len=64, response_len=128, hardware="h100",
                   deployment=IDEAL)
    for stage, s in ref.stages.items():
        mine = e.stages[stage]
        assert mine.work_flops == s.work_flops
        assert mine.depth == s.depth
        assert mine.time_lower_bound_s == pytest.approx(s.time.bound_s, rel=1e-12)
    assert e.iteration_time_lower_bound_s == pytest.approx(ref.time_lower_bound_s, rel=1e-12)


def test_work_over_lengths_sums_each_sequence_exactly():
    alg = get_algorithm("ppo")
    values = {"B": 3, "K": 1, "S": 64, "T": 128, "E_ppo": 2, "N_mini": 1}
    lengths = parse_length_dist("uniform:10,300").lengths(3, 0)
    for i, inv in enumerate(alg.invocations):
        arch = GPT2
        direct = sum(
            int(invocation_cost(inv, arch, {**values, "B": 1, "T": t}).work) for t in lengths
        )
        assert work_over_lengths(Task(i, inv, "all"), arch, values, lengths) == direct


def test_generation_depth_is_the_longest_slot_chain_of_closed_form_depths():
    from rlmcost.choices import Dtype
    from rlmcost.specs import get_hardware
    from rlmcost.timing import Roofline

    cost = DecodeCost(f0=10**9, f1=10**4, prefill_flops=10**11, weight_bytes=1e9,
                      kv_bytes_per_token=1e4)  # fmt: skip
    roof = Roofline(get_hardware("h100-sxm"), 1, Dtype.BF16)
    # six sequences on six slots: the longest one's D_gen(S, T) (blocks, closed form)
    one_wave = timeline(GPT2, 64, (1, 2, 63, 64, 65, 300), 6, cost, roof)
    assert one_wave.depth == int(bl.depth_generation(GPT2, 64, 300))
    # six of 300 tokens on two slots: three in a row on each slot
    waves = timeline(GPT2, 64, (300,) * 6, 2, cost, roof)
    assert waves.depth == 3 * int(bl.depth_generation(GPT2, 64, 300))


def test_fusion_with_fixed_lengths_gains_exactly_nothing():
    base, fused = (
        est("ppo", gpus=1, zero=ZeroStage.NONE),
        est("ppo", gpus=1, zero=ZeroStage.NONE, placement="fusion"),
    )
    assert fused.fusion.inter_stage_s == 0.0 and fused.fusion.intra_stage_s == 0.0
    assert fused.iteration_time_lower_bound_s == base.iteration_time_lower_bound_s
    assert fused.work_flops == base.work_flops


def _forward_flops(m: int, head: int) -> int:
    """Teacher-forced forward of one GPT-2 sequence of m tokens (Table III, full counting):
    2 (4 d^2 + 2 d d_ff) L per token for the projections, 2 d x head width for the head,
    4 L d m^2 for scores and values."""
    return m * (2 * L * (4 * D * D + 2 * D * D_FF) + 2 * D * head) + 4 * L * D * m * m


def test_fusion_gain_on_a_skewed_batch_equals_the_short_samples_assessment(tmp_path):
    # 7 responses of 32 tokens and one of 512 (S = 64): the short ones finish at step 32 and
    # their reward and reference forwards run in the idle compute of the 480 memory-bound
    # decode steps of the long one (RLHFuse inter-stage fusion, arXiv:2409.13221)
    path = tmp_path / "lengths.txt"
    path.write_text("32\n" * 7 + "512\n")
    # 8 sequences as 4 prompts x K = 2 (GRPO needs K >= 2)
    kw = dict(gpus=1, zero=ZeroStage.NONE, batch=4, group=2, length_dist=f"file:{path}")
    base, fused = est("grpo", **kw), est("grpo", placement="fusion", **kw)
    assessment_s = base.stages[Stage.ASSESSMENT].time_lower_bound_s
    per_seq = {m: _forward_flops(m, V) + _forward_flops(m, 1) for m in (96, 576)}  # ref + reward
    short_share = Fraction(7 * per_seq[96], 7 * per_seq[96] + per_seq[576])
    expected = assessment_s * float(short_share)
    # the regime: the tail has more idle compute than the short samples' assessment needs
    gen = next(j for j in fused.groups[0].jobs if j.timeline is not None)
    assert sum(r.idle_s for r in gen.timeline.runs if r.first > 32) > expected
    assert fused.fusion.inter_stage_s == pytest.approx(expected, rel=1e-9)
    saved = base.iteration_time_lower_bound_s - fused.iteration_time_lower_bound_s
    assert saved == pytest.approx(expected, rel=1e-9)
    assert fused.work_flops == base.work_flops  # fusion never changes work


def test_kv_capacity_turns_the_batch_into_waves():
    # GPT-2 KV per token: 2 L h_kv d_h x 2 bytes (bf16) = 36864 B; with S + T = 2048 a
    # sequence holds 75.5 MB of cache plus its fp32 logits row (V x 4 B)
    e = placement_estimate(
        "grpo", "gpt-2", batch=1024, group=2, prompt_len=1024, response_len=1024, gpus=1,
        tp=1, zero=ZeroStage.NONE, hardware="h100", deployment=IDEAL,
    )  # fmt: skip
    gen = next(j for g in e.groups for j in g.jobs if j.timeline is not None)
    tl = gen.timeline
    assert 1 < tl.slots < 2048 and tl.waves == ceil(2048 / tl.slots)
    assert gen.memory.total <= e.hardware.hbm_bytes
    per_sequence = 2 * L * D * 2048 * 2 + V * 4
    layout = gen.layout
    one = memory_per_rank(GPT2, layout, Mode.GENERATE, tl.slots, 2048)
    more = memory_per_rank(GPT2, layout, Mode.GENERATE, tl.slots + 1, 2048)
    assert more.total - one.total == per_sequence
    assert gen.memory.total + per_sequence > e.hardware.hbm_bytes  # one more would not fit
    # fixed lengths: every slot runs `waves` rollouts back to back
    assert tl.steps == tl.waves * 1024
    assert gen.depth == tl.waves * int(bl.depth_generation(GPT2, 1024, 1024))


def test_async_syncs_one_weight_copy_per_trained_model_and_overlaps():
    grpo = est("grpo", placement="async", gpus=4)
    actor = int(bl.params(GPT2)) * 2  # bf16
    assert grpo.weight_sync_bytes == actor
    rollout, trainer = grpo.groups
    assert rollout.shadows == (Role.ACTOR,)
    # the shadow is weights only: no gradients or Adam states on the rollout side
    assert all(j.memory.optimizer == 0 for j in rollout.jobs)
    ppo = est("ppo", placement="async", gpus=4)
    critic = int(bl.params(GPT2, Head.VALUE)) * 2
    assert ppo.weight_sync_bytes == actor + critic
    assert est("ppo", gpus=4).weight_sync_bytes == 0
    # steady state: the slower side, not the sum (sync small here)
    r, t = ppo.groups
    sides = max(sum(j.time_s for j in r.jobs), sum(j.time_s for j in t.jobs))
    assert ppo.iteration_time_lower_bound_s == pytest.approx(sides, rel=1e-9)
    assert ppo.stage_sum_s > ppo.iteration_time_lower_bound_s


def test_disaggregated_groups_hold_only_their_own_model():
    e = est("ppo", placement="disaggregated", gpus=4)
    for g in e.groups:
        assert g.roles == (Role(g.name),)
        if g.name == "reward":
            (job,) = g.jobs
            own = memory_per_rank(GPT2, job.layout, Mode.FORWARD, 8, 192, e.workload, Head.VALUE)
            assert job.memory == own


def test_ac_shared_drops_one_backbones_states():
    base, shared = est("ppo", gpus=2), est("ppo", placement="ac-shared", gpus=2)
    (gb,), (gs,) = base.groups, shared.groups
    sum_states = lambda g: sum(m.total for m in g.resident.values())  # noqa: E731
    d = int(GPT2.d_model)
    # the critic's sharded states leave; the value head joins the actor, unsharded, 16 B/param
    assert sum_states(gb) - sum_states(gs) == gb.resident[Role.CRITIC].total - 16 * d
    assert Role.CRITIC not in gs.roles


def test_hybrid_reshards_and_holds_both_layouts_while_generating():
    e = est("ppo", placement="hybrid", gpus=4)
    (g,) = e.groups
    gen = next(j for j in g.jobs if j.task.kind is Kind.GENERATE)
    train = g.resident[Role.ACTOR]
    assert gen.layout.zero is ZeroStage.NONE
    # every model's resident weights plus the actor's TP copy: both layouts at once
    resident = sum(m.weights for m in g.resident.values())
    assert gen.memory.weights == resident + gen.own.weights
    assert train.weights < gen.own.weights  # the ZeRO-3 shard is smaller than the TP copy
    reshard = [t for t in g.transfers if t.kind == "reshard" and t.what.startswith("actor")]
    assert reshard and reshard[0].bytes_per_device == gen.own.weights - train.weights
    assert e.reshard_bytes == sum(t.bytes for t in g.transfers if t.kind == "reshard")


def test_offload_keeps_one_model_resident_and_pays_the_host_link():
    on = est("ppo", gpus=1, zero=ZeroStage.NONE, offload=True)  # idle models in host memory
    off = est("ppo", gpus=1, zero=ZeroStage.NONE)
    assert on.peak_memory_bytes_per_device < off.peak_memory_bytes_per_device
    switches = [t for g in on.groups for t in g.transfers if t.kind == "offload"]
    assert switches and on.iteration_time_lower_bound_s > off.iteration_time_lower_bound_s
    # 64 GB/s per direction (PCIe Gen5 x16, assumed for H100); loading the next model and
    # writing back the last overlap (full duplex): bytes / 2 <= time x 64 GB/s <= bytes
    for t in switches:
        assert t.bytes_per_device / 2 <= t.time_s * 64e9 <= t.bytes_per_device


def test_user_groups_run_as_given():
    e = est("ppo", groups="rollout=2,actor+reference=1,critic+reward=1", gpus=4)
    assert [(g.name, g.gpus) for g in e.groups] == [
        ("rollout", 2), ("actor+reference", 1), ("critic+reward", 1)
    ]  # fmt: skip
    assert e.weight_sync_bytes == int(bl.params(GPT2)) * 2  # rollout reads the actor
    a = est("ppo", groups="rollout=2,actor+reference=1,critic+reward=1", placement="async")
    assert a.iteration_time_lower_bound_s < e.iteration_time_lower_bound_s


def test_a_group_can_set_its_own_layout_per_kind():
    # DeviceGroup.layouts: the library hook for a layout per invocation kind
    from rlmcost.parallel.layout import Layout
    from rlmcost.placement.device_groups import DeviceGroup, Member

    groups = (
        DeviceGroup("rollout", (Member(Role.ACTOR, Kind.GENERATE),), 4,
                    ((Kind.GENERATE, Layout(tp=2)),)),
        DeviceGroup("rest", tuple(Member(r) for r in (Role.ACTOR, Role.REFERENCE)), 2),
    )  # fmt: skip
    e = placement_estimate("grpo", "gpt-2", groups=groups, group=2, **{**SMALL, "batch": 4})
    gen = next(j for j in e.groups[0].jobs if j.task.kind is Kind.GENERATE)
    assert (gen.layout.tp, gen.layout.dp) == (2, 2)


def test_calibration_profile_slows_the_placement_as_it_says(tmp_path):
    # synthetic H200 profile (tests/test_calibrate_profile.py): GEMM at 0.5 of peak, HBM streams
    # at 0.25 of bandwidth (decode table): every roofline phase of the placement gets slower,
    # by between 2x (compute-bound) and 4x (memory-bound); work and memory do not change.
    import json

    from test_calibrate_profile import synthetic

    from rlmcost.parallel.layout import ZeroStage
    from rlmcost.reports.placement import placement_estimate

    path = tmp_path / "h200.json"
    path.write_text(json.dumps(synthetic(compute_efficiency={"gemm": [[1e9, 0.5]]})))
    # one group, fixed layout, no ZeRO-3 gathers or transfers: every phase is a roofline phase
    base = dict(placement="baseline", gpus=8, tp=1, zero=ZeroStage.NONE, hardware="h200")
    peak = placement_estimate("grpo", "8b", **base)
    slow = placement_estimate("grpo", "8b", calibration=path, **base)
    assert slow.work_flops == peak.work_flops
    assert slow.peak_memory_bytes_per_device == peak.peak_memory_bytes_per_device
    ratio = slow.iteration_time_lower_bound_s / peak.iteration_time_lower_bound_s
    assert 2 - 1e-9 <= ratio <= 4 + 1e-9
    assert any("calibrated" in n for n in slow.notes)
