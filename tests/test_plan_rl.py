"""`rlmcost plan grpo|ppo`: the candidates are Runs; every returned row reproduces as a single
query (its command line and `rlmcost run` on its Run); the memory lower bound that prunes
never exceeds what the exact evaluation finds (Dask: tests/test_plan_distributed.py)."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates, lower_bounds
from rlmcost.run.spec import Run

runner = CliRunner()
SMALL = RLSpace(
    placements=("baseline", "split"), tp=(1, 2), rollout_tp=(1, 2), micro_batch=(1,),
    ckpt=(Checkpointing.FULL,), offload=(False,), fractions=(0.5,),
)  # fmt: skip
BASE = Run.from_data({
    "algorithm": {"name": "grpo", "rule_reward": True},
    "models": {"actor": "llama-3.2-1b"},
    "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 2048},
})  # fmt: skip
BASE_8B = Run.from_data({
    "algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.1-8b"},
    "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 2048},
    "deployment": {"framework": None},  # rlmcost's bare layout: every model on the GPU
})  # fmt: skip


def _cli(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_every_rl_row_reproduces_as_a_single_query() -> None:
    r = plan_rl(BASE, "2..4", space=SMALL, top=50)
    c = r.counts
    assert r.rows and c.evaluated == c.valid - c.pruned - c.bounded
    for row in r.rows:
        run = Run.from_data(row["run"])
        assert row["command"] == run.to_command()
        single = _cli(*shlex.split(row["command"])[1:])
        # independent: the `rlmcost grpo` command line, evaluated through the CLI alone
        assert single["iteration"]["time_s"] == row["time_s"]
        peak = max(stage["memory_bytes_per_device"] for stage in single["stages"].values())
        assert peak == row["memory_bytes_per_device"]
        assert single["fits"] is True and single["run"] == row["run"]


def test_rlmcost_run_on_a_plan_row_reproduces_its_numbers(tmp_path) -> None:  # noqa: ANN001
    """`rlmcost plan --json` rows embed their Run; `rlmcost run` on it gives the row."""
    out = _cli("plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
               "--gpus", "2..4", "--tp", "1,2", "--rollout-tp", "1", "--micro-batch", "1",
               "--ckpt", "full", "--top", "3")  # fmt: skip
    assert out["run"]["algorithm"]["rule_reward"] is True  # the base Run
    assert len(out["rows"]) == 3
    for i, row in enumerate(out["rows"] + out["pareto"]):
        path = tmp_path / f"row{i}.json"
        path.write_text(json.dumps(row["run"]))
        single = _cli("run", str(path))
        # independent: `rlmcost run`, the saved-Run entry point, on the row's Run alone
        assert single["iteration"]["time_s"] == row["time_s"]
        assert single["fits"] is row["fits"]
        peak = max(stage["memory_bytes_per_device"] for stage in single["stages"].values())
        assert peak == row["memory_bytes_per_device"]
        assert single["run"] == row["run"]
        assert Run.from_data(row["run"]).to_command() == row["command"]


def test_a_candidate_is_the_base_run_with_its_deployment_and_gpus() -> None:
    base = BASE.replace(deployment={"logits": "low-memory", "engine": {"max_num_seqs": 64}},
                        cluster={"hardware": "a100-80gb"})  # fmt: skip
    (c,) = [c for c in candidates(base, SMALL, 4) if c.family == "split" and c.tp == 2
            and c.rollout_tp == 1 and c.groups.startswith("rollout=2,")]  # fmt: skip
    run = candidate_run(base, c)
    d = run.deployment
    # the searched fields are the candidate's ...
    assert (d.train.tp, d.train.zero, d.train.ckpt, d.engine.tp) == (2, "3", "full", 1)
    assert [(g.members, g.gpus) for g in d.groups] == [("rollout", 2), ("actor+reference", 2)]
    assert d.placement is None and run.cluster.gpus == 4
    # ... and everything else is the base Run's
    assert (d.logits, d.engine.max_num_seqs, run.cluster.hardware) == ("low-memory", 64,
                                                                        "a100-80gb")
    assert run.algorithm == base.algorithm and run.workload == base.workload


def test_lower_bound_never_exceeds_the_exact_peak() -> None:
    """Soundness of the prune: the bound is at most the evaluated peak, so no pruned
    candidate could have fit (8B on 2-4 GPUs, ZeRO 0/3, offload on/off: many prunes)."""
    space = RLSpace(tp=(1, 2), rollout_tp=(1, 2), micro_batch=(1, 2),
                    zero=(ZeroStage.NONE, ZeroStage.OS_G_P), fractions=(0.5,),
                    ckpt=(Checkpointing.NONE, Checkpointing.FULL))  # fmt: skip
    pruned = 0
    for gpus in (2, 4):
        cands = candidates(BASE_8B, space, gpus)
        bound, _, _ = lower_bounds(BASE_8B, cands)
        for c, b in zip(cands, bound, strict=True):
            e = evaluate_deployment(candidate_run(BASE_8B, c))
            # independent: evaluate_deployment's exact peak per device
            assert b <= e.peak_memory_bytes_per_device, c
            pruned += b > e.hardware.hbm_bytes
    assert pruned > 0


@pytest.mark.parametrize("fixed", [
    {"deployment": {"train": {"sp": True, "cp": 2}}},
    {"deployment": {"lora": {"rank": 8}}},
    {"deployment": {"train": {"max_tokens_per_gpu": 3072}}},  # one sequence per micro-batch
    {"workload": {"length_dist": "uniform:64,256"}},
    {"workload": {"weight_dtype": "fp32"}},
], ids=["sp-cp", "lora", "dynamic-batching", "length-dist", "fp32-weights"])  # fmt: skip
def test_lower_bound_follows_the_base_run(fixed: dict) -> None:
    """The bound is fed from the base Run: what it cannot see (LoRA's small states, dynamic
    batching, shorter responses) never lifts it above the exact peak, and what it sees (CP
    shards, SP, fp32 weights) keeps it sound. The 8B actor alone (a rule reward, no KL) on 4
    GPUs, the engine reserving 10 % of the memory: the trainer's states and activations are
    the peak, and the bound is tight enough that a term counted twice would exceed it."""
    base = BASE_8B.replace(algorithm={"rule_reward": True, "kl": False}).replace(**fixed)
    space = RLSpace(placements=("baseline",), tp=(1, 2), rollout_tp=(1, 2), micro_batch=(1, 2),
                    zero=(ZeroStage.NONE, ZeroStage.OS_G_P), fractions=(0.1,))  # fmt: skip
    cands = candidates(base, space, 4)
    assert cands
    bound, _, _ = lower_bounds(base, cands)
    for c, b in zip(cands, bound, strict=True):
        # independent: evaluate_deployment's exact peak per device
        assert b <= evaluate_deployment(candidate_run(base, c)).peak_memory_bytes_per_device, c


def test_min_gpus_and_failures_name_the_binding_term() -> None:
    space = RLSpace(placements=("baseline",), tp=(1,), rollout_tp=(1,), micro_batch=(1,),
                    zero=(ZeroStage.NONE,), ckpt=(Checkpointing.FULL,), fractions=(0.5,))
    r = plan_rl(BASE_8B, "1..8", space=space, min_gpus=True)
    # by hand: ZeRO-0 holds 16 B/param of 8.03 B params = 128 GB > 80 GB on every count
    assert r.rows == []
    assert all("(lower bound)" in f["binding_term"] or f.get("evaluated") for f in r.failures)
    # the leanest member offloads the optimizer: 16 GB weights + 16 GB gradients remain, and
    # the exact evaluation adds what pushes it over; the binding term is a model state or
    # the activations/logits of the training job
    assert r.failures and all(f["binding_term"].split()[0] in
                              ("weights", "gradients", "optimizer", "activations", "logits",
                               "kv_cache", "engine") for f in r.failures)  # fmt: skip
    r3 = plan_rl(BASE_8B, "1..8", space=RLSpace(placements=("baseline",), tp=(1,),
                                                rollout_tp=(1,), micro_batch=(1,),
                                                ckpt=(Checkpointing.FULL,), offload=(False,),
                                                fractions=(0.5,)),
                 min_gpus=True)  # fmt: skip
    # ZeRO-3 on one GPU holds the same 128 GB; two GPUs halve it to 64 GB + activations
    assert r3.rows and r3.rows[0]["gpus"] == min(row["gpus"] for row in r3.rows)
    assert r3.rows[0]["gpus"] >= 2


def test_plan_cli_takes_the_query_flags_of_the_algorithm_commands() -> None:
    """The plan's base Run comes from the flag table, as `rlmcost grpo` builds it."""
    flags = ("-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4", "-T", "512",
             "--framework", "verl", "--logits", "fused")  # fmt: skip
    out = _cli("plan", "grpo", *flags, "--gpus", "2", "--tp", "1", "--rollout-tp", "1",
               "--micro-batch", "1", "--ckpt", "full", "--top", "1")  # fmt: skip
    single = _cli("grpo", *flags, "--gpus", "2")
    # independent: the algorithm command's Run of the same flags; the plan keeps all of it
    # but the searched deployment fields and the GPUs
    base = out["run"]
    for section in ("algorithm", "models", "workload"):
        assert base[section] == single["run"][section]
    row = out["rows"][0]["run"]
    assert row["deployment"]["logits"] == "fused"
    assert row["deployment"]["engine"]["max_num_seqs"] == single["run"]["deployment"][
        "engine"]["max_num_seqs"]  # fmt: skip
    bad = runner.invoke(app, ["plan", "train", "-m", "8b", "--critic", "8b", "--gpus", "8"])
    assert bad.exit_code == 2 and "--critic" in bad.output and "RL options" in bad.output


