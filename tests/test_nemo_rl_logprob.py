"""NeMo RL's log-prob and loss heads: the fp32 log-softmax of ``DistributedLogprob``
(nemo_rl/distributed/model_utils.py, NVIDIA-NeMo/RL v0.5.0 and r0.6.0), counted kernel by
kernel in :mod:`rlmcost.perf.logprob_head`, timed in the log-prob forwards and the update, and
shown in the output."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.choices import Dtype, Head
from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout
from rlmcost.perf.efficiency import Device
from rlmcost.perf.logprob_head import FUSED, NEMO_RL_DISTRIBUTED_LOGPROB, logprob_head
from rlmcost.perf.rl_step import forward_time, train_logprob_head_s, train_time
from rlmcost.perf.step_pass import StepOptions
from rlmcost.placement.pass_options import step_options
from rlmcost.specs import Workload, get_hardware, get_model

H100 = get_hardware("h100-sxm")
QWEN30 = get_model("qwen3-30b-a3b").arch()
NEMO = StepOptions(logprob_head=NEMO_RL_DISTRIBUTED_LOGPROB)


def test_distributed_logprob_bytes_counted_from_the_code() -> None:
    # DistributedLogprob.forward (nemo_rl/distributed/model_utils.py, r0.6.0): fp32 upcast
    # (read 2, write 4), amax (read 4), subtract (4 + 4), exp (4 + 4) and sum (4), subtract the
    # log-sum (4 + 4), softmax_output = exp (4 + 4); backward: neg (4 + 4), mul_ (4 + 4), the
    # cast's gradient back to bf16 (4 + 2)
    fwd = (2 + 4) + 4 + (4 + 4) + (4 + 4) + 4 + (4 + 4) + (4 + 4)
    bwd = (4 + 4) + (4 + 4) + (4 + 2)
    h = logprob_head("nemo-rl-distributed-logprob")
    assert (h.fwd_bytes, h.bwd_bytes, h.fwd_kernels, h.bwd_kernels) == (fwd, bwd, 7, 3)
    assert (fwd, bwd) == (46, 22)
    # rlmcost's default: a fused cross-entropy writing and reading the fp32 logits once
    assert (FUSED.fwd_bytes, FUSED.bwd_bytes) == (8, 8)


def test_unknown_head_is_a_one_line_error() -> None:
    with pytest.raises(SpecError, match="use one of fused, nemo-rl-distributed-logprob"):
        logprob_head("chunked")


def test_nemo_rl_deployments_take_the_distributed_logprob_head() -> None:
    got = step_options(Deployment(framework="nemo-rl"))
    assert got is not None and got.logprob_head is NEMO_RL_DISTRIBUTED_LOGPROB
    for other in ("verl", "openrlhf", "trl", "slime"):  # options of their own, the fused head
        opt = step_options(Deployment(framework=other))
        assert opt is None or opt.logprob_head is FUSED
    assert step_options(Deployment(framework="nemo-rl", ideal=True)) is None


def test_forward_adds_the_extra_bytes_at_hbm_speed() -> None:
    """One log-prob forward of 64 Qwen3-30B-A3B sequences of 4096 tokens on 8 H100s (EP 8,
    DP 8): the NeMo RL head moves 46 - 8 = 38 more bytes per token and vocabulary entry, and
    4 more kernels per micro-batch, than the default; nothing else changes."""
    layout = Layout(dp=8, ep=8, micro_batch=2)
    wl = Workload()
    base = forward_time(QWEN30, layout, 64, 4096, H100, wl, Head.LM)
    nemo = forward_time(QWEN30, layout, 64, 4096, H100, wl, Head.LM, NEMO)
    dev = Device(H100, Dtype.BF16)
    tokens = 2 * 4096  # per micro-batch on a rank
    vocab = int(QWEN30.vocab)
    per_mb = dev.memory_s(tokens * vocab * 46) - dev.memory_s(tokens * vocab * 8)
    per_mb += 4 * dev.defaults.kernel_gap_s
    assert nemo.micro_batches == base.micro_batches == 4
    assert nemo.compute_s - base.compute_s == pytest.approx(4 * per_mb, rel=1e-9)
    assert nemo.exposed_comm_s == pytest.approx(base.exposed_comm_s, rel=1e-12)
    assert nemo.to_json()["logprob_head_s"] == pytest.approx(
        4 * (dev.memory_s(tokens * vocab * 46) + 7 * dev.defaults.kernel_gap_s), rel=1e-9
    )


def test_value_heads_have_no_log_softmax() -> None:
    layout = Layout(dp=8, ep=8, micro_batch=2)
    critic = forward_time(QWEN30, layout, 64, 4096, H100, Workload(), Head.VALUE, NEMO)
    assert critic.logprob_head_s == 0.0
    # the value head replaces the LM head whatever log-softmax the LM head would have run
    default = forward_time(QWEN30, layout, 64, 4096, H100, Workload(), Head.VALUE)
    assert critic.time_s == pytest.approx(default.time_s, rel=1e-12)


def test_training_step_includes_the_backward_bytes() -> None:
    layout = Layout(dp=8, ep=8, micro_batch=1)
    base = train_time(QWEN30, layout, 64, 4096, H100, Workload(), Head.LM)
    nemo = train_time(QWEN30, layout, 64, 4096, H100, Workload(), Head.LM, NEMO)
    head = train_logprob_head_s(QWEN30, layout, 64, 4096, H100, Workload(), Head.LM, NEMO)
    dev = Device(H100, Dtype.BF16)
    per_mb = dev.memory_s(4096 * int(QWEN30.vocab) * (46 + 22))
    per_mb += (7 + 3) * dev.defaults.kernel_gap_s
    assert head == pytest.approx(base.micro_batches * per_mb, rel=1e-9)
    assert nemo.step_s > base.step_s


NEMO_ROW = [
    "rlvr", "--framework", "nemo-rl", "--model", "qwen3-30b-a3b", "--kl", "--mini-batches", "4",
    "--param-dtype", "bf16", "--pp", "2", "--ep", "8", "--zero", "1", "--ckpt", "none",
    "--max-tokens-per-gpu", "4096", "--rollout-tp", "2", "--gpu-memory-utilization", "0.8",
    "--offload", "", "--no-sleep", "--groups", "rollout=16[tp=2],actor+reference=16",
    "--partial-rollout", "--forward-micro-batch", "4", "--forward-max-tokens-per-gpu", "16384",
    "--placement", "async", "--staleness", "1", "--batch", "64", "--group", "32",
    "--prompt-len", "112", "--response-len", "3984", "--hardware", "h100-sxm", "--gpus", "32",
    "--length-dist", "lognormal:3201,0.67,3984", "--json",
]  # fmt: skip
"""The NeMo RL v0.6 H100 Qwen3-30B-A3B 1-step off-policy row's command (rlmcost validate
--rl, docs/about/performance-summary.md): its groups put the jobs in the JSON output."""


def _jobs(args: list[str]) -> dict[str, dict]:
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    detail = json.loads(out.output)["placement_detail"]
    return {j["phase"]: j for g in detail["groups"] for j in g["jobs"]}


def test_the_term_is_in_the_output_of_a_nemo_rl_row() -> None:
    """Every log-prob forward and the update show their log-softmax seconds, a part of their
    time; verl's fused cross-entropy default moves 46 / 8 times fewer bytes."""
    jobs = _jobs(NEMO_ROW)
    for phase in ("old log-prob", "reference", "update actor"):
        head = jobs[phase]["predicted_breakdown_s"]["logprob_head_s"]
        assert 0.0 < head < jobs[phase]["time_s"]
    verl = _jobs([a if a != "nemo-rl" else "verl" for a in NEMO_ROW])
    nemo_s = jobs["old log-prob"]["predicted_breakdown_s"]["logprob_head_s"]
    verl_s = verl["old log-prob"]["predicted_breakdown_s"]["logprob_head_s"]
    assert nemo_s > 4 * verl_s


