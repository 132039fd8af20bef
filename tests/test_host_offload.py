"""NeMo RL's optimizer offload through pageable host memory and its freed gradient buffers
(rlmcost.perf.host_offload; issue 18).

Sources: nemo_rl/models/policy/workers/megatron_policy_worker.py ``move_optimizer`` (v0.5.0
line 2361, v0.7.0 line 1643: ``state[k] = v.to("cpu")``); Megatron-core
param_and_grad_buffer.py ``offload_to_cpu`` (``grad_data.storage().resize_(0)``); NVIDIA-NeMo/RL
PR 1404 (13 s -> ~1 s and 10 s -> 1 s for Qwen3-30B-A3B and Qwen3-235B-A22B).
"""

from __future__ import annotations

import pytest

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.host_offload import (
    PAGEABLE_OFFLOAD_BYTES_PER_S,
    applies_to,
    pageable_offload_s,
)
from rlmcost.specs import get_hardware

# the v0.5 perf recipes' layouts (grpo-qwen3-30ba3b-4n8g(-async-1off).yaml,
# grpo-qwen3-235b-32n8g-async-1off.yaml at r0.5.0), as the RL rows' commands give them
_COMMON = ["--framework", "nemo-rl", "--kl", "--param-dtype", "bf16", "--router-dtype", "fp64",
           "--no-expandable-segments", "--zero", "1", "--packing", "--batch", "64", "--group",
           "32", "--prompt-len", "108", "--response-len", "3988", "--hardware", "h100-sxm",
           "--length-dist", "lognormal:3196,0.67,3988"]  # fmt: skip
_30B_COLOCATED = ["--model", "qwen3-30b-a3b", "--mini-batches", "4", "--ep", "8", "--ckpt",
                  "none", "--max-tokens-per-gpu", "4096", "--rollout-tp", "2", "--sleep",
                  "--offload", "optimizer-idle,params-idle,grads-idle", "--gpus", "32"]  # fmt: skip
_30B_APART = ["--model", "qwen3-30b-a3b", "--mini-batches", "4", "--pp", "2", "--ep", "8",
              "--ckpt", "none", "--max-tokens-per-gpu", "4096", "--rollout-tp", "2",
              "--offload", "", "--no-sleep", "--groups", "rollout=16[tp=2],actor+reference=16",
              "--partial-rollout", "--placement", "async", "--staleness", "1", "--gpus", "32"]
_235B_APART = ["--model", "qwen3-235b-a22b", "--tp", "4", "--pp", "8", "--ep", "16", "--etp",
               "1", "--sp", "--ckpt", "full", "--max-tokens-per-gpu", "8192", "--rollout-tp",
               "8", "--offload", "", "--no-sleep", "--groups",
               "rollout=128[tp=8],actor+reference=128", "--partial-rollout", "--placement",
               "async", "--staleness", "1", "--gpus", "256"]  # fmt: skip


def _train_job(argv: list[str]):
    est = evaluate_deployment(run_from_argv("rlvr", [*_COMMON, *argv]))
    (job,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind is Kind.TRAIN]
    return job


def _optimizer_bytes(argv: list[str]) -> int:
    return int(_train_job(argv).own.optimizer)


def test_the_rate_is_pr_1404s_saving_over_its_rows_optimizer_bytes():
    """PR 1404 removed one pageable round trip of the optimizer states per step: 13 - 1 = 12 s
    (Qwen3-30B-A3B) and 10 - 1 = 9 s (Qwen3-235B-A22B); over the states of the 1-step
    off-policy recipes' training ranks (rlmcost's memory model) that is the constant's low,
    high and pooled value."""
    b30, b235 = _optimizer_bytes(_30B_APART), _optimizer_bytes(_235B_APART)
    assert 2 * b30 / 12 == pytest.approx(PAGEABLE_OFFLOAD_BYTES_PER_S.low, rel=0.01)
    assert 2 * b235 / 9 == pytest.approx(PAGEABLE_OFFLOAD_BYTES_PER_S.high, rel=0.01)
    pooled = 2 * (b30 + b235) / 21
    assert pooled == pytest.approx(PAGEABLE_OFFLOAD_BYTES_PER_S.value, rel=0.01)


def test_a_colocated_nemo_rl_update_waits_for_the_pageable_round_trip():
    """The colocated 30B-A3B row: its update carries one round trip of its optimizer states
    at the pageable rate, beyond the link time the offload already counts; the link time of
    the gradients is gone (the buffers are freed, not copied)."""
    job = _train_job(_30B_COLOCATED)
    opt, grads = int(job.own.optimizer), int(job.own.gradients)
    link = get_hardware("h100-sxm").host_link_bandwidth_bytes_per_s
    extra = pageable_offload_s(2 * opt) - 2 * opt / link
    assert job.predicted_parts_s["pageable_offload_s"] == pytest.approx(extra)
    assert extra > 4.0  # 2 x 11.4 GB at 4.18 GB/s, less 0.36 s of link time
    # offload_s: the states' link time, optimizer and parameters, no gradients
    weights = int(job.own.weights)
    assert job.predicted_parts_s["offload_s"] == pytest.approx(2 * (opt + weights) / link)
    assert grads > 0


