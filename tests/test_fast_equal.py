"""The fast evaluation of deployments equals the plain one, number for number.

The fast path (``rlmcost.evaluation.batch.evaluate_many`` and ``evaluate_deployment`` warm:
one resolved query per Run's query, group estimates kept across deployments by
``placement.group_key``, memoized passes and memory, ``rlmcost.memo``) against the evaluation
that keeps nothing (``rlmcost.memo.plain``): random deployments of a query (the planner's
candidates, with random engines, frameworks, LoRA, offload, token budgets and the idealized
iteration on top) give the same ``to_json()`` (exact ints stay ints) or the same one-line
error. The independent reference is the plain evaluation itself, whose numbers the placement,
perf and validation tests check against published figures and framework sources.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fast_plain import fresh_fast_equals_plain, plain_text, result_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost import memo
from rlmcost.algorithms.kinds import Stage
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement.schedule import Unit, edges, period, simple_cycles
from rlmcost.placement.schedule_template import template, undominated
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.reports.estimate import run_of
from rlmcost.run.spec import Run

#: Llama-3.2-1B's shape with one MTP module (tests/test_speculative.py says where from).
MTP_MODEL = str(Path(__file__).parent / "data" / "models" / "llama-1b-mtp.json")

QUERIES = (
    ("ppo", "llama-3.2-1b", "h100-sxm", 8),
    ("grpo", "qwen2.5-7b", "a100-80gb", 16),
    ("ppo", "llama-3.1-8b", "h100-sxm", 16),
)


@cache
def _runs(i: int) -> tuple[Run, tuple[Run, ...]]:
    alg, model, hw, gpus = QUERIES[i]
    base = run_of(alg, model, hardware=hw)
    space = RLSpace(micro_batch=(1, 2), fractions=(0.5, 0.9))
    return base, tuple(candidate_run(base, c) for c in candidates(base, space, gpus))


ENGINE = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["vllm", "sglang", "hf", "ds-hybrid", "ds-hybrid-unpinned",
                             "megatron"]),
    "kv_buffer_gib": st.sampled_from([None, 4.0]),  # megatron only (deployment.megatron_engine)
    "vllm_version": st.sampled_from([None, "0.11.2"]),  # vllm only (deployment.vllm_release)
    "sleep": st.booleans(),
    "gpu_memory_utilization": st.sampled_from([0.3, 0.5, 0.9]),
    "max_num_seqs": st.sampled_from([None, 16, 256]),
    "context_length": st.sampled_from([None, 8192]),
    "schedule_policy": st.sampled_from(["fcfs", "lpm"]),
    "sequences_per_call": st.sampled_from([None, 4]),
    "speculative_tokens": st.sampled_from([0, 1, 2]),
    "speculative_draft": st.sampled_from(["mtp", "llama-3.2-1b"]),
    "speculative_acceptance": st.sampled_from([0.7]),
    "prefix_caching": st.sampled_from([None, False, True]),
})
TRAIN = st.fixed_dictionaries({}, optional={
    "max_tokens_per_gpu": st.sampled_from([4096, 16384]),
    "packing": st.booleans(),
    "offload": st.sampled_from([[], ["optimizer"], ["grads"], ["optimizer-idle"]]),
    "kernels": st.sampled_from(["fused", "realhf", "liger"]),  # liger: HF trainers only
    "ep_dispatcher": st.sampled_from(["alltoall", "deepep", "allgather"]),
    "moe_permute_fusion": st.booleans(),  # perf.moe_permute
    "padded": st.booleans(),
    "prefix_grouper": st.booleans(),  # placement.prefix_grouper (refused off padded layouts)
    "activation_offload": st.booleans(),  # parallel.act_offload
    "pp_split": st.sampled_from([None, {"embedding_slot": True, "loss_slot": True}]),
    "pp_overlap_p2p": st.sampled_from([None, True, False]),
    "recompute_early_stop": st.sampled_from([None, True, False]),  # perf.ckpt_early_stop
    "module_ckpt": st.sampled_from([None, True, False]),  # perf.module_ckpt
    "swiglu_fusion": st.sampled_from([None, True, False]),  # placement.glu_kernel
    "disable_dropout": st.booleans(),  # placement.model_dropout
    "moe_capacity_factor": st.sampled_from([None, 1.0, 1.25]),  # parallel.moe_capacity
    "moe_pad_to_capacity": st.booleans(),  # without a factor: refused on both paths
})
CHANGE = st.fixed_dictionaries({}, optional={
    "engine": ENGINE,
    "train": TRAIN,
    "framework": st.sampled_from([None, "verl", "openrlhf", "nemo-rl", "trl", "slime"]),
    "env_workers": st.sampled_from([None, 4]),
    "lora": st.sampled_from([None, {"rank": 16}, {"rank": 16, "gather": "model"},
                             {"rank": 16, "gather": "layers"}]),  # placement.lora_gather
    "ideal": st.booleans(),
    "offload_idle": st.booleans(),
    "init_load": st.sampled_from(["sharded", "gpu", "host-rank0"]),
})


HOST_GIB = st.sampled_from([None, 1.0, 64.0, 4096.0])
"""The Run's host memory per host (``cluster.host_memory_gib``; None: the reference system's):
1 GiB fails every offloading deployment's host check (placement.host_memory), which the
kept group estimates must not carry over to a Run with more."""


def _vary(run: Run, change: dict[str, Any], host_gib: float | None = None) -> Run | None:
    try:
        run = run.replace(deployment=change)
        return run if host_gib is None else run.replace(cluster={"host_memory_gib": host_gib})
    except (SpecError, ValueError):
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=st.integers(0, len(QUERIES) - 1),
    picks=st.lists(st.tuples(st.integers(0, 10**6), CHANGE, HOST_GIB), min_size=1, max_size=6),
)
def test_random_deployments_equal_plain(query: int,
                                        picks: list[tuple[int, dict, float | None]]) -> None:
    _, runs = _runs(query)
    chosen = [_vary(runs[i % len(runs)], change, host) for i, change, host in picks]
    chosen = [r for r in chosen if r is not None]
    fast = [result_text(e) for e in evaluate_many(chosen)]
    assert fast == [plain_text(r) for r in chosen]
    # and again one by one, warm: kept groups give the same numbers as the first time
    for r, f in zip(chosen, fast, strict=True):
        try:
            again = result_text(evaluate_deployment(r))
        except SpecError as exc:
            again = result_text(exc)
        assert again == f


def test_a_query_sweep_equals_plain() -> None:
    """Every 7th planner candidate of one query, in the planner's order (groups shared)."""
    _, runs = _runs(1)
    some = list(runs[::7])
    fast = [result_text(e) for e in evaluate_many(some)]
    assert fast == [plain_text(r) for r in some]
    assert sum(not f.startswith("SpecError") for f in fast) > len(some) // 2


