"""Rollout buffers as each framework allocates them: the per-sample tensors an iteration's
batch carries from generation to the update, their dtypes, and where each copy lives.

One :class:`BufferTensor` per tensor: its extent per sample (:class:`Extent`: the sample's
prompt + response tokens, its response tokens, one value, or the routed-expert ids of its
tokens), its dtype (:data:`DTYPE_BYTES`), the copy it describes (:class:`Copy`: a GPU's
data-parallel shard, one micro-batch on a GPU, a rank's shard in host memory, or the whole
batch held once in host memory by the driver / Ray's object store), what the run must have
for the tensor to exist (:class:`Needs`), and whether the forwards hold it on the device or
only the update (``train_only``). The arithmetic is :mod:`rlmcost.deployment.buffers`.

Sources (files of the frameworks' repositories, as stored at these commits): slime
THUDM/slime@624b824 (2026-08-21); verl volcengine/verl@b178a3c (2026-01-29); OpenRLHF
OpenRLHF/OpenRLHF@3c3be62 (2026-08-13); NeMo RL NVIDIA-NeMo/RL@7ea279a (2026-08-22); TRL
huggingface/trl@f2cd577 (2026-07-24).

Light to import (dataclasses and enums only).
"""

from __future__ import annotations

from enum import StrEnum

from rlmcost.frozen import dataclass

DTYPE_BYTES = {"int64": 8, "int32": 4, "fp32": 4, "bool": 1}
"""Bytes per element of the buffers' dtypes (``torch.long``, ``torch.int``, ``torch.float32``,
``torch.bool``). ``expert-id`` (:data:`EXPERT_ID`) has the model's size instead."""

EXPERT_ID = "expert-id"
"""The narrowest signed integer that holds the expert ids and the -1 sentinel: int8 up to 128
experts, int16 up to 32,768, else int32 (NeMo RL ``nemo_rl/models/generation/interfaces.py``
``resolve_routed_experts_dtype``); its bytes come with the model (:func:`expert_id_bytes`)."""


def expert_id_bytes(n_experts: int) -> int:
    """Bytes of :data:`EXPERT_ID` for ``n_experts`` routed experts.

    >>> expert_id_bytes(128), expert_id_bytes(256), expert_id_bytes(40_000)
    (1, 2, 4)
    """
    if n_experts - 1 <= 127:
        return 1
    return 2 if n_experts - 1 <= 32_767 else 4


class Extent(StrEnum):
    """Elements of a tensor per sample."""

    CONTEXT = "context"  # prompt + response tokens
    RESPONSE = "response"  # response tokens
    SAMPLE = "sample"  # one value
    ROUTED = "routed"  # (prompt + response - 1) x n_layers x top_k routed-expert ids
    ROUTED_STAGE = "routed-stage"  # (prompt + response - 1) x MoE layers of the stage x top_k
    ROUTED_MOE = "routed-moe"  # (prompt + response) x MoE layers x top_k


class Copy(StrEnum):
    """Which copy a tensor row describes, and so how it scales per device."""

    DEVICE = "device"  # on each GPU: the data-parallel shard of its DP rank (every TP/PP rank)
    DEVICE_MICRO_BATCH = "device-micro-batch"  # on each GPU: one micro-batch at a time
    HOST_SHARD = "host-shard"  # host memory, per GPU process: its DP rank's shard
    HOST_BATCH = "host-batch"  # host memory, once: the whole batch (driver, object store)


class Needs(StrEnum):
    """What the run must have for a tensor to exist."""

    ALWAYS = "always"
    REFERENCE = "reference"  # a reference model (KL)
    CRITIC = "critic"  # a value model (GAE)
    ROUTING_REPLAY = "routing-replay"  # MoE routing replay of the engine's routes


@dataclass(frozen=True)
class BufferTensor:
    """One tensor of the rollout batch, as one copy of it (module docstring)."""

    name: str
    extent: Extent
    dtype: str
    copy: Copy
    needs: Needs = Needs.ALWAYS
    train_only: bool = False  # on the device for the update only, not for the forwards
    source: str = ""

    def bytes_per_element(self, expert_id: int = 4) -> int:
        """The dtype's bytes; ``expert_id``: those of :data:`EXPERT_ID` for the model."""
        return expert_id if self.dtype == EXPERT_ID else DTYPE_BYTES[self.dtype]


