"""What one RL iteration under a placement costs: per stage, per phase, and in all.

:class:`PlacementEstimate` is the result of :func:`rlmcost.placement.iteration.combine`: its
groups, per stage the work, depth, peak memory per device and time on the critical path
(:class:`StageResult`), the predicted seconds by phase (:class:`Phase`), what stage fusion
saves (:class:`FusionGain`), and the iteration's bound, prediction, throughput and fit;
``to_json`` is the stable schema every query prints. Throughput and MFU conventions: the
module docstring of :mod:`rlmcost.placement.iteration` and :data:`MFU_CONVENTION`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm
from rlmcost.deployment.spec import Deployment
from rlmcost.frozen import dataclass
from rlmcost.memo import kept_property
from rlmcost.placement.device_groups import Placement
from rlmcost.placement.host_memory import HostCheck, host_capacity, host_check, node_bytes
from rlmcost.placement.jobs import GroupEstimate, Job, Transfer
from rlmcost.placement.lengths import LengthDist
from rlmcost.specs import HardwareSpec, ModelSpec, Workload
from rlmcost.timing import PEAK


@dataclass(frozen=True)
class StageResult:
    """One stage: work, depth, peak memory per device over its groups, time on the critical
    path (the longest group's share, after fusion)."""

    stage: Stage
    work_flops: int
    depth: int
    peak_memory_bytes_per_device: int
    time_lower_bound_s: float
    groups: tuple[str, ...]
    time_s: float = 0.0  # predicted, on the critical path

    def to_json(self) -> dict[str, Any]:
        return {
            "work_flops": self.work_flops,
            "depth": self.depth,
            "peak_memory_bytes_per_device": self.peak_memory_bytes_per_device,
            "time_lower_bound_s": self.time_lower_bound_s,
            "time_s": self.time_s,
            "groups": list(self.groups),
        }


@dataclass(frozen=True)
class Phase:
    """One named phase of the iteration (``generation``, ``update actor``, ``weight sync``...):
    predicted and bound seconds summed over the jobs or transfers that carry its name."""

    name: str
    key: str | None  # verl's metric key, where it has one
    time_s: float
    time_lower_bound_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verl_key": self.key,
            "time_s": self.time_s,
            "time_lower_bound_s": self.time_lower_bound_s,
        }


@dataclass(frozen=True)
class FusionGain:
    """What stage fusion took off the critical path, in seconds."""

    inter_stage_s: float  # assessment hidden under decoding
    intra_stage_s: float  # pipeline bubbles shared by the interleaved training pipelines

    @property
    def total_s(self) -> float:
        return self.inter_stage_s + self.intra_stage_s


