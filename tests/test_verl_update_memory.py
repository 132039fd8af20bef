"""verl's update memory as its code holds it (issue 18: the colocated Qwen2.5-Math-7B DAPO rows).

Sources (volcengine/verl b25bb7d4f): verl/workers/actor/dp_actor.py ``update_policy`` and
verl/workers/critic/dp_critic.py ``update_critic`` end with ``optimizer.zero_grad()``, which
sets the gradients to None by default (torch/optim/optimizer.py, PyTorch >= 2.0), so FSDP2's
gradient shards are freed between updates; Megatron-core's gradient buffer is persistent
(``zero_grad_buffer`` zeroes it) and stays.
"""

from __future__ import annotations

import pytest
from verl_rows import QWEN_DAPO

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.layout import Layout
from rlmcost.perf.verl_balancing import micro_batch_split

_COMMON = ["--no-kl", "--batch", "64", "--group", "8", "--prompt-len", "200",
           "--response-len", "2048", "--hardware", "h100-sxm", "--gpus", "16",
           "--rollout-tp", "2", "--sleep"]  # fmt: skip
_FSDP = ["--model", "qwen2.5-7b", "--zero", "3"]
_MEGATRON = ["--model", "qwen3-30b-a3b", "--ep", "8", "--zero", "1", "--param-dtype", "bf16"]


def _grads_by_kind(framework: str, argv: list[str]) -> dict[Kind, int]:
    est = evaluate_deployment(run_from_argv("rlvr", ["--framework", framework, *_COMMON, *argv]))
    return {j.task.invocation.kind: int(j.memory.gradients) for g in est.groups for j in g.jobs}


def test_verls_behaviour_frees_the_gradients_after_the_update():
    verl = behaviour("verl")
    assert verl is not None and verl.grads_freed_after_update
    none = behaviour("openrlhf")
    assert none is None or not none.grads_freed_after_update


def test_fsdp_actor_holds_no_gradients_outside_its_update():
    """verl FSDP: the update holds the fp32 gradient shard; generation and the old-log-prob
    forward hold none (zero_grad(set_to_none) at the end of update_policy)."""
    grads = _grads_by_kind("verl", _FSDP)
    assert grads[Kind.TRAIN] > 0
    assert grads[Kind.GENERATE] == 0 and grads[Kind.FORWARD] == 0


def test_megatron_backend_keeps_its_gradient_buffer():
    """verl's Megatron backend (a layout with ep > 1): the persistent gradient buffer stays
    through generation and the forward, as it does with no framework at all."""
    grads = _grads_by_kind("verl", _MEGATRON)
    assert grads[Kind.TRAIN] > 0
    assert grads[Kind.GENERATE] == grads[Kind.TRAIN] == grads[Kind.FORWARD]
    bare = _grads_by_kind("none", _FSDP)
    assert bare[Kind.GENERATE] == bare[Kind.TRAIN] > 0


def _head_peaks(n: int, vocab: int) -> tuple[int, int]:
    """Peak live tensor bytes of verl's log-prob head, forward and backward, on CPU PyTorch:
    ``output.logits.squeeze(0).div_(temperature)`` then flash-attn's cross_entropy with
    ``inplace_backward=True`` (its autograd.Function: saves the logits, the backward writes
    the gradient into them; the triton kernels keep fp32 in registers, here row by row)."""
    torch = pytest.importorskip("torch")
    from live_bytes import live_mode

    class CrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, labels):  # noqa: ANN001, ANN205
            lse = torch.stack([torch.logsumexp(r.float(), -1) for r in logits])
            ctx.save_for_backward(logits, lse, labels)
            return lse - logits.gather(-1, labels[:, None]).squeeze(-1).float()

        @staticmethod
        def backward(ctx, grad):  # noqa: ANN001, ANN205
            logits, lse, labels = ctx.saved_tensors
            for i in range(logits.shape[0]):  # inplace_backward: dlogits = logits
                p = torch.exp(logits[i].float() - lse[i])
                p[labels[i]] -= 1
                logits[i].copy_(p * grad[i])
            return logits, None

    head = torch.nn.Linear(8, vocab, bias=False).to(torch.bfloat16)
    hidden = torch.randn(1, n, 8, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, vocab, (n,))
    live = live_mode()
    with live:
        logits_rmpad = head(hidden).squeeze(0)
        logits_rmpad.div_(1.0)
        loss = -CrossEntropy.apply(logits_rmpad.reshape(-1, vocab), labels).sum()
        del logits_rmpad
        forward, live.peak = live.peak, 0
        loss.backward()
    return forward, live.peak