@dataclass(frozen=True)
class FrameworkBuffers:
    """A framework's rollout-buffer tensors; ``padded``: each tensor is padded to the batch's
    longest sample (verl, NeMo RL) rather than kept per sample at its own length (slime,
    OpenRLHF's replay buffer), and its DP shards split samples evenly rather than tokens."""

    padded: bool
    tensors: tuple[BufferTensor, ...]


_SLIME_ACTOR = "slime/backends/megatron_utils/actor.py"
_SLIME_LOSS = "slime/backends/megatron_utils/loss.py"
_SLIME_RAY = "slime/ray/rollout.py"
_SLIME_TENSORS = "slime/observability/rollout_data_utils.py"


def _slime() -> FrameworkBuffers:
    """slime: the RolloutManager turns the samples into per-sample CPU tensors
    (``tensorize_rollout_data_for_training``: tokens ``torch.long``, loss masks ``torch.int``,
    rollout log-probs ``torch.float32``, routed experts as decoded, int32) and ``ray.put``s
    each DP rank's shard (``_split_train_data_by_dp``, balanced by token count); every rank of
    a DP group (TP, PP, CP) ``ray.get``s its shard (``slime/utils/data.py``
    ``process_rollout_data``) and moves it to the GPU at the start of ``train``
    (``_get_rollout_data``), where the log-prob forwards add their outputs and
    ``compute_advantages_and_returns`` the KL, advantages and returns, all fp32 per response
    token; it is freed after the update. With ``--use-rollout-routing-replay`` each rank
    records its stage's MoE layers of the routed experts in pinned host buffers
    (``slime/utils/routing_replay.py`` ``RoutingReplay.record``)."""
    d, hb = Copy.DEVICE, Copy.HOST_BATCH
    return FrameworkBuffers(
        padded=False,
        tensors=(
            BufferTensor("tokens", Extent.CONTEXT, "int64", d,
                         source=f"{_SLIME_ACTOR} _get_rollout_data: tokens to GPU, torch.long"),
            BufferTensor("loss_masks", Extent.RESPONSE, "int32", d,
                         source=f"{_SLIME_ACTOR} _get_rollout_data: loss_masks, torch.int"),
            BufferTensor("rollout_mask_sums", Extent.SAMPLE, "fp32", d,
                         source=f"{_SLIME_ACTOR} _get_rollout_data: torch.float32"),
            BufferTensor("rollout_log_probs", Extent.RESPONSE, "fp32", d,
                         source="slime/rollout/sglang_rollout.py return_logprob: True; "
                         f"{_SLIME_ACTOR} _get_rollout_data: to GPU, torch.float32"),
            BufferTensor("log_probs", Extent.RESPONSE, "fp32", d,
                         source=f"{_SLIME_ACTOR} train_actor: compute_log_prob, kept on the "
                         "last stage (slime/backends/megatron_utils/model.py forward_only)"),
            BufferTensor("ref_log_probs", Extent.RESPONSE, "fp32", d, Needs.REFERENCE,
                         source=f"{_SLIME_ACTOR} train_actor: store_prefix='ref_'"),
            BufferTensor("kl", Extent.RESPONSE, "fp32", d, train_only=True,
                         source=f"{_SLIME_LOSS} compute_advantages_and_returns: kl (zeros "
                         "when kl_coef = 0)"),
            BufferTensor("returns", Extent.RESPONSE, "fp32", d, train_only=True,
                         source=f"{_SLIME_LOSS} compute_advantages_and_returns: returns "
                         "(grpo: advantages alias them)"),
            BufferTensor("advantages", Extent.RESPONSE, "fp32", d, Needs.CRITIC,
                         train_only=True, source=f"{_SLIME_LOSS} ppo: "
                         "get_advantages_and_returns_batch"),
            BufferTensor("values", Extent.RESPONSE, "fp32", d, Needs.CRITIC,
                         source=f"{_SLIME_ACTOR} train_critic / train_actor: values"),
            BufferTensor("tokens", Extent.CONTEXT, "int64", hb,
                         source=f"{_SLIME_RAY} _split_train_data_by_dp: ray.put; "
                         f"{_SLIME_TENSORS}: torch.long"),
            BufferTensor("loss_masks", Extent.RESPONSE, "int32", hb,
                         source=f"{_SLIME_TENSORS}: torch.int"),
            BufferTensor("rollout_log_probs", Extent.RESPONSE, "fp32", hb,
                         source=f"{_SLIME_TENSORS}: torch.float32"),
            BufferTensor("rollout_mask_sums", Extent.SAMPLE, "fp32", hb,
                         source=f"{_SLIME_TENSORS}: torch.float32"),
            BufferTensor("rollout_routed_experts", Extent.ROUTED, "int32", hb,
                         Needs.ROUTING_REPLAY,
                         source="slime/utils/types.py: decode_int32_meta_array, reshaped "
                         "(len(tokens) - 1, num_layers, moe_router_topk)"),
            BufferTensor("routing replay", Extent.ROUTED_STAGE, "int32", Copy.HOST_SHARD,
                         Needs.ROUTING_REPLAY, source=f"{_SLIME_ACTOR} fill_routing_replay; "
                         "slime/utils/routing_replay.py RoutingReplay.record: pinned CPU "
                         "copy per MoE layer of the stage"),
        ),
    )  # fmt: skip


