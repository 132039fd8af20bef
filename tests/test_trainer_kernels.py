"""AReaL v0.3's trainer (``--trainer-kernels realhf``, issue 18): realhf's own ``ReaLModel``
runs FlashAttention-2, an fp32-upcast RMSNorm and SiLU x up eagerly, and a fused RoPE, where
rlmcost's default prices Megatron-core's fused TE layers; its steps run no faster than the rate
AReaL's paper measured (Figure 6a).

Independent references, named at each assert: inclusionAI/AReaL at tag v0.3.0,
``realhf/impl/model/modules/mlp.py`` (``_LlamaRMSNorm``: ``to(float32)``, ``pow(2).mean``,
``* rsqrt``, ``to(input_dtype)``, ``weight *``; chosen unless ``REAL_LLM_USE_TE=1``,
``realhf/base/constants.py`` ``use_te_impl``; ``LlamaLayerNormMLP.forward``:
``down_proj(act_fn(gate) * upproj)``), ``modules/attn.py`` (``flash_attn_varlen_func`` of
the flash-attn 2 package), ``modules/rotary.py`` (flash-attn's Triton ``apply_rotary``);
DeepSeek-R1-Distill-Qwen-1.5B's config.json (hidden 1536, intermediate 8960, 2 KV heads of 128).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.perf.policy_worker import hf_eager_bytes
from rlmcost.perf.step_pass import AttentionKernel
from rlmcost.placement.pass_options import step_options, worker_notes
from rlmcost.specs import get_model

QWEN15 = get_model("deepseek-r1-distill-qwen-1.5b").arch()
D, FF = 1536, 8960  # DeepSeek-R1-Distill-Qwen-1.5B config.json


def test_realhf_layers_add_the_eager_norms_and_silu_but_no_rope() -> None:
    # realhf _LlamaRMSNorm is the Hugging Face code: (4 x + 28) d bytes in 6 kernels against
    # the fused norm's 2 x d in 1, twice per layer; act_fn(gate) * upproj: 5 x d_ff in 2
    # against 3 x d_ff in 1; RoPE: flash-attn's fused kernel, nothing added
    x = 2
    want = 2 * (4 * x + 28 - 2 * x) * D + (5 - 3) * x * FF
    assert hf_eager_bytes(QWEN15, 1, False, x, False, fused_rope=True) == (want, 11)
    # the Hugging Face model's eager RoPE (rotate_half, * cos, * sin, +) is what it leaves out
    hf_bytes, hf_kernels = hf_eager_bytes(QWEN15, 1, False, x, False)
    assert hf_bytes > want and hf_kernels == 20


def test_realhf_kernels_sets_flashattention2_and_eager_layers_without_a_preset() -> None:
    assert step_options(Deployment()) is None  # rlmcost's default: fused TE layers, FA3 class
    opt = step_options(Deployment(train={"kernels": "realhf"}))
    assert opt is not None
    # realhf modules/attn.py: flash_attn_varlen_func (flash-attn 2), not FA3 / cuDNN
    assert opt.attention is AttentionKernel.FLASH2
    assert opt.hf_eager and opt.fused_rope and not opt.hf_output_cast
    # the paper's ideal iteration has no deployment effects
    assert step_options(Deployment(ideal=True, train={"kernels": "realhf"})) is None
    notes = worker_notes(Deployment(train={"kernels": "realhf"}), kl=False)
    assert any("FlashAttention-2" in n and "realhf" in n for n in notes)


def test_eager_layers_slow_the_trainer_and_the_flag_round_trips() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    base = ["grpo", "-m", "deepseek-r1-distill-qwen-1.5b", "--gpus", "8", "-B", "16", "-K",
            "4", "-S", "512", "-T", "4096", "--zero", "1", "--json"]  # fmt: skip
    runner = CliRunner()
    fused = runner.invoke(app, base)
    eager = runner.invoke(app, [*base, "--trainer-kernels", "realhf"])
    assert fused.exit_code == 0 and eager.exit_code == 0, eager.output

    def update_s(out: str) -> float:
        data = json.loads(out)
        return next(p["time_s"] for p in data["phases"] if p["name"] == "update actor")

    # more memory-bound kernels and a slower attention kernel: the update takes longer
    assert update_s(eager.stdout) > update_s(fused.stdout)
    assert json.loads(eager.stdout)["run"]["deployment"]["train"]["kernels"] == "realhf"
    run = run_from_argv("grpo", [*base[1:-1], "--trainer-kernels", "realhf"])
    assert "--trainer-kernels realhf" in to_command(run)
    assert "--trainer-kernels" not in to_command(run_from_argv("grpo", base[1:-1]))
    bad = runner.invoke(app, [*base, "--trainer-kernels", "eager"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


# arXiv 2505.24298 (assets/paper.pdf at inclusionAI/AReaL 4aef98d8) Figure 6a: AReaL's PPO
# training throughput, TFLOP/s per GPU in realhf's count, dynamic and standard batching, for
# its 1.5B-class (1 node), 7B (2 nodes) and 32B (8 nodes) models; H800 dense 16-bit peak 989.4
FIG6A_TFLOPS = (427.4, 454.7, 387.7, 404.4, 303.1, 283.0)
H800_PEAK = 989.4e12


def test_realhf_rate_is_figure_6a_over_the_h800_peak() -> None:
    from statistics import median

    from rlmcost.perf.realhf_rate import REALHF_PEAK_FRACTION

    assert REALHF_PEAK_FRACTION.value == pytest.approx(median(FIG6A_TFLOPS) * 1e12 / H800_PEAK,
                                                       abs=0.005)  # fmt: skip
    assert REALHF_PEAK_FRACTION.low == pytest.approx(min(FIG6A_TFLOPS) * 1e12 / H800_PEAK,
                                                     abs=0.005)  # fmt: skip
    assert REALHF_PEAK_FRACTION.high == pytest.approx(max(FIG6A_TFLOPS) * 1e12 / H800_PEAK,
                                                      abs=0.005)  # fmt: skip


def test_realhf_flop_count_is_its_monitor_formula() -> None:
    from rlmcost.perf.realhf_rate import realhf_forward_flops

    # realhf/base/monitor.py caculuate_llama_forward_flops at v0.3.0, by hand: L 28, d 1536,
    # d_ff 8960, V 151936 (DeepSeek-R1-Distill-Qwen-1.5B config.json), two sequences
    lens = (1000, 3000)
    s, s2 = sum(lens), sum(x * x for x in lens)
    want = 2 * 28 * (4 * s * D**2 + 2 * s2 * D + 3 * s * D * FF) + 4 * s * 151936 * D
    got = realhf_forward_flops(QWEN15, lens)
    assert got == want and isinstance(got, int)
    with pytest.raises(SpecError):
        realhf_forward_flops(QWEN15, ())


def test_areal_rows_train_no_faster_than_figure_6a() -> None:
    from rlmcost.perf.realhf_rate import realhf_forward_flops
    from rlmcost.placement.lengths import parse_length_dist
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_frameworks import recipe

    row = next(r for r in load_runs()["runs"]
               if r["id"] == "areal-v0.3-blog-r1-distill-qwen-1.5b-async-128gpu")  # fmt: skip
    q = recipe(row).query
    assert q is not None and dict(q.flags)["--trainer-kernels"] == "realhf"
    res = CliRunner().invoke(app, [q.algorithm, *q.argv(), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    jobs = [j for g in out["placement_detail"]["groups"] for j in g["jobs"]
            if "realhf_achieved_rate_s" in j.get("predicted_breakdown_s", {})]  # fmt: skip
    assert len(jobs) == 1
    # the step's 512 x 16 sequences, prompt 1024 + the row's lengths (its --length-dist),
    # 4 forwards each in realhf's count, on the 32 training GPUs at the median of Figure 6a
    dist = dict(q.flags)["--length-dist"]
    lens = [1024 + t for t in parse_length_dist(dist).lengths(512 * 16, 27648)]
    floor_s = 4 * realhf_forward_flops(QWEN15, lens) / (32 * H800_PEAK * 0.40)
    parts = jobs[0]["predicted_breakdown_s"]
    assert parts["realhf_achieved_rate_s"] == pytest.approx(floor_s, rel=1e-9)
    update = next(p for p in out["phases"] if p["name"] == "update actor")
    assert update["time_s"] >= floor_s * (1 - 1e-9)


def test_realhf_rate_floors_dense_models_only() -> None:
    # Figure 6a measured dense models and realhf/base/monitor.py has no MoE terms: a MoE
    # model under --trainer-kernels realhf keeps the kernel model's time, no rate floor
    def floors(model: str, groups: str) -> list[float]:
        argv = ["rlvr", "--no-kl", "-m", model, "--gpus", "16", "-B", "8", "-K", "4", "-S",
                "256", "-T", "1024", "--zero", "1", "--trainer-kernels", "realhf", "--groups",
                groups, "--json"]  # fmt: skip
        out = CliRunner().invoke(app, argv)
        assert out.exit_code == 0, out.output
        groups_out = json.loads(out.stdout)["placement_detail"]["groups"]
        parts = [j.get("predicted_breakdown_s", {}) for g in groups_out for j in g["jobs"]]
        return [p["realhf_achieved_rate_s"] for p in parts if "realhf_achieved_rate_s" in p]

    assert floors("qwen3-30b-a3b", "rollout=8,actor=8[ep=8]") == [0.0]
    dense = floors("deepseek-r1-distill-qwen-1.5b", "rollout=8,actor=8")
    assert len(dense) == 1 and dense[0] > 0
