"""Hugging Face-model trainers as their frameworks run them (issue 18): the attention kernel
(FlashAttention-2 / SDPA, not FlashAttention-3 / cuDNN, on Hopper), the eager layers with each
trainer's own casts, and torchtitan's op-level selective activation checkpointing.

Independent references, named at each assert: FlashAttention-3 (arXiv 2407.08608) abstract,
FA2 "achieves only 35% utilization on the H100 GPU", and §4.1, 0.55 for FA3 (rlmcost's Hopper
figure); the frameworks' files that pick the attention implementation (NVIDIA-NeMo/RL
``dtensor_policy_worker.py`` v0.3.0, volcengine/verl ``verl/workers/fsdp_workers.py`` @b178a3cd,
OpenRLHF ``openrlhf/models/actor.py`` @dbdd43b0); transformers ``modeling_llama.py`` for the
eager kernels; torchtitan ``parallelize_llama.py`` @9dec370 ``_custom_policy`` and
``models/llama/model.py`` for the recomputed GEMMs; Llama-3.1-8B's config.json (hidden 4096,
8 KV heads of 128, intermediate 14336, 32 layers)."""

from __future__ import annotations

import pytest

from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.perf.efficiency import Device
from rlmcost.perf.policy_worker import hf_eager_bytes
from rlmcost.perf.selective_ac import SelectiveRecompute
from rlmcost.perf.step_pass import AttentionKernel, StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.placement.pass_options import step_options
from rlmcost.specs import get_hardware, get_model

LLAMA8B = get_model("llama-3.1-8b").arch()
D, KV, FF, LAYERS = 4096, 1024, 14336, 32  # meta-llama/Llama-3.1-8B config.json


def _attention_s(hardware: str, kernel: AttentionKernel) -> float:
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=2)
    step = train_step_time(LLAMA8B, layout, 16, 8192, get_hardware(hardware),
                           options=StepOptions(attention=kernel))  # fmt: skip
    return step.compute_s["attention"]


def test_hf_trainers_run_flashattention2_and_megatron_trainers_fa3_class() -> None:
    # NeMo RL: dtensor_policy_worker.py v0.3.0 attn_implementation "flash_attention_2" (ZeRO-3,
    # the DTensor worker); its Megatron-core backend (ZeRO-1 here) runs TE's cuDNN attention
    def kernel(framework: str, **train: object) -> AttentionKernel:
        opt = step_options(Deployment(framework=framework, train=train))
        return StepOptions().attention if opt is None else opt.attention  # None: the defaults

    assert kernel("nemo-rl", zero="3") is AttentionKernel.FLASH2
    assert kernel("nemo-rl", zero="1") is AttentionKernel.FLASH
    # verl: fsdp_workers.py attn_implementation default "flash_attention_2"; TP/PP/EP > 1 is its
    # Megatron backend (megatron_workers.py)
    assert kernel("verl", zero="3") is AttentionKernel.FLASH2
    assert kernel("verl", tp=2, pp=2) is AttentionKernel.FLASH
    # OpenRLHF (--flash_attn -> flash_attention_2) and TRL (transformers' sdpa) always
    assert kernel("openrlhf") is AttentionKernel.FLASH2
    assert kernel("trl") is AttentionKernel.FLASH2
    # slime trains with Megatron-core only: rlmcost's defaults, but for its Qwen3.5 spec's
    # Gated DeltaNet run whole on each TP rank (rlmcost.perf.linear_mixer)
    assert kernel("slime") is AttentionKernel.FLASH
    # and its Megatron-LM gradient buffer in fp32 (rlmcost.placement.grad_buffer)
    assert step_options(Deployment(framework="slime")) == \
        StepOptions(linear_mixer_replicated=True, grad_reduce_bytes=4)  # fmt: skip


def test_flashattention2_on_hopper_takes_035_and_other_parts_keep_their_figure() -> None:
    # FlashAttention-3 abstract: FA2 at 35 % of the H100's peak; §4.1: FA3 0.55 (rlmcost)
    h100 = Device(get_hardware("h100-sxm"))
    assert h100.defaults.fa2_attention_efficiency == 0.35
    assert h100.defaults.flash_attention_efficiency == 0.55
    gap = h100.defaults.kernel_gap_s
    fa3, fa2 = h100.flash_attention_s(1e12, True), h100.flash_attention_s(1e12, True, fa2=True)
    assert (fa2 - gap) / (fa3 - gap) == pytest.approx(0.55 / 0.35, rel=1e-12)
    # the whole step's attention core moves by the same ratio (32 layers, kernel gaps aside)
    on, off = _attention_s("h100-sxm", AttentionKernel.FLASH2), _attention_s(
        "h100-sxm", AttentionKernel.FLASH)  # fmt: skip
    assert on / off == pytest.approx(0.55 / 0.35, rel=1e-3)
    # A100 runs FlashAttention-2 as its best kernel (FA2 paper Fig. 6): one figure
    assert _attention_s("a100-80gb", AttentionKernel.FLASH2) == _attention_s(
        "a100-80gb", AttentionKernel.FLASH)  # fmt: skip
    # B200: FlashAttention-2 against cuDNN 9.13.1, both from cudnn-frontend@0b1577c's B200 CSV
    # (rlmcost.perf.blackwell_attention): 0.15 against 0.49
    on = _attention_s("b200", AttentionKernel.FLASH2)
    off = _attention_s("b200", AttentionKernel.FLASH)
    assert on / off == pytest.approx(0.49 / 0.15, rel=1e-3)


