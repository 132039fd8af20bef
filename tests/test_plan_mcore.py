"""The planner with NeMo RL's Megatron generation (``--engine megatron``, rlmcost.plan.mcore):
the families it searches, the engine's layouts and KV pools among the candidates, both screen
bounds at most the exact evaluation on them, and rows whose commands reproduce them."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from functools import cache

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.layout import ZeroStage
from rlmcost.plan.families import searched_families
from rlmcost.plan.mcore import MEGATRON_FAMILIES, POOL_CHOICES_GIB, SHARED_LAYOUT
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.plan.screen import candidate_arrays, query, rejected, screen
from rlmcost.run.spec import Run

runner = CliRunner()


def _cli(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _run(model: str, engine: dict, **workload: object) -> Run:
    return Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": model},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024, **workload},
        "deployment": {"framework": "nemo-rl", "engine": {"kind": "megatron", **engine}},
        "cluster": {"hardware": "h100-sxm"}})  # fmt: skip


QUERIES = {
    "8b-persist": (_run("llama-3.1-8b", {}), (8, 16)),
    "1b-offload-dist": (_run("llama-3.2-1b", {"sleep": True, "kv_buffer_gib": 4.0},
                             length_dist="uniform:256,1024"), (2, 4)),
    "moe": (_run("qwen3-30b-a3b", {}), (8, 16)),
}
SPACE = RLSpace(placements=MEGATRON_FAMILIES, tp=(1, 2, 4), rollout_tp=None, micro_batch=(1,),
                zero=(ZeroStage.OS_G, ZeroStage.OS_G_P), offload=(False,))  # fmt: skip


def test_megatron_searches_nemo_rls_topologies_and_refuses_the_others() -> None:
    assert searched_families(None, None, None, "megatron") == MEGATRON_FAMILIES
    assert searched_families(None, None, "nemo-rl", "megatron") == MEGATRON_FAMILIES
    assert searched_families(("baseline",), None, None, "megatron") == ("baseline",)
    with pytest.raises(SpecError, match="Megatron generation is NeMo RL's"):
        searched_families(None, None, "verl", "megatron")
    base = QUERIES["8b-persist"][0]
    with pytest.raises(SpecError, match="roles with --engine megatron"):
        candidates(base, RLSpace(placements=("baseline", "roles")), 8)
    vllm = base.replace(deployment={"engine": {"kind": "vllm"}})
    with pytest.raises(SpecError, match="add --engine megatron"):
        candidates(vllm, RLSpace(placements=("async-colocated",)), 8)


def test_candidates_take_the_shared_layout_and_the_pools() -> None:
    base = QUERIES["8b-persist"][0]
    cands = candidates(base, SPACE, 8)
    by = {f: [c for c in cands if c.family == f] for f in MEGATRON_FAMILIES}
    assert all(by.values())
    # on the trainer's group: its layout first, dedicated TPs beside it; apart: dedicated only
    assert {c.rollout_tp for c in by["baseline"]} >= {SHARED_LAYOUT, 2}
    assert {c.rollout_tp for c in by["async-colocated"]} >= {SHARED_LAYOUT, 2}
    assert SHARED_LAYOUT not in {c.rollout_tp for c in by["split"]}
    assert {c.kv_gib for c in cands} == set(POOL_CHOICES_GIB)
    assert all(c.fraction is None for c in cands)  # no vLLM reservation
    # async on one group: every model on all the GPUs (--groups actor+reference=8)
    assert {c.groups for c in by["async-colocated"]} == {"actor+reference=8"}
    c = next(c for c in by["baseline"] if c.rollout_tp == SHARED_LAYOUT and c.tp == 2)
    run = candidate_run(base, c)
    assert run.deployment.engine.tp is None and run.deployment.engine.kv_buffer_gib == c.kv_gib
    e = evaluate_deployment(run)
    gen = next(j for g in e.to_json()["groups"] for j in g["jobs"] if j["what"] == "actor generate")
    # independent: the engine serves the trainer's weights (no second copy): its own term is 0
    assert gen["memory_breakdown_bytes"]["engine"] == 0
    # the base's --kv-buffer-gib is kept, not searched
    given = QUERIES["1b-offload-dist"][0]
    assert {c.kv_gib for c in candidates(given, SPACE, 4)} == {4.0}


@cache
def _pool(name: str) -> tuple:
    base, budget = QUERIES[name]
    return base, [c for g in budget for c in candidates(base, SPACE, g)]


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_the_screen_stays_below_the_exact_evaluation(name: str) -> None:
    """Both bounds at most the exact evaluation (memory peak, predicted iteration) on every
    family and engine layout; the replica rule rejects only what the evaluation rejects."""
    base, pool = _pool(name)
    step = max(1, len(pool) // 40)
    probes: dict[str, object] = {}
    checked = set()
    for c in pool[::step]:
        try:
            # independent: evaluate_deployment, the one exact evaluation every query uses
            e = evaluate_deployment(candidate_run(base, c))
        except SpecError as exc:  # ZeRO-3 (in SPACE) is no Megatron policy: refused, each
            zero3 = c.zero is ZeroStage.OS_G_P and "not on a ZeRO-3" in str(exc)
            assert zero3 or "cannot feed" in str(exc) or c.rollout_tp != SHARED_LAYOUT, (c, exc)
            continue
        q = probes.setdefault(c.family, query(base, e))
        arrays = candidate_arrays([c])
        s = screen(q, arrays)
        assert not rejected(q, arrays)[0], c
        assert s.memory[0] <= e.peak_memory_bytes_per_device, c
        assert s.time[0] <= e.iteration_time_s, (c, s.time[0], e.iteration_time_s)
        checked.add((c.family, c.rollout_tp == SHARED_LAYOUT))
    assert {f for f, _ in checked} == set(MEGATRON_FAMILIES)
    assert (("baseline", True) in checked) and (("async-colocated", True) in checked)


def test_branch_and_bound_keeps_the_exhaustive_top_k() -> None:
    base, _ = QUERIES["1b-offload-dist"]
    space = RLSpace(placements=MEGATRON_FAMILIES, tp=(1, 2), micro_batch=(1,), offload=(False,))
    fast = plan_rl(base, "2..4", space=space, top=4)
    every = plan_rl(base, "2..4", space=space, top=100000)
    assert every.counts.bounded == 0
    assert [r["run"] for r in fast.rows] == [r["run"] for r in every.rows[:4]]


def test_plan_with_the_megatron_engine_rows_reproduce() -> None:
    out = _cli("plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "--gpus", "4",
               "-B", "8", "-K", "4", "--engine", "megatron", "--tp", "1,2", "--micro-batch", "1",
               "--top", "500")  # fmt: skip
    rows = out["rows"]
    assert {r["family"] for r in rows} == set(MEGATRON_FAMILIES)
    assert {r["kv_buffer_gib"] for r in rows} <= set(POOL_CHOICES_GIB)
    shared = [r for r in rows if r["rollout_tp"] == SHARED_LAYOUT]
    assert shared and all("--rollout-tp" not in r["command"] for r in shared)
    picks = [next(r for r in rows if r["family"] == f) for f in MEGATRON_FAMILIES] + shared[:1]
    for row in picks:
        assert "--engine megatron" in row["command"] and "--kv-buffer-gib" in row["command"]
        single = _cli(*shlex.split(row["command"])[1:])
        # independent: the row's command line evaluated alone
        assert single["fits"] is True and single["iteration"]["time_s"] == row["time_s"]
    colocated = next(r for r in rows if r["family"] == "async-colocated")
    assert "--placement async" in colocated["command"] and "--groups actor+reference=4" in \
        colocated["command"] and colocated["staleness"] == 1  # fmt: skip
    # a family another framework launches, with this engine: one line, no traceback
    bad = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "4", "--engine",
                              "megatron", "--placements", "roles"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output and "NeMo RL's" in bad.output


def test_async_sizing_weighs_async_on_one_group() -> None:
    """`--placement async` on a Megatron engine: the sizing's search holds async on one group
    beside the split, and the output compares them with flags that reproduce the one-group
    time (NeMo RL PR 2884); a vLLM engine's async is not given the comparison."""
    from rlmcost.plan.sizing import sized, sizing_space
    from rlmcost.reports.estimate import run_of

    run = run_of("grpo", "llama-3.2-1b", reward="rule", batch=8, group=4, gpus=4,
                 placement="async", deployment={"engine": {"kind": "megatron"}})  # fmt: skip
    assert sizing_space(run).placements == ("async", "async-colocated")
    _, e = sized(run)
    note = next(n for n in e.notes if "one group of the same 4 GPUs" in n)
    one = float(re.search(r"one group of the same 4 GPUs \(([\d.]+) s\)", note).group(1))
    flags = re.search(r"\): (--placement async .*?), the engine", note).group(1)
    assert "--groups actor+reference=4" in flags
    args = ["grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "8", "-K", "4", "--gpus",
            "4", "--engine", "megatron", *shlex.split(flags)]  # fmt: skip
    single = _cli(*args)
    # independent: the flags the note gives, evaluated alone
    assert single["fits"] and f"{single['iteration']['time_s']:.3g}" == f"{one:.3g}"
    vllm = run.replace(deployment={"engine": {"kind": "vllm", "kv_buffer_gib": None}})
    assert sizing_space(vllm).placements == ("async",)
    assert not any("one group" in n for n in sized(vllm)[1].notes)


