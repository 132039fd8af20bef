"""NeMo RL's reference model as its policy workers hold it (rlmcost/placement/reference_swap.py):
a pinned host copy of the policy's state dict as the rank holds it, swapped into the policy's
own parameter storage for the reference forward.

Independent references: NVIDIA-NeMo/RL v0.6.0 ``nemo_rl/models/automodel/setup.py``:305 (the
DTensor policy loads in float32), :380-399 ``setup_reference_model_state`` (the model's
``state_dict()`` to pinned CPU, each local shard in its own dtype), ``dtensor_policy_worker_v2.py``
:782-826 ``use_reference_model`` (the policy's state dict to the host, the reference's copied into
the model in place); ``nemo_rl/models/megatron/setup.py``:445-453 (Megatron params bf16) and
:980-1104 (the Megatron reference's ``state_dict()`` on the host); Llama-3.1-8B's parameter count
8,030,261,248 (its config.json); Adam m and v in fp32 (8 B per parameter).
"""

from __future__ import annotations

from typing import Any

import pytest
from group_runs import built_groups

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.perf.policy_worker import reference_swap_s
from rlmcost.placement.reference_swap import device_residents, reference_swap_bytes

LLAMA8B_PARAMS = 8_030_261_248  # meta-llama/Llama-3.1-8B config.json
FP32_SHARD = LLAMA8B_PARAMS * 4 // 8  # the DTensor policy's fp32 FSDP2 shard on 8 ranks


def _group(argv: str) -> Any:
    """The group model that trains the actor in ``rlmcost grpo`` with ``argv``."""
    return next(g for g in built_groups("grpo", argv) if g.trains_here(Role.ACTOR) is not None)


@pytest.fixture(scope="module")
def dtensor() -> Any:
    # `rlmcost grpo -m 8b --gpus 8`: NeMo RL's DTensor preset (ZeRO-3, fp32 params, KL on)
    g = _group("--model llama-3.1-8b --gpus 8")
    assert g.s.deployment.framework == "nemo-rl" and g.s.placement.offload
    return g


def _task(g: Any, role: Role, kind: Kind) -> Any:
    return next(t for t in g.tasks if t.role is role and t.kind is kind)


def test_dtensor_reference_is_held_at_the_fp32_shard(dtensor: Any) -> None:
    g = dtensor
    assert reference_swap_bytes(g) == FP32_SHARD == 4_015_130_624
    gen = _task(g, Role.ACTOR, Kind.GENERATE)
    # generating: the actor's parameter shard and Adam states wait on the host between phases
    # (offload_before/after_refit), beside the reference's fp32 copy (not a bf16 one)
    actor_away = sum(g.phase_offloaded(Role.ACTOR, gen))
    assert actor_away == FP32_SHARD + 8 * LLAMA8B_PARAMS // 8
    assert g.host_bytes(gen) == actor_away + FP32_SHARD + g.rollout_buffers(gen).host
    old = _task(g, Role.ACTOR, Kind.FORWARD)
    assert g.host_bytes(old) == (8 * LLAMA8B_PARAMS // 8 + FP32_SHARD + g.engine_parked
                                 + g.rollout_buffers(old).host)  # fmt: skip


def test_dtensor_reference_forward_holds_one_fp32_shard_set(dtensor: Any) -> None:
    g = dtensor
    ref = _task(g, Role.REFERENCE, Kind.FORWARD)
    m = g.with_residents(ref, g.own(ref))
    # on the device: the reference's values in the policy's fp32 parameter storage, once
    assert m.weights == FP32_SHARD and m.gradients == 0 and m.optimizer == 0
    # on the host: the reference's copy, the policy's state dict copied out, its Adam states;
    # no gradients (the DTensor worker set them to None after the update)
    assert g.grads_freed(Role.ACTOR, ref)
    host = FP32_SHARD + FP32_SHARD + 8 * LLAMA8B_PARAMS // 8
    assert g.host_bytes(ref) == host + g.engine_parked + g.rollout_buffers(ref).host
    # the swap's time reads the same bytes: 3 copies of the fp32 shard over the host link
    assert g.s.host_bytes_per_s > 0
    assert reference_swap_s(FP32_SHARD, g.s.host_bytes_per_s) == pytest.approx(
        3 * LLAMA8B_PARAMS * 4 / 8 / g.s.host_bytes_per_s)