def test_groups_differing_in_another_group_equal_plain() -> None:
    """A group's kept estimate serves deployments whose other groups differ (their engine,
    layouts, accelerator, GPUs) but never one whose own settings differ: every Run of a
    grid over both groups' settings equals its plain evaluation."""
    rollouts = [{"members": "rollout", "gpus": 8},
                {"members": "rollout", "gpus": 8, "engine": {"tp": 2, "sleep": False}},
                {"members": "rollout", "gpus": 8, "settings": "tp=4"},
                {"members": "rollout", "gpus": 8, "engine": {"speculative_tokens": 1,
                 "speculative_draft": "llama-3.2-1b", "speculative_acceptance": 0.7}},
                {"members": "rollout", "gpus": 8, "hardware": "h20"},
                {"members": "rollout", "gpus": 4}]  # fmt: skip
    trainers = [{"members": "actor", "gpus": 8},
                {"members": "actor", "gpus": 8, "settings": "zero=3"},
                {"members": "actor", "gpus": 8, "train": {"micro_batch": 2}},
                {"members": "actor", "gpus": 4, "hardware": "a100-80gb"}]  # fmt: skip
    runs = [Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True},
        "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"framework": "verl", "groups": [r, t]},
        "cluster": {"hardware": "h100-sxm"},
    }) for r in rollouts for t in trainers]  # fmt: skip
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    assert sum(not f.startswith("SpecError") for f in fast) > len(runs) // 2


