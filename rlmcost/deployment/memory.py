"""A model invocation's per-device memory as a deployment has it.

Starts from the paper's breakdown of one pipeline stage's rank
(:func:`rlmcost.parallel.memory.memory_per_stage`: model states after ZeRO, activations, KV
cache, logits, ZeRO-3 buffers) and applies what the deployment changes:

* the log-prob logits peak (:func:`~rlmcost.deployment.terms.logits_peak_bytes`) in place of
  one fp32 logits tensor, on the last stage of a forward or a training step;
* LoRA: the adapters' weights beside the frozen base, and gradients and Adam states of the
  adapters only (:func:`~rlmcost.deployment.terms.lora_params`);
* offload: optimizer states, parameters or gradients moved to host memory (the device keeps the
  ZeRO-3 gather buffers); the moved bytes are returned as host bytes per device.

Light to import (no sympy): pure integer arithmetic on the breakdown.
"""

from __future__ import annotations

from dataclasses import replace

from rlmcost.deployment.spec import Deployment, Offload
from rlmcost.deployment.terms import logits_peak_bytes
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.zero import model_state_bytes_per_rank
from rlmcost.specs.workload import Workload


@dataclass(frozen=True)
class Placed:
    """Bytes on each device, and bytes of the same rank kept in host memory."""

    device: MemoryBreakdown
    host: int = 0


def with_logits_peak(
    m: MemoryBreakdown,
    positions: int,
    vocab_per_rank: int,
    train: bool,
    deployment: Deployment,
    workload: Workload,
    train_copies: int = 2,
) -> MemoryBreakdown:
    """``m`` with its logits term (non-zero on the last stage only) replaced by the log-prob
    peak over ``positions`` positions of one micro-batch (``train_copies``: low-memory
    training's buffers, :func:`~rlmcost.deployment.terms.logits_peak_bytes`)."""
    if m.logits == 0:
        return m
    peak = logits_peak_bytes(
        positions,
        vocab_per_rank,
        train,
        deployment.logits,
        workload.activation_dtype,
        workload.logits_dtype,
        deployment.logits_chunk_tokens,
        train_copies,
    )
    return replace(m, logits=peak)


def with_lora(
    m: MemoryBreakdown, adapters: int, layout: Layout, train: bool, workload: Workload
) -> MemoryBreakdown:
    """``m`` of a LoRA-trained model: ``adapters`` parameters on the rank beside the frozen
    base (weight dtype); when it trains, gradients and mixed-precision Adam states of the
    adapters only, sharded over the data-parallel replicas like the dense parameters (in the
    trainer's stored dtype, ``workload.param_dtype``, when it has one; the gradients in
    ``workload.grad_dtype`` where it is wider)."""
    stored = workload.stored_dtype if train else workload.weight_dtype
    states = model_state_bytes_per_rank(
        adapters, layout.zero, layout.zero_group, stored, train, workload.gradient_dtype
    )
    if not train:
        return replace(m, weights=m.weights + states.weights)
    return replace(
        m,
        weights=m.weights + states.weights,
        gradients=states.gradients,
        optimizer=states.optimizer,
    )


def offloaded(m: MemoryBreakdown, offload: tuple[Offload, ...], layout: Layout) -> Placed:
    """``m`` with the ``offload`` states in host memory (ZeRO-Offload, Ren et al. 2021,
    arXiv:2101.06840: fp32 optimizer states and the update on the CPU; ZeRO-Infinity /
    FSDP ``CPUOffload(offload_params=True)``: parameter shards on the host, gathered to the
    device layer by layer into the ZeRO-3 buffers). SpecError for a parameter offload without
    ZeRO-3, which no framework runs during the step: Megatron with its distributed optimizer
    offloads parameters between phases only (verl ``megatron_workers.py`` ``param_offload``,
    NeMo RL's ``offload_after_refit``: ``params-idle``), and Megatron's
    ``cpu_offloading_weights`` moves none (Transformer Engine ``pytorch/cpu_offload.py``:
    "Offloading weights is deprecated ... does not have any effect")."""
    if Offload.PARAMS in offload and layout.zero is not ZeroStage.OS_G_P:
        raise SpecError(
            "--offload params keeps the parameter shards on the host during the step, which "
            "needs ZeRO-3/FSDP (--zero 3); Megatron (distributed optimizer, --zero 1) offloads "
            "parameters between phases only: use --offload params-idle (verl megatron "
            "param_offload), or add --zero 3"
        )
    moved = {
        "optimizer": m.optimizer if Offload.OPTIMIZER in offload else 0,
        "gradients": m.gradients if Offload.GRADS in offload else 0,
        "weights": m.weights if Offload.PARAMS in offload else 0,
    }
    device = replace(m, **{k: getattr(m, k) - v for k, v in moved.items()})
    return Placed(device, sum(moved.values()))
