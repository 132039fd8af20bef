"""Megatron-core's unfused MoE permutation (``moe_permute_fusion`` off, rlmcost.perf.moe_permute):
its kernels' bytes by hand, the atomic rate's source figure, the option's default per framework
and where the validation rows set it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.parallel.breakdown import DataShare
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import PipelineStage
from rlmcost.perf.efficiency import Device
from rlmcost.perf.moe_permute import (
    ATOMIC_SCATTER_ADD_HBM_FRACTION,
    unfused_permute_bytes,
    unfused_permute_s,
)
from rlmcost.perf.step_pass import StepContext, StepOptions, stage_pass
from rlmcost.placement.pass_options import step_options, worker_notes
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload

DATA = Path(__file__).parents[1] / "rlmcost" / "perf" / "data"


def test_unfused_bytes_by_hand() -> None:
    # n = 4 tokens, k = 2, E = 4 experts, d = 8, bf16 (2 B): rows = 8, n E = 16
    # forward: routing map .T.contiguous() 2 x 16 = 32; argsort: index fill 8 x 16 = 128 and
    # one radix pass over (1 B key, 8 B value) pairs read and written 2 x 9 x 16 = 288;
    # % num_tokens 16 x 8 = 128; probs.T.contiguous() (fp32) 2 x 4 x 16 = 128; their gather
    # 16 x 8 = 128; the scatter_add_ output's zeros 4 x 8 x 2 = 64: 896
    # backward: index_add_'s zeros 64; probs gather backward 4 x 16 + 16 x 8 = 192; transposes
    # back 128: 384; atomic adds rows x d = 64 each way
    u = unfused_permute_bytes(4, 2, 4, 8, 2)
    assert (u.fwd_bytes, u.bwd_bytes, u.atomic_elements) == (896, 384, 64)
    assert all(isinstance(v, int) for v in (u.fwd_bytes, u.bwd_bytes, u.atomic_elements))


def test_atomic_rate_is_pr_175760s_h100_index_add() -> None:
    # pytorch/pytorch PR 175760: bf16 index_add_ of [4M, 128] along dim 0 takes 4719 us on
    # H100 before the change; 3 x 2 B per element (source read, destination read and write)
    # over the H100 SXM's 3.35 TB/s: 0.194 (4M = 4e6) .. 0.204 (4M = 2**22)
    assert ATOMIC_SCATTER_ADD_HBM_FRACTION.value == pytest.approx(
        4e6 * 128 * 6 / 4719e-6 / 3.35e12, rel=1e-12)
    assert ATOMIC_SCATTER_ADD_HBM_FRACTION.low == pytest.approx(0.1943, abs=1e-4)
    assert ATOMIC_SCATTER_ADD_HBM_FRACTION.high == pytest.approx(0.2038, abs=1e-4)


def _context(options: StepOptions, tokens: int = 8192) -> StepContext:
    arch = get_model("qwen3-30b-a3b").arch()
    share = DataShare(sequences=1, micro_batch=1, micro_batches=1, tokens_per_sequence=tokens)
    return StepContext.of(arch, Layout(dp=8, ep=8, etp=1), tokens, share,
                          Device(get_hardware("h800")), options, Workload())  # fmt: skip


def test_extra_seconds_are_the_atomic_kernels_less_the_fused_ones() -> None:
    # Qwen3-30B-A3B (d 2048, 128 experts, top-8), 8192 tokens on one H800 (issue 643's
    # micro-batch): 65,536 copies x 2048 = 134,217,728 atomic adds each way at 0.194 x 3.35 TB/s
    # (6 B each): 1.24 ms, less the fused kernel the step pass prices (2 x rows x d x 2 B
    # forward, twice that backward), plus the bookkeeping kernels
    c = _context(StepOptions(moe_permute_fusion=False))
    dev, u = c.device, unfused_permute_bytes(8192, 8, 128, 2048, 2)
    atomic = 6 * 134_217_728 / (3.35e12 * ATOMIC_SCATTER_ADD_HBM_FRACTION.value)
    assert atomic == pytest.approx(1.237e-3, rel=1e-3)
    fwd, bwd = unfused_permute_s(c, True)
    rows_bytes = 65_536 * 2048 * 2
    assert fwd == pytest.approx(dev.elementwise_s(u.fwd_bytes, 8) + atomic
                                - dev.memory_s(2 * rows_bytes), rel=1e-12)  # fmt: skip
    assert bwd == pytest.approx(dev.elementwise_s(u.bwd_bytes, 4) + atomic
                                - dev.memory_s(4 * rows_bytes), rel=1e-12)  # fmt: skip
    # fused, or a dense layer: nothing extra
    assert unfused_permute_s(_context(StepOptions()), True) == (0.0, 0.0)
    assert unfused_permute_s(c, False) == (0.0, 0.0)


def test_a_moe_layer_pass_carries_the_extra_forward_and_backward() -> None:
    # one MoE layer, no host floor: the pass grows by exactly the extra seconds, forward and
    # backward, and the 'moe' module (what --recompute-modules moe reruns) by the forward's
    free = StepOptions(moe_layer_host_s=0.0)
    off = dataclasses.replace(free, moe_permute_fusion=False)
    on_p = stage_pass(_context(free), PipelineStage(0, 1, 0, 1))
    off_p = stage_pass(_context(off), PipelineStage(0, 1, 0, 1))
    fwd, bwd = unfused_permute_s(_context(off), True)
    assert off_p.fwd_s - on_p.fwd_s == pytest.approx(fwd, rel=1e-9)
    assert off_p.bwd_s - on_p.bwd_s == pytest.approx(bwd, rel=1e-9)
    assert off_p.flops == on_p.flops  # memory-bound: no FLOPs


def test_default_per_framework() -> None:
    # rlmcost's default and the paper's ideal run: fused; a Megatron trainer given it off:
    # unfused; a Hugging Face trainer (NeMo RL's DTensor worker) has no Megatron permutation
    assert step_options(Deployment()) is None
    off = step_options(Deployment(train={"moe_permute_fusion": False}))
    assert off is not None and not off.moe_permute_fusion
    assert step_options(Deployment(ideal=True, train={"moe_permute_fusion": False})) is None
    dtensor = step_options(Deployment(framework="nemo-rl",
                                      train={"zero": "3", "moe_permute_fusion": False}))
    assert dtensor is not None and dtensor.moe_permute_fusion
    megatron = step_options(Deployment(framework="nemo-rl",
                                       train={"zero": "1", "moe_permute_fusion": False}))
    assert megatron is not None and not megatron.moe_permute_fusion
    assert any("moe_permute" in n for n in worker_notes(
        Deployment(train={"moe_permute_fusion": False}), kl=False))


def test_nemo_rl_importer_reads_moe_permute_fusion() -> None:
    from nemo_rl_moe import import_qwen3_moe

    # absent: fused (v0.3.0's NeMo Qwen3MoEConfig, v0.7.0's grpo_math_1B.yaml true)
    assert "--no-moe-permute-fusion" not in dict(import_qwen3_moe(4).flags)
    # v0.4.0-v0.6.0's grpo_math_1B.yaml: false
    q = import_qwen3_moe(4, "policy.megatron_cfg.moe_permute_fusion=false")
    assert "--no-moe-permute-fusion" in dict(q.flags)
    assert any("rlmcost.perf.moe_permute" in n for n in q.notes)
    q = import_qwen3_moe(4, "policy.megatron_cfg.moe_permute_fusion=true")
    assert "--no-moe-permute-fusion" not in dict(q.flags)


def test_flag_round_trips_through_the_command() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    argv = ["grpo", "--framework", "none", "--model", "qwen3-30b-a3b", "--gpus", "32",
            "--ep", "8", "--zero", "1"]  # fmt: skip
    run = run_from_argv(argv[0], [*argv[1:], "--no-moe-permute-fusion"])
    assert not run.deployment.train.moe_permute_fusion
    assert "--no-moe-permute-fusion" in to_command(run)
    assert "moe-permute-fusion" not in to_command(run_from_argv(argv[0], argv[1:]))


def test_cli_unfused_is_slower_and_says_so() -> None:
    runner = CliRunner()
    base = ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "32", "--zero", "1", "--ep", "8", "--json"]
    on = runner.invoke(app, base)
    off = runner.invoke(app, [*base, "--no-moe-permute-fusion"])
    assert on.exit_code == 0 and off.exit_code == 0, off.output
    a, b = json.loads(on.stdout), json.loads(off.stdout)
    assert b["run"]["deployment"]["train"]["moe_permute_fusion"] is False
    assert any("moe_permute" in n for n in b["notes"])
    assert not any("moe_permute" in n for n in a["notes"])


def test_rows_that_ran_it_unfused() -> None:
    # Pai-Megatron-Patch examples/qwen3/run_mcore_qwen3.sh passes no --moe-permute-fusion
    # (Megatron-core's default off); the ModelZoo's yaml and Megatron-Bridge's providers set it
    published = json.loads((DATA / "published.json").read_text())
    for r in published["rows"]:
        off = r.get("options", {}).get("moe_permute_fusion", True) is False
        assert off == (r["source"] == "pai_megatron_patch"), r["id"]
    # the v0.4.0 Qwen3-30B-A3B recipe (grpo-qwen3-30ba3b-4n8g.yaml) leaves the base's false
    for r in published["rl_rows"]:
        off = r["deployment"]["train"].get("moe_permute_fusion", True) is False
        assert off == (r["id"] == "nemo-rl-v0.4-qwen3-30b-a3b-grpo"), r["id"]
    # NeMo RL v0.5.0/v0.6.0's Qwen3-30B-A3B recipes leave grpo_math_1B.yaml's false
    rl = json.loads((DATA / "rl_runs.json").read_text())["runs"]
    for r in rl:
        v = r.get("framework_settings", {}).get("policy.megatron_cfg.moe_permute_fusion")
        want = r["model"] == "qwen3-30b-a3b" and r["source"] in ("nemo_rl_v0.5", "nemo_rl_v0.6")
        assert (v is False) == want, r["id"]
        # verl's MoE rows: their scripts pass override_transformer_config.moe_permute_fusion=True
        if r["framework"] == "verl" and r["model"] in ("qwen3-30b-a3b", "deepseek-v3"):
            key = "+actor_rollout_ref.actor.megatron.override_transformer_config."
            assert r["framework_settings"][f"{key}moe_permute_fusion"] is True, r["id"]


def test_slime_reads_megatron_lms_switch() -> None:
    # slime passes Megatron-LM's arguments: --moe-permute-fusion is a store_true (default off);
    # its scripts/models/qwen3-30B-A3B.sh passes it (tests/data/frameworks' copy of the line)
    import shlex

    from rlmcost.frameworks.slime import import_slime

    path = Path(__file__).parent / "data" / "frameworks" / "slime_qwen3-30B-A3B.args"
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    argv = shlex.split(" ".join(lines))
    assert "--moe-permute-fusion" in argv
    assert "--no-moe-permute-fusion" not in dict(import_slime(argv).flags)
    without = [a for a in argv if a != "--moe-permute-fusion"]
    assert "--no-moe-permute-fusion" in dict(import_slime(without).flags)


def test_verl_reads_override_transformer_config() -> None:
    # verl hands megatron.override_transformer_config to the TransformerConfig; its examples
    # set moe_permute_fusion (examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh: True);
    # absent: the model provider's (Megatron-Bridge's Qwen3 MoE provider True), priced fused
    from rlmcost.frameworks.verl import import_verl

    verl = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
    a = "actor_rollout_ref.actor"
    base = [f"{a}.strategy=megatron", f"{a}.megatron.expert_model_parallel_size=4"]
    key = f"+{a}.megatron.override_transformer_config.moe_permute_fusion"
    assert "--no-moe-permute-fusion" not in dict(import_verl(verl, base).flags)
    assert "--no-moe-permute-fusion" in dict(import_verl(verl, [*base, f"{key}=False"]).flags)
    assert "--no-moe-permute-fusion" not in dict(import_verl(verl, [*base, f"{key}=True"]).flags)


def test_train_command_takes_the_switch() -> None:
    # issue 643's layout (16 H800, PP 2, EP 8, 128 x 8192): off adds elementwise time only
    runner = CliRunner()
    base = ["train", "-m", "qwen3-30b-a3b", "--gpus", "16", "--pp", "2", "--ep", "8",
            "--seq", "8192", "--batch", "128", "-H", "h800", "--json"]  # fmt: skip
    on = json.loads(runner.invoke(app, base).stdout)["step_time"]
    off = json.loads(runner.invoke(app, [*base, "--no-moe-permute-fusion"]).stdout)["step_time"]
    assert off["step_time_s"] > on["step_time_s"]
    assert off["compute_s"]["gemm"] == on["compute_s"]["gemm"]
    assert off["compute_s"]["elementwise"] > on["compute_s"]["elementwise"]
    assert off["model_flops"] == on["model_flops"]


def test_a_hugging_face_trainer_says_the_switch_does_nothing() -> None:
    # verl's FSDP worker at ZeRO-3 runs the Hugging Face model (no Megatron-core permute), so
    # step_options keeps the fused pair: the same iteration, and the output said "MoE permutation
    # unfused" there before (a priced mechanism it did not price)
    base = ["grpo", "-m", "qwen3-30b-a3b", "--framework", "verl", "--gpus", "32", "--zero", "3",
            "--json"]  # fmt: skip
    runner = CliRunner()
    on, off = runner.invoke(app, base), runner.invoke(app, [*base, "--no-moe-permute-fusion"])
    assert on.exit_code == 0 and off.exit_code == 0, off.output
    a, b = json.loads(on.stdout), json.loads(off.stdout)
    assert a["iteration"]["time_s"] == b["iteration"]["time_s"]
    assert not any(n.startswith("MoE permutation unfused") for n in b["notes"])
    assert any("runs the Hugging Face model at this layout (no Megatron-core permutation)" in n
               for n in b["notes"])  # fmt: skip