def test_a_trainer_group_reads_whether_the_engine_is_deepspeed_chats() -> None:
    """A group that generates nothing still reads one engine setting: under DeepSpeed-Chat's
    Hybrid Engine a LoRA reference loads weights of its own (``GroupTasks.shares_base``),
    elsewhere it shares the actor's base. A trainer group evaluated under ``ds-hybrid-
    unpinned`` first must not serve the same group under vLLM (the flake hypothesis found:
    the reference's 2 GB of weights kept from the first). Both equal their plain evaluation,
    in either order."""
    def run(engine: dict[str, Any]) -> Run:
        return Run.from_data({
            "algorithm": {"name": "ppo"},
            "models": {"actor": "llama-3.1-8b"},
            "deployment": {"placement": "async", "lora": {"rank": 16}, "offload_idle": True,
                           "engine": engine,
                           "groups": [{"members": "rollout", "gpus": 8},
                                      {"members": "actor+reward+reference+critic",
                                       "gpus": 8}]},
            "cluster": {"hardware": "h100-sxm"},
        })  # fmt: skip

    hybrid, vllm = run({"kind": "ds-hybrid-unpinned", "max_num_seqs": 16}), run({})
    for order in ((hybrid, vllm), (vllm, hybrid)):
        memo.clear_all()
        fast = [result_text(e) for e in evaluate_many(list(order))]
        assert fast == [plain_text(r) for r in order]
        assert not fast[0].startswith("SpecError") and not fast[1].startswith("SpecError")


def test_a_colocated_groups_updates_are_shared_across_engines_not_trainers() -> None:
    """A colocated group's forwards and updates (their own bytes and a training job's
    numbers, ``group_key.task_key``) are kept for the deployments that differ only in how the
    group generates (its engine), never for ones whose trainer differs (offload, ZeRO,
    micro-batch, hybrid shard, LoRA): every Run of a grid over both equals its plain
    evaluation, and the kept training numbers are one per trainer setting, not one per engine
    as well."""
    from rlmcost.placement import query as resolved

    engines = [{}, {"tp": 2}, {"gpu_memory_utilization": 0.5, "sleep": False},
               {"kind": "sglang", "max_num_seqs": 16}]
    trains = [{}, {"offload": ["optimizer"]}, {"zero": "1"}, {"micro_batch": 2},
              {"offload": ["optimizer-idle"]}, {"zero_shard": 2}]

    def run(engine: dict[str, Any], train: dict[str, Any], lora: bool = False) -> Run:
        return Run.from_data({
            "algorithm": {"name": "ppo"},
            "models": {"actor": "llama-3.2-1b"},
            "workload": {"prompts": 16, "samples_per_prompt": 4},
            "deployment": {"framework": "verl", "engine": engine, "train": train,
                           **({"lora": {"rank": 16}} if lora else {})},
            "cluster": {"hardware": "h100-sxm", "gpus": 8},
        })  # fmt: skip

    runs = [run(e, t) for t in trains for e in engines] + [run({}, {}, lora=True)]
    fast = fresh_fast_equals_plain(runs)
    seen = next(iter(resolved._QUERIES.values())).groups_seen or {}
    kept = [k for k in seen if isinstance(k, tuple) and k[0] == "query" and k[1][0] == "train"]
    assert len(kept) == 2 * (len(trains) + 1)  # actor and critic per trainer setting
    # a changed trainer setting changes the update's own bytes: offload moves Adam's states
    actor = [next(j for j in e.groups[0].jobs if j.task.kind == "train")  # type: ignore[union-attr]
             for e in fast[: len(engines) * 2: len(engines)]]
    assert actor[1].own.optimizer < actor[0].own.optimizer


def _placements_runs() -> list[Run]:
    """PPO on Llama-3.2-1B under every Table IX placement (stage fusion among them), fixed
    and lognormal lengths, a sleeping engine at list prices, an awake one at given ones."""
    return [Run.from_data({
        "algorithm": {"name": "ppo"},
        "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "length_dist": dist},
        "deployment": {"framework": "verl", "placement": p, "engine": {"sleep": sleep}},
        "cluster": {"hardware": "h100-sxm", "gpus": 8,
                    "prices": {} if sleep else {"h100-sxm": 2.5}},
    }) for p in ("fusion", "hybrid", "async", "disaggregated", "baseline", "combined")
        for dist in (None, "lognormal:512,0.8,1024") for sleep in (True, False)]  # fmt: skip


