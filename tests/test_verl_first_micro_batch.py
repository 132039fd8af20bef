"""verl's update starts each mini-batch with no gradient (issue 18: its own 70-72 B examples).

Sources: volcengine/verl verl/workers/actor/dp_actor.py ``update_policy`` calls
``actor_optimizer.zero_grad()`` (set_to_none, PyTorch >= 2.0) at the start of every mini-batch
(@c62e7ac7b line 273, the commit of examples/tuning/70b/qwen2-70b_grpo_32_h800_fsdp_vllm.sh;
@b178a3cd5 line 560); FSDP reduce-scatters a unit's gradient into its shard after the unit's
backward. The lengths of verl's GSM8K runs: docs/start/quickstart.rst (verl @b178a3cd5), its
step log: prompt_length/mean 104.9 (max 175), response_length/mean 239 under a 256 cap.
"""

from __future__ import annotations

import pytest

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.breakdown import DataShare, MemoryBreakdown
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.placement.head_peak import grads_after_head

# rlmcost import verl of qwen2-70b_grpo_32_h800_fsdp_vllm.sh (its equivalent query)
_H800 = ["--framework", "verl", "--model", "Qwen/Qwen2-72B-Instruct", "--kl", "--batch", "1024",
         "--group", "5", "--mini-batches", "4", "--response-len", "512", "--gpus", "32",
         "--zero", "3", "--param-dtype", "fp32", "--offload", "params-idle,optimizer-idle",
         "--ckpt", "full", "--logits", "low-memory", "--max-tokens-per-gpu", "24000",
         "--offload-idle", "--rollout-tp", "16", "--gpu-memory-utilization", "0.6", "--sleep",
         "--max-num-seqs", "1024", "--hardware", "h800", "--no-sized-defaults"]  # fmt: skip
_GSM8K = ["--prompt-len", "105", "--length-dist", "lognormal:240,0.5,512"]  # sigma 0.5 assumed


def _train(argv: list[str]) -> tuple[MemoryBreakdown, bool]:
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    (job,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind is Kind.TRAIN]
    return job.memory, est.fits


def test_one_micro_batch_per_mini_batch_holds_no_gradient_at_the_head():
    """GSM8K's lengths: a rank's mini-batch (1,280 / 32 = 40 sequences of ~345 tokens) is one
    micro-batch under 24,000 tokens, so its head's peak holds no fp32 gradient shard
    (72.7 B x 4 B / 32 = 9.09 GB otherwise) and the example fits the H800 as verl ran it."""
    memory, fits = _train([*_H800, *_GSM8K])
    assert memory.gradients == 0 and memory.optimizer > 0
    assert fits


def test_several_micro_batches_keep_the_gradients():
    """Every sequence at its maximum (512 + 512): 40 x 1,024 = 40,960 tokens take
    ceil(40,960 / 24,000) = 2 micro-batches of 20,480; the second starts with the first one's
    gradients, so the fp32 shard stays in the peak (and the example does not fit: the report's
    arithmetic)."""
    memory, fits = _train([*_H800, "--prompt-len", "512"])
    assert memory.gradients == 9_088_275_456  # Qwen2-72B's fp32 shard over 32 ranks
    assert not fits


def test_gradients_stay_when_the_end_of_the_backward_is_larger():
    """The backward's end (the whole gradient shard, one layer's input, its rebuilt layer)
    above the head's peak: the breakdown is left whole (an upper bound)."""
    from rlmcost.frameworks.presets import behaviour
    from rlmcost.specs import get_model
    from rlmcost.specs.workload import Workload

    verl = behaviour("verl")
    arch = get_model("qwen2.5-7b")
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P)
    wl = Workload()
    share = DataShare(sequences=1, micro_batch=1, micro_batches=1, tokens_per_sequence=128)

    def m(grads: int, acts: int, logits: int) -> MemoryBreakdown:
        return MemoryBreakdown(0, grads, 0, acts, 0, logits, 0)

    small = m(10**10, 10**8, 10**8)
    assert grads_after_head(small, verl, arch, layout, share, wl) is small
    large = m(10**8, 10**10, 10**10)
    assert grads_after_head(large, verl, arch, layout, share, wl).gradients == 0
    two = DataShare(sequences=2, micro_batch=1, micro_batches=2, tokens_per_sequence=128)
    assert grads_after_head(large, verl, arch, layout, two, wl) is large
    assert grads_after_head(large, None, arch, layout, share, wl) is large
    zero1 = Layout(dp=8, zero=ZeroStage.OS)
    assert grads_after_head(large, verl, arch, zero1, share, wl) is large


def _micro_batch_peaks(n: int, vocab: int) -> tuple[int, int, int]:
    """Peak live bytes of the backward of two micro-batches of one mini-batch as verl runs
    them (CPU PyTorch): ``zero_grad()`` (set_to_none) first, layers under non-reentrant
    checkpointing, the head's in-place division on the squeezed logits, a log-softmax loss;
    and the parameters' gradient bytes. The second micro-batch accumulates into the first
    one's gradients."""
    torch = pytest.importorskip("torch")
    from live_bytes import live_mode
    from torch.utils.checkpoint import checkpoint

    d = 32
    layers = torch.nn.ModuleList(torch.nn.Linear(d, d, bias=False) for _ in range(4))
    head = torch.nn.Linear(d, vocab, bias=False)
    params = [*layers.parameters(), *head.parameters()]
    opt = torch.optim.SGD(params, lr=0.0)
    labels = torch.randint(0, vocab, (n,))
    peaks = []
    live = live_mode()
    with live:
        opt.zero_grad()
        for _ in range(2):
            h = torch.randn(1, n, d, requires_grad=True)
            for layer in layers:
                h = checkpoint(layer, h, use_reentrant=False)
            logits_rmpad = head(h).squeeze(0)
            logits_rmpad.div_(1.0)
            loss = -torch.log_softmax(logits_rmpad, -1).gather(-1, labels[:, None]).sum()
            del logits_rmpad, h
            live.peak = 0
            loss.backward()
            peaks.append(live.peak)
    return peaks[0], peaks[1], sum(p.numel() * p.element_size() for p in params)


def test_first_micro_batch_backward_peaks_without_gradients():
    """Measured: the second micro-batch's backward peak is the first's plus every parameter's
    gradient (which the first built only as its backward went below the head), so a
    mini-batch of one micro-batch peaks without them (grads_after_head)."""
    first, second, grads = _micro_batch_peaks(256, 2048)
    assert second - first == grads
