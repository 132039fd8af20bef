"""How a framework materialises a model at start-up, and the bytes that load holds before the
model is sharded (the init-time peak).

A trainer's steady state keeps each model sharded (ZeRO/FSDP, TP, PP); at start-up some
frameworks hold the whole model first, on the GPU or in host memory, and shard it after. The
load modes (:class:`InitLoad`), from the frameworks' sources:

* ``sharded``: each rank materialises only its shard. Megatron-core builds each rank's
  TP/PP part of the model and reads its part of the checkpoint (slime, NeMo RL's Megatron
  policy: ``megatron/core/dist_checkpointing``); transformers under DeepSpeed ZeRO-3 builds the
  model inside ``deepspeed.zero.Init`` (``HfDeepSpeedConfig``: each parameter partitioned as it
  is created; ``transformers/integrations/deepspeed.py``, OpenRLHF ``openrlhf/models/actor.py``
  with ``zero_stage 3``). Nothing beyond the steady state.
* ``gpu``: the whole model, in its load dtype, on every GPU before the engine partitions it:
  OpenRLHF's ``--actor_init_on_gpu`` (``openrlhf/cli/train_ppo.py``: ``actor =
  actor.to(torch.cuda.current_device())`` after ``Actor(...)`` and before
  ``strategy.prepare``, which calls ``deepspeed.initialize``). The model is built in host
  memory first (``from_pretrained`` without a ``device_map``), one copy per process. It
  concerns the trained models (the actor), which are loaded one after another.
* ``host-rank0``: rank 0 loads the whole model into host memory, the other ranks build it on
  the meta device, and the FSDP wrap broadcasts rank 0's weights shard by shard
  (``sync_module_states=True``): verl ``verl/workers/fsdp_workers.py``
  (``get_init_weight_context_manager``: CPU on rank 0, ``init_empty_weights`` elsewhere; the
  actor in ``torch.float32`` when ``fsdp_config.model_dtype`` is unset), NeMo RL
  ``nemo_rl/models/policy/workers/dtensor_policy_worker.py`` (``if self.rank == 0:
  from_pretrained(..., device_map="cpu")`` in float32, every rank on meta, then
  ``set_model_state_dict(..., broadcast_from_rank0=True)``). One copy on the first node.
* ``host-each``: every process loads the whole model into host memory and moves it to the
  GPU as the engine wraps it: transformers ``from_pretrained`` without a ``device_map`` under
  DDP, ZeRO-1/2 or an accelerate FSDP config without ``cpu_ram_efficient_loading``
  (``accelerate/utils/dataclasses.py`` ``FullyShardedDataParallelPlugin``: rank 0 only when
  it is set); TRL's trainers, OpenRLHF's Ray actors under ZeRO-2 (``openrlhf/models/actor.py``
  ``from_pretrained(..., device_map=None)``). One copy per process of a node.

The load dtype is the one the model is stored in: a trainer's ``param_dtype`` (fp32 where the
framework loads fp32: verl's and NeMo RL's actors), else the weight dtype. Light to import:
integer arithmetic only.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from rlmcost.frozen import dataclass


class InitLoad(StrEnum):
    """Where a framework materialises a model at start-up (module docstring)."""

    SHARDED = "sharded"
    GPU = "gpu"
    HOST_RANK0 = "host-rank0"
    HOST_EACH = "host-each"

    @property
    def words(self) -> str:
        return {
            InitLoad.SHARDED: "each rank builds only its shard",
            InitLoad.GPU: "whole on each GPU before sharding",
            InitLoad.HOST_RANK0: "whole in rank 0's host memory, broadcast shard by shard",
            InitLoad.HOST_EACH: "whole in host memory per process before sharding",
        }[self]


@dataclass(frozen=True)
class Loaded:
    """One model a device group loads at start-up: its whole size in its load dtype
    (``whole_bytes``), and what it keeps on each device once sharded (``weights``,
    ``gradients``: the resident states), exact bytes."""

    role: str
    whole_bytes: int
    weights: int
    gradients: int
    trained: bool


@dataclass(frozen=True)
class Transient:
    """What a start-up load adds: on each device, the model ``role`` held whole in place of
    its resident states (``device_extra_bytes`` above them, 0 when none is held whole on the
    GPU), and the host memory one node holds (``host_bytes_per_node``)."""

    mode: InitLoad
    role: str | None
    device_extra_bytes: int
    host_bytes_per_node: int


def transient(
    mode: InitLoad, models: Sequence[Loaded], gpus: int, gpus_per_host: int
) -> Transient:
    """The init-time load of a group of ``gpus`` devices (``gpus_per_host`` on one host, its
    CPUs and host memory: ``HardwareSpec.host_gpus``).

    Models load one after another and each whole copy is freed once the model is sharded, so
    the peak is the largest single load, taken with every other model already resident (the
    latest it could come). On the GPU (``gpu``, trained models only): the whole model in place
    of its resident weights, before the engine allocates its gradient buffers, so
    ``whole_bytes - weights - gradients`` more per device (0 where the steady state keeps the
    whole model anyway: DDP, ZeRO-1/2 without TP). In host memory: one whole copy on the
    first node (``host-rank0``) or one per process of a node (``host-each``, and ``gpu``,
    which builds the model on the host first)."""
    if mode is InitLoad.SHARDED or not models:
        return Transient(mode, None, 0, 0)
    per_node = max(1, min(gpus, gpus_per_host))
    copies = 1 if mode is InitLoad.HOST_RANK0 else per_node
    if mode is InitLoad.GPU:
        trained = [m for m in models if m.trained]
        if not trained:
            return Transient(mode, None, 0, 0)
        top = max(trained, key=lambda m: m.whole_bytes - m.weights - m.gradients)
        extra = max(0, top.whole_bytes - top.weights - top.gradients)
        host = max(m.whole_bytes for m in trained) * copies
        return Transient(mode, top.role, extra, host)
    top = max(models, key=lambda m: m.whole_bytes)
    return Transient(mode, top.role, 0, top.whole_bytes * copies)
