"""Bytes NeMo RL's driver serializes per worker call: every rank of a data-parallel shard gets
its own copy of the shard, and every rank's copy of a forward's results comes back.

NeMo RL's policy (``nemo_rl/models/policy/lm_policy.py`` at NVIDIA-NeMo/RL v0.3.0:
``get_logprobs``, ``get_reference_policy_logprobs``, ``train``) cuts the step's batch into
``P_d`` shards (``shard_by_batch_size``) and hands them to the worker group's
``run_all_workers_sharded_data(..., in_sharded_axes=["data_parallel"], replicate_on_axes=
["context_parallel", "tensor_parallel", "pipeline_parallel"])``
(``nemo_rl/distributed/worker_groups.py``, v0.3.0 lines 751-866), which calls
``getattr(worker, method_name).remote(data=shard)`` once per worker. Ray serializes a task
argument at every call (one over 100 KB goes into the object store anew each time), so the
driver pickles each shard once per rank of the shard: ``R = P_t P_p P_c`` times (Megatron-core
keeps expert parallelism inside the data-parallel ranks; the DTensor worker has no PP). The
tensors of a ``BatchedDataDict`` pickle through ``torch``'s storage reduction (``torch.save``
into a ``BytesIO``; no zero-copy path for torch tensors, ray-project/ray issue 30615 and
26229), the path verl's ``DataProto`` takes, so the rate is
:data:`~rlmcost.perf.controller_data.DATAPROTO_SERDE_BYTES_PER_S` and the share bound for other
nodes crosses the driver node's network at
:data:`~rlmcost.perf.rl_constants.RAY_CROSS_NODE_BYTES_PER_S`
(:func:`dispatch_s`: the longer of the two, a stated choice; verl's
:func:`~rlmcost.perf.controller_data.controller_data_s` adds them). NVIDIA-NeMo/RL PR 1944 (commit
ad0f56d06, "use ray.put to reduce overhead of repeated arguments", first in v0.7.0) puts each
shard once; before it (v0.3.0 to v0.6.0) every rank's copy is serialized.

What a call carries (``nemo_rl/algorithms/grpo.py`` at v0.3.0, ``train_data``; padded by
``batched_message_log_to_flat_message`` to the batch's longest sequence, prompt + response,
``nemo_rl/data/llm_message_utils.py``): ``input_ids`` (the tokenizer's int64), ``token_mask``
(``torch.ones_like(token_ids)``: int64), ``advantages`` and ``generation_logprobs`` (fp32), all
``[N, L]``: :data:`FORWARD_INPUT_BYTES_PER_TOKEN` = 8 + 8 + 4 + 4 = 24 bytes per padded token;
the training call adds ``prev_logprobs`` and ``reference_policy_logprobs`` (fp32):
:data:`TRAIN_INPUT_BYTES_PER_TOKEN` = 32 (the ``[N]`` lengths and sample mask are left out).

What comes back: every rank returns its forward's ``logprobs`` ``[N / P_d, L]`` fp32
(``megatron_policy_worker.py`` v0.3.0 ``get_logprobs``: the last stage broadcasts them over the
pipeline group and every rank returns ``BatchedDataDict(logprobs=...).to("cpu")``), and
``MultiWorkerFuture.get_results`` (worker_groups.py v0.3.0 lines 86-99) runs ``ray.get`` on all
of them before it keeps one per shard: ``R`` copies of :data:`RESULT_BYTES_PER_TOKEN` = 4
bytes per padded token. NVIDIA-NeMo/RL PR 3954 ("Reduce Ray driver memory amplification in
get_logprobs", 2026-09-01, after v0.7.0) names it: "``MultiWorkerFuture.get_results()`` called
``ray.get()`` on every worker result before filtering. This materialized up to CP * TP * PP
copies per data-parallel shard on the driver". A training call returns metrics only.

On-policy distillation (``nemo_rl/algorithms/distillation.py`` @7ea279abf): the teacher's
``get_topk_logits`` returns, in place of log-probs, the top ``k`` of its fp32 logits with their
int64 indices (``torch.topk`` in ``TopkLogitsPostProcessor``, ``nemo_rl/models/automodel/
train.py``), ``[N, L, k]`` from each rank the same way, and the student's ``train`` call carries
them in its ``train_data``: :data:`TOPK_BYTES_PER_TOKEN` = k x (4 + 8) per padded token, at
``DistillationConfig``'s ``topk_logits_k`` = 64 (every example config's but NeMo Gym's 16).

``grpo.py`` times each call with its dispatch and collection (``timer.time(
"policy_and_reference_logprobs")`` around ``policy.get_logprobs`` and
``get_reference_policy_logprobs``; ``"policy_training"`` around ``policy.train``), so a call's
bytes belong to its own phase. Known deviation: rlmcost's framework behaviours are per
framework, not per version, so v0.7.0's single put per shard (PR 1944) is not applied (its
outgoing bytes are counted ``R`` times there too). Bytes are exact integers.
"""

