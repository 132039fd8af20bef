"""The RL screen and the branch and bound over it: on random candidates both bounds are at
most the exact evaluation (memory peak per device, predicted iteration time) and the replica
rule rejects only what the evaluation rejects; branch and bound returns the top k of the
exhaustive search; Ctrl-C keeps the rows found; near-duplicate rows merge."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.plan import rl_candidates
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.plan.rl_screened import bound_pool
from rlmcost.plan.rl_search import collapse
from rlmcost.plan.screen import candidate_arrays, query, rejected, screen
from rlmcost.run.spec import Run

ALL = ("baseline", "split", "roles", "async-split", "async-roles", "ac-shared",
       "disaggregated", "hybrid", "fusion", "async", "combined")  # fmt: skip
QUERIES = {
    "ppo-8b": (Run.from_data({
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 2, "response_len": 1024},
        "cluster": {"hardware": "a100-80gb"}}), (4, 8, 16)),
    "grpo-1b-dist": (Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 2048,
                     "length_dist": "uniform:256,2048"}}), (2, 4, 64)),
    "grpo-1b-turns": (Run.from_data({  # agentic: observations prefilled, not decoded
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 2048,
                     "length_dist": "uniform:256,2048", "turns": 4, "observation_tokens": 600,
                     "tool_latency_s": 0.0}}), (2, 4, 16)),
    "ppo-8b-openrlhf": (Run.from_data({
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 32, "samples_per_prompt": 2, "response_len": 1024},
        "deployment": {"framework": "openrlhf"}, "cluster": {"hardware": "h100-sxm"}}),
        (8, 32, 128)),
    "grpo-8b-fp8-engine": (Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "deployment": {"engine": {"dtype": "fp8"}}, "cluster": {"hardware": "h100-sxm"}}),
        (8, 16)),
    "grpo-1b-stream": (Run.from_data({  # streaming: the asynchronous families only
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 2048,
                     "length_dist": "lognormal:700,0.67,2048"},
        "deployment": {"partial_rollout": True}}), (2, 4, 16)),
    "grpo-8b-nemo-rl": (Run.from_data({  # NeMo RL's colocated offload: optimizer/params-idle
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 8, "response_len": 1024},
        "deployment": {"framework": "nemo-rl"}, "cluster": {"hardware": "h100-sxm"}}), (8, 16)),
    "ppo-8b-verl-idle": (Run.from_data({  # verl param_offload and optimizer_offload
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 2, "response_len": 1024},
        "deployment": {"framework": "verl",
                       "train": {"offload": ["optimizer-idle", "params-idle"]}},
        "cluster": {"hardware": "a100-80gb"}}), (8, 16)),
    "grpo-moe": (Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "qwen3-30b-a3b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "cluster": {"hardware": "h100-sxm"}}), (8, 16)),
    # GB200 NVL72: one NVLink domain of 72 GPUs, 4 GPUs a host (HardwareSpec.host_gpus)
    "grpo-8b-gb200-openrlhf": (Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "deployment": {"framework": "openrlhf"}, "cluster": {"hardware": "gb200"}}),
        (8, 72, 144)),
    "ppo-8b-gb200": (Run.from_data({
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 32, "samples_per_prompt": 2, "response_len": 1024},
        "cluster": {"hardware": "gb200"}}), (4, 76)),
    # groups pinned to an accelerator (--groups "rollout=?@h20,actor+reference=?@h100")
    "grpo-8b-groups-at": (Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "cluster": {"hardware": "h100-sxm"}}), (8, 16, 24)),
    "ppo-8b-groups-at-openrlhf": (Run.from_data({
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 32, "samples_per_prompt": 2, "response_len": 1024},
        "deployment": {"framework": "openrlhf"}, "cluster": {"hardware": "a100-80gb"}}),
        (16, 32)),
    "grpo-8b-groups-at-gb200": (Run.from_data({  # engines on H20 nodes, trainer on the rack
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "deployment": {"framework": "openrlhf"}, "cluster": {"hardware": "gb200"}}),
        (16, 80, 144)),
}  # fmt: skip
SPACE = RLSpace(placements=ALL, tp=(1, 2, 4), rollout_tp=(1, 2, 4), micro_batch=(1, 2),
                zero=(ZeroStage.OS_G, ZeroStage.OS_G_P), fractions=(0.5, 0.9))  # fmt: skip
SPACES = {
    "grpo-8b-groups-at": replace(SPACE, placements=(),
                                 groups="rollout=?@h20,actor+reference=?@h100-sxm"),
    "ppo-8b-groups-at-openrlhf": replace(
        SPACE, placements=(), groups="rollout=?@h20,actor+reference=?@h100-sxm,"
        "critic+reward=?@a100-80gb"),
    "grpo-8b-groups-at-gb200": replace(SPACE, placements=(),
                                       groups="rollout=?@h20,actor+reference=?@gb200"),
}  # fmt: skip
"""A query's space where it is not :data:`SPACE`: groups pinned to accelerators (the screen
then bounds at the fastest of them, :func:`rlmcost.plan.rl_screened.bound_pool`)."""


def _space(name: str) -> RLSpace:
    base = QUERIES[name][0]
    if base.deployment.partial_rollout:  # family_base drops it on the synchronous families
        return replace(SPACE, placements=("async-split", "async-roles", "async", "combined"))
    return SPACES.get(name, SPACE)


@cache
def _pool(name: str) -> tuple:
    base, budget = QUERIES[name]
    return base, [c for g in budget for c in candidates(base, _space(name), g)]


@cache
def _probe(name: str, family: str):  # noqa: ANN202 - an estimate or None
    """The screen's constants from an exact evaluation of another member of the family."""
    base, pool = _pool(name)
    where = bound_pool(_space(name))
    for c in pool:
        if c.family == family:
            try:
                return query(base, evaluate_deployment(candidate_run(base, c)), where)
            except SpecError:
                continue
    return query(base, pool=where)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(QUERIES)), pick=st.integers(0, 10**9))