@dataclass(frozen=True)
class PlacementEstimate:
    """One iteration of ``algorithm`` under ``placement`` (``to_json`` is the stable schema)."""

    algorithm: Algorithm
    placement: Placement
    groups: tuple[GroupEstimate, ...]
    stages: dict[Stage, StageResult]
    iteration_time_lower_bound_s: float
    iteration_depth: int
    critical_path: str
    syncs: tuple[Transfer, ...]
    fusion: FusionGain | None
    hardware: HardwareSpec
    workload: Workload
    lengths: LengthDist
    notes: tuple[str, ...] = field(default=())
    specs: Mapping[Role, ModelSpec] = field(default_factory=dict)
    values: Mapping[str, object] = field(default_factory=dict)  # B, K, S, T and the knobs
    calibration: str = PEAK.name
    deployment: Deployment = field(default_factory=lambda: Deployment(ideal=True))
    recommended_gpu_memory_utilization: float | None = None
    iteration_time_s: float = 0.0  # predicted steady-state seconds per iteration
    iteration_interval_s: tuple[float, float] = (0.0, 0.0)  # (low, high): perf.interval
    phases: tuple[Phase, ...] = ()
    tokens_per_iteration: int = 0  # prompt + response tokens the actor trains on
    group_hardware: Mapping[str, HardwareSpec] = field(default_factory=dict)  # group -> own
    prices: Mapping[str, float] = field(default_factory=dict)  # hardware -> USD per GPU-hour
    host_memory_gib: float | None = None  # the Run's host memory per host (None: the specs')

    if not TYPE_CHECKING:  # (type checkers see the field alone)

        def __getattr__(self, name: str) -> Any:
            """``notes`` written on their first read where the evaluation left them to write
            (``placement.later_notes.notes_later``); any other name missing as usual."""
            d = self.__dict__
            if name == "notes":
                later = d.get("_notes_later")
                if later is not None:
                    out = d["notes"] = later(self)
                    d.pop("_notes_later", None)
                    return out
                if "notes" in d:  # written by another reader meanwhile
                    return d["notes"]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        """The instance's fields with its notes written (a pickle or copy holds no function
        still to call)."""
        _ = self.notes
        return self.__dict__

    @property
    def gpus(self) -> int:
        return sum(g.gpus for g in self.groups)

    def jobs_of(self, kind: Kind) -> tuple[Job, ...]:
        """The iteration's jobs of ``kind`` (generation, forwards, training), group by group."""
        return tuple(j for g in self.groups for j in g.jobs if j.task.kind is kind)

    def hardware_of(self, group: str) -> HardwareSpec:
        """The accelerator ``group`` runs on (its own ``@``, else the run's)."""
        return self.group_hardware.get(group, self.hardware)

    @property
    def fleet(self) -> dict[str, int]:
        """GPUs per accelerator, in the groups' order: ``{"h20": 16, "h100-sxm": 8}``."""
        return dict(self._fleet)

    @kept_property
    def _fleet(self) -> tuple[tuple[str, int], ...]:
        """:attr:`fleet`'s items, kept per estimate (a plan's row reads it six times)."""
        out: dict[str, int] = {}
        hw, run = self.group_hardware, self.hardware
        for g in self.groups:
            name = hw.get(g.name, run).name  # hardware_of
            out[name] = out.get(name, 0) + g.gpus
        return tuple(out.items())

    @property
    def fleet_text(self) -> str:
        """``16 x h20 + 8 x h100-sxm`` (one accelerator: ``24 x h100-sxm``)."""
        return " + ".join(f"{n} x {hw}" for hw, n in self.fleet.items())

    @property
    def cost_per_iteration_usd(self) -> float | None:
        """USD of one iteration: predicted seconds / 3600 x the sum over the groups of GPUs
        x their accelerator's price per GPU-hour (:mod:`rlmcost.specs.prices`); None when an
        accelerator has no price."""
        if any(hw not in self.prices for hw in self.fleet):
            return None
        per_hour = sum(n * self.prices[hw] for hw, n in self.fleet.items())
        return self.iteration_time_s / 3600.0 * per_hour

    @property
    def cost_per_million_tokens_usd(self) -> float | None:
        """USD per 10^6 trained tokens (prompt + response tokens the actor trains on)."""
        cost = self.cost_per_iteration_usd
        if cost is None or not self.tokens_per_iteration:
            return None
        return cost / self.tokens_per_iteration * 1e6

    def cost_json(self) -> dict[str, Any]:
        """The ``cost`` block of the outputs, with its units and prices."""
        return {
            "per_iteration_usd": self.cost_per_iteration_usd,
            "per_million_tokens_usd": self.cost_per_million_tokens_usd,
            "usd_per_gpu_hour": {hw: self.prices.get(hw) for hw in self.fleet},
            "gpus": self.fleet,
            "units": "USD per iteration (predicted seconds x GPUs x USD per GPU-hour / 3600);"
                     " USD per 10^6 trained prompt + response tokens",
        }  # fmt: skip

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Trained tokens / (predicted iteration seconds x GPUs) (module docstring)."""
        if not self.iteration_time_s:
            return 0.0
        return self.tokens_per_iteration / (self.iteration_time_s * self.gpus)

    @property
    def mfu(self) -> float:
        """Iteration work / (predicted seconds x the sum over the groups of GPUs x their
        dense peak) (module docstring)."""
        if not self.iteration_time_s:
            return 0.0
        dtype = self.workload.compute_dtype
        peak = sum(g.gpus * self.hardware_of(g.name).peak(dtype) for g in self.groups)
        return self.work_flops / (self.iteration_time_s * peak)

    @property
    def stage_sum_predicted_s(self) -> float:
        return sum(s.time_s for s in self.stages.values())

    @property
    def problems(self) -> tuple[str, ...]:
        """What keeps the iteration from running beside the devices' memory: each group's
        problems, then each node over its host's memory (:attr:`host_check`)."""
        return tuple(p for g in self.groups for p in g.problems) + self.host_check.problems

    @kept_property
    def host_check(self) -> HostCheck:
        """The busiest node of each accelerator against its host's memory
        (:mod:`rlmcost.placement.host_memory`), kept per estimate and, for the deployments of
        a query that share their group estimates (``placement.group_key``), per those
        estimates in order (by identity, each kept beside its check) and the host memory
        given (nothing kept inside ``memo.plain``)."""
        given = self.host_memory_gib
        return memo.by_identities(_HOST_KEPT, self.groups,
                                  lambda: host_check(self._host_groups(), given), also=(given,))

    def _host_groups(self) -> list[tuple[HardwareSpec, int, int]]:
        """Each group as the host check reads it: accelerator, GPUs, host bytes per device."""
        hw, run = self.group_hardware, self.hardware
        return [(hw.get(g.name, run), g.gpus, g.host_peak_bytes_per_device) for g in self.groups]

    def host_nodes(self) -> dict[tuple[str, int], int]:
        """Host bytes of each node, keyed by (its accelerator, its index among that
        accelerator's nodes): the sum, over the node's devices, of each device's host bytes
        (its group's peak). The groups on one accelerator take consecutive devices of its
        nodes in their order, filling a node before the next (the packing of a Ray placement
        group with strategy "PACK", which OpenRLHF's openrlhf/cli/train_ppo_ray.py creates for
        its co-located models); one group of n devices thus puts min(n, host_gpus) x its bytes
        per device on a node, and two small groups on one node add up. Groups on different
        accelerators (``--groups rollout=8@h20,...``) are on different machines and share no
        node, each node as wide as its own accelerator's host (``HardwareSpec.host_gpus``: a
        GB200 compute tray of 4 GPUs, not the rack)."""
        return node_bytes(self._host_groups())

    @property
    def host_memory_bytes_per_node(self) -> int:
        """Host memory of the busiest node (:meth:`host_nodes`), whichever accelerator's."""
        return max(self.host_nodes().values(), default=0)

    @property
    def host_memory_node(self) -> HardwareSpec:
        """The accelerator of the busiest node (:meth:`host_nodes`; the run's without one)."""
        nodes = self.host_nodes()
        if not nodes:
            return self.hardware
        name = max(nodes, key=lambda k: nodes[k])[0]
        return next(self.hardware_of(g.name) for g in self.groups
                    if self.hardware_of(g.name).name == name)  # fmt: skip

    @property
    def host_memory_capacity_bytes_per_node(self) -> int | None:
        """Host memory of the busiest node's host (the Run's ``host_memory_gib``, else its
        accelerator's reference system, :func:`~rlmcost.placement.host_memory.host_capacity`);
        None: unknown, not checked."""
        return host_capacity(self.host_memory_node, self.host_memory_gib)[0]

    @property
    def work_flops(self) -> int:
        return sum(s.work_flops for s in self.stages.values())

    @property
    def fits(self) -> bool:
        """Every group within its devices' memory and every node within its host's."""
        return all(g.fits for g in self.groups) and not self.host_check.over

    @property
    def shortfall_bytes(self) -> int:
        return max(g.shortfall_bytes for g in self.groups)

    @property
    def peak_memory_bytes_per_device(self) -> int:
        return max(g.peak_memory_bytes_per_device for g in self.groups)

    @property
    def weight_sync_bytes(self) -> int:
        return sum(t.bytes for t in self.syncs)

    @property
    def reshard_bytes(self) -> int:
        return sum(t.bytes for g in self.groups for t in g.transfers if t.kind == "reshard")

    @property
    def offload_bytes(self) -> int:
        return sum(t.bytes for g in self.groups for t in g.transfers if t.kind == "offload")

    @property
    def stage_sum_s(self) -> float:
        """The stages' times one after another (what a synchronous loop takes)."""
        return sum(s.time_lower_bound_s for s in self.stages.values())

    @property
    def binding(self) -> GroupEstimate:
        """The group nearest its device's capacity (or furthest past it): on a mixed pool the
        device ``--json``'s ``hardware``, ``hbm_bytes_per_device`` and capacity name."""
        return max(self.groups, key=lambda g: g.peak_memory_bytes_per_device - g.hbm_bytes)

    def to_json(self) -> dict[str, Any]:
        binding = self.binding
        device = self.hardware_of(binding.name)
        return {
            "placement": self.placement.name,
            "algorithm": self.algorithm.name,
            "hardware": device.name,
            "gpus": self.gpus,
            "gpus_per_hardware": self.fleet,
            "cost": self.cost_json(),
            "staleness": self.placement.staleness,
            "groups": [g.to_json() for g in self.groups],
            "stages": {str(s): r.to_json() for s, r in self.stages.items()},
            "iteration_time_lower_bound_s": self.iteration_time_lower_bound_s,
            "iteration_time_s": self.iteration_time_s,
            "iteration_time_interval_s": list(self.iteration_interval_s),
            "tokens_per_iteration": self.tokens_per_iteration,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "mfu": self.mfu,
            "mfu_convention": MFU_CONVENTION,
            "phases": [p.to_json() for p in self.phases],
            "iteration_depth": self.iteration_depth,
            "critical_path": self.critical_path,
            "work_flops": self.work_flops,
            "weight_sync_bytes": self.weight_sync_bytes,
            "weight_sync": [t.to_json() for t in self.syncs],
            "reshard_bytes": self.reshard_bytes,
            "offload_bytes": self.offload_bytes,
            "fusion_gain_s": (
                {
                    "inter_stage": self.fusion.inter_stage_s,
                    "intra_stage": self.fusion.intra_stage_s,
                    "total": self.fusion.total_s,
                }
                if self.fusion
                else None
            ),
            "peak_memory_bytes_per_device": self.peak_memory_bytes_per_device,
            "hbm_bytes_per_device": device.hbm_bytes,
            "capacity_bytes_per_device": binding.hbm_bytes,
            "host_memory_bytes_per_node": self.host_memory_bytes_per_node,
            "host_memory_capacity_bytes_per_node": self.host_memory_capacity_bytes_per_node,
            "recommended_gpu_memory_utilization": self.recommended_gpu_memory_utilization,
            "problems": list(self.problems),
            "deployment": self.deployment.to_json(),
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "length_distribution": self.lengths.describe(self.workload.response_len),
            "notes": list(self.notes),
        }


_HOST_KEPT = memo.table()  # the group estimates and host memory -> their check

del PlacementEstimate.notes  # the field's default lives in ``__init__``; the class attribute
# would answer an instance whose notes are still to write (``PlacementEstimate.__getattr__``)


MFU_CONVENTION = (
    "iteration work (exact matrix-product FLOPs of generation, assessment and training; FLOP = "
    "one add or one multiply) / (predicted iteration seconds x GPUs x dense peak FLOP/s)"
)