def test_host_memory_is_read_per_run_not_kept_with_the_groups() -> None:
    """Runs of one query that differ only in their host memory per host share their group
    estimates (the groups do not read it) but not their fit: with 1 GiB per host an
    offloading deployment's node is over it, with the reference host (a DGX H100's 2 TB) it
    is not; fast and plain agree, in either order."""
    base = run_of("ppo", "llama-3.2-1b", hardware="h100-sxm", gpus=8).replace(
        deployment={"train": {"zero": "3", "offload": ["optimizer"]}})
    runs = [base, base.replace(cluster={"host_memory_gib": 1.0}), base,
            base.replace(cluster={"host_memory_gib": 1.0})]  # fmt: skip
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    fits = [json.loads(f)["fits"] for f in fast]
    assert fits == [True, False, True, False]


def test_every_placement_equals_plain() -> None:
    """Stage fusion builds its schedule units job by job; the other placements take each
    group estimate's units as built once (``placement.iteration_units``): both equal the
    evaluation that keeps nothing, across queries (``same_query=False``) and warm again."""
    runs = _placements_runs()
    fast = [result_text(e) for e in evaluate_many(runs, same_query=False)]
    assert fast == [plain_text(r) for r in runs]
    assert [result_text(e) for e in evaluate_many(runs, same_query=False)] == fast
    assert sum(not f.startswith("SpecError") for f in fast) > len(runs) // 2


def test_group_units_are_each_jobs_and_transfers_own_numbers() -> None:
    """A group's schedule units without fusion (the schedule semantics of
    ``placement.iteration``: a group runs its units one after another, each transfer in
    front of the task it serves): per job, its transfers (bound, prediction, depth 0) then
    the job (bound, prediction, depth), the interval ends the prediction times its spread."""
    from rlmcost.perf.interval import job_spread, transfer_spread
    from rlmcost.placement.iteration_units import group_units

    for e in evaluate_many([r for r in _placements_runs()[:12]], same_query=False):
        if isinstance(e, SpecError) or e.placement.fusion:
            continue
        for g in e.groups:
            expect: list[tuple[Any, ...]] = []
            for j in g.jobs:
                for tr in g.transfers:
                    if tr.before == j.task.index:
                        sp = tr.spread or transfer_spread()
                        expect.append((g.name, False, tr.time_s, tr.predicted, 0,
                                       tr.predicted * sp.low, tr.predicted * sp.high))
                sp = job_spread(j.task.kind)
                expect.append((g.name, True, j.time_s, j.predicted_s, j.depth,
                               j.predicted_s * sp.low, j.predicted_s * sp.high))
            u = group_units(g)
            got = list(zip([r for _, r, _, _ in u.shape], [b for _, _, _, b in u.shape], u.w_t,
                           u.w_p, u.w_d, u.low, u.high, strict=True))  # fmt: skip
            assert got == expect
            assert dict(u.key_of) == {j.task.index: str(j.task.index) for j in g.jobs}


def test_a_synchronous_and_an_overlapped_loop_share_their_groups_part() -> None:
    """The groups' part of an iteration (``placement.iteration_groups``: the units, each
    stage's work and peak memory, the phases, the critical cycle's label) is kept per tuple
    of group estimates: a synchronous and an overlapped loop on the same groups share their
    estimates, and each equals the evaluation that keeps nothing, again when warm."""

    def run(placement: str | None, staleness: int | None) -> Run:
        return Run.from_data({
            "algorithm": {"name": "grpo", "rule_reward": True},
            "models": {"actor": "llama-3.2-1b"},
            "workload": {"prompts": 16, "samples_per_prompt": 4},
            "deployment": {"framework": "verl", "placement": placement, "staleness": staleness,
                           "groups": [{"members": "rollout", "gpus": 8},
                                      {"members": "actor", "gpus": 8}]},
            "cluster": {"hardware": "h100-sxm"},
        })  # fmt: skip

    runs = [run(None, None), run("async", 1), run(None, None)]
    sync, stale, again = evaluate_many(runs)
    assert not isinstance(sync, SpecError) and not isinstance(stale, SpecError)
    assert not isinstance(again, SpecError)
    assert (sync.placement.staleness, stale.placement.staleness) == (0, 1)
    assert all(g is h for g, h in zip(sync.groups, stale.groups, strict=True))
    # overlapping rollout with training only removes constraints (placement.iteration)
    assert stale.iteration_time_s <= sync.iteration_time_s
    assert [result_text(e) for e in (sync, stale, again)] == [plain_text(r) for r in runs]


