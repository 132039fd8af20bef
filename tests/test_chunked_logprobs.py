"""NeMo RL's chunked log-probs (``policy.logprob_chunk_size``, ``--logits chunked``; issue 18:
NeMo RL's grpo-nanov3-30ba3b-3n8g-megatron-dynamo-swe1 recipe, which its nightly suite runs on 3
nodes of 8 H100, was 18.4 GiB over the device with its 196,608-token sequences' logits priced
whole in fp32).

Independent check: PyTorch's own allocations (CPU, live tensor bytes per dispatched op,
tests/live_bytes.py) of ``ChunkedDistributedLogprob`` as NVIDIA-NeMo/RL @7ea279abf writes it
(nemo_rl/distributed/model_utils.py; one TP rank, so its all-reduces are identities).
"""

from __future__ import annotations

import pytest
from nemo_rl_moe import import_qwen3_moe

from rlmcost.choices import Dtype
from rlmcost.deployment.kinds import LogitsMode
from rlmcost.deployment.terms import (
    CHUNKED_FORWARD_BYTES,
    CHUNKED_TRAIN_BYTES,
    logits_peak_bytes,
)


def _measured(positions: int, vocab: int, chunk: int) -> tuple[int, int]:
    """Peak live bytes of NeMo RL's chunked log-prob head, forward and backward, from the
    bf16 LM head's output on."""
    torch = pytest.importorskip("torch")
    from live_bytes import live_mode

    def log_softmax(x):  # noqa: ANN001, ANN202  # _compute_distributed_log_softmax, TP 1
        x = x - torch.amax(x, dim=-1, keepdim=True).detach()
        return x - x.exp().sum(-1, keepdim=True).float().log().to(x.dtype)

    class Chunked(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target):  # noqa: ANN001, ANN205
            mask = torch.zeros_like(target, dtype=torch.bool)  # every id on this rank
            out = []
            for i in range(0, logits.shape[1], chunk):
                lg = logits[:, i:i + chunk, :].to(torch.float32)  # kept while it runs
                lp = log_softmax(lg)
                lp = torch.gather(lp, -1, target[:, i:i + chunk].unsqueeze(-1)).squeeze(-1)
                lp[mask[:, i:i + chunk]] = 0.0
                out.append(lp)
            ctx.save_for_backward(logits, mask, target)
            return torch.cat(out, dim=1)

        @staticmethod
        def backward(ctx, grad_output):  # noqa: ANN001, ANN205
            logits, mask, target = ctx.saved_tensors
            grad_input = torch.zeros_like(logits)
            for i in range(0, logits.shape[1], chunk):
                lg = logits[:, i:i + chunk, :].to(torch.float32)
                softmax = log_softmax(lg).exp()
                chosen = (~mask[:, i:i + chunk]).unsqueeze(-1) * torch.nn.functional.one_hot(
                    target[:, i:i + chunk], num_classes=vocab)
                g = chosen.float().sub_(softmax)
                g.mul_(grad_output[:, i:i + chunk].unsqueeze(-1))
                grad_input[:, i:i + chunk, :].copy_(g)
                del softmax, chosen, lg, g
            return grad_input, None

    head = torch.nn.Linear(8, vocab, bias=False).to(torch.bfloat16)
    hidden = torch.randn(1, positions, 8, dtype=torch.bfloat16, requires_grad=True)
    target = torch.randint(0, vocab, (1, positions))
    live = live_mode()
    with live:
        logits = head(hidden)
        loss = -Chunked.apply(logits, target).sum()
        del logits
        forward, live.peak = live.peak, 0
        loss.backward()
    return forward, live.peak


def test_chunked_head_holds_the_bf16_logits_and_one_fp32_chunk():
    """Forward: the bf16 logits and 12 B per element of one chunk; backward: the saved bf16
    logits, the bf16 grad_input and 24 B per chunk element (fp32 cast, softmax, the int64
    one-hot and its masked product); rlmcost's formula within 2 % of PyTorch's peak."""
    positions, vocab, chunk = 1024, 4096, 128
    forward, backward = _measured(positions, vocab, chunk)
    priced = [logits_peak_bytes(positions, vocab, train, LogitsMode.CHUNKED, Dtype.BF16,
                                Dtype.FP32, chunk) for train in (False, True)]  # fmt: skip
    assert priced == [vocab * (2 * positions + CHUNKED_FORWARD_BYTES * chunk),
                      vocab * (4 * positions + CHUNKED_TRAIN_BYTES * chunk)]  # fmt: skip
    assert priced[0] <= forward < 1.02 * priced[0]
    assert priced[1] <= backward < 1.02 * priced[1]
    whole = logits_peak_bytes(positions, vocab, True, LogitsMode.MATERIALIZED, Dtype.BF16,
                              Dtype.FP32, chunk)  # fmt: skip
    assert whole == 16 * positions * vocab > backward  # the unchunked fp32 head's 16 B


def test_megatron_recipe_with_a_chunk_size_imports_chunked():
    q = import_qwen3_moe(2, "policy.logprob_chunk_size=2048",
                         "policy.megatron_cfg.defer_fp32_logits=true")
    flags = dict(q.flags)
    assert flags["--logits"] == "chunked" and flags["--logits-chunk-tokens"] == 2048
    assert "policy.logprob_chunk_size" not in q.ignored


@pytest.mark.parametrize(
    ("more", "why"),
    [(("policy.megatron_cfg.enabled=false", "policy.dtensor_cfg.enabled=true"),
      "log-prob forward only"),  # the DTensor worker's loss takes the whole logits
     (("policy.generation.top_p=0.9",), "top-k/top-p sampling")],  # unchunked filtering
)
def test_chunk_size_that_nemo_rl_does_not_apply_to_the_loss_stays_materialized(more, why):
    q = import_qwen3_moe(2, "policy.logprob_chunk_size=2048", *more)
    assert dict(q.flags)["--logits"] == "materialized"
    assert any(why in n for n in q.notes), q.notes


def test_chunked_logits_lower_the_training_peak_of_a_long_sequence():
    """Qwen3-30B-A3B on the Megatron backend at one 32K-token sequence a GPU: the training
    job's logits term falls from 16 B to 4 B a logit plus one chunk."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment

    base = ["--framework", "nemo-rl", "-m", "qwen3-30b-a3b", "--gpus", "16", "--ep", "8",
            "--zero", "1", "-B", "16", "-K", "4", "-S", "1024", "-T", "31744",
            "--max-tokens-per-gpu", "32768", "--packing"]  # fmt: skip
    peak = {}
    for mode in ("materialized", "chunked"):
        est = evaluate_deployment(run_from_argv("rlvr", [*base, "--logits", mode,
                                                         "--logits-chunk-tokens", "2048"]))
        (train,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind == "train"]
        peak[mode] = train.memory.logits
    vocab = 151_936
    assert peak["materialized"] >= 16 * 32_768 * vocab
    assert peak["chunked"] == vocab * (4 * 32_768 + CHUNKED_TRAIN_BYTES * 2048)
