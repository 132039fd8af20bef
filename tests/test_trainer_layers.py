"""AReaL v0.3's trainer layers (``--trainer-layers eager-fa2``, issue 18): realhf's own
``ReaLModel`` runs FlashAttention-2, an fp32-upcast RMSNorm and SiLU x up eagerly, and a fused
RoPE, where rlmcost's default prices Megatron-core's fused TE layers.

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

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
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


def test_eager_fa2_sets_flashattention2_and_eager_layers_without_a_preset() -> None:
    assert step_options(Deployment()) is None  # rlmcost's default: fused TE layers, FA3 class
    opt = step_options(Deployment(train={"layers": "eager-fa2"}))
    assert opt is not None
    # realhf modules/attn.py: flash_attn_varlen_func (flash-attn 2), not FA3 / cuDNN
    assert opt.attention is AttentionKernel.FLASH2
    assert opt.hf_eager and opt.fused_rope and not opt.hf_output_cast
    # the paper's ideal iteration has no deployment effects
    assert step_options(Deployment(ideal=True, train={"layers": "eager-fa2"})) is None
    notes = worker_notes(Deployment(train={"layers": "eager-fa2"}), kl=False)
    assert any("FlashAttention-2" in n and "realhf" in n for n in notes)


def test_eager_layers_slow_the_trainer_and_the_flag_round_trips() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    base = ["grpo", "-m", "deepseek-r1-distill-qwen-1.5b", "--gpus", "8", "-B", "16", "-K",
            "4", "-S", "512", "-T", "4096", "--zero", "1", "--json"]  # fmt: skip
    runner = CliRunner()
    fused = runner.invoke(app, base)
    eager = runner.invoke(app, [*base, "--trainer-layers", "eager-fa2"])
    assert fused.exit_code == 0 and eager.exit_code == 0, eager.output

    def update_s(out: str) -> float:
        data = json.loads(out)
        return next(p["time_s"] for p in data["phases"] if p["name"] == "update actor")

    # more memory-bound kernels and a slower attention kernel: the update takes longer
    assert update_s(eager.stdout) > update_s(fused.stdout)
    assert json.loads(eager.stdout)["run"]["deployment"]["train"]["layers"] == "eager-fa2"
    run = run_from_argv("grpo", [*base[1:-1], "--trainer-layers", "eager-fa2"])
    assert "--trainer-layers eager-fa2" in to_command(run)
    assert "--trainer-layers" not in to_command(run_from_argv("grpo", base[1:-1]))
    bad = runner.invoke(app, [*base, "--trainer-layers", "eager"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