def test_kept_property_computes_once_per_object() -> None:
    calls = []

    class Box:
        def __init__(self, x: int) -> None:
            self.x = x

        @memo.kept_property
        def double(self) -> int:
            calls.append(self.x)
            return 2 * self.x

    a, b = Box(1), Box(2)
    assert [a.double, a.double, b.double, a.double] == [2, 2, 4, 2]
    assert calls == [1, 2]
    assert isinstance(Box.double, memo.kept_property)


def test_exact_ints_stay_ints() -> None:
    _, runs = _runs(0)
    (e,) = evaluate_many([runs[0]])
    assert not isinstance(e, SpecError)
    assert type(e.work_flops) is int
    assert all(type(j.memory.total) is int for g in e.groups for j in g.jobs)


def test_many_needs_one_query() -> None:
    a, b = _runs(0)[0], _runs(1)[0]
    with pytest.raises(SpecError, match="not a deployment of Run 0's query"):
        evaluate_many([a, b])
    out = evaluate_many([a, b], same_query=False)
    assert [result_text(x) for x in out] == [plain_text(a), plain_text(b)]


def test_memoized_keys_tell_types_apart() -> None:
    calls = []

    @memo.memoized()
    def f(x: object) -> str:
        calls.append(x)
        return type(x).__name__

    assert [f(1), f(1.0), f(True), f(1)] == ["int", "float", "bool", "int"]
    assert calls == [1, 1.0, True]
    with memo.plain():
        assert f(1) == "int"
    assert len(calls) == 4


def test_per_object_keeps_by_identity_not_equality() -> None:
    calls = []

    @memo.per_object()
    def total(xs: list[int], scale: int) -> int:
        calls.append((id(xs), scale))
        return scale * sum(xs)

    a, b = [1, 2], [1, 2]  # equal, not the same object
    assert [total(a, 2), total(a, 2), total(b, 2), total(a, 3)] == [6, 6, 6, 9]
    assert calls == [(id(a), 2), (id(b), 2), (id(a), 3)]
    with memo.plain():
        assert total(a, 2) == 6
    assert len(calls) == 4


def test_collector_paused_restores_the_collector() -> None:
    import gc

    assert gc.isenabled()
    with memo.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with memo.collector_paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


UNIT = st.tuples(
    st.sampled_from(["g0", "g1"]),
    st.sampled_from(list(Stage)),
    st.one_of(st.integers(0, 10**20), st.floats(0, 1e4, allow_nan=False)),
)


@settings(max_examples=200, deadline=None)
@given(units=st.lists(UNIT, min_size=1, max_size=7), staleness=st.integers(0, 2))
def test_period_is_the_maximum_cycle_mean(units: list[tuple], staleness: int) -> None:
    """``schedule.period`` (numeric) against the definition: the maximum over the simple
    cycles of their mean (``Cycle.mean``), ties to the smaller shift, then the later keys."""
    us = [Unit(str(i), res, stage, w) for i, (res, stage, w) in enumerate(units)]
    graph = edges(us, staleness)
    weights = {u.key: u.weight for u in us}
    cycles = simple_cycles([u.key for u in us], graph)
    if not cycles:  # units out of stage order: no cycle, no period either way
        with pytest.raises(ValueError):
            period(us, graph)
        return
    best = max(cycles, key=lambda c: (c.mean(weights), -c.shift, c.keys))
    p = period(us, graph)
    assert (p.value, type(p.value), p.cycle) == (best.mean(weights), type(best.mean(weights)),
                                                 best)  # fmt: skip
    assert p.cycles == tuple(cycles)
    # the per-shape template (schedule.template), period and the value alone, bit for bit
    plan = template(tuple((u.key, u.resource, u.stage, u.barrier) for u in us), staleness)
    w = [u.weight for u in us]
    assert repr((plan.period(w).value, plan.period(w).cycle)) == repr((p.value, p.cycle))
    assert repr(plan.value(w)) == repr(p.value)