def test_the_screen_never_exceeds_the_exact_evaluation(name: str, pick: int) -> None:
    _bounds_hold(name, pick)


WIDER = ("grpo-8b-gb200-openrlhf", "ppo-8b-gb200", "grpo-8b-groups-at",
         "ppo-8b-groups-at-openrlhf", "grpo-8b-groups-at-gb200")  # fmt: skip
"""GB200 NVL72 racks (72 GPUs an NVLink domain, 4 a host) and groups pinned with ``@``."""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(WIDER), pick=st.integers(0, 10**9))
def test_the_screen_never_exceeds_the_exact_evaluation_on_racks_and_pinned_groups(
        name: str, pick: int) -> None:  # fmt: skip
    _bounds_hold(name, pick)


def _bounds_hold(name: str, pick: int) -> None:
    """The screen's memory and time bounds of one candidate of ``name`` are at most its exact
    evaluation's peak and iteration, and the replica rule passes what the evaluation runs."""
    base, pool = _pool(name)
    c = pool[pick % len(pool)]
    q = _probe(name, c.family)
    arrays = candidate_arrays([c])
    s = screen(q, arrays)
    try:
        # independent: evaluate_deployment, the one exact evaluation every query uses
        e = evaluate_deployment(candidate_run(base, c))
    except SpecError:
        return
    assert not rejected(q, arrays)[0], c
    assert s.memory[0] <= e.peak_memory_bytes_per_device, c
    assert s.time[0] <= e.iteration_time_s, (c, s.time[0], e.iteration_time_s)


def test_the_replica_rule_rejects_what_the_evaluation_rejects() -> None:
    """Every candidate the screen rejects raises the evaluation's "cannot feed" error."""
    base, pool = _pool("grpo-1b-dist")
    q = _probe("grpo-1b-dist", "baseline")
    out = rejected(q, candidate_arrays(pool))
    assert out.sum() > 0
    for c in [c for c, o in zip(pool, out, strict=True) if o][:40]:
        with pytest.raises(SpecError, match="cannot feed"):
            evaluate_deployment(candidate_run(base, c))


