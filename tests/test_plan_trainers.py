"""The planner under a large-MoE size tier (rlmcost.plan.trainers): the trainers each framework
runs for the actor, the DTensor base NeMo RL's recipes give, and a plan of GRPO Qwen3-235B-A22B
under NeMo RL listing both its Megatron-core and its DTensor rows, each reproduced by its
command line evaluated alone."""

from __future__ import annotations

import json
import shlex
from functools import cache

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.layout import ZeroStage
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.plan.trainers import (
    DTENSOR_TRAINER,
    MEGATRON_TRAINER,
    dtensor_base,
    moe_tier,
    trainer_parts,
)
from rlmcost.reports.estimate import run_of

runner = CliRunner()
MOE = "qwen3-235b-a22b"  # 128 routed experts, 94 layers (Qwen/Qwen3-235B-A22B config.json)


@cache
def _base(framework: str, model: str = MOE) -> object:
    return run_of("grpo", model, hardware="h100-sxm", framework=framework)


def test_outside_a_tier_the_part_is_the_query_itself() -> None:
    space = RLSpace()
    for base in (_base("nemo-rl", "llama-3.1-70b"), _base("nemo-rl", "qwen3-30b-a3b")):
        assert moe_tier(base) is None
        assert trainer_parts(base, space, 64) == [(base, space)]
    # --no-sized-defaults keeps the preset's own trainer (ZeRO-3): no tier's Megatron part
    own = run_of("grpo", MOE, framework="nemo-rl", deployment={"train": {"zero": "3"}})
    assert moe_tier(own) is None


def test_nemo_rl_tier_searches_megatron_core_and_its_dtensor_policy() -> None:
    base = _base("nemo-rl")
    (mb, mcore), (dt, dtensor) = trainer_parts(base, RLSpace(), 128)
    assert mb is base and mcore.trainer == MEGATRON_TRAINER
    # NeMo RL grpo-qwen3-235b-16n8g.yaml @7ea279abf: PP 8, EP 16, the distributed optimizer
    assert mcore.zero == (ZeroStage.OS,) and mcore.pp == (1, 2, 4, 8) and mcore.ep == (8, 16)
    assert 16 in mcore.rollout_tp  # the recipe's vLLM TP 16, across two nodes
    # nemo_rl/models/automodel/setup.py @7ea279abf: TP x CP x EP, pp_size=1; EP from a node
    # (the Automodel recipes: EP 8, 32, 64) up to the GPUs, dividing the 128 experts
    assert dtensor.trainer == DTENSOR_TRAINER and dtensor.zero == (ZeroStage.OS_G_P,)
    assert dtensor.pp == (1,) and dtensor.ep == (8, 16, 32, 64, 128)
    # --zero picks the parts: 3 the DTensor policy alone, 1 Megatron-core alone
    (only,) = trainer_parts(base, RLSpace(zero=(ZeroStage.OS_G_P,)), 128)
    assert only[1].trainer == DTENSOR_TRAINER
    (only,) = trainer_parts(base, RLSpace(zero=(ZeroStage.OS,)), 128)
    assert only[1].trainer == MEGATRON_TRAINER


def test_frameworks_without_an_fsdp_moe_trainer_keep_their_tiers_megatron_part() -> None:
    # verl's tier: run_qwen3-235b_megatron_96gb.sh (TP 4, PP 8, EP 4); slime's: PP 4, EP 16
    for fw, pp, ep in (("verl", (1, 2, 4, 8), (4, 8)), ("slime", (1, 2, 4), (8, 16))):
        (b, sp), = trainer_parts(_base(fw), RLSpace(), 128)
        assert sp.trainer == MEGATRON_TRAINER and sp.zero == (ZeroStage.OS,)
        assert (sp.pp, sp.ep) == (pp, ep)


def test_the_dtensor_base_is_nemo_rls_dtensor_recipe_with_the_query_held() -> None:
    base = _base("nemo-rl")
    dt = dtensor_base(base)
    t = dt.deployment.train
    # grpo-qwen2.5-32b-32n8g-fsdp2tp8-actckpt.v3.yaml over grpo_math_1B.yaml @7ea279abf: FSDP2,
    # the model loaded in fp32, activation checkpointing, micro-batches of 1, colocated offload
    assert (t.zero, t.param_dtype, str(t.ckpt), t.micro_batch) == \
        (ZeroStage.OS_G_P, "fp32", "full", 1)  # fmt: skip
    assert list(t.offload) == ["optimizer-idle", "params-idle"]
    assert (t.tp, t.pp, t.cp, t.ep, t.etp, t.sp, t.pp_split) == (1, 1, 1, 1, 1, False, None)
    assert not t.fused_loss  # the tier's Megatron fused loss is not the DTensor policy's
    assert dt.deployment.engine == base.deployment.engine  # the engine and the algorithm held
    assert dt.to_json()["algorithm"] == base.to_json()["algorithm"]
    # a trainer field the query set itself stays
    given = run_of("grpo", MOE, framework="nemo-rl", deployment={"train": {"router_dtype": "fp32"}})
    assert str(dtensor_base(given).deployment.train.router_dtype) == "fp32"


def test_a_megatron_candidate_off_the_tiers_pp_takes_the_even_split() -> None:
    base = _base("nemo-rl")
    (mb, mcore), _ = trainer_parts(base, RLSpace(placements=("baseline",)), 128)
    cands = candidates(mb, mcore, 128)
    at = {c.pp: c for c in cands}
    # the recipe's 11 layers first and last hold at its PP 8 alone
    assert candidate_run(mb, at[8]).deployment.train.pp_split.first_layers == 11
    assert candidate_run(mb, at[4]).deployment.train.pp_split is None


def _cli(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_a_235b_plan_under_nemo_rl_lists_both_trainers_and_their_commands_reproduce() -> None:
    out = _cli("plan", "grpo", "-m", MOE, "--framework", "nemo-rl", "--gpus", "128",
               "--placements", "baseline", "--micro-batch", "1", "--ckpt", "full", "--top", "3")
    assert any("trainers searched: nemo-rl's, Megatron-core" in n and "DTensor policy" in n
               for n in out["notes"])  # fmt: skip
    rows = [*out["rows"], *out["best_per_topology"]]
    kinds = {row["zero"]: row for row in rows}
    assert set(kinds) == {"1", "3"}  # both fit: each topology's best of each trainer
    assert len(out["best_per_topology"]) == 2
    for row in kinds.values():
        single = _cli(*shlex.split(row["command"])[1:])
        # independent: the row's command line evaluated alone
        assert single["fits"] is True
        assert single["iteration"]["time_s"] == row["time_s"]
        assert max(single["device_memory_bytes"].values()) == row["memory_bytes_per_device"]
    dt, mcore = kinds["3"], kinds["1"]
    assert "--zero 3" in dt["command"] and "--pp 1" in dt["command"] and dt["ep"] >= 8
    assert "--zero 1" in mcore["command"] and mcore["ep"] in (8, 16)