def test_verls_head_backward_holds_four_logits_buffers():
    """PyTorch's CopySlices (the in-place division on the squeezed view) holds the incoming
    gradient, its copy in the base's geometry, the slice's clone and DivBackward0's quotient:
    4 buffers of n x V bf16 in the backward, 1 in the forward (the rest: the head's weight,
    the hidden states and the fp32 log-sum-exp, under 0.2 of a buffer here)."""
    n, vocab = 256, 4096
    unit = n * vocab * 2
    forward, backward = _head_peaks(n, vocab)
    assert unit <= forward < 1.2 * unit
    assert 4 * unit <= backward < 4.2 * unit
    verl = behaviour("verl")
    assert verl is not None and verl.low_memory_train_copies == 4


def test_head_peak_and_rebuilt_layer_are_apart_under_verl():
    """verl's update (FSDP, full checkpointing, low-memory log-probs): activations + logits =
    the layers' inputs + max(4 logits buffers, one rebuilt layer); without a framework the sum
    of the 2-buffer peak and the rebuilt layer."""
    argv = ["--model", "qwen2.5-7b", "--zero", "3", "--ckpt", "full", "--logits", "low-memory"]
    jobs = {}
    for fw in ("verl", "none"):
        est = evaluate_deployment(run_from_argv("rlvr", ["--framework", fw, *_COMMON, *argv]))
        (jobs[fw],) = [j for g in est.groups for j in g.jobs
                       if j.task.invocation.kind is Kind.TRAIN]  # fmt: skip
    verl, bare = jobs["verl"].memory, jobs["none"].memory
    assert verl.logits == 2 * bare.logits > 0
    rebuilt = bare.activations - verl.activations
    assert 0 < rebuilt < verl.logits  # the rebuilt layer, wholly under the logits peak
    assert verl.activations + verl.logits == bare.activations - rebuilt + 2 * bare.logits


def test_dynamic_batching_packs_the_real_lengths():
    """verl/utils/seqlen_balancing.py rearrange_micro_batches: a rank's mini-batch of 64
    sequences of 200 + 1,000 tokens is 76,800 tokens, under one 61,440 x 4-token micro-batch of
    the Ulysses group: one micro-batch; 1,024 sequences (the forward's whole share) under
    92,160 x 4 take ceil(1,228,800 / 368,640) = 4 micro-batches of 256."""
    p = micro_batch_split((1200,) * 64, 61_440 * 4)
    assert (p.parts, p.largest_sequences, p.largest_tokens) == (1, 64, 76_800)
    q = micro_batch_split((1200,) * 1024, 92_160 * 4)
    assert (q.parts, q.largest_sequences) == (4, 256)
    # equal lengths that do not divide evenly: 64 x 2,248 = 143,872 over 16,384 -> 9 parts,
    # the largest with ceil(64 / 9) = 8 sequences, as Karmarkar-Karp balances equal items
    r = micro_batch_split((2248,) * 64, 16_384)
    assert (r.parts, r.largest_sequences, r.most_sequences) == (9, 8, 8)


def test_verl_qwen_dapo_update_prices_the_real_micro_batch():
    """The colocated Qwen2.5-Math-7B DAPO row (rl_runs.json; 32 H20, Ulysses 4, fsdp_size 2,
    mean response 1,000 under a 28,672 cap): the update's logits are 4 buffers of the real
    micro-batch (rlmcost.placement.dynamic_bsz): the heaviest rank's share of a mini-batch,
    every 128th of the 8,192 length quantiles from the 128th (64 sequences, 88,292 tokens with
    their 200-token prompts), is one micro-batch under 61,440 x 4 tokens, 64 sequences x
    ceil(ceil(88,292 / 64) / 4) = 345 tokens per GPU x 152,064 x 2 B (not 57,744 tokens of
    budget-filling maximum-length sequences), and the run fits the H20."""
    argv = [*QWEN_DAPO, "--length-dist", "lognormal:1000,0.67,28672,0.025"]
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    (train,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind is Kind.TRAIN]
    assert train.memory.logits == 4 * 64 * 345 * 152_064 * 2
    assert est.fits


def test_megatron_backend_keeps_two_logits_buffers():
    """verl's Megatron workers compute the log-probs with Megatron's vocab-parallel kernels, not
    dp_actor's in-place division: the 4-buffer head and the rebuilt-layer overlap are FSDP's."""
    from rlmcost.placement.head_peak import train_copies

    verl = behaviour("verl")
    assert train_copies(verl, Layout(dp=8)) == 4
    assert train_copies(verl, Layout(dp=4, ep=2)) == train_copies(verl, Layout(tp=2)) == 2
    assert train_copies(None, Layout(dp=8)) == 2
