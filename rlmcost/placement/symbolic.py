"""Table IX: per stage, global work, global depth and peak memory per device group, symbolic.

For every configuration (``configs``) on the paper's canonical model (every role CANONICAL,
or one symbolic model per role with ``distinct=True``), under the caption's assumptions: Adam
without activation checkpointing (a trained model holds 4|M| model states and M_Act), frozen
models |M| and M_Inf, generation |M| and M_KV, and sample-time log-probs taken from generation.

* Work: the sum of the stage's invocations (``algorithms.cost.invocation_cost``); placement,
  fusion and asynchrony never change it. A shared actor-critic drops the critic's invocations
  and adds its d x 1 value head to the actor's: B K T x 2d in Generation (the values come with
  the sampled tokens, as the log-probs do), E_ppo B K (S + T) x 3 x 2d in Training.
* Depth: inside a group a stage's invocations add up; across groups the stage takes the
  longest (``schedule.stage_spans``). Intra-stage fusion interleaves the training pipelines
  that share a group, so their depths overlap (max). The iteration depth is the steady-state
  period of ``schedule`` (sum of the stages when synchronous, max(G + A, T) when rollout and
  training overlap under staleness). Layouts do not change global depth (Table VIII: the
  cross-rank levels complete the same reduction trees) and resharding is a collective whose
  logarithmic depth Table III suppresses.
* Memory, in elements, per device group (one copy of each model the group holds, data not
  split, as Table IV counts it): every model placed on the group stays resident (temporal
  multiplexing), plus the transient of the running invocation. A model the group trains holds
  4|M|; a frozen one |M|; a trainable model the group only reads (its trainer is elsewhere,
  asynchrony) keeps the shadow copy M_sh = |M| (§IV-E). Hybrid layouts add, while an invocation
  runs in a layout other than its model's training layout, the second copy (|pi^TP| for TP
  generation, |V^TP,PP| for the critic's TP/PP forward), the "extra memory while both layouts
  exist" (§IV-D). Fusion keeps the assessment buffer M_Inf live beside the KV cache while
  generation streams, and both training pipelines' M_Act live while they interleave (§IV-C).
  The stage's peak is the max over the groups active in it (Table IX caption).

The pieces (notation with its exact expression, and each placed invocation's work, depth and
memory) are :mod:`rlmcost.placement.symbolic_pieces`. Big-O forms come from ``blocks.big_o``
under d_ff = O(d), with D_gen's bound D_prefill(S) + T D_dec(S + T) and max replaced by sum
(equal up to a constant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import sympy as sp

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.cost import resolve_values, symbolic_archs
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import Options, configure
from rlmcost.arch import Arch
from rlmcost.frozen import dataclass
from rlmcost.placement.configs import build
from rlmcost.placement.device_groups import Placement, Task
from rlmcost.placement.kinds import Config
from rlmcost.placement.schedule import Cycle, Unit, edges, period
from rlmcost.placement.symbolic_pieces import (
    Piece,
    TaskCost,
    maximum,
    order_of,
    plus,
    role_state,
    second_layout,
    task_cost,
)

DEFAULT_STALENESS = 1
"""Table IX's asynchronous rows use k = 1, one-step off-policy (Noukhovitch et al. 2024)."""


@dataclass(frozen=True)
class Row:
    """One Table IX row: a stage (None: the whole iteration) under one configuration.

    ``groups``: peak memory of each group active in the stage; ``cycles``: for the iteration
    row, the precedence cycles whose means make up the period (``schedule``).
    """

    config: str
    stage: Stage | None
    work: Piece
    depth: Piece
    memory: Piece
    groups: dict[str, Piece] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.stage.label if self.stage is not None else "Iteration"

    def big_o(self) -> dict[str, sp.Expr]:
        """O(.) of work, depth (with D_gen's bound) and memory, d_ff = O(d)."""
        return {
            "work": order_of(self.work.expr),
            "depth": order_of(self.depth.upper),
            "memory": order_of(self.memory.expr),
        }

    def to_json(self) -> dict[str, Any]:
        o = self.big_o()
        return {
            "configuration": self.config,
            "stage": str(self.stage) if self.stage else "iteration",
            "work": self.work.text,
            "depth": self.depth.text,
            "peak_memory_per_device_group": self.memory.text,
            "memory_per_group": {g: p.text for g, p in self.groups.items()},
            "explicit": {
                "work_flops": str(self.work.expr),
                "depth": str(self.depth.expr),
                "memory_elements": str(self.memory.expr),
            },
            "big_o": {k: f"O({v})" for k, v in o.items()},
        }