GB200_30B_SYNC = [
    "rlvr", "--framework", "nemo-rl", "--model", "qwen3-30b-a3b", "--kl", "--mini-batches", "4",
    "--param-dtype", "bf16", "--no-expandable-segments", "--ep", "16", "--zero", "1",
    "--ckpt", "none", "--max-tokens-per-gpu", "4096", "--logits", "materialized",
    "--rollout-tp", "1", "--gpu-memory-utilization", "0.6", "--sleep",
    "--offload", "optimizer-idle,params-idle,grads-idle", "--forward-micro-batch", "2",
    "--forward-max-tokens-per-gpu", "8192", "--batch", "64", "--group", "32",
    "--prompt-len", "112", "--response-len", "3984", "--hardware", "gb200", "--gpus", "16",
    "--length-dist", "lognormal:3199,0.67,3984", "--json",
]  # fmt: skip
"""The NeMo RL v0.6 GB200 Qwen3-30B-A3B on-policy row's command (``rlmcost validate --rl``:
recipe grpo-qwen3-30ba3b-4n4g.yaml at r0.6.0, 221 s published)."""


@pytest.mark.xfail(strict=True, reason="known gap: rlmcost's Megatron MoE log-prob forwards "
                   "run 3-8x faster than NeMo RL's (see the test's docstring)")  # fmt: skip
def test_log_prob_share_of_a_gb200_moe_step_within_the_published_band() -> None:
    """NVIDIA-NeMo/RL PR #3135 (2026-07-09; GB200 and H100 recipes of Llama-3.1-8B,
    Qwen3-30B-A3B and Qwen3-32B, sync and 1-off): skipping the policy's log-prob forward
    (``force_on_policy_ratio``) cuts the log-prob time by 41.6-50.1 % and raises end-to-end
    throughput by 7.3-20.9 % in all six GB200 cases. One forward is then x / (1 + x) = 6.8-17.3
    % of the step and the log-prob phase (policy and reference) 6.8 / 0.501 = 13.6 % to
    17.3 / 0.416 = 41.6 % of it. rlmcost gives this row's two forwards about 9.5 % of its
    predicted step (10.5 s of 110 s; 221 s published): the kernels it models (GEMMs,
    FlashAttention, EP all-to-all, the log-softmax) take about 11.5 us per token and
    forward, where the band asks for 35-90 us. Strict: passing means the gap is closed and
    the marker must go."""
    out = CliRunner().invoke(app, GB200_30B_SYNC)
    assert out.exit_code == 0, out.output
    phases = {p["name"]: p["time_s"] for p in json.loads(out.output)["phases"]}
    step = sum(phases.values())
    share = (phases["old log-prob"] + phases["reference"]) / step
    assert 0.136 <= share <= 0.416