def test_verl_and_openrlhf_eager_bytes_are_the_llama_kernels_without_fsdp2_casts() -> None:
    # transformers modeling_llama.py, bf16 activations, per token and layer beyond the fused
    # kernels: 2 x LlamaRMSNorm ((4 x 2 + 28) d - 2 x 2 d = 32 d), RoPE on q and k (10 x 2 -
    # 2 x 2 = 16 B per element), act_fn(gate) * up (5 x 2 - 3 x 2 = 4 B per d_ff element);
    # kernels 2 x 5 + 9 + 1 = 20. No fp32 output cast: verl's MixedPrecisionPolicy has no
    # output_dtype, DeepSpeed's bf16 engine holds a bf16 model
    q = D
    assert hf_eager_bytes(LLAMA8B, 1, False, 2, False) == (64 * D + 16 * (q + KV) + 4 * FF, 20)
    for framework in ("verl", "openrlhf"):
        opt = step_options(Deployment(framework=framework))
        assert opt.hf_eager and not opt.hf_output_cast
    # NeMo RL's DTensor worker keeps FSDP2's output_dtype=float32 casts (12 d more, 2 kernels)
    nemo = step_options(Deployment(framework="nemo-rl", train={"zero": "3"}))
    assert nemo.hf_eager and nemo.hf_output_cast
    assert hf_eager_bytes(LLAMA8B, 1, False, 2) == (76 * D + 16 * (q + KV) + 4 * FF, 22)


def test_liger_turns_the_eager_layers_off_where_it_is_what_fuses_the_logits() -> None:
    # OpenRLHF --use_liger_kernel loads AutoLigerKernelForCausalLM (RMSNorm, RoPE, SwiGLU, FLCE):
    # its importer's --logits fused; attention stays FlashAttention-2
    liger = step_options(Deployment(framework="openrlhf", logits="fused"))
    assert not liger.hf_eager and liger.attention is AttentionKernel.FLASH2
    # verl's fused logits are use_fused_kernels (the head's loss only): the layers stay eager
    assert step_options(Deployment(framework="verl", logits="fused")).hf_eager


def test_eager_layers_lengthen_the_memory_bound_kernels_only() -> None:
    layout = Layout(dp=8, zero=ZeroStage.OS_G, micro_batch=2)  # OpenRLHF's ZeRO-2
    hw = get_hardware("a800-80gb")
    base = train_step_time(LLAMA8B, layout, 16, 4096, hw)
    eager = train_step_time(LLAMA8B, layout, 16, 4096, hw, options=StepOptions(hf_eager=True))
    assert eager.compute_s["elementwise"] > base.compute_s["elementwise"]
    assert eager.compute_s["gemm"] == base.compute_s["gemm"]
    assert eager.hardware_flops == base.hardware_flops


def _op_sac(ckpt: Checkpointing, selective: SelectiveRecompute):
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=2, ckpt=ckpt)
    options = StepOptions(attention=AttentionKernel.FLASH2, selective=selective)
    return train_step_time(LLAMA8B, layout, 16, 8192, get_hardware("h100-sxm"), options=options)


def test_torchtitan_op_sac_recomputes_exactly_wk_wo_w3() -> None:
    # parallelize_llama.py @9dec370 _custom_policy: every second aten.mm of a block is
    # recomputed; model.py runs wq, wk, wv, wo, then w1, w3, w2: wk [d, d_kv], wo [d, d],
    # w3 [d, d_ff], 2 d (d_kv + d + d_ff) FLOPs per token and layer
    op = _op_sac(Checkpointing.SELECTIVE, SelectiveRecompute.EVERY_SECOND_MM)
    none = _op_sac(Checkpointing.NONE, SelectiveRecompute.EVERY_SECOND_MM)
    tokens = 16 * 8192
    assert op.hardware_flops - none.hardware_flops == tokens * LAYERS * 2 * D * (KV + D + FF)
    assert op.model_flops == none.model_flops
    # the attention core is saved (SDPA is in _save_list): it is not among the recomputed
    core = _op_sac(Checkpointing.SELECTIVE, SelectiveRecompute.ATTENTION_CORE)
    assert op.compute_s["recompute"] > core.compute_s["recompute"] > 0
    assert op.compute_s["attention"] == core.compute_s["attention"]


def test_op_sac_is_defined_for_dense_blocks_only() -> None:
    moe = get_model("qwen3-30b-a3b").arch()
    layout = Layout(dp=8, ep=8, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.SELECTIVE)
    options = StepOptions(selective=SelectiveRecompute.EVERY_SECOND_MM)
    with pytest.raises(SpecError, match="dense"):
        train_step_time(moe, layout, 16, 4096, get_hardware("h100-sxm"), options=options)


def test_train_cli_takes_the_kernel_and_the_selective_kind() -> None:
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    args = ["train", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8", "--zero", "3",
            "--ckpt", "selective", "--seq", "8192", "--micro-batch", "2", "--batch", "16",
            "--json"]  # fmt: skip
    runner = CliRunner()
    core = runner.invoke(app, args)
    op = runner.invoke(app, [*args, "--selective", "every-second-mm", "--attention", "flash2"])
    assert core.exit_code == 0 and op.exit_code == 0, op.output
    flops = [json.loads(r.stdout)["step_time"]["hardware_flops"] for r in (core, op)]
    assert flops[1] > flops[0]  # wk, wo, w3 instead of the attention core at 8192 tokens
    bad = runner.invoke(app, [*args, "--selective", "bogus"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output and "every-second-mm" in bad.output
    moe = runner.invoke(app, ["train", "-m", "qwen3-30b-a3b", "--ep", "8", "--gpus", "8",
                              "--ckpt", "selective", "--selective", "every-second-mm"])  # fmt: skip
    assert moe.exit_code == 2 and "dense" in moe.output and "Traceback" not in moe.output