def test_generation_on_gpus_of_its_own_moves_no_optimizer():
    """NeMo RL moves the optimizer only when generation is colocated (offload_optimizer_for_
    logprob false by default since PR 1404): the 1-step off-policy row has no such term."""
    assert _train_job(_30B_APART).predicted_parts_s["pageable_offload_s"] == 0.0


def test_only_nemo_rl_copies_its_optimizer_pageable():
    """verl moves its optimizer states with ``to("cpu", non_blocking=True)``, which PyTorch
    allocates pinned (``_to_copy``'s ``pin_out``; verl/utils/megatron_utils.py
    offload_megatron_optimizer, fsdp_utils.py offload_fsdp_optimizer @85d5b2ee2): not this
    behaviour. Its Megatron gradient buffers are freed like NeMo RL's
    (offload_megatron_model_to_cpu: ``grad_data.storage().resize_(0)``)."""
    nemo, verl = behaviour("nemo-rl"), behaviour("verl")
    assert nemo is not None and nemo.optimizer_offload_pageable and nemo.grads_offload_frees
    assert verl is not None and not verl.optimizer_offload_pageable and verl.grads_offload_frees


def test_slimes_offload_train_releases_the_gradient_buffers(monkeypatch) -> None:
    """slime's --offload-train sets disable_grad_buffers_cpu_backup (slime/utils/arguments.py
    slime_validate_args since 1c8107312; miles since 4a7025605): the grad buffers live in a
    torch_memory_saver region without CPU backup, so between phases they are released, not
    copied: against the same trainer copying them, its offload is shorter by the gradients'
    round trip over the host link (2 x bytes / 64 GB/s, the H100's PCIe Gen5 x16)."""
    from dataclasses import replace

    import rlmcost.placement.group_offload as go
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.memo import plain

    slime = behaviour("slime")
    assert slime is not None and slime.grads_offload_frees
    argv = ["--framework", "slime", "--model", "qwen2.5-7b", "--no-kl", "--batch", "32",
            "--group", "4", "--prompt-len", "200", "--response-len", "1024", "--hardware",
            "h100-sxm", "--gpus", "8", "--tp", "2", "--offload", "params-idle,grads-idle",
            "--offload-idle"]  # fmt: skip

    def train_job() -> object:
        with plain():  # nothing kept between the two behaviours
            est = evaluate_deployment(run_from_argv("rlvr", argv))
        (job,) = [j for g in est.groups for j in g.jobs
                  if j.task.invocation.kind.name == "TRAIN"]  # fmt: skip
        return job

    freed = train_job()
    real = go.behaviour
    monkeypatch.setattr(go, "behaviour", lambda name: replace(real(name),
                                                               grads_offload_frees=False))
    copied = train_job()
    monkeypatch.undo()
    grads = int(freed.own.gradients)  # type: ignore[attr-defined]
    assert grads > 0
    gap = (copied.predicted_parts_s["offload_s"]  # type: ignore[attr-defined]
           - freed.predicted_parts_s["offload_s"])  # type: ignore[attr-defined]
    assert gap == pytest.approx(2 * grads / 64e9, rel=1e-9)


def test_the_output_states_that_slimes_gradient_offload_frees():
    """The freed gradient buffers are a discrete choice the output states (a worker note),
    once: slime's with grads-idle, not without it; NeMo RL's inside its optimizer note."""
    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.pass_options import worker_notes

    def freed(framework: str, offload: str) -> list[str]:
        d = Deployment(framework=framework, train={"tp": 2, "zero": "1", "offload": offload})
        return [n for n in worker_notes(d, kl=False) if "freed" in n or "released" in n]

    assert len(freed("slime", "params-idle,grads-idle,optimizer-idle")) == 1
    assert freed("slime", "params-idle,optimizer-idle") == []
    assert len(freed("nemo-rl", "params-idle,grads-idle,optimizer-idle")) == 1


def test_a_coherent_c2c_host_keeps_the_link_rate():
    """The rate was measured on PCIe (DGX-H100) hosts; GB200's NVLink-C2C host is left at its
    link's rate (a stated choice), H100/H200/B200 PCIe Gen5 hosts take it."""
    assert not applies_to(get_hardware("gb200").host_link_bandwidth_bytes_per_s)
    for name in ("h100-sxm", "h200", "a100-80gb"):
        assert applies_to(get_hardware(name).host_link_bandwidth_bytes_per_s)
