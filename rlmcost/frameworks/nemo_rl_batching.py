"""NeMo RL import: the trainer's and the log-prob forwards' batching (dynamic batching or
sequence packing token budgets, ``logprob_batch_size``) and the packed loss's calls, split
from :mod:`rlmcost.frameworks.nemo_rl` by purpose."""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.nemo_rl_dpo import pair_micro_batch
from rlmcost.frameworks.result import ImportedQuery


def packed_tokens_per_gpu(mb_tokens: int, cp: int) -> int:
    """Tokens per GPU of a micro-batch packed to ``mb_tokens`` (``sequence_packing``'s
    ``train_mb_tokens`` / ``logprob_mb_tokens``) under context parallelism ``cp``: NeMo RL packs
    each data-parallel shard to that bin capacity and context parallelism then splits the packed
    sequence over its ranks (nemo_rl/models/policy/lm_policy.py at v0.6.0, get_logprobs and
    train: "we just shard into DP shards here as Sequence packing allows for CP")."""
    return -(-mb_tokens // cp)


def batching(r: Reader, q: ImportedQuery, cp: int, pairs: bool = False) -> None:
    """The training micro-batches (``train_micro_batch_size`` samples, or a token budget
    under dynamic batching / packing), the log-prob forwards' and whether sequences are
    packed (``--packing``); ``pairs``: a DPO config's micro-batches count preference pairs and
    its reference forward takes the trainer's (rlmcost.frameworks.nemo_rl_dpo)."""
    dynamic = r.flag("policy.dynamic_batching.enabled", False)
    packing = r.flag("policy.sequence_packing.enabled", False)
    if dynamic and packing:
        raise SpecError(f"{r.where}: dynamic_batching and sequence_packing are both enabled "
                        "(NeMo RL takes one); disable one")  # fmt: skip
    if dynamic or packing:
        key = "dynamic_batching" if dynamic else "sequence_packing"
        budget = r.integer(f"policy.{key}.train_mb_tokens", None)
        if budget is None:
            raise SpecError(f"{r.where}: set policy.{key}.train_mb_tokens")
        if packing and cp > 1:
            q.convert(f"policy.{key}.train_mb_tokens={budget} / context_parallel_size {cp}",
                      "--max-tokens-per-gpu", packed_tokens_per_gpu(budget, cp),
                      "a packed micro-batch is split over the CP ranks")  # fmt: skip
        else:
            q.convert(f"policy.{key}.train_mb_tokens={budget}", "--max-tokens-per-gpu", budget,
                      "tokens per micro-batch per GPU")  # fmt: skip
        if packing:
            q.note("sequence packing: micro-batches packed to train_mb_tokens; rlmcost's "
                   "nearest is the per-GPU token budget (--max-tokens-per-gpu)")  # fmt: skip
            _packed_loss(r, q)
        r.integer("policy.train_micro_batch_size", 4)
    elif pairs:
        pair_micro_batch(r, q)
    else:
        micro = r.integer("policy.train_micro_batch_size", 4)
        q.convert(f"policy.train_micro_batch_size={micro}", "--micro-batch", micro,
                  "samples per GPU per forward/backward (already per GPU)")  # fmt: skip
    if not pairs:
        _logprob_batching(r, q, "dynamic_batching" if dynamic else "sequence_packing"
                          if packing else None, cp)  # fmt: skip
    q.set("--packing" if packing else "--no-packing")


def _packed_loss(r: Reader, q: ImportedQuery) -> None:
    """``sequence_packing.fuse_loss`` (v0.6.0 on, default false): one loss call per packed
    micro-batch (``--fused-loss``), else one per sequence (rlmcost.perf.policy_worker)."""
    fused = r.flag("policy.sequence_packing.fuse_loss", False)
    if fused:
        q.set("--fused-loss")
    q.note("sequence_packing.fuse_loss true: one loss call per packed micro-batch" if fused else
           "sequence packing without fuse_loss: one loss call per packed sequence "
           "(SequencePackingLossWrapper; rlmcost.perf.policy_worker)")  # fmt: skip


def _logprob_batching(r: Reader, q: ImportedQuery, key: str | None, cp: int) -> None:
    """The log-prob forwards' batching (lm_policy.py ``get_logprobs``): ``logprob_batch_size``
    samples per GPU, or under dynamic batching / packing ``logprob_mb_tokens`` (packed: split
    over the CP ranks, :func:`packed_tokens_per_gpu`)."""
    n = r.integer("policy.logprob_batch_size", None)
    if n is None:
        return
    q.convert(f"policy.logprob_batch_size={n}", "--forward-micro-batch", n,
              "samples per GPU per log-prob forward")  # fmt: skip
    budget = r.integer(f"policy.{key}.logprob_mb_tokens", None) if key else None
    if budget is None:
        return
    per_gpu = packed_tokens_per_gpu(budget, cp) if key == "sequence_packing" else budget
    q.convert(f"policy.{key}.logprob_mb_tokens={budget}" + (f" / context_parallel_size {cp}"
              if per_gpu != budget else ""), "--forward-max-tokens-per-gpu", per_gpu,
              "tokens per log-prob micro-batch per GPU")  # fmt: skip