def test_an_moe_actor_searches_expert_parallelism() -> None:
    """Megatron-core's expert_model_parallel_size divides the routed experts (Qwen3-30B-A3B's
    config.json: num_experts 128): EP 1..8 within a node, each candidate's Run carrying it;
    a given --ep that does not divide them is one line."""
    base = QUERIES["moe"][0]
    cands = candidates(base, SPACE, 8)
    assert {c.ep for c in cands} == {1, 2, 4, 8}
    c = next(c for c in cands if c.ep == 4)
    assert candidate_run(base, c).deployment.train.ep == 4
    with pytest.raises(SpecError, match="divides the experts"):
        candidates(QUERIES["8b-persist"][0], RLSpace(ep=(3,)), 8)
    bad = runner.invoke(app, ["plan", "grpo", "-m", "qwen2.5-7b", "--gpus", "8", "--ep", "3"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_megatron_trains_with_the_distributed_optimizer_by_default() -> None:
    """NeMo RL's Megatron generation wraps its Megatron policy (megatron_generation.py
    effective_megatron_cfg @7ea279abf), whose optimizer is Megatron's distributed one
    (use_distributed_optimizer true: ZeRO-1); the plan's default ZeRO-3 stays for vLLM."""
    base = QUERIES["8b-persist"][0]
    space = RLSpace(placements=("baseline",), tp=(1,), micro_batch=(1,))
    assert {c.zero for c in candidates(base, space, 8)} == {ZeroStage.OS}
    vllm = base.replace(deployment={"engine": {"kind": "vllm"}})
    assert {c.zero for c in candidates(vllm, space, 8)} == {ZeroStage.OS_G_P}
    given = replace(space, zero=(ZeroStage.OS_G_P,))  # --zero 3 searches what it gives
    assert {c.zero for c in candidates(base, given, 8)} == {ZeroStage.OS_G_P}