_VERL_TRAINER = "verl/trainer/ppo/ray_trainer.py"
_VERL_ACTOR = "verl/workers/actor/dp_actor.py"


def _verl() -> FrameworkBuffers:
    """verl: the driver's ``DataProto`` holds the whole batch as padded CPU tensors
    (``verl/protocol.py``; prompts left-padded, responses right-padded to the longest): token
    ids, attention mask and position ids (int64, as the tokenizer and rollout give them),
    ``response_mask`` (``compute_response_mask``: a slice of the int64 attention mask), the
    recomputed log-probs and entropies, reference log-probs, values, scores, rewards,
    advantages and returns, fp32 per response token (``compute_advantage``). It dispatches
    each DP rank's chunk to all ranks of that DP group
    (``make_nd_compute_dataproto_dispatch_fn``); the FSDP workers keep it on the CPU
    (``verl/workers/fsdp_workers.py``: ``data.to("cpu")  # data will to device with each micro
    batch``) and move one micro-batch of the selected keys to the GPU at a time
    (``dp_actor.py`` ``update_policy``/``compute_log_prob``: ``micro_batch.to(get_device_id())``).
    """
    hb, hs, mb = Copy.HOST_BATCH, Copy.HOST_SHARD, Copy.DEVICE_MICRO_BATCH
    full = [
        ("prompts, responses", Extent.CONTEXT, "int64", Needs.ALWAYS),  # (B, S) + (B, T)
        ("input_ids", Extent.CONTEXT, "int64", Needs.ALWAYS),
        ("attention_mask", Extent.CONTEXT, "int64", Needs.ALWAYS),
        ("position_ids", Extent.CONTEXT, "int64", Needs.ALWAYS),
        ("response_mask", Extent.RESPONSE, "int64", Needs.ALWAYS),
        ("old_log_probs", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("entropys", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("ref_log_prob", Extent.RESPONSE, "fp32", Needs.REFERENCE),
        ("values", Extent.RESPONSE, "fp32", Needs.CRITIC),
        ("token_level_scores", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("token_level_rewards", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("advantages", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("returns", Extent.RESPONSE, "fp32", Needs.ALWAYS),
    ]
    host = [
        BufferTensor(name, extent, dtype, copy, needs, source=_VERL_TRAINER)
        for copy in (hb, hs)
        for name, extent, dtype, needs in full
    ]
    selected = [
        BufferTensor("input_ids", Extent.CONTEXT, "int64", mb, source=_VERL_ACTOR),
        BufferTensor("attention_mask", Extent.CONTEXT, "int64", mb, source=_VERL_ACTOR),
        BufferTensor("position_ids", Extent.CONTEXT, "int64", mb, source=_VERL_ACTOR),
        BufferTensor("responses", Extent.RESPONSE, "int64", mb, source=_VERL_ACTOR),
        BufferTensor("response_mask", Extent.RESPONSE, "int64", mb, train_only=True,
                     source=f"{_VERL_ACTOR} update_policy select_keys"),
        BufferTensor("old_log_probs", Extent.RESPONSE, "fp32", mb, train_only=True,
                     source=f"{_VERL_ACTOR} update_policy select_keys"),
        BufferTensor("advantages", Extent.RESPONSE, "fp32", mb, train_only=True,
                     source=f"{_VERL_ACTOR} update_policy select_keys"),
    ]  # fmt: skip
    return FrameworkBuffers(padded=True, tensors=tuple(host + selected))


_ORLHF = "openrlhf/trainer/ppo_utils/experience.py"


def _openrlhf() -> FrameworkBuffers:
    """OpenRLHF: an :class:`Experience` per batch (``openrlhf/trainer/ppo_utils/
    experience.py``: sequences and attention mask (B, T) long, action mask bool, the policy's,
    reference's and rollout's log-probs, values, returns, advantages and KL fp32 per action
    token, rewards fp32 per sample); ``NaiveReplayBuffer.append``
    (``openrlhf/trainer/ppo_utils/replay_buffer.py``, ``cpu_offload`` default True,
    ``--buffer_cpu_offload`` in ``openrlhf/trainer/ray/ppo_actor.py``) moves it to the CPU
    and strips the padding (``remove_padding_in_sequences``); ``sample`` brings one
    micro-batch back to the GPU. Every DeepSpeed rank keeps its share of the experiences."""
    hs, mb = Copy.HOST_SHARD, Copy.DEVICE_MICRO_BATCH
    rows = [
        ("sequences", Extent.CONTEXT, "int64", Needs.ALWAYS),
        ("attention_mask", Extent.CONTEXT, "int64", Needs.ALWAYS),
        ("action_mask", Extent.RESPONSE, "bool", Needs.ALWAYS),
        ("action_log_probs", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("base_action_log_probs", Extent.RESPONSE, "fp32", Needs.REFERENCE),
        ("values", Extent.RESPONSE, "fp32", Needs.CRITIC),
        ("returns", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("advantages", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("kl", Extent.RESPONSE, "fp32", Needs.ALWAYS),
        ("rewards", Extent.SAMPLE, "fp32", Needs.ALWAYS),
    ]
    tensors = [
        BufferTensor(name, extent, dtype, copy, needs, train_only=copy is mb, source=_ORLHF)
        for copy in (hs, mb)
        for name, extent, dtype, needs in rows
    ]
    return FrameworkBuffers(padded=False, tensors=tuple(tensors))


_NEMO_GRPO = "nemo_rl/algorithms/grpo.py"
_NEMO_WORKER = "nemo_rl/models/policy/workers/dtensor_policy_worker.py"


def _nemo_rl() -> FrameworkBuffers:
    """NeMo RL: the driver's ``BatchedDataDict`` train data (``nemo_rl/algorithms/grpo.py``,
    ``nemo_rl/distributed/batched_data_dict.py``), padded over the whole sequence: token ids
    and the token loss mask (``torch.ones_like(token_ids)``, int64), the generation, previous
    and reference log-probs and the advantages (``compute_advantage``: expanded to the mask's
    shape), fp32 per position; per sample the input lengths (int32,
    ``nemo_rl/data/llm_message_utils.py``) and the sample mask (fp32). ``Policy.train`` and
    ``get_logprobs`` shard it by DP rank (``shard_by_batch_size``) and each worker moves its
    whole shard to the GPU (``dtensor_policy_worker.py``: ``data.to("cuda")``); the log-prob
    forwards get the token ids, lengths and masks only. With ``policy.router_replay.enabled``
    the engine's routes ride along as ``routed_experts`` [B, S, L_moe, top_k] in the narrowest
    integer (``_preserve_router_replay_routed_experts``; ``nemo_rl/distributed/
    batched_data_dict.py``), on the device for the previous-log-prob forward and the update
    (``megatron_policy_worker.py`` ``_should_use_router_replay``)."""
    hb, d = Copy.HOST_BATCH, Copy.DEVICE
    rows = [
        ("input_ids", Extent.CONTEXT, "int64", Needs.ALWAYS, False),
        ("token_mask", Extent.CONTEXT, "int64", Needs.ALWAYS, False),
        ("input_lengths", Extent.SAMPLE, "int32", Needs.ALWAYS, False),
        ("sample_mask", Extent.SAMPLE, "fp32", Needs.ALWAYS, False),
        ("generation_logprobs", Extent.CONTEXT, "fp32", Needs.ALWAYS, True),
        ("prev_logprobs", Extent.CONTEXT, "fp32", Needs.ALWAYS, True),
        ("reference_policy_logprobs", Extent.CONTEXT, "fp32", Needs.REFERENCE, True),
        ("advantages", Extent.CONTEXT, "fp32", Needs.ALWAYS, True),
    ]
    tensors = [
        BufferTensor(name, extent, dtype, copy, needs, train_only=train,
                     source=_NEMO_GRPO if copy is hb else _NEMO_WORKER)
        for copy in (hb, d)
        for name, extent, dtype, needs, train in rows
    ]  # fmt: skip
    tensors += [
        BufferTensor("routed_experts", Extent.ROUTED_MOE, EXPERT_ID, copy, Needs.ROUTING_REPLAY,
                     source=f"{_NEMO_GRPO} _preserve_router_replay_routed_experts")
        for copy in (hb, d)
    ]  # fmt: skip
    return FrameworkBuffers(padded=True, tensors=tuple(tensors))


_TRL = "trl/trainer/grpo_trainer.py"


def _trl() -> FrameworkBuffers:
    """TRL (GRPO with vLLM): ``_generate_and_score_completions`` returns the process's
    generation batch as padded GPU tensors (prompt ids and mask left-padded, completion ids
    and mask right-padded, ``torch.long``: ``torch.ones_like(ids, dtype=torch.long)``), the
    recomputed and the sampler's per-token log-probs (fp32; recomputed because
    ``vllm_importance_sampling_correction`` defaults to True, ``trl/trainer/grpo_config.py``),
    the reference's when ``beta`` != 0, and per sample the advantage and the importance
    ratio (``vllm_importance_sampling_mode`` default ``sequence_mask``: shape (B, 1));
    ``_prepare_inputs`` keeps the batch as ``_buffered_inputs`` on the GPU for the
    ``steps_per_generation`` steps that consume it. Every process (one per GPU) holds its
    share of the generation batch."""
    d = Copy.DEVICE
    return FrameworkBuffers(
        padded=True,
        tensors=(
            BufferTensor("prompt_ids, completion_ids", Extent.CONTEXT, "int64", d,
                         source=f"{_TRL} _generate_and_score_completions: pad(...)"),
            BufferTensor("prompt_mask, completion_mask", Extent.CONTEXT, "int64", d,
                         source=f"{_TRL}: torch.ones_like(ids, dtype=torch.long)"),
            BufferTensor("sampling_per_token_logps", Extent.RESPONSE, "fp32", d,
                         source=f"{_TRL}: the engine's log-probs, padded"),
            BufferTensor("old_per_token_logps", Extent.RESPONSE, "fp32", d,
                         source=f"{_TRL}: _get_per_token_logps_and_entropies"),
            BufferTensor("ref_per_token_logps", Extent.RESPONSE, "fp32", d, Needs.REFERENCE,
                         source=f"{_TRL}: beta != 0"),
            BufferTensor("advantages", Extent.SAMPLE, "fp32", d, train_only=True,
                         source=f"{_TRL}: group-normalized rewards, one per sample"),
            BufferTensor("importance_sampling_ratio", Extent.SAMPLE, "fp32", d,
                         train_only=True, source=f"{_TRL}: sequence_* modes, (B, 1)"),
        ),
    )  # fmt: skip


FRAMEWORK_BUFFERS: dict[str, FrameworkBuffers] = {
    "slime": _slime(),
    "verl": _verl(),
    "openrlhf": _openrlhf(),
    "nemo-rl": _nemo_rl(),
    "trl": _trl(),
}
"""Each tabled framework's rollout buffers (keys: ``--framework`` spellings)."""


OVER_BUDGET_REFUSED = {
    "verl": "verl/utils/seqlen_balancing.py rearrange_micro_batches: assert max_token_len >= "
    "max_seq_len ('max_token_len must be greater than the sequence length')",
}
"""Frameworks whose dynamic batching refuses a sample longer than the per-GPU token budget,
and where. The others pack such a sample alone in a micro-batch of its own, the one
micro-batch allowed past the budget (slime ``slime/utils/dp_schedule.py``
``build_dp_schedule``: "an individual sample larger than that cap lands alone in its own
mbs"); so does rlmcost's bare layout."""
