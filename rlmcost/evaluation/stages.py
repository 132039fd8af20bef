"""The per-stage view of one iteration: an invocation's and a stage's work, depth, memory per
device (does it fit?), host memory and time (`rlmcost ppo|grpo|...`, :mod:`rlmcost.evaluation.
view`).

Memory per device of an invocation is its own bytes in its layout plus every other model's
resident states (:mod:`rlmcost.placement.group_cost`), with the deployment's terms (engine
reservation, logits peak, LoRA, offload, overhead; :mod:`rlmcost.deployment.memory`) unless the
deployment is ideal. A stage needs its largest invocation; it fits when that is at most the
device's capacity (what it gives programs; the datasheet's for the ideal iteration). Depth of a
stage: the sum of its invocations' depths (Table IV ‡, co-located), the disaggregated max
beside it; on several device groups, the schedule's critical path. Bytes use the workload's
dtypes (default bf16 weights, gradients, activations and KV cache; fp32 Adam states and
logits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Stage
from rlmcost.algorithms.model import Invocation
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.timing import PhaseTime

if TYPE_CHECKING:
    from rlmcost.placement.estimate import PlacementEstimate

EMPTY = MemoryBreakdown(0, 0, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class InvocationEstimate:
    """One invocation: exact work and depth, memory per device (co-residents included), time,
    and the host bytes per device its group holds meanwhile."""

    invocation: Invocation
    model: str
    sequences: int
    work_flops: int
    depth: int
    memory: MemoryBreakdown
    time: PhaseTime
    host_bytes: int = 0
    predicted_s: float = 0.0  # predicted seconds (>= the bound)
    phase: str = ""  # the phase name frameworks print (generation, update actor, ...)

    def to_json(self) -> dict[str, Any]:
        inv = self.invocation
        return {
            "role": str(inv.role),
            "kind": str(inv.kind),
            "model": self.model,
            "what": inv.describe(),
            "phase": self.phase,
            "sequences": self.sequences,
            "work_flops": self.work_flops,
            "depth": self.depth,
            "memory_bytes_per_device": self.memory.total,
            "host_memory_bytes_per_device": self.host_bytes,
            **self.time.to_json(),
            "time_s": self.predicted_s,
        }


@dataclass(frozen=True)
class StageEstimate:
    """One stage: sums of work and time, co-located depth, the peak invocation's memory."""

    stage: Stage
    invocations: tuple[InvocationEstimate, ...]
    hbm_bytes: int  # the device capacity the fit is checked against
    share: float = 0.0
    transfer_s: float = 0.0  # resharding and model switches in front of its invocations
    transfer_predicted_s: float = 0.0  # the same, predicted
    # with several device groups the stage's invocations overlap: its span on the critical
    # path (bound, predicted) and depth come from the schedule instead of the sums
    span: tuple[float, float, int] | None = None
    hardware: str = ""  # the peak's accelerator on several groups ("": the run's)

    @property
    def work_flops(self) -> int:
        return sum(i.work_flops for i in self.invocations)

    @property
    def depth(self) -> int:
        """Co-located: the invocations run one after another (Table IV ‡); on several groups,
        the schedule's critical path."""
        if self.span is not None:
            return self.span[2]
        return sum(i.depth for i in self.invocations)

    @property
    def depth_disaggregated(self) -> int:
        """Each invocation on its own devices at the same time: the longest chain."""
        return max(i.depth for i in self.invocations)

    @property
    def peak(self) -> InvocationEstimate:
        """The invocation that needs the most memory per device."""
        return max(self.invocations, key=lambda i: i.memory.total)

    @property
    def memory_bytes_per_device(self) -> int:
        """What the device shows at the stage's peak (nvidia-smi's view: engine reservation
        and per-process overhead included)."""
        return self.peak.memory.total

    @property
    def allocated_bytes_per_device(self) -> int:
        """The tensors alone at the peak (torch.cuda.max_memory_allocated's view)."""
        return self.peak.memory.total - self.peak.memory.overhead

    @property
    def host_bytes_per_device(self) -> int:
        return max(i.host_bytes for i in self.invocations)

    @property
    def fits(self) -> bool:
        return self.memory_bytes_per_device <= self.hbm_bytes

    @property
    def shortfall_bytes(self) -> int:
        """Bytes per device beyond the capacity (0 when it fits)."""
        return max(0, self.memory_bytes_per_device - self.hbm_bytes)

    @property
    def binding_term(self) -> str:
        """The largest component of the peak invocation's memory."""
        parts = self.peak.memory.to_json()
        parts.pop("total")
        return max(parts, key=lambda k: parts[k])

    @property
    def time(self) -> PhaseTime:
        total = PhaseTime(0.0, 0.0, self.transfer_s, 0.0)
        for inv in self.invocations:
            total = total + inv.time
        if self.span is not None:  # concurrent groups: the span on the critical path
            bound = self.span[0]
            return PhaseTime(total.compute_s, total.memory_s, bound,
                             min(bound, total.compute_bound_s))  # fmt: skip
        return total

    @property
    def time_s(self) -> float:
        """Predicted seconds: the invocations one after another, with the transfers (on
        several groups, the schedule's span)."""
        if self.span is not None:
            return self.span[1]
        return self.transfer_predicted_s + sum(i.predicted_s for i in self.invocations)

    def to_json(self) -> dict[str, Any]:
        breakdown = self.peak.memory.to_json()
        breakdown.pop("total")
        return {
            "work_flops": self.work_flops,
            "depth": self.depth,
            "depth_disaggregated": self.depth_disaggregated,
            "hardware": self.hardware,
            "memory_bytes_per_device": self.memory_bytes_per_device,
            "device_memory_bytes": self.memory_bytes_per_device,
            "allocated_bytes_per_device": self.allocated_bytes_per_device,
            "host_memory_bytes_per_device": self.host_bytes_per_device,
            "memory_breakdown_bytes": breakdown,
            "binding_term": self.binding_term,
            "peak_invocation": self.peak.invocation.describe(),
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "headroom_bytes": max(0, self.hbm_bytes - self.memory_bytes_per_device),
            **self.time.to_json(),
            "time_s": self.time_s,
            "transfer_time_s": self.transfer_s,
            "transfer_predicted_s": self.transfer_predicted_s,
            "share": self.share,
            "invocations": [i.to_json() for i in self.invocations],
        }


def binding(stages: dict[Any, StageEstimate]) -> StageEstimate:
    """The stage nearest its device's capacity (or furthest past it): on a mixed pool the
    device its peak is on gives the capacity and the device ``--json`` names."""
    return max(stages.values(), key=lambda s: s.memory_bytes_per_device - s.hbm_bytes)


def resident_states(result: PlacementEstimate) -> MemoryBreakdown:
    """What the busiest group's devices hold while a CPU verifier runs: each model's states
    present between its phases (``GroupEstimate.verifier``, :mod:`rlmcost.placement.
    group_idle`: weights; gradients and Adam states of the ones it trains, less what waits in
    host memory), else every model resident there."""
    from dataclasses import fields

    best = EMPTY
    for g in result.groups:
        parts = [g.verifier] if g.verifier is not None else list(g.resident.values())
        held = MemoryBreakdown(
            **{f.name: sum(getattr(p, f.name) for p in parts) for f in fields(MemoryBreakdown)}
        )
        best = max(best, held, key=lambda m: m.total)
    return best