# weights that round: huge and tiny beside ordinary ones, exact ints, zeros
ROUNDING = st.one_of(st.sampled_from([0, 0.0, 1e16, 1.0, 0.1, 3.3, 1e-300, 2**60, 7]),
                     st.floats(0, 1e20, allow_nan=False), st.integers(0, 10**20))


@settings(max_examples=300, deadline=None)
@given(units=st.lists(st.tuples(st.sampled_from(["g0", "g1", "g2"]), st.sampled_from(list(Stage)),
                                st.booleans(), ROUNDING), min_size=2, max_size=10),
       staleness=st.integers(0, 2), link=st.booleans())
def test_largest_mean_over_undominated_cycles_is_every_cycles(units: list[tuple], staleness: int,
                                                              link: bool) -> None:  # fmt: skip
    """``Template.value`` takes the largest mean over the cycles no other dominates
    (``schedule_template.undominated``): for weights >= 0 the same number, bit for bit, as
    the largest over every cycle (``Template.means``, each ``Cycle.mean`` as computed), with a
    weight sync's link and its stall or without; a negative weight or weights of mixed types
    (hypothesis found ints and floats that round apart) take every cycle. The weights as one
    type, all floats and all ints, take the pruned cycles."""
    shape = tuple((str(i), res, stage, barrier) for i, (res, stage, barrier, _) in enumerate(units))
    links: tuple[Any, ...] = ()
    if link:  # the first unit's copy to the others after it, stalling the last resource
        shape += (("sync", "link:sync", None, False),)
        units = [*units, ("link:sync", None, False, 0.5)]
        links = (("sync", "0", tuple(k for k, *_ in shape[1:-1]), (shape[0][0],),
                  (shape[-2][0], shape[-2][0])),)
    plan = template(shape, staleness, links)
    w = [u[3] for u in units]
    if not plan.cycles:
        return
    assert repr(plan.value(w)) == repr(max(plan.means(w))) == repr(plan.period(w).value)
    for same in ([float(x) for x in w], [int(x) for x in w]):
        assert repr(plan.value(same)) == repr(max(plan.means(same)))
    negative = [-1.0, *w[1:]]
    assert repr(plan.value(negative)) == repr(max(plan.means(negative)))


def test_undominated_cycles_are_fewer_on_a_synchronous_loop() -> None:
    """The pruning is not vacuous: a synchronous loop of three groups (generation, then
    assessment and training on two) keeps 6 of its 10 cycles (each group's own cycle runs
    inside a chain through the stages of no larger shift), and the same largest mean."""
    shape = (("0", "g0", Stage.GENERATION, True), ("1", "g1", Stage.ASSESSMENT, True),
             ("2", "g2", Stage.ASSESSMENT, True), ("3", "g1", Stage.TRAINING, True),
             ("4", "g2", Stage.TRAINING, True))  # fmt: skip
    plan = template(shape, 0)
    assert (len(undominated(plan.cycles)), len(plan.cycles)) == (6, 10)
    w = [3.3, 0.1, 1e16, 1.0, 7]
    assert repr(plan.value(w)) == repr(max(plan.means(w)))


def test_speculative_engines_equal_plain() -> None:
    """A speculative engine (engine.speculative_tokens) changes its generation jobs only: kept
    estimates of groups that do not generate serve runs with and without it, number for
    number, under every Table IX placement."""
    runs = [Run.from_data({
        "algorithm": {"name": "ppo"},
        "models": {"actor": MTP_MODEL},  # Llama-3.2-1B's shape with an MTP layer
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"framework": "verl", "placement": p, "engine": {"speculative_tokens": n}},
        "cluster": {"hardware": "h100-sxm", "gpus": 8},
    }) for p in ("hybrid", "async", "disaggregated", "baseline", "fusion")
        for n in (0, 1, 0, 2)]  # fmt: skip
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    assert sum(not f.startswith("SpecError") for f in fast) > len(runs) // 2