def test_the_library_plan_builds_its_base_run_from_keywords() -> None:
    import rlmcost

    df = rlmcost.plan("grpo", "llama-3.2-1b", "2..4", reward="rule", batch=16, group=4,
                      response_len=2048, space=SMALL, top=5)  # fmt: skip
    direct = plan_rl(BASE, "2..4", space=SMALL, top=5)
    assert list(df["time_s"]) == [row["time_s"] for row in direct.rows]
    assert list(df["run"]) == [row["run"] for row in direct.rows]
    with pytest.raises(Exception, match="searches tp"):
        rlmcost.plan("grpo", "llama-3.2-1b", 2, tp=2)


def test_the_longest_response_with_per_family_bases_is_the_longest_of_either() -> None:
    """With the role groups under OpenRLHF's preset and the rest under the base's, the longest
    response that fits is the longer of the two searches made apart (an exact identity of the
    search: some deployment of either part fits)."""
    from dataclasses import replace

    from rlmcost.plan.rl import max_response_len

    orl = BASE_8B.replace(deployment={"framework": "openrlhf"})
    space = RLSpace(placements=("baseline", "roles"), tp=(1, 2), rollout_tp=(1,),
                    micro_batch=(1,), ckpt=(Checkpointing.FULL,), fractions=(0.5,))  # fmt: skip
    both, row = max_response_len(BASE_8B, 4, space=space, bases={"roles": orl})
    alone = max_response_len(BASE_8B, 4, space=replace(space, placements=("baseline",)))[0]
    roles = max_response_len(orl, 4, space=replace(space, placements=("roles",)))[0]
    assert 0 < roles != alone  # the two parts stop at different lengths
    assert both == max(alone, roles) and row is not None