def _units(costs: Sequence[TaskCost], fusion: bool) -> list[tuple[str, str, Stage, Piece]]:
    """(key, group, stage, depth) per schedulable unit; under fusion the training tasks of one
    group merge into one unit whose depth is the max of theirs (interleaved pipelines)."""
    units: list[tuple[str, str, Stage, Piece]] = []
    merged: dict[str, list[TaskCost]] = {}
    for c in costs:
        t = c.task
        if fusion and t.kind is Kind.TRAIN:
            merged.setdefault(t.group, []).append(c)
            continue
        units.append((f"{t.index}", t.group, t.stage, c.depth))
    for group, cs in merged.items():
        key = "+".join(str(c.task.index) for c in cs)
        units.append((key, group, Stage.TRAINING, maximum([c.depth for c in cs])))
    order = list(Stage)
    units.sort(key=lambda u: (order.index(u[2]), int(u[0].split("+")[0])))
    return units


def configuration_rows(
    alg: Algorithm,
    placement: Placement,
    archs: Mapping[Role, Arch],
    values: Mapping[str, object],
) -> list[Row]:
    """Table IX rows (each stage, then the iteration) of ``alg`` under ``placement``."""
    tasks = placement.tasks(alg)
    costs = [task_cost(t, archs[t.role], values, placement.hybrid) for t in tasks]
    units = _units(costs, placement.fusion)
    rows: list[Row] = []
    for stage in alg.stages:
        mine = [c for c in costs if c.task.stage is stage]
        if not mine:
            continue
        group_depth: dict[str, list[Piece]] = {}
        for _, group, s, depth in units:
            if s is stage:
                group_depth.setdefault(group, []).append(depth)
        memory = {
            g: _group_memory(g, stage, tasks, costs, archs, placement)
            for g in dict.fromkeys(c.task.group for c in mine)
        }
        rows.append(
            Row(
                str(placement.name),
                stage,
                plus([c.work for c in mine]),
                maximum([plus(ds) for ds in group_depth.values()]),
                maximum(list(memory.values())),
                memory,
            )
        )
    rows.append(_iteration_row(placement, rows, units))
    return rows


def _group_memory(
    group: str,
    stage: Stage,
    tasks: Sequence[Task],
    costs: Sequence[TaskCost],
    archs: Mapping[Role, Arch],
    placement: Placement,
) -> Piece:
    """Resident states of every model on ``group`` plus the largest per-task extra among the
    stage's tasks there (second layout, transient, fused neighbours' transients)."""
    here = [t for t in tasks if t.group == group]
    states = [
        role_state(r, group, tasks, archs, placement.shared_backbone)
        for r in dict.fromkeys(t.role for t in here)
    ]
    extras = []
    for c in costs:
        t = c.task
        if t.group != group or t.stage is not stage:
            continue
        parts = [second_layout(t, tasks, archs[t.role], placement.hybrid), c.transient]
        if placement.fusion and t.kind is Kind.GENERATE:
            streamed = [
                o.transient
                for o in costs
                if o.task.group == group and o.task.stage is Stage.ASSESSMENT
            ]
            parts.append(maximum(streamed))
        if placement.fusion and t.kind is Kind.TRAIN:  # every interleaved pipeline is live
            parts = [parts[0]] + [
                o.transient for o in costs if o.task.group == group and o.task.kind is Kind.TRAIN
            ]
        extras.append(plus(parts))
    return plus([*states, maximum(extras)])


