"""The bytes of a reference model that the framework swaps through its policy's model
(``Behaviour.reference_swap``: NeMo RL), as its policy workers hold them.

NeMo RL keeps no reference model of its own. At start-up each policy worker copies its model's
state dict, as the rank holds it, to pinned host memory and keeps it there all run; the
reference's log-prob forward copies the policy's current state dict to the host, copies the
reference's into the model's own parameter storage in place, runs, and copies the policy's back
(NVIDIA-NeMo/RL v0.6.0, ``nemo_rl/models/policy/workers/``):

* DTensor worker v2 (``dtensor_policy_worker_v2.py``:306-308 ``reference_model_state_dict =
  setup_reference_model_state(self.model)``; ``nemo_rl/models/automodel/setup.py``:380-399
  ``get_cpu_state_dict(model.state_dict().items(), pin_memory=True)``; ``use_reference_model``
  :782-826, ``val.copy_(self.reference_model_state_dict[k])`` at :799) and v1
  (``dtensor_policy_worker.py``:437-439, :1711-1757). ``get_cpu_state_dict``
  (``dtensor_policy_worker.py``:132-162) copies each tensor's local DTensor shard
  (``to_local_if_dtensor``) in its own dtype, and the model is loaded in float32 for master
  weights (``automodel/setup.py``:305 ``torch_dtype=torch.float32``; v1: ``dtensor_policy_
  worker.py``:255), FSDP2's ``MixedPrecisionPolicy(param_dtype=bfloat16)`` casting only the
  gathered compute copy: the copy is the rank's fp32 FSDP2 shard, the trainer's weights per
  device (``GroupMemory.own`` of the actor's update: its ``param_dtype`` and shard).
* Megatron worker (``megatron_policy_worker.py``:196-202 and ``nemo_rl/models/megatron/
  setup.py``:980-1104 ``setup_reference_model_state``: a second Megatron model in
  ``Float16Module``, its ``state_dict()`` copied to the host with ``.to(device="cpu")``;
  ``use_reference_model``:585-610 copies the policy's ``state_dict()`` out and the reference's
  in place, ``_apply_state_dict_to_model``:531-580 ``param_or_buf.copy_``): the model's own
  parameters, 16-bit (``megatron/setup.py``:445-453 ``params_dtype = torch.bfloat16`` under
  bf16 precision; the fp32 master copy is the distributed optimizer's, not the model's), on
  every rank of its TP x PP shard: the trainer's weights per device at the weight dtype.

The same bytes at v0.5.0 and v0.7.0 (``setup_reference_model_state`` from v0.6.0; v0.5.0
calls ``get_cpu_state_dict`` in the workers) and at 7ea279abf. So on the device the reference
forward holds one set of the policy's parameters, the reference's values in the policy's
storage, and the host holds the reference's copy all run, plus the policy's copy during the
reference forward. At start-up the device holds no reference beside the policy: the DTensor
worker copies the loaded policy's own state dict; the Megatron worker moves the policy to the
host while it builds and loads the reference, copies that to the host and moves the policy back
(``megatron_policy_worker.py``:196-202), so its device holds the bf16 reference alone for a
moment, less than the policy's states (:func:`device_residents`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Role
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement.device_groups import Task
from rlmcost.placement.head_peak import hf_trainer

if TYPE_CHECKING:
    from rlmcost.parallel.breakdown import MemoryBreakdown
    from rlmcost.placement.group_memory import GroupMemory


def reference_swap_bytes(g: GroupMemory) -> int:
    """Bytes per device of the reference's weights as the framework's policy worker holds
    them when it swaps the reference through the policy's model on group ``g`` (module
    docstring): the actor's update's weights per device (DTensor: the fp32 FSDP2 shard, the
    trainer's ``param_dtype``), or for a Megatron-core trainer (a layout other than ZeRO-3,
    ``head_peak.hf_trainer``) the same parameters at the weight dtype (bf16). 0 where the
    framework does not swap, the deployment is ideal, or the group does not train the actor
    beside a reference."""
    dep = g.s.deployment
    beh = None if dep.ideal else behaviour(dep.framework)
    if beh is None or not beh.reference_swap or Role.REFERENCE not in g.roles:
        return 0
    train = g.trains_here(Role.ACTOR)
    if train is None:
        return 0
    weights = int(g.own(train).weights)
    if hf_trainer(beh, g.layouts[train.index]):
        return weights
    wl = g.workload(train)
    return weights * wl.weight_dtype.bytes // wl.stored_dtype.bytes


def swapped_reference(g: GroupMemory) -> int:
    """:func:`reference_swap_bytes` where the placement holds idle models in host memory
    (``offload_idle``, the presets' way of placing NeMo RL's reference there), else 0 (the
    reference resident on the device as a model of its own, as the flag asks)."""
    return reference_swap_bytes(g) if g.s.placement.offload else 0


def idle_host_bytes(g: GroupMemory, role: Role, task: Task, swap: int) -> int:
    """Host bytes per device of ``role``, idle in host memory while ``task`` runs (under
    ``offload_idle``): its states, less gradients its trainer has freed
    (``GroupMemory.grads_freed``) where the reference is swapped (``swap`` > 0: NeMo RL's
    DTensor worker sets them to None after each update, and its ``use_reference_model`` copies
    out only the state dict), and the reference's copy as :func:`reference_swap_bytes`."""
    if swap and role is Role.REFERENCE:
        return swap
    w, gr, o = g.states(role)
    return w + o + (0 if swap and g.grads_freed(role, task) else gr)


def device_residents(g: GroupMemory) -> dict[Role, MemoryBreakdown]:
    """``g.residents`` less a swapped reference (:func:`swapped_reference`), which holds no
    device memory of its own between its forwards nor at start-up (module docstring): the
    models resident on the devices as the start-up peak (``placement.init_peak.group_init``)
    and the memory timeline's ``init`` and ``first step`` read them."""
    if not swapped_reference(g):
        return g.residents
    return {r: m for r, m in g.residents.items() if r is not Role.REFERENCE}