def test_branch_and_bound_keeps_the_exhaustive_top_k() -> None:
    """The top 5 with skipping equal the top 5 of evaluating every survivor (a top larger
    than the survivors skips nothing)."""
    base, _ = QUERIES["ppo-8b"]
    space = RLSpace(placements=("baseline", "split", "async-split"), tp=(1, 2, 4),
                    rollout_tp=(1, 2, 4), micro_batch=(1,), fractions=(0.5,))  # fmt: skip
    for objective in ("time", "gpu-hours", "throughput", "gpus"):
        fast = plan_rl(base, "2..16", space=space, top=5, objective=objective)
        every = plan_rl(base, "2..16", space=space, top=100000, objective=objective)
        assert every.counts.bounded == 0
        assert [r["run"] for r in fast.rows] == [r["run"] for r in every.rows[:5]], objective
    timed = plan_rl(base, "2..16", space=space, top=5)
    assert timed.counts.bounded > 0 and any("branch and bound" in n for n in timed.notes)
    c = timed.counts  # the plan's note states the pruning
    assert "pruned by the memory lower bound" in timed.notes[0]
    assert f"{c.bounded} skipped by the time lower bound" in timed.notes[0]
    assert c.evaluated + c.bounded + c.pruned == c.valid


def test_ctrl_c_keeps_the_best_found_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    base, _ = QUERIES["ppo-8b"]
    real, calls = rl_candidates.evaluate_item, []

    def interrupted(item):  # noqa: ANN001, ANN202
        calls.append(1)
        if len(calls) > 200:
            raise KeyboardInterrupt
        return real(item)

    monkeypatch.setattr(rl_candidates, "evaluate_item", interrupted)
    r = plan_rl(base, "4..16", space=SPACE, top=5)
    assert r.rows and len(calls) == 201
    assert any("interrupted" in n for n in r.notes)
    assert r.counts.evaluated <= 200 and r.counts.fitting == len(r.rows) or len(r.rows) == 5


def test_rows_differing_only_in_engine_tp_with_the_same_time_merge() -> None:
    row = {"gpus": 8, "family": "split", "placement": "groups", "groups": "rollout=4,actor=4",
           "staleness": 0, "tp": 2, "pp": 1, "cp": 1, "sp": False, "zero": "3", "ckpt": "none",
           "micro_batch": 1, "offload": "", "gpu_memory_utilization": None, "time_s": 9.0}
    rows = [{**row, "rollout_tp": 4}, {**row, "rollout_tp": 2}, {**row, "rollout_tp": 2,
                                                                  "time_s": 9.5}]  # fmt: skip
    out, merged = collapse(rows)
    assert merged == 1 and [r["rollout_tp"] for r in out] == [2, 2]
    assert [r["time_s"] for r in out] == [9.0, 9.5]