def test_trainer_kernels_key_the_forwards_too() -> None:
    """``train.kernels`` (``--trainer-kernels realhf``: FlashAttention-2, eager layers and the
    measured rate of AReaL's trainer, placement.pass_options and group_realhf) sets how the
    forwards run as well, also beside a forward layout of their own: deployments that differ
    only in it never share a kept forward (each equals its plain evaluation)."""
    runs = [Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True, "kl": False,
                      "recompute_logprobs": True},
        "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"groups": [{"members": "rollout", "gpus": 8},
                                  {"members": "actor", "gpus": 8}],
                       "train": {"kernels": kernels}, "forward": forward},
        "cluster": {"hardware": "h100-sxm"},
    }) for forward in (None, {"max_tokens_per_gpu": 8192})
        for kernels in ("fused", "realhf")]  # fmt: skip
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    assert len(set(fast)) == len(fast)


def test_liger_kernels_key_the_trainer_and_forwards() -> None:
    """``train.kernels`` liger (verl's ``model.use_liger``: Liger's fused layers on its FSDP
    trainer, placement.pass_options ``liger_layers``, placement.glu_kernel) moves the forwards
    and the update: deployments that differ only in it keep nothing for each other."""
    runs = [Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True, "kl": False,
                      "recompute_logprobs": True},
        "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"framework": "verl", "train": {"kernels": kernels, "zero": "3"}},
        "cluster": {"hardware": "h100-sxm"},
    }) for kernels in ("fused", "liger")]  # fmt: skip
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    assert len(set(fast)) == len(fast) and not fast[1].startswith("SpecError")


def test_forwards_keyed_on_the_trainer_fields_they_read() -> None:
    """The forwards run with the trainer's EP dispatcher, router dtype, kernels and loss
    (deployment.trainer_only): deployments that differ only in the trainer's dispatcher, with a
    forward layout of their own at the default one, keep no forward estimate for each other
    (placement.group_key.forward_key); before the key held them, the 2nd and 3rd were given
    the 1st's forwards."""
    data = run_of("grpo", "qwen3-30b-a3b", hardware="h100-sxm", gpus=32).to_json()
    runs = []
    for dispatcher in ("alltoall", "deepep", "allgather"):
        d = json.loads(json.dumps(data))
        d["deployment"].update(framework="nemo-rl", offload_idle=False)
        d["deployment"]["train"].update(zero="1", ep=16, param_dtype="bf16", offload=[],
                                        ep_dispatcher=dispatcher)  # fmt: skip
        d["deployment"]["forward"] = dict(d["deployment"]["train"], ep_dispatcher="alltoall",
                                          micro_batch=2)  # fmt: skip
        runs.append(Run.from_data(d))
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    assert len(set(fast)) == 3


def test_forwards_keyed_on_the_trainers_permute_fusion() -> None:
    """The forwards run with the trainer's moe_permute_fusion (deployment.trainer_only,
    perf.moe_permute): two deployments that differ only there, each with a forward layout of
    its own, keep no forward estimate for each other and equal their plain evaluation."""
    data = run_of("grpo", "qwen3-30b-a3b", hardware="h100-sxm", gpus=32).to_json()
    runs = []
    for fused in (True, False):
        d = json.loads(json.dumps(data))
        d["deployment"].update(framework="nemo-rl", offload_idle=False)
        d["deployment"]["train"].update(zero="1", ep=16, param_dtype="bf16", offload=[],
                                        moe_permute_fusion=fused)  # fmt: skip
        d["deployment"]["forward"] = dict(d["deployment"]["train"], micro_batch=2)
        runs.append(Run.from_data(d))
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]
    assert len(set(fast)) == 2


