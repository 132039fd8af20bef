"""The engines' floor of branch and bound (rlmcost.plan.engine_floor): on random candidates
with engines apart, the engines' units evaluated for another candidate with the same engines
plus the screen's refit stay at most the candidate's exact iteration (and the units are the
same: the key holds what the engines' group reads), under a large-MoE tier (NeMo RL's 235 B,
both its trainers, the split and the streaming async split) and outside one; the screen's
bounds hold there too; and a tier plan keeps the rows of evaluating every survivor while the
floor skips candidates the screen's roofline could not."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.layout import Checkpointing
from rlmcost.plan.engine_floor import EngineFloors, engines_busy_s
from rlmcost.plan.families import family_base
from rlmcost.plan.mcore import is_megatron
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLCandidate, RLSpace, candidate_run, candidates
from rlmcost.plan.screen import APART, APART_STALE, candidate_arrays, engine_tp, query, screen
from rlmcost.plan.screen_refit import refit_apart_s
from rlmcost.plan.trainers import trainer_parts
from rlmcost.reports.estimate import run_of
from rlmcost.run.spec import Run
from rlmcost.specs import get_hardware

MOE = "qwen3-235b-a22b"  # NeMo RL's tier example grpo-qwen3-235b-16n8g.yaml: 128 H100
TIER = RLSpace(placements=("split", "async-stream"), micro_batch=(1,),
               ckpt=(Checkpointing.FULL,), tp=(2,))  # fmt: skip
SMALL = RLSpace(placements=("split", "roles", "async-split", "async-roles"), tp=(1, 2),
                rollout_tp=(1, 2, 4), micro_batch=(1, 2))  # fmt: skip
QUERIES = {
    "tier-235b": (lambda: run_of("grpo", MOE, hardware="h100-sxm", framework="nemo-rl"),
                  TIER, (128,)),
    "ppo-8b-openrlhf": (lambda: Run.from_data({
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 32, "samples_per_prompt": 2, "response_len": 1024},
        "deployment": {"framework": "openrlhf"}, "cluster": {"hardware": "h100-sxm"}}),
        SMALL, (8, 16)),
    "grpo-1b-stream-slime": (lambda: Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 2048,
                     "length_dist": "lognormal:700,0.67,2048"},
        "deployment": {"framework": "slime"}}),
        replace(SMALL, placements=("split", "async-split", "async-stream")), (4, 8)),
}  # fmt: skip


@cache
def _pool(name: str) -> list[tuple[Run, RLCandidate]]:
    """(base, candidate) of each family of ``name`` with engines apart, as the plan gives them:
    each trainer of a tier, each family under its own base (``family_base``)."""
    make, space, budget = QUERIES[name]
    base = make()
    out = []
    for b, sp in trainer_parts(base, space, max(budget)):
        for fam in space.placements:
            fb = family_base(fam, b)
            fs = replace(sp, placements=(fam,))
            out += [(fb, c) for g in budget for c in candidates(fb, fs, g)
                    if candidate_arrays([c])["kind"][0] in (APART, APART_STALE)]
    return out


@cache
def _evaluated(i: int, name: str):  # noqa: ANN202 - an estimate or None
    base, c = _pool(name)[i]
    try:
        return evaluate_deployment(candidate_run(base, c))
    except SpecError:
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(QUERIES)), pick=st.integers(0, 10**9),
       other=st.integers(0, 10**9))  # fmt: skip
def test_the_engines_floor_never_exceeds_the_exact_evaluation(name: str, pick: int,
                                                              other: int) -> None:  # fmt: skip
    pool = _pool(name)
    i = pick % len(pool)
    base, c = pool[i]
    mega = is_megatron(base)
    same = [j for j, (b, d) in enumerate(pool) if b is base
            and EngineFloors.key(d, mega) == EngineFloors.key(c, mega)]  # fmt: skip
    j = same[other % len(same)]
    e, seen = _evaluated(i, name), _evaluated(j, name)
    if e is None or seen is None:
        return
    busy = engines_busy_s(seen)
    assert busy is not None and busy == engines_busy_s(e), (c, pool[j][1])
    units, generation = busy
    arrays = candidate_arrays([c])
    q = query(base, seen)
    refit = refit_apart_s(q, arrays["gpus"], arrays["train_gpus"], arrays["rollout_gpus"],
                          engine_tp(arrays))[0]  # fmt: skip
    # independent: the candidate's own exact evaluation, the one every query uses
    floor = max(units, generation + refit)
    assert floor <= e.iteration_time_s, (c, busy, refit, e.iteration_time_s)
    s = screen(q, arrays)  # the screen's bounds hold under the tier's layouts too
    assert s.time[0] <= e.iteration_time_s and s.memory[0] <= e.peak_memory_bytes_per_device


def test_a_tier_plan_keeps_the_exhaustive_rows_and_the_floor_skips() -> None:
    """GRPO Qwen3-235B-A22B under NeMo RL on 128 H100: its engines apart bound at the
    controller's seconds by the screen (a mixture of experts reads no weights per decode step
    there, a stream has no decode steps), so the screen alone skipped none; the engines'
    floor skips candidates, and the top 3 equal those of evaluating every survivor."""
    base = QUERIES["tier-235b"][0]()
    fast = plan_rl(base, 128, space=TIER, top=3)
    every = plan_rl(base, 128, space=TIER, top=100000)
    assert every.counts.bounded == 0
    assert fast.counts.bounded > 0, fast.counts
    assert [r["run"] for r in fast.rows] == [r["run"] for r in every.rows[:3]]
    assert any("predicted units of the same engines" in n for n in fast.notes)


def test_with_rejected_candidates_the_floor_keeps_the_exhaustive_rows() -> None:
    """Where the engine replica rule rejects candidates (more engines than the 32 sequences
    to sample), each survivor's floor takes its own refit: the top 5 by each objective with a
    bound equal those of evaluating every survivor (the floor had once read the refit of
    another candidate, past the rejected ones, and skipped a top row of PPO 70B on 1,024
    A100s), and so does the Pareto front over GPUs and time."""
    base = QUERIES["grpo-1b-stream-slime"][0]()
    space = replace(SMALL, placements=("split", "async-split"), rollout_tp=(1, 2),
                    micro_batch=(1,))  # fmt: skip
    cands = [c for g in (4, 8, 16, 32, 64) for c in candidates(base, space, g)]
    hbm = get_hardware(base.cluster.hardware).hbm_bytes
    memory_pruned = int((screen(query(base), candidate_arrays(cands)).memory > hbm).sum())
    for objective in ("time", "gpu-hours"):
        fast = plan_rl(base, "4..64", space=space, top=5, objective=objective)
        every = plan_rl(base, "4..64", space=space, top=100000, objective=objective)
        assert fast.counts.bounded > 0 and every.counts.bounded == 0
        assert every.counts.pruned > memory_pruned  # the replica rule rejected some
        assert [r["run"] for r in fast.rows] == [r["run"] for r in every.rows[:5]], objective
        if objective == "time":  # the floor skips nothing that would join the front
            assert [(r["gpus"], r["time_s"]) for r in fast.front] == \
                [(r["gpus"], r["time_s"]) for r in every.front]


def test_each_survivors_floor_takes_its_own_refit(monkeypatch) -> None:  # noqa: ANN001
    """The floors' refit seconds are each survivor's own (the screen's refit_apart_s of that
    candidate, recomputed here), past candidates the replica rule rejected too."""
    from rlmcost.plan import engine_floor

    base = QUERIES["grpo-1b-stream-slime"][0]()
    space = replace(SMALL, placements=("split",), rollout_tp=(1, 2), micro_batch=(1,))
    seen = []
    real = engine_floor.EngineFloors.__init__

    def spy(self, base, cands, apart, refit_s, *rest):  # noqa: ANN001, ANN002, ANN202
        seen.append((cands, apart, refit_s))
        real(self, base, cands, apart, refit_s, *rest)

    monkeypatch.setattr(engine_floor.EngineFloors, "__init__", spy)
    plan_rl(base, "4..64", space=space, top=5)
    ((cands, apart, refit_s),) = seen
    probe = next(e for c in cands if (e := _safe(base, c)) is not None)
    q = query(base, probe)
    a = candidate_arrays(cands)
    own = refit_apart_s(q, a["gpus"], a["train_gpus"], a["rollout_gpus"], engine_tp(a))
    assert apart.all() and len(set(own.tolist())) > 1
    assert (refit_s == own).all()


def _safe(base: Run, c: RLCandidate):  # noqa: ANN202 - an estimate or None
    try:
        return evaluate_deployment(candidate_run(base, c))
    except SpecError:
        return None



def test_the_floor_keeps_the_pareto_front(monkeypatch) -> None:  # noqa: ANN001
    """`plan grpo -m qwen2.5-32b -H h100-sxm -T 8192 --gpus 8..64`: skipping on the k-th row
    alone, the engines' floor had dropped the fastest rows at 16 and 32 GPUs from the Pareto
    front over GPUs and time (596.0 / 310.0 s shown where 545.0 / 283.4 s fit); the front is
    now that of the same search without the floor (independent: the floor switched off)."""
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    args = ["plan", "grpo", "-m", "qwen2.5-32b", "-H", "h100-sxm", "-T", "8192", "--gpus",
            "8..64", "--json"]  # fmt: skip
    fast = json.loads(CliRunner().invoke(app, args).stdout)
    monkeypatch.setattr(EngineFloors, "floor_s", lambda self, j: None)
    plain = json.loads(CliRunner().invoke(app, args).stdout)
    assert fast["counts"]["evaluated"] < plain["counts"]["evaluated"]  # the floor skipped
    assert [(r["gpus"], r["time_s"]) for r in fast["pareto"]] == \
        [(r["gpus"], r["time_s"]) for r in plain["pareto"]]
    assert [r["command"] for r in fast["rows"]] == [r["command"] for r in plain["rows"]]
