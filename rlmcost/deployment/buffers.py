"""Rollout-buffer bytes: what the iteration's batch of samples holds per device and in host
memory, from a framework's tensor table (:data:`rlmcost.frameworks.buffers.FRAMEWORK_BUFFERS`).

Exact ints. Each tensor's bytes are its elements per sample (:class:`~rlmcost.frameworks.
buffers.Extent`) times its dtype's size (int64 token ids, int32 / int64 / bool masks, fp32
log-probs, values, advantages and returns, int32 routed-expert ids). The copies scale as the
framework keeps them (:class:`~rlmcost.frameworks.buffers.Copy`):

* ``device``: each GPU holds its data-parallel rank's shard (every TP, PP and CP rank of the
  DP group holds the same shard): ceil(batch bytes / P_d) for per-sample tensors, balanced by
  tokens as slime's ``build_dp_schedule`` balances them; ceil(samples / P_d) padded samples for
  padded tensors;
* ``device-micro-batch``: one micro-batch of padded samples (the longest sample's length);
* ``host-shard``: the DP shard again, in each GPU process's host memory;
* ``host-batch``: the whole batch once in host memory (the driver, Ray's object store),
  charged to each of the group's GPUs as ceil(batch bytes / GPUs).

Leaves out Python-side per-sample metadata (lists of ints and strings) and CP's slicing of
the log-probs (slime ``slice_log_prob_with_cp``): the shard is counted whole on every CP
rank, an upper bound by at most the response tensors' (P_c - 1) / P_c.

Light to import: no sympy, no pydantic. :func:`rollout_buffer_bytes` is memoized
(:mod:`rlmcost.memo`): the deployments of one query ask for the same batches many times.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rlmcost.frameworks.buffers import (
    FRAMEWORK_BUFFERS,
    BufferTensor,
    Copy,
    Extent,
    FrameworkBuffers,
    Needs,
)
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized


@dataclass(frozen=True)
class Routes:
    """Routed-expert ids per token: over all layers (``n_layers x top_k``, what SGLang returns
    to slime), over the MoE layers of one pipeline stage (what a slime rank records) and over
    the MoE layers (what vLLM returns to NeMo RL); ``id_bytes``: the bytes of
    :data:`~rlmcost.frameworks.buffers.EXPERT_ID` for the model."""

    per_token: int = 0
    per_token_stage: int = 0
    per_token_moe: int = 0
    id_bytes: int = 4


@dataclass(frozen=True)
class RolloutBuffers:
    """Rollout-buffer bytes per device on the GPU and in host memory."""

    device: int
    host: int


def tensor_bytes(t: BufferTensor, context: int, response: int, routes: Routes) -> int:
    """Bytes of one sample's ``t`` for ``context`` (prompt + response) and ``response`` tokens.

    >>> from rlmcost.frameworks.buffers import BufferTensor, Copy, Extent
    >>> tensor_bytes(BufferTensor("tokens", Extent.CONTEXT, "int64", Copy.DEVICE), 4096, 3072,
    ...              Routes())
    32768
    """
    elements = {
        Extent.CONTEXT: context,
        Extent.RESPONSE: response,
        Extent.SAMPLE: 1,
        Extent.ROUTED: max(context - 1, 0) * routes.per_token,
        Extent.ROUTED_STAGE: max(context - 1, 0) * routes.per_token_stage,
        Extent.ROUTED_MOE: context * routes.per_token_moe,
    }[t.extent]
    return elements * t.bytes_per_element(routes.id_bytes)


def present(fw: FrameworkBuffers, copy: Copy, has: Collection[Needs], train: bool
            ) -> tuple[BufferTensor, ...]:  # fmt: skip
    """The framework's tensors of ``copy`` that the run has (``has``: what it runs besides
    :data:`~rlmcost.frameworks.buffers.Needs.ALWAYS`); on the device during a forward, those
    the forwards hold (not ``train_only``)."""
    return tuple(
        t
        for t in fw.tensors
        if t.copy is copy
        and (t.needs is Needs.ALWAYS or t.needs in has)
        and (train or not t.train_only or copy in (Copy.HOST_BATCH, Copy.HOST_SHARD))
    )


def sample_bytes(tensors: Sequence[BufferTensor], prompt: int, response: int, routes: Routes
                 ) -> int:  # fmt: skip
    """Bytes of one sample of ``prompt`` + ``response`` tokens over ``tensors``.

    slime, on the GPU during the update of a GRPO run with a reference (tokens int64 per
    token; loss mask int32 and rollout, recomputed and reference log-probs, KL and returns
    fp32 per response token; the rollout's mask sum fp32): 1024 + 3072 tokens give
    8 x 4096 + 4 x 3072 + 4 + 5 x 4 x 3072 = 106,500 bytes.

    >>> from rlmcost.frameworks.buffers import Copy, FRAMEWORK_BUFFERS, Needs
    >>> t = present(FRAMEWORK_BUFFERS["slime"], Copy.DEVICE, {Needs.REFERENCE}, train=True)
    >>> sample_bytes(t, 1024, 3072, Routes())
    106500
    """
    return sum(tensor_bytes(t, prompt + response, response, routes) for t in tensors)


@memoized()
def rollout_buffer_bytes(
    framework: str | None,
    train: bool,
    prompt: int,
    responses: Sequence[int],
    dp: int,
    micro_batch: int,
    gpus: int,
    has: Collection[Needs],
    routes: Routes = Routes(),
) -> RolloutBuffers:
    """Rollout-buffer bytes per device while a forward (``train`` False) or the update runs
    on a group of ``gpus`` GPUs in a layout of ``dp`` data-parallel ranks and ``micro_batch``
    samples per micro-batch, for a batch of ``len(responses)`` samples of ``prompt`` tokens
    and the given response lengths (module docstring). Zero for a framework with no table
    (rlmcost's bare layout).

    >>> r = rollout_buffer_bytes("slime", True, 1024, (3072,) * 16, 8, 1, 8, {Needs.REFERENCE})
    >>> r.device == 2 * 106_500
    True
    """
    fw = FRAMEWORK_BUFFERS.get(framework or "")
    n = len(responses)
    if fw is None or n == 0:
        return RolloutBuffers(0, 0)
    per_shard = -(-n // dp)
    from rlmcost.perf.rl_step import length_counts

    counts = dict(length_counts(responses))  # one entry when every response is as long
    longest = max(counts)  # over the distinct lengths

    def batch(tensors: Sequence[BufferTensor]) -> int:
        if fw.padded:
            return n * sample_bytes(tensors, prompt, longest, routes)
        return sum(k * sample_bytes(tensors, prompt, t, routes) for t, k in counts.items())

    def shard(tensors: Sequence[BufferTensor]) -> int:
        if fw.padded:
            return per_shard * sample_bytes(tensors, prompt, longest, routes)
        return -(-batch(tensors) // dp)

    def copies(copy: Copy) -> tuple[BufferTensor, ...]:
        return present(fw, copy, has, train)

    device = shard(copies(Copy.DEVICE)) + min(micro_batch, per_shard) * sample_bytes(
        copies(Copy.DEVICE_MICRO_BATCH), prompt, longest, routes
    )
    host = shard(copies(Copy.HOST_SHARD)) + -(-batch(copies(Copy.HOST_BATCH)) // gpus)
    return RolloutBuffers(device, host)