# a group's own trainer and forward layouts: each field given or not, often at the default or
# the run's value, so equal layouts that give different fields meet in one batch
# (deployment.given.layered; placement.group_key, placement.user_groups._parsed_groups)
LAYOUT_FIELDS = {"tp": [1, 2], "zero": ["0", "3"], "ckpt": ["none", "full"],
                 "micro_batch": [1, 2], "max_tokens_per_gpu": [None, 4096],
                 "packing": [False, True], "padded": [False, True],
                 "prefix_grouper": [False, True], "activation_offload": [False, True],
                 "offload": [[], ["optimizer"]], "pp_overlap_p2p": [None, False],
                 "recompute_early_stop": [None, False], "module_ckpt": [None, False],
                 "swiglu_fusion": [None, True]}  # fmt: skip


def _layout_fields() -> Any:
    return st.fixed_dictionaries({}, optional={k: st.sampled_from(v)
                                               for k, v in LAYOUT_FIELDS.items()})  # fmt: skip


def _forward_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` less those a forward layout does not take (its offload, refused; the
    trainer's p2p overlap and checkpoint early stop: deployment.trainer_only)."""
    drop = ("offload", "pp_overlap_p2p", "recompute_early_stop", "module_ckpt", "disable_dropout",
            "swiglu_fusion")
    return {k: v for k, v in fields.items() if k not in drop}


def _grouped(framework: str | None, train: dict[str, Any], forward: dict[str, Any] | None,
             own_train: dict[str, Any] | None, own_forward: dict[str, Any] | None) -> Run | None:
    actor: dict[str, Any] = {"members": "actor+reference", "gpus": 8}
    for key, own in (("train", own_train), ("forward", own_forward)):
        if own is not None:
            actor[key] = own if key == "train" else _forward_fields(own)
    dep = {"framework": framework, "train": train,
           "groups": [{"members": "rollout", "gpus": 8}, actor]}  # fmt: skip
    if forward is not None:
        dep["forward"] = _forward_fields(forward)
    try:
        return Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True, "kl": True},
                              "models": {"actor": "llama-3.2-1b"},
                              "workload": {"prompts": 16, "samples_per_prompt": 4},
                              "deployment": dep, "cluster": {"hardware": "h100-sxm"}})
    except (SpecError, ValueError):
        return None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(framework=st.sampled_from([None, "verl", "nemo-rl", "slime"]), picks=st.lists(st.tuples(
    _layout_fields(), st.none() | _layout_fields(), st.none() | _layout_fields(),
    st.none() | _layout_fields(),
), min_size=2, max_size=6))
def test_random_group_layouts_giving_other_fields_equal_plain(framework: str | None,
                                                              picks: list[tuple]) -> None:
    """Random run-wide and group trainer and forward layouts, each field given or not: a
    batch evaluated together (kept group estimates, forwards, parsed groups) equals each Run
    evaluated plain, and each Run read back from its JSON."""
    chosen = [r for r in (_grouped(framework, *p) for p in picks) if r is not None]
    fast = [result_text(e) for e in evaluate_many(chosen)]
    assert fast == [plain_text(r) for r in chosen]
    assert fast == [plain_text(Run.from_data(r.to_json())) for r in chosen]


def test_nemo_rls_reference_swap_keyed_on_the_trainers_weights() -> None:
    """NeMo RL's reference forward waits for the actor trainer's weights swapped through host
    memory (``group_passes.reference_swap_s_of``): fp32 weights (the preset's param_dtype) swap
    twice the bytes of bf16 ones; beside a forward layout of the run's own (the forwards' key
    then holds no param_dtype) the forward kept for one was given to the other (a 0.029 s swap
    for 0.014 s) before the kept forward's key held the swap."""
    forward = {"tp": 1}  # a forward layout of the run's own: one key
    runs = [_grouped("nemo-rl", {}, forward, None, None),
            _grouped("nemo-rl", {"param_dtype": None}, forward, None, None)]  # fmt: skip
    assert None not in runs
    fast = [result_text(e) for e in evaluate_many(runs)]
    assert fast == [plain_text(r) for r in runs]

    def swap(text: str) -> float:
        jobs = [j for g in json.loads(text)["groups"] for j in g["jobs"]]
        return sum((j.get("predicted_breakdown_s") or {}).get("reference_swap_s", 0.0)
                   for j in jobs)  # fmt: skip

    assert swap(fast[0]) == 2 * swap(fast[1]) > 0
