"""One query resolved and kept for every deployment of it (:func:`query_of`), below the
evaluation that reads it (:mod:`rlmcost.evaluation.deployment` re-exports its names).

A query is a :class:`~rlmcost.run.Run` less its deployment and GPU counts; the evaluation of
each deployment (:func:`rlmcost.evaluation.deployment.evaluate_in`) takes its resolved
algorithm, workload, models, hardware, efficiency, values, lengths and host link from here,
with the group estimates and notes already made for the query's other deployments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlmcost import memo
from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import configure, resolve_values
from rlmcost.deployment.resolve import (
    models_given,
    resolve_models,
    resolve_workload,
    with_image_tokens,
)
from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import group_of_one
from rlmcost.parallel.validate import subshard_note
from rlmcost.placement.inputs import Setup, auto_tp
from rlmcost.placement.jobs import GroupEstimate
from rlmcost.placement.lengths import LengthDist, parse_length_dist
from rlmcost.placement.rank_order import nvlink_reach
from rlmcost.placement.transfer import host_bandwidth_bytes_per_s as default_host_bandwidth
from rlmcost.run.spec import WorkloadSpec
from rlmcost.specs import HardwareSpec, ModelSpec, Workload, get_hardware
from rlmcost.timing import Efficiency

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from rlmcost.run.spec import Run


# -- the query every deployment of it shares ---------------------------------------------------
#
# What every deployment of one query shares: the resolved algorithm, workload, models,
# hardware, efficiency, values, lengths and host link, and the group estimates already made.
#
# A query is a :class:`~rlmcost.run.Run` less its deployment and GPU counts (the run's GPUs stay
# in it under ``rank_order="random"``, :mod:`rlmcost.placement.rank_order`): the algorithm and
# its knobs, the models, the workload, the hardware (its calibration and host link) and the
# attention counting. :func:`query_of` resolves it once (``deployment.resolve``) and keeps the
# result, so the deployments of one query (the planner's candidates, ``rlmcost placements``,
# :func:`~rlmcost.evaluation.batch.evaluate_many`) resolve nothing again and share one
# ``Setup.groups_seen`` (:mod:`rlmcost.placement.group_key`): a group evaluated for one
# deployment is not evaluated again for another that gives it the same inputs. Inside
# :func:`rlmcost.memo.plain` nothing is kept (the evaluation the fast path is tested against).

MAX_QUERIES = 16
"""Queries whose resolution and group estimates are kept (the oldest goes first)."""

MAX_GROUPS = 20_000
"""Group estimates kept per query before they start over (bounds a long search's memory)."""


@dataclass
class Query:
    """One query resolved (the section comment above)."""

    alg: Algorithm
    workload: Workload
    specs: Mapping[Role, ModelSpec]
    hardware: HardwareSpec
    efficiency: Efficiency | None
    values: Mapping[str, Any]
    lengths: LengthDist
    host_bytes_per_s: float
    groups_seen: dict[Any, Any] | None = None
    group_note: str | None = None  # a group method run with K = 1 (frameworks.presets)
    _tp: dict[Role, int] = field(default_factory=dict)
    _kept: dict[Any, Any] = field(default_factory=dict)  # values kept (:meth:`kept`)

    def auto_tp(self, role: Role) -> int:
        """The model's TP when the evaluation chooses it (``placement.inputs.auto_tp``)."""
        if role not in self._tp:
            spec = self.specs[role]
            weight_bytes = spec_params(spec) * self.workload.weight_dtype.bytes
            self._tp[role] = auto_tp(spec.arch(), self.hardware, weight_bytes)
        return self._tp[role]

    def kept(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, kept for the query's deployments under ``key`` (hashable; it and the
        query determine the value); an exception is not kept."""
        try:
            return self._kept[key]
        except KeyError:
            if len(self._kept) >= MAX_GROUPS:
                self._kept.clear()
            out = self._kept[key] = make()
            return out

    def context_notes(self) -> tuple[str | None, ...]:
        """Each model's note on the context it is run at (``ModelSpec.context_note``), per
        invocation that runs a model, in the algorithm's order."""
        s = self.workload.prompt_len
        n = s + self.workload.response_len
        return self.kept("context notes", lambda: tuple(
            self.specs[inv.role].context_note(n, s) for inv in self.alg.invocations
            if inv.kind is not Kind.VERIFY and inv.role in self.specs
        ))  # fmt: skip

    def spec_notes(self) -> tuple[str | None, ...]:
        """Each model's decode convention (``attention_note``) and approximations."""
        return self.kept("spec notes", lambda: tuple(
            note for spec in self.specs.values() for note in (spec.attention_note(), *spec.notes)
        ))  # fmt: skip

    def kv_notes(self, g: GroupEstimate, setup: Setup) -> tuple[str, ...]:
        """A note per generation job of group estimate ``g`` whose engine is wider than the
        model's KV heads (each rank holds one head, replicated); kept per estimate (a group
        estimate belongs to one query)."""
        hit = self._kept.get(("kv notes", id(g)))
        if hit is not None and hit[0] is g:
            return hit[1]
        out: list[str] = []
        for j in g.jobs:
            arch = setup.arch(j.task.role)
            kv = int(arch.n_kv_heads)
            if j.task.kind is Kind.GENERATE and j.layout.tp > kv:
                out.append(
                    f"{j.task.label()} on {g.name}: tp={j.layout.tp} > kv heads={kv}: each rank "
                    f"holds one KV head, replicated on {j.layout.tp // kv} ranks (vLLM), so the "
                    "KV cache per rank does not shrink below one head"
                )
            elif j.task.kind is Kind.TRAIN and j.layout.tp > kv:  # a Megatron-core trainer
                out.append(f"{j.task.label()} on {g.name}: "
                           + subshard_note(j.layout.tp, int(arch.n_heads), kv))
        notes = tuple(out)
        self._kept.pop(("kv notes", id(g)), None)  # another estimate's, freed since
        self.kept(("kv notes", id(g)), lambda: (g, notes))
        return notes


_QUERIES: dict[Any, Query] = {}


def query_key(run: Run) -> memo.Hashed:
    """The fields of ``run`` its query consists of (the section comment above), hashed once;
    kept by the identities of its sections (the planner's candidates share them)."""
    c = run.cluster
    gpus = c.gpus if c.rank_order == "random" else None  # placement.rank_order's rule
    one = run.deployment.framework if run.workload.samples_per_prompt == 1 else None
    also = (c.hardware, c.calibration, c.host_bandwidth_gb_per_s, run.attention, gpus, one)
    return memo.by_identities(_KEYS, (run.algorithm, run.models, run.workload), lambda: memo.Hashed(
        (run.algorithm, run.models.model_dump_json(), run.workload, *also)), also=also)


_KEYS = memo.table()


def query_of(run: Run, efficiency: Efficiency | None = None) -> Query:
    """``run``'s query resolved, kept per query unless ``efficiency`` is given or inside
    :func:`rlmcost.memo.plain`."""
    if efficiency is not None or not memo.enabled():
        return resolve(run, efficiency)
    key = query_key(run)
    q = _QUERIES.get(key)
    if q is None:
        q = resolve(run, None)
        q.groups_seen = {}
        while len(_QUERIES) >= MAX_QUERIES:
            del _QUERIES[next(iter(_QUERIES))]
        _QUERIES[key] = q
    elif len(q.groups_seen or ()) > MAX_GROUPS:
        q.groups_seen = {}
    return q


def resolve(run: Run, efficiency: Efficiency | None) -> Query:
    """Resolve the names and defaults of ``run``'s query (``deployment.resolve``); the
    efficiency is ``efficiency``, else the Run's calibration profile, else the profile
    shipped for the hardware (None: datasheet peaks)."""
    c, w, m = run.cluster, run.workload, run.models
    options = run.options()
    alg = configure(get_algorithm(run.algorithm.name), options)
    one = group_of_one(run.deployment.framework, alg) if w.samples_per_prompt == 1 else None
    wl = resolve_workload(alg, _dtype_base(run), w.prompts, w.samples_per_prompt, w.prompt_len,
                          w.response_len, one is not None)  # fmt: skip
    specs = resolve_models(alg, m.actor, models_given(m.given()))
    wl = with_image_tokens(wl, w.image_tokens, specs)
    if w.turns > 1 or w.observation_tokens or w.tool_latency_s:
        wl = with_turns(wl, run)
    hw = get_hardware(c.hardware)
    if c.calibration is not None and efficiency is not None:
        raise SpecError("give either efficiency or calibration, not both")
    if efficiency is None:
        from rlmcost.calibrate import resolve_profile

        efficiency = resolve_profile(c.calibration, hw)
    values = resolve_values(
        alg,
        {"B": wl.prompts, "K": wl.samples_per_prompt, "S": wl.prompt_len, "T": wl.response_len},
        options,
    )
    dist = parse_length_dist(w.length_dist)
    hw = nvlink_reach(hw, c.rank_order, c.gpus)  # the groups' NVLink reach
    given_host = c.host_bandwidth_gb_per_s
    host = _host_bandwidth(hw, given_host * 1e9 if given_host is not None else None)
    return Query(alg, wl, specs, hw, efficiency, values, dist, host,
                 group_note=one if alg.min_group > 1 else None)


def with_turns(wl: Workload, run: Run) -> Workload:
    """``wl`` with the Run's multi-turn rollout (checked against T: ``placement.turns``) and
    its schedule (``run.defaults.turn_schedule``)."""
    from rlmcost.placement.turns import check_turns
    from rlmcost.run.defaults import turn_schedule

    w = run.workload
    if w.turns == 1 and (w.observation_tokens or w.tool_latency_s):
        raise SpecError("--observation-tokens and --tool-latency come after a turn: give "
                        "--turns 2 or more with them")  # fmt: skip
    if get_algorithm(run.algorithm.name).offline:
        raise SpecError(f"--turns: {run.algorithm.name} trains on a fixed dataset and generates "
                        "no rollouts; leave --turns out or use an online algorithm (grpo, ppo)")
    check_turns(w.turns, w.observation_tokens, wl.response_len)
    return wl.model_copy(update={"turns": w.turns, "observation_tokens": w.observation_tokens,
                                 "tool_latency_s": w.tool_latency_s,
                                 "turn_schedule": turn_schedule(run)})  # fmt: skip


def _dtype_base(run: Run) -> Workload | None:
    """The workload the counts start from when the Run's dtypes are not the defaults
    (bf16, fp32 logits); None: the defaults."""
    w = run.workload
    if w.dtypes() == WorkloadSpec().dtypes():
        return None
    group = get_algorithm(run.algorithm.name).default_group
    return Workload.model_validate({"samples_per_prompt": group, **w.dtypes()})


def spec_params(spec: ModelSpec) -> int:
    """|M| of a model spec (LM head)."""
    from rlmcost.compiled.blocks import params

    return params(spec.arch())


def _host_bandwidth(hw: HardwareSpec, given: float | None) -> float:
    if given is None:
        return default_host_bandwidth(hw)
    if not (math.isfinite(given) and given > 0):
        raise SpecError(
            f"host bandwidth {given} B/s must be a positive number; give GB/s per direction, "
            "e.g. --host-bandwidth 64"
        )
    return given