from __future__ import annotations

from rlmcost.perf.controller_data import DATAPROTO_SERDE_BYTES_PER_S
from rlmcost.perf.rl_constants import RAY_CROSS_NODE_BYTES_PER_S

INT64_BYTES = 8
FP32_BYTES = 4

FORWARD_INPUT_BYTES_PER_TOKEN = 2 * INT64_BYTES + 2 * FP32_BYTES
"""A log-prob call's bytes per padded token: ``input_ids`` and ``token_mask`` int64,
``advantages`` and ``generation_logprobs`` fp32 (module docstring)."""

TRAIN_INPUT_BYTES_PER_TOKEN = FORWARD_INPUT_BYTES_PER_TOKEN + 2 * FP32_BYTES
"""A training call's: the forward's and ``prev_logprobs``, ``reference_policy_logprobs``."""

RESULT_BYTES_PER_TOKEN = FP32_BYTES
"""A forward's result per padded token on each rank: fp32 ``logprobs`` (module docstring)."""

TOPK_LOGITS_K = 64
"""NeMo RL's ``distillation.topk_logits_k`` default (``DistillationConfig``, 7ea279abf)."""

TOPK_BYTES_PER_TOKEN = TOPK_LOGITS_K * (FP32_BYTES + INT64_BYTES)
"""A teacher's top-k per padded token: fp32 values and int64 indices (module docstring)."""


def sharded_call_bytes(sequences: int, padded_len: int, replicas: int, train: bool,
                       topk: bool = False) -> int:  # fmt: skip
    """Bytes the driver serializes and deserializes for one call over ``sequences`` sequences
    padded to ``padded_len`` tokens, each data-parallel shard sent to ``replicas`` ranks
    (``P_t P_p P_c``) and, for a forward, its results fetched from each (module docstring);
    ``topk``: a teacher's top-k logits are the forward's results, or ride in the training call.

    >>> sharded_call_bytes(2048, 4096, 1, False)  # 8B at TP 1: 24 + 4 bytes per token
    234881024
    >>> sharded_call_bytes(2048, 16384, 64, False) // 10**9  # 70B TP 4, PP 4, CP 4, 16K
    60
    >>> sharded_call_bytes(1, 10, 2, True)  # 2 x 32 x 10: no results back
    640
    >>> sharded_call_bytes(1, 10, 1, False, topk=True)  # 10 x (24 + 64 x 12)
    7920
    """
    if sequences < 1 or padded_len < 1 or replicas < 1:
        return 0
    out = TOPK_BYTES_PER_TOKEN if topk else RESULT_BYTES_PER_TOKEN
    per_token = TRAIN_INPUT_BYTES_PER_TOKEN + (out if topk else 0) if train else \
        FORWARD_INPUT_BYTES_PER_TOKEN + out  # fmt: skip
    return replicas * sequences * padded_len * per_token


def dispatch_s(nbytes: int, cross_node_fraction: float, end: str = "value") -> float:
    """Seconds of a call's ``nbytes`` through the driver (module docstring): the driver's
    pickling, one object after another in its own process, while Ray's object manager (the
    raylet, another process) moves each finished object to the workers on other nodes
    (``cross_node_fraction`` of the bytes) over the front-end network: the longer of the two
    (the first object's transfer and the last one's pickling left out). ``end``: the low,
    value or high time, from the constants' spreads.

    >>> round(dispatch_s(2 * 10**9, 0.0), 2)  # pickling at 2.0 GB/s
    1.0
    >>> round(dispatch_s(60 * 10**9, 0.9375), 1)  # the network (17.7 s) under the pickling
    30.0
    """
    if nbytes <= 0:
        return 0.0
    flip = {"low": "high", "high": "low"}.get(end, end)  # the low time takes the high rate
    serde = nbytes / DATAPROTO_SERDE_BYTES_PER_S.at(flip)
    return max(serde, nbytes * cross_node_fraction / RAY_CROSS_NODE_BYTES_PER_S.at(flip))