def _iteration_row(
    placement: Placement, rows: Sequence[Row], units: Sequence[tuple[str, str, Stage, Piece]]
) -> Row:
    """The iteration: work and memory over the stages; depth = the steady-state period.

    Synchronous (k = 0): the sum of the stage spans. With staleness k >= 1: the max over the
    groups' own cycles and the mixed cycles that ``schedule.period`` keeps, where the chains
    through the stages (one forward pass and the iteration barrier of shift k + 1) combine into
    (sum of the stage spans) / (k + 1): the longest such chain is the sum of the spans, since
    every stage barrier connects all units.
    """
    spans = plus([r.depth for r in rows])
    k = placement.staleness
    work, memory = _stages_sum(rows), _stages_max(rows)
    if k == 0:
        # barrier-synchronous: stages run back to back (the max cycle mean agrees; tested)
        return Row(str(placement.name), None, work, spans, memory)
    sched = [Unit(key, group, stage, depth.expr) for key, group, stage, depth in units]
    cycles = period(sched, edges(sched, k), symbolic=True).cycles
    notation = {key: depth for key, _, _, depth in units}
    stage_of = {key: list(Stage).index(stage) for key, _, stage, _ in units}
    first, last = min(stage_of.values()), max(stage_of.values())
    firsts = {g for key, g, _, _ in units if stage_of[key] == first}
    lasts = {g for key, g, _, _ in units if stage_of[key] == last}
    means = []
    if not firsts & lasts:
        cycles = tuple(c for c in cycles if not _is_chain(c, stage_of, k))
        # sum of spans <= sum of the groups' own cycles: dominated with <= k + 1 groups
        if len({g for _, g, _, _ in units}) > k + 1:
            means.append(_divided(spans, k + 1))
    for c in cycles:
        means.append(_divided(plus([notation[key] for key in c.keys]), c.shift))
    return Row(str(placement.name), None, work, maximum(means), memory)


def _divided(p: Piece, n: int) -> Piece:
    if n == 1:
        return p
    return Piece(f"({p.text})/{n}", rf"\frac{{{p.latex}}}{{{n}}}", p.expr / n, p.upper / n)


def _is_chain(c: Cycle, stage_of: Mapping[str, int], k: int) -> bool:
    """One pass forward through the stages and the iteration barrier back (shift k + 1)."""
    order = [stage_of[key] for key in c.keys]
    descents = sum(a > b for a, b in zip(order, order[1:] + order[:1], strict=True))
    return c.shift == k + 1 and descents == 1


def _stages_sum(rows: Sequence[Row]) -> Piece:
    work = plus([r.work for r in rows]).expr
    return Piece("sum of the stages", r"\text{sum of the stages}", work)


def _stages_max(rows: Sequence[Row]) -> Piece:
    memory = maximum([r.memory for r in rows]).expr
    return Piece("max of the stages", r"\text{max of the stages}", memory)


def placement_rows(
    config: Config | str,
    algorithm: str | Algorithm = "ppo",
    *,
    staleness: int | None = None,
    distinct: bool = False,
    options: Options | None = None,
) -> list[Row]:
    """Table IX rows of ``algorithm`` under ``config`` on the canonical model(s), symbolic."""
    alg = configure(get_algorithm(algorithm), options or Options())
    cfg = Config(config)
    k = (DEFAULT_STALENESS if staleness is None else staleness) if cfg.value in _ASYNC else None
    placement = build(cfg, alg, staleness=k)
    archs = symbolic_archs(alg, distinct)
    values = resolve_values(alg, None, options)
    return configuration_rows(alg, placement, archs, values)


_ASYNC = (Config.ASYNC.value, Config.COMBINED.value)


def table_ix(
    algorithm: str | Algorithm = "ppo", staleness: int = DEFAULT_STALENESS, distinct: bool = False
) -> dict[Config, list[Row]]:
    """Every configuration's rows (Table IX): the seven configurations on ``algorithm``."""
    out = {}
    for cfg in Config:
        out[cfg] = placement_rows(
            cfg, algorithm, staleness=staleness if cfg.value in _ASYNC else None, distinct=distinct
        )
    return out