def test_over_a_pool_the_bounds_hold_whichever_accelerator_a_group_takes() -> None:
    """A pool of A100s and H100s (the query's own accelerator the slower one): the screen
    bounds at the pool's fastest peak and bandwidth and its largest HBM, so on candidates that
    put groups on either type both bounds stay at or below the exact evaluation."""
    base = QUERIES["ppo-8b"][0]
    space = RLSpace(placements=("baseline", "split", "async-split"), tp=(1, 2),
                    rollout_tp=(1, 2), micro_batch=(1,), fractions=(0.5,),
                    pool=(("a100-80gb", 8), ("h100-sxm", 8)))  # fmt: skip
    cands = candidates(base, space, 16)
    assert {hw for c in cands for hw in c.hardware} == {"a100-80gb", "h100-sxm"}
    s = screen(query(base, pool=space.pool), candidate_arrays(cands))
    checked = 0
    for c in cands[:: max(1, len(cands) // 12)]:
        try:  # independent: the exact evaluation of the candidate's Run
            e = evaluate_deployment(candidate_run(base, c))
        except SpecError:
            continue
        j = cands.index(c)
        assert s.time[j] <= e.iteration_time_s, c
        checked += 1
    assert checked >= 4


def test_per_family_bases_keep_the_exhaustive_top_k_and_their_frameworks() -> None:
    """With a base Run per family (the async split under slime's preset, the role groups
    under OpenRLHF's), each part is screened by its own base: the top 5 equal those of
    evaluating every survivor, and each row's Run is its family's framework's."""
    base, _ = QUERIES["ppo-8b"]
    slime = base.replace(deployment={"framework": "slime"})
    orl = base.replace(deployment={"framework": "openrlhf"})
    bases = {"async-split": slime, "roles": orl}
    space = RLSpace(placements=("baseline", "split", "async-split", "roles"), tp=(1, 2, 4),
                    rollout_tp=(1, 2, 4), micro_batch=(1,), fractions=(0.5,))  # fmt: skip
    fast = plan_rl(base, "2..16", space=space, top=5, bases=bases)
    every = plan_rl(base, "2..16", space=space, top=100000, bases=bases)
    assert every.counts.bounded == 0
    assert [r["run"] for r in fast.rows] == [r["run"] for r in every.rows[:5]]
    want = {"baseline": base, "split": base, **bases}
    for r in every.rows:
        assert r["run"]["deployment"]["framework"] == want[r["family"]].deployment.framework
    assert {r["family"] for r in every.rows} >= {"baseline", "async-split", "roles"}
    assert any("roles under openrlhf" in n for n in every.notes)


def test_the_screen_stays_below_slimes_whole_mixers() -> None:
    """slime's trainer holds a hybrid model's Gated DeltaNet whole on every TP rank
    (miles_plugins/models/hf_attention.py @bb6f7dbd; rlmcost.parallel.memory
    ``linear_mixer_replicated``); the screen sweeps the mixers split over P_t, so its
    trainer weights stay at most the evaluation's, strictly below at TP > 1."""
    small = {"name": "hybrid-small", "n_layers": 8, "d_model": 1024, "d_ff": 2816,
             "n_heads": 8, "n_kv_heads": 2, "head_dim": 128, "vocab": 32000, "qk_norm": True,
             "attn_output_gate": True, "linear_layers": 6, "linear_key_heads": 8,
             "linear_value_heads": 16, "linear_key_head_dim": 64, "linear_value_head_dim": 64,
             "linear_conv_kernel": 4}  # fmt: skip
    base = Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": small},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 1024},
        "deployment": {"framework": "slime"}, "cluster": {"hardware": "h100-sxm"}})  # fmt: skip
    space = RLSpace(placements=("baseline", "split"), tp=(1, 2, 4), rollout_tp=(1, 2),
                    micro_batch=(1,), zero=(ZeroStage.OS,), fractions=(0.5,))  # fmt: skip
    q, below = None, 0
    for c in (c for g in (4, 8) for c in candidates(base, space, g)):
        try:  # independent: the exact evaluation of the candidate's Run
            e = evaluate_deployment(candidate_run(base, c))
        except SpecError:
            continue
        q = q or query(base, e)
        s = screen(q, candidate_arrays([c]))
        assert s.memory[0] <= e.peak_memory_bytes_per_device, c
        jobs = [j for g in e.to_json()["groups"] for j in g["jobs"] if j["what"] == "actor train"]
        trained = jobs[0]["memory_breakdown_bytes"]["weights"]
        assert s.parts[0][0] <= trained, c
        below += c.tp > 1 and s.parts[0][0] < trained
    assert below >= 12, below  # 48 of the candidates at TP 2 and 4


def test_the_refit_bound_counts_a_gb200_racks_hosts() -> None:
    """OpenRLHF's NCCL refit into engines apart crosses nodes from each sending host over its
    own NICs (placement/weight_syncs.py: lanes = sending hosts, HardwareSpec.host_gpus, 4 on a
    GB200 NVL72 rack of 72 GPUs). The screen counted lanes by the 72-GPU node, one lane for 22
    trainers, so its bound (12.49 s) exceeded the exact iteration (11.47 s) of rollout=122
    (engine TP 2), actor+reference=22 on 144 GB200s, and branch and bound could skip a top
    row."""
    base = Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "deployment": {"framework": "openrlhf"}, "cluster": {"hardware": "gb200"}})  # fmt: skip
    space = RLSpace(placements=(), groups="rollout=?,actor+reference=?", tp=(1,),
                    rollout_tp=(2,), micro_batch=(1,), offload=(False,),
                    ckpt=(Checkpointing.FULL,))  # fmt: skip
    cands = [c for c in candidates(base, space, 144) if c.groups in (
        "rollout=122,actor+reference=22", "rollout=124,actor+reference=20",
        "rollout=126,actor+reference=18")]  # fmt: skip
    assert len(cands) == 3
    q = query(base, evaluate_deployment(candidate_run(base, cands[0])))
    s = screen(q, candidate_arrays(cands))
    for c, bound in zip(cands, s.time, strict=True):
        e = evaluate_deployment(candidate_run(base, c))  # independent: the exact evaluation
        assert bound <= e.iteration_time_s, (c.groups, bound, e.iteration_time_s)
