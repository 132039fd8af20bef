"""The policy worker's own mechanics (rlmcost.perf.policy_worker): NeMo RL's reference swap
through host memory and FSDP2's per-micro-batch copies and fp32 gradient reduction.

Independent references: the byte counts are read off the frameworks' code (NVIDIA-NeMo/RL
``use_reference_model`` in megatron_policy_worker.py v0.3.0-v0.7.0 and dtensor_policy_worker.py
v0.3.0; nemo_rl/models/dtensor/parallelize.py v0.3.0 ``MixedPrecisionPolicy(param_dtype=
bfloat16, reduce_dtype=float32)``; PyTorch ``_fsdp_collectives.py`` ``foreach_all_gather_copy_out``
and ``foreach_reduce``), and Llama-3.1-8B's parameter count (8,030,261,248, its config.json)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlmcost.deployment.spec import Deployment
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.perf.logprob_head import FUSED
from rlmcost.perf.policy_worker import REFERENCE_SWAP_COPIES, fsdp2_copy_bytes, reference_swap_s
from rlmcost.perf.rl_step import forward_time, train_time
from rlmcost.perf.step_pass import StepOptions
from rlmcost.placement.pass_options import step_options
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload

LLAMA8B_PARAMS = 8_030_261_248  # meta-llama/Llama-3.1-8B config.json, tied embeddings off


def test_reference_swap_is_three_host_copies_of_the_rank_state() -> None:
    # use_reference_model: policy state dict to the host, reference in, policy back
    assert REFERENCE_SWAP_COPIES == 3
    bf16_tp1 = 2 * LLAMA8B_PARAMS  # Megatron-core bf16 model params at TP 1, PP 1
    assert reference_swap_s(bf16_tp1, 64e9) == pytest.approx(3 * bf16_tp1 / 64e9)
    assert reference_swap_s(bf16_tp1, 64e9, copies=0) == 0.0


def test_fsdp2_copy_bytes_count_copy_out_twice_and_the_fp32_copy_in() -> None:
    # forward: split_with_sizes_copy reads and writes the bf16 parameter (2 + 2); backward:
    # the re-gather's copy-out (2 + 2) and _chunk_cat of the bf16 grad into fp32 (2 + 4)
    fwd, bwd = fsdp2_copy_bytes(LLAMA8B_PARAMS, 2, 4)
    assert fwd == 4 * LLAMA8B_PARAMS
    assert bwd == 10 * LLAMA8B_PARAMS
    assert fsdp2_copy_bytes(LLAMA8B_PARAMS, 2, 2) == (4 * LLAMA8B_PARAMS, 8 * LLAMA8B_PARAMS)


def test_nemo_rl_passes_fsdp2_with_fp32_reduction_and_others_do_not() -> None:
    assert step_options(Deployment(framework="nemo-rl")).fsdp2_reduce_bytes == 4
    assert step_options(Deployment(framework="verl")).fsdp2_reduce_bytes == 0
    assert step_options(Deployment(framework="slime")).fsdp2_reduce_bytes == 0
    assert step_options(Deployment(framework="nemo-rl", ideal=True)) is None


def _times(options: StepOptions | None, zero: str):
    arch = get_model("llama-3.1-8b").arch()
    layout = Layout(dp=8, zero=ZeroStage(zero), micro_batch=4)
    hw, wl = get_hardware("h100-sxm"), Workload()
    return (train_time(arch, layout, 64, 1024, hw, wl, options=options),
            forward_time(arch, layout, 64, 1024, hw, wl, options=options))  # fmt: skip


def test_fsdp2_adds_its_copies_to_zero3_passes_only() -> None:
    fsdp2 = StepOptions(fsdp2_reduce_bytes=4)
    base_t, base_f = _times(None, "3")
    t, f = _times(fsdp2, "3")
    # 64 sequences over dp 8 at micro-batch 4: 2 micro-batches, each copying 14 B per parameter
    # of the rank (8 forward-only copy-out: 4 B) on top of the same GEMMs
    extra_t = t.compute_s["elementwise"] - base_t.compute_s["elementwise"]
    assert extra_t > 0 and t.compute_s["gemm"] == base_t.compute_s["gemm"]
    assert f.compute_s > base_f.compute_s
    # at >= 2 TB/s of HBM the 2 x 14 B x 8.03 B parameters take at most ~0.12 s
    assert extra_t < 2 * 14 * LLAMA8B_PARAMS / 2e12
    # ZeRO-1 (Megatron-core's distributed optimizer) is not FSDP2: nothing changes
    assert _times(fsdp2, "1")[0].step_s == _times(None, "1")[0].step_s


def test_nemo_rl_reference_forward_waits_for_the_swap() -> None:
    # NeMo RL v0.3 blog, Llama-3.1-8B Megatron at TP 1 PP 1 on 8 H100s (rl_runs.json): the
    # reference forward = the policy's forward + 3 copies of the rank's bf16 parameters
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import recipes
    from rlmcost.reports.rl_runs_rows import build_run

    rid = "nemo-rl-v0.3-blog-h100-llama3.1-8b-grpo-megatron"
    recipe = next(r for r in recipes() if r.id == rid)
    ev = evaluate(build_run(recipe, run_from_argv)).evaluation
    jobs = {(j.task.role.value, j.task.kind.value): j for g in ev.groups for j in g.jobs}
    ref, old = jobs[("reference", "forward")], jobs[("actor", "forward")]
    host = get_hardware("h100-sxm").host_link_bandwidth_bytes_per_s
    swap = ref.predicted_parts_s["reference_swap_s"]
    assert swap == pytest.approx(3 * 2 * LLAMA8B_PARAMS / host, rel=0.01)
    assert ref.predicted_s == pytest.approx(old.predicted_s + swap)
    assert "reference_swap_s" not in old.predicted_parts_s
    # the swap replaces the generic offload switch between actor and reference (no double count)
    # (the driver's data of the reference call is its own transfer: perf.nemo_rl_dispatch)
    whats = [t.what for g in ev.groups for t in g.transfers if t.kind != "controller"]
    assert not any("reference" in w for w in whats), whats


def test_other_frameworks_keep_the_generic_offload_switch() -> None:
    from rlmcost.evaluation.query import evaluate
    from rlmcost.run.spec import Run

    run = Run.from_data({"algorithm": {"name": "grpo", "kl": True},
                         "models": {"actor": "llama-3.2-1b"},
                         "deployment": {"framework": "verl", "offload_idle": True},
                         "cluster": {"gpus": 8}})  # fmt: skip
    ev = evaluate(run).evaluation
    whats = [t.what for g in ev.groups for t in g.transfers]
    assert any(w.startswith("load reference") for w in whats), whats
    jobs = [j for g in ev.groups for j in g.jobs]
    assert not any("reference_swap_s" in j.predicted_parts_s for j in jobs)


def test_hf_eager_bytes_count_the_unfused_llama_kernels() -> None:
    # transformers modeling_llama.py, bf16 activations, per token and layer, beyond the fused
    # kernels: 2 LlamaRMSNorm (fp32 upcast: (4 x 2 + 28) d - 2 x 2 d = 32 d each), RoPE on q and k
    # (rotate_half's neg + cat, * cos, * sin, +: 10 x 2 - 2 x 2 = 16 B per element), act_fn * up
    # (5 x 2 - 3 x 2 = 4 B per d_ff element), FSDP2's fp32 output cast and input cast back (12 d)
    from rlmcost.perf.policy_worker import hf_eager_bytes

    arch = get_model("llama-3.1-8b").arch()  # d 4096, q 4096, kv 1024, d_ff 14336
    d, q, kv, f = 4096, 4096, 1024, 14336
    assert hf_eager_bytes(arch, 1, False, 2) == (64 * d + 16 * (q + kv) + 4 * f + 12 * d, 22)
    # TP 8 with SP: d-wide tensors and q, kv, d_ff all split 8 ways
    assert hf_eager_bytes(arch, 8, True, 2)[0] == (76 * d + 16 * (q + kv) + 4 * f) // 8
    # GPT-2: LayerNorm (torch's fused kernel), learned positions, 2-projection GELU: the casts only
    assert hf_eager_bytes(get_model("gpt-2").arch(), 1, False, 2) == (12 * 768, 2)


def test_nemo_rl_dtensor_runs_eager_layers_and_megatron_does_not() -> None:
    eager = step_options(Deployment(framework="nemo-rl", train={"zero": "3"}))
    assert eager.hf_eager
    assert not step_options(Deployment(framework="nemo-rl", train={"zero": "1"})).hf_eager
    on, _ = _times(StepOptions(hf_eager=True), "3")
    off, _ = _times(None, "3")
    assert on.compute_s["elementwise"] > off.compute_s["elementwise"]
    assert on.compute_s["gemm"] == off.compute_s["gemm"]
    # ZeRO-1 is Megatron-core's trainer in NeMo RL: no Hugging Face layers, its own attention
    megatron = step_options(Deployment(framework="nemo-rl", train={"zero": "1"}))
    # (and Megatron-core's overlap_p2p_comm False, perf.megatron_pipe)
    assert replace(megatron, logprob_head=FUSED, fsdp2_reduce_bytes=0) == StepOptions(
        pp_overlap_p2p=False)  # fmt: skip


def test_the_terms_are_stated_where_they_apply() -> None:
    from rlmcost.placement.pass_options import worker_notes

    dtensor = Deployment(framework="nemo-rl", train={"zero": "3"})
    notes = worker_notes(dtensor, kl=True)
    assert len(notes) == 3 and "3 host-link copies" in notes[0]
    assert "reduced in 4 B" in notes[1]
    assert "eagerly" in notes[2] and "fp32 output casts" in notes[2]
    assert "dtensor_policy_worker.py" in notes[2] and "FlashAttention-2" in notes[2]
    # Megatron-core (ZeRO-1) without a reference: its gradient buffer's dtype alone (the
    # parameters'; slime's fp32: rlmcost.placement.grad_buffer); the idealized run: nothing
    (grads,) = worker_notes(Deployment(framework="nemo-rl", train={"zero": "1"}), kl=False)
    assert grads.startswith("gradients:") and "parameters' dtype" in grads
    (grads,) = worker_notes(Deployment(framework="slime"), kl=True)
    assert grads.startswith("gradients:") and "fp32 buffer" in grads
    assert worker_notes(Deployment(framework="nemo-rl", ideal=True), kl=True) == ()
    # verl's FSDP workers: its micro-batches' memory (rlmcost.placement.packed_lengths,
    # head_peak), then the Hugging Face note with its own source, no FSDP2 cast
    mem, verl = worker_notes(Deployment(framework="verl", train={"zero": "3"}), kl=True)
    assert "Karmarkar-Karp" in mem and "heaviest rank's share" in mem
    assert "4 logits buffers" in mem
    assert "no gradient shard where a rank's mini-batch is one micro-batch" in mem
    assert "fsdp_workers.py" in verl and "eagerly" in verl and "output casts" not in verl