def test_megatron_reference_is_its_bf16_parameters() -> None:
    # ZeRO-1 at TP 2: NeMo RL's Megatron-core policy, bf16 params on each rank of a TP shard
    g = _group("--model llama-3.1-8b --gpus 8 --tp 2 --zero 1")
    swapped = reference_swap_bytes(g)
    assert swapped == pytest.approx(2 * LLAMA8B_PARAMS / 2, rel=1e-4)  # TP-replicated norms
    ref = _task(g, Role.REFERENCE, Kind.FORWARD)
    assert g.with_residents(ref, g.own(ref)).weights == swapped == g.own(ref).weights
    # the reference's host copy stays there during its own forward, beside the policy's
    gen = _task(g, Role.ACTOR, Kind.GENERATE)
    assert g.host_bytes(gen) == (sum(g.phase_offloaded(Role.ACTOR, gen)) + swapped
                                 + g.rollout_buffers(gen).host)  # fmt: skip
    w, grads, opt = g.states(Role.ACTOR)
    assert not g.grads_freed(Role.ACTOR, ref)  # Megatron's gradient buffer is persistent
    assert g.host_bytes(ref) == (swapped + w + grads + opt + g.engine_parked
                                 + g.rollout_buffers(ref).host)  # fmt: skip


def test_other_frameworks_hold_no_swapped_reference() -> None:
    g = _group("--framework verl --model llama-3.2-1b --gpus 8 --kl --offload-idle")
    assert reference_swap_bytes(g) == 0
    gen = _task(g, Role.ACTOR, Kind.GENERATE)
    ref = _task(g, Role.REFERENCE, Kind.FORWARD)
    # verl's idle reference waits on the host as its own bf16 forward weights
    assert g.states(Role.REFERENCE) == (g.own(ref).weights, 0, 0)
    assert g.host_bytes(gen) >= g.own(ref).weights
    assert device_residents(g) == g.residents


def test_no_reference_on_the_device_at_start_up(dtensor: Any) -> None:
    # setup_reference_model_state copies the loaded policy's own state dict to the host: the
    # start-up peak holds the policy's fp32 shard (weights) and no bf16 reference beside it
    from rlmcost.placement.group_jobs import job
    from rlmcost.placement.init_peak import group_init

    g = dtensor
    peak = group_init(g, tuple(job(g, t) for t in g.tasks))
    w, grads, _ = g.states(Role.ACTOR)
    assert w == FP32_SHARD
    assert peak.memory.weights == w + (peak.load.device_extra_bytes if peak.load else 0)
    assert peak.memory.gradients == grads
    # the memory timeline's init and first step read the same residents (GroupEstimate.resident)
    assert set(device_residents(g)) == {Role.ACTOR} and Role.REFERENCE in g.residents


def test_lora_reference_is_still_the_state_dict_copy() -> None:
    # use_reference_model has no adapter-disabling path (dtensor_policy_worker_v2.py v0.6.0
    # :782-826, 7ea279abf): with LoRA the copy is the whole state dict, base weights included
    g = _group("--model llama-3.1-8b --gpus 8 --lora-rank 16")
    train = g.trains_here(Role.ACTOR)
    assert reference_swap_bytes(g) == g.own(train).weights > FP32_SHARD  # + the adapters
    ref = _task(g, Role.REFERENCE, Kind.FORWARD)
    assert g.with_residents(ref, g.own(ref)).weights == g.own(train).weights
