"""The host-link traffic of a device group's offloading trainer (ZeRO-Offload's transfers per
optimizer step, the between-phases offload's per iteration) and the parameters whose Adam step
runs on the host CPU: :class:`GroupOffload`, a base of
:class:`~rlmcost.placement.group_memory.GroupMemory` over the own bytes of
:class:`~rlmcost.placement.group_own.GroupTasks`. Split from :mod:`rlmcost.placement.group_own`
by purpose."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind
from rlmcost.deployment.spec import Offload
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.zero import optimizer_bytes_per_param
from rlmcost.perf.data_parallel import CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU, cpu_adam_s
from rlmcost.perf.host_offload import applies_to, pageable_offload_s
from rlmcost.placement.breakdown_ops import STATES, only
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_own import GroupTasks
from rlmcost.placement.group_train import group_deployment
from rlmcost.placement.pass_options import host_adam_impl, param_pageable_directions

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment
    from rlmcost.specs import HardwareSpec


def offload_notes(host_bytes_per_s: float, hw: HardwareSpec, dep: Deployment) -> list[str]:
    """The notes of an offloading deployment: the host link's rate (assumed) and, where the
    framework's CPU Adam runs on a bounded number of threads a rank on a host of a known CPU
    class (``HardwareSpec.host_cpu``), the thread rate that class takes."""
    notes = [f"offload over the host link at {host_bytes_per_s / 1e9:g} GB/s per direction "
             "(assumed)"]  # fmt: skip
    rate = CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU.get(hw.host_cpu or "")
    beh = None if dep.ideal else behaviour(dep.framework)
    threads = 0 if beh is None else beh.host_adam_threads
    if rate is not None and threads and Offload.OPTIMIZER in dep.train.offload:
        notes.append(f"CPU Adam on {threads} thread(s) a rank at {rate.value * 1e9:g} ns a "
                     f"parameter a thread, {hw.name}'s host CPU class {hw.host_cpu} "
                     f"({hw.host_cpu_source}; rlmcost.perf.data_parallel."
                     "CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU), or the host's DRAM bandwidth "
                     "shared by its ranks where that is slower")  # fmt: skip
    return notes


class GroupOffload(GroupTasks):
    """What a group's trainer moves over the host link and updates on the host."""

    def offload_traffic_bytes(self, task: Task) -> int | Fraction:
        """Host-link bytes per device and optimizer step of an offloading trainer: the
        gradient shard out and the updated weight shard back (optimizer offload: CPU Adam,
        Ren et al. 2021 §4), the gradient shard out (gradient offload), the weight shard in
        for the forward and again for the backward (parameter offload); plus the between-phases
        offload's transfers per iteration (:meth:`phase_traffic_bytes`) spread evenly over the
        iteration's optimizer steps (exact: steps x this is the iteration's bytes)."""
        self.own(task)
        before = self._before_offload.get(task.index)
        offload = self.train_offload()
        phase = self.phase_traffic_bytes(task)
        steps = self._int(task.invocation.passes) * self._int(task.invocation.steps)
        spread = Fraction(phase, steps) if phase else 0
        if before is None:
            return spread
        grads_out = Offload.OPTIMIZER in offload or Offload.GRADS in offload
        return spread + (
            (before.gradients if grads_out else 0)
            + (before.weights if Offload.OPTIMIZER in offload else 0)
            + (2 * before.weights if Offload.PARAMS in offload else 0)
        )

    def host_adam_params(self, task: Task) -> int:
        """Parameters per device whose Adam step runs on the host CPU (optimizer offload):
        the fp32 states moved off the device, K bytes per parameter (12: master weights, m,
        v; 8: m and v beside fp32 parameters, :func:`~rlmcost.parallel.zero.
        optimizer_bytes_per_param`)."""
        self.own(task)
        before = self._before_offload.get(task.index)
        if before is None or Offload.OPTIMIZER not in self.train_offload():
            return 0
        return before.optimizer // optimizer_bytes_per_param(self.workload(task).stored_dtype)

    def host_adam_s(self, task: Task, per_host: int) -> float:
        """Seconds of one host CPU Adam step over :meth:`host_adam_params` on each of the
        host's ``per_host`` devices by the CPU Adam the framework's trainer runs
        (:func:`~rlmcost.placement.pass_options.host_adam_impl`: DeepSpeedCPUAdam, torch's
        for-loop or fused AdamW; :func:`~rlmcost.perf.data_parallel.cpu_adam_s`) on the
        threads its Ray actor runs (``Behaviour.host_adam_threads``) at the rate of the host's
        CPU class (``HardwareSpec.host_cpu``); a framework's
        linear-attention mixers whole on every TP rank are in those states already
        (:meth:`~rlmcost.placement.group_own.GroupTasks.mixer_replicated`)."""
        beh = None if self.s.deployment.ideal else behaviour(self.s.deployment.framework)
        impl = host_adam_impl(beh, self._trainer_view.train)
        threads = 0 if beh is None else beh.host_adam_threads
        return cpu_adam_s(self.host_adam_params(task), per_host, impl=impl, threads=threads,
                          host_cpu=self.s.hardware.host_cpu)  # fmt: skip

    def phase_traffic_bytes(self, task: Task) -> int:
        """Host-link bytes per device and iteration of the between-phases offload of the
        model ``task`` trains: each moved state once to the host and once back, the
        parameter shard once per phase of the model on the group (verl loads it before and
        offloads it after the weight sync, the log-prob forward and the update:
        ``verl/workers/fsdp_workers.py``; the forward's in the forward's own phase,
        :meth:`forward_param_trip`) or as often as the framework's behaviour says
        (``Behaviour.param_round_trips``: NeMo RL once), the optimizer states and gradients
        once (around ``update_actor``); gradients the framework frees rather than copies, none
        (``Behaviour.grads_offload_frees``, :mod:`rlmcost.perf.host_offload`)."""
        if task.kind is not Kind.TRAIN or self.s.deployment.ideal:
            return 0
        m = only(self.own(task), STATES)
        offload = self.train_offload()
        beh = behaviour(self.s.deployment.framework)
        phases = self._train_param_trips(task)
        freed = beh is not None and beh.grads_offload_frees
        return 2 * (
            (m.optimizer if Offload.OPTIMIZER_IDLE in offload else 0)
            + (m.gradients if Offload.GRADS_IDLE in offload and not freed else 0)
            + (phases * m.weights if Offload.PARAMS_IDLE in offload else 0)
        )

    def pageable_offload_s(self, task: Task) -> float:
        """Seconds per iteration that the between-phases offload of the model ``task`` trains
        takes beyond its bytes at the host link's rate (those are in
        :meth:`phase_traffic_bytes`) where the framework copies through pageable host memory:
        the optimizer states tensor by tensor, one round trip
        (``Behaviour.optimizer_offload_pageable``: NeMo RL's ``move_optimizer``, verl's
        ``offload_megatron_optimizer`` / ``offload_fsdp_optimizer``), and the parameter shard's
        pageable directions once per phase of the model
        (:func:`~rlmcost.placement.pass_options.param_pageable_directions`);
        all at :data:`~rlmcost.perf.host_offload.PAGEABLE_OFFLOAD_BYTES_PER_S` less their link
        time, on a PCIe-class host only (:func:`~rlmcost.perf.host_offload.applies_to`)."""
        beh = behaviour(self.s.deployment.framework)
        if task.kind is not Kind.TRAIN or self.s.deployment.ideal or beh is None or \
                not applies_to(self.s.hardware.host_link_bandwidth_bytes_per_s):  # fmt: skip
            return 0.0
        offload = self.train_offload()
        m = only(self.own(task), STATES)
        moved = 0
        if beh.optimizer_offload_pageable and Offload.OPTIMIZER_IDLE in offload:
            moved += 2 * int(m.optimizer)
        if Offload.PARAMS_IDLE in offload:
            ways = param_pageable_directions(beh, self._trainer_view)
            moved += ways * self._train_param_trips(task) * int(m.weights)
        return max(0.0, pageable_offload_s(moved) - moved / self.s.host_bytes_per_s)

    @property
    def _trainer_view(self):  # noqa: ANN202 - Deployment
        """The deployment as the group's trainer sees it (its own layout: ``group_train``)."""
        return group_deployment(self.s.deployment, self.group.name)

    def forward_param_trip(self, task: Task, end: str = "value") -> tuple[int, float]:
        """The trained model's parameter round trip around one of its forwards, timed in the
        forward's phase: (link bytes per device, seconds at ``end``). verl loads the shard
        before ``compute_log_prob`` and offloads it after, inside
        ``marked_timer("old_log_prob")`` (``verl/workers/fsdp_workers.py``
        ``compute_log_prob``: ``load_fsdp_model_to_gpu`` / ``offload_fsdp_model_to_cpu``;
        ``megatron_workers.py`` alike; volcengine/verl b25bb7d4f): the shard's bytes both ways
        at the host link, its pageable directions at
        :data:`~rlmcost.perf.host_offload.PAGEABLE_OFFLOAD_BYTES_PER_S` on a PCIe-class host.
        (0, 0.0) unless :meth:`_own_phase_trip` (the training job then leaves it out)."""
        train = self._own_phase_trip(task)
        if train is None:
            return 0, 0.0
        beh = behaviour(self.s.deployment.framework)
        assert beh is not None
        weights = int(only(self.own(train), STATES).weights)
        link_bytes = 2 * weights
        seconds = link_bytes / self.s.host_bytes_per_s
        if applies_to(self.s.hardware.host_link_bandwidth_bytes_per_s):
            paged = param_pageable_directions(beh, self._trainer_view) * weights
            seconds += max(0.0, pageable_offload_s(paged, end) - paged / self.s.host_bytes_per_s)
        return link_bytes, seconds

    def _own_phase_trip(self, task: Task) -> Task | None:
        """The training task whose parameter shard goes to the GPU and back around the
        forward ``task`` in the forward's own phase: a forward of a model the group trains
        under a between-phases parameter offload (``params-idle``), in a framework that
        loads and offloads around each phase (``Behaviour.param_round_trips`` None: verl)."""
        beh = behaviour(self.s.deployment.framework)
        if task.kind is not Kind.FORWARD or self.s.deployment.ideal or beh is None \
                or beh.param_round_trips is not None \
                or Offload.PARAMS_IDLE not in self.train_offload():  # fmt: skip
            return None
        return next((t for t in self.tasks if t.kind is Kind.TRAIN and t.role is task.role),
                    None)  # fmt: skip

    def _train_param_trips(self, task: Task) -> int:
        """The parameter round trips the training ``task`` carries: the framework's count
        (``Behaviour.param_round_trips``), else one per phase of the model on the group less
        the forwards that carry their own (:meth:`forward_param_trip`)."""
        beh = behaviour(self.s.deployment.framework)
        if beh is not None and beh.param_round_trips:
            return beh.param_round_trips
        mine = [t for t in self.tasks if t.role is task.role]
        return len(mine) - sum(1 for t in mine if self._own_phase_trip(t) is not None)
