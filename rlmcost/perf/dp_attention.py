"""SGLang's data-parallel attention inside an engine replica (``--enable-dp-attention
--dp-size N``; ``EngineSpec.dp_attention``, ``Layout.attention_dp``) as the decode step's
pricing sees it (:class:`rlmcost.perf.generation.Engine`).

SGLang (python/sglang/srt/layers/dp_attention.py, ``compute_dp_attention_world_info``:
``attn_tp_size = tp_size // dp_size``, ``attn_dp_rank = tp_rank // attn_tp_size``) splits a
replica's ``tp`` GPUs into N attention-DP ranks of tp / N GPUs. Each runs its own scheduler
and KV pool (python/sglang/srt/managers/data_parallel_controller.py hands each request to one
rank), so in a step a GPU computes attention, its QKV / output projections at tp / N heads
split, for about 1 / N of the replica's running requests and reads only their KV; the
hidden states are then gathered over the replica for the MoE / FFN layers, which run over
all tp GPUs on the whole batch as under plain TP, and scattered back (``dp_gather`` /
``dp_scatter`` in dp_attention.py). Priced here: the attention GEMMs on ceil(a / N) rows at
tp / N heads, decode attention per context token at tp / N heads over 1 / N of the
contexts, a prefill chunk's attention and KV writes at 1 / N; the gather and scatter as the
two TP all-reduces of [a, d] per layer that plain TP prices (an all-gather plus a
reduce-scatter over the replica moves what one all-reduce does, ring algorithm); the LM head
over the replica's TP (``--enable-dp-lm-head`` not modelled). Assumption: requests spread
evenly over the attention-DP ranks (the average rank; a rank with more requests is slower).

vLLM's data parallelism with expert parallelism (``--data-parallel-size N
--enable-expert-parallel``; NeMo RL's ``vllm_cfg.expert_parallel_size`` above its
``tensor_parallel_size``, nemo_rl/models/generation/vllm/vllm_generation.py @7ea279abf: "vLLM's
EP = DP * TP"; verl's ``rollout.data_parallel_size`` with ``expert_parallel_size`` = TP x DP,
verl/workers/config/rollout.py @b178a3cd) is the same split, priced the same way: each DP rank
is a core engine of TP GPUs with its own scheduler and KV cache, and the expert layers run over
all DP x TP GPUs, every rank stepping in lockstep (vLLM docs/serving/data_parallel_deployment.md:
"expert layers across all ranks are required to synchronize during every forward pass"; the
default all2all backend, allgather_reducescatter, docs/serving/expert_parallel_deployment.md).
rlmcost's replica is then the EP group: ``tp`` = DP x TP GPUs, N = DP.
"""

from __future__ import annotations

from rlmcost.arch import Arch
from rlmcost.parallel.shard import split, split_up, tp_shard


def engine_shard(arch: Arch, tp: int, attention_dp: int) -> Arch:
    """One GPU's slice of ``arch`` in a replica of ``tp`` GPUs whose attention runs
    data-parallel over ``attention_dp`` ranks (module doc): the heads over tp / N, the FFN
    and expert widths and the vocabulary over ``tp``; :func:`~rlmcost.parallel.shard.
    tp_shard` when N is 1.

    >>> from rlmcost.specs import get_model
    >>> a = get_model("deepseek-v3").arch()
    >>> s = engine_shard(a, 8, 8)
    >>> (s.n_heads, s.d_expert) == (a.n_heads, a.d_expert // 8)
    True
    """
    if attention_dp == 1:
        return tp_shard(arch, tp)
    n = attention_dp
    att = tp_shard(arch, tp // n)
    return att.with_(
        d_ff=split(att.d_ff, n),
        d_expert=split(att.d_expert, n) if arch.is_moe else att.d_expert,
        d_shared_expert=split(att.d_shared_expert, n),
        vocab=split_up(arch.vocab, tp),
    )


def attention_rows(rows: int, attention_dp: int) -> int:
    """Rows one GPU's attention takes of a step's ``rows`` under ``attention_dp`` ranks:
    ceil(rows / N) (the average rank, module doc).

    >>> attention_rows(64, 8), attention_rows(3, 8), attention_rows(5, 1)
    (8, 1, 5)
    """
    return -(-rows // attention_dp)
