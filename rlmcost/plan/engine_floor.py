"""The engines' floor of branch and bound (:mod:`rlmcost.plan.rl_search`): what the exact
evaluation of one candidate says of every other candidate that runs the same engines apart.

A group that only generates through an inference engine in its own layout (the ``rollout``
group of the families with engines apart, :data:`rlmcost.plan.screen.APART` and
``APART_STALE``) has one estimate under every trainer layout: its jobs and transfers read the
engine's TP, PP and EP, its reservation and its GPUs, never the trainer's layout
(``placement/group_key.py``, which keys the estimates a query shares so and which
``tests/test_fast_equal.py`` holds to the evaluation without them). The schedule runs a
group's units one after another per iteration (a version gate only stretches the
generation, ``placement/version_gate.py`` ``stretch`` >= 1), and a framework's refit into
engines apart stalls the engines while the weights load: they take no decode step meanwhile
(``placement/iteration.py``). So every iteration of such a candidate lasts at least the larger
of its engines' units and their generation plus the refit (the screen's
:func:`~rlmcost.plan.screen_refit.refit_apart_s`, the refit's seconds as
``placement/weight_syncs.py`` predicts them; the controller's units on the engines' group may
overlap the refit in a synchronous loop, the screen's own rule, so they are not added to it),
predicted, synchronous or not.

The screen cannot know the generation's prediction before an evaluation: its decode term is a
roofline, the engine's weights read once per step for the longest response, which it takes at
0 for a mixture of experts and for a streaming rollout (``--partial-rollout``: no longest
sample per iteration). Under a large-MoE tier those candidates then all bound at the
controller's seconds (about 3 s for NeMo RL's 235 B on 128 H100) while the engines' group is
busy about 51 s, so none was ever skipped. The first evaluation of a candidate with given
engines says their units and generation (:func:`engines_busy_s`, kept with the row:
:class:`ExactRow`); each later candidate with the same engines (:meth:`EngineFloors.key`) is
then skipped where that floor places it past the k-th row. The search keeps the screen's
order, so the top rows are those of the screen's bound alone; fewer candidates are evaluated
(the Pareto front and the best of each topology, over the rows evaluated, may miss a row they
had). Light to import (no numpy at import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.plan.families import ROLLOUT

if TYPE_CHECKING:
    from rlmcost.plan.floor_tasks import Check
    from rlmcost.plan.rl_candidates import RLCandidate
    from rlmcost.run.spec import Run


class ExactRow(dict[str, Any]):
    """A row of an exact evaluation (:func:`rlmcost.plan.rl_candidates.evaluate_row`), with
    ``engines_s``: its engines' units and generation (:func:`engines_busy_s`), and
    ``layouts``: what each of its device groups runs where it fits
    (:func:`rlmcost.plan.rl_groups.group_layouts`, read where it was evaluated: a Dask worker
    returns it with the row, so the client need not evaluate a shown row again on cold
    caches); neither is one of the row's keys (the plan's JSON stays the row's numbers)."""

    __slots__ = ("engines_s", "layouts")

    def __init__(self, row: dict[str, Any], engines_s: tuple[float, float] | None,
                 layouts: list[dict[str, Any]] | None = None) -> None:  # fmt: skip
        super().__init__(row)
        self.engines_s = engines_s
        self.layouts = layouts


def engines_busy_s(e: Any) -> tuple[float, float] | None:
    """Predicted seconds per iteration of the units of estimate ``e``'s ``rollout`` group
    (its jobs and transfers) and of its jobs alone (the generation), where that group only
    generates; None where it has none or it runs anything else."""
    from rlmcost.algorithms.kinds import Kind

    for g in e.groups:
        if g.name == ROLLOUT:
            if not g.jobs or any(j.task.kind is not Kind.GENERATE for j in g.jobs):
                return None
            jobs = sum(j.predicted_s for j in g.jobs)
            return jobs + sum(t.predicted for t in g.transfers), jobs
    return None


def floor_of(busy: tuple[float, float], refit_s: float) -> float:
    """The engines' floor in seconds of a candidate whose engines' (units, generation) are
    ``busy`` and whose refit takes ``refit_s`` (module docstring)."""
    units, generation = busy
    return max(units, generation + refit_s)


class EngineFloors:
    """The engines' floors of one branch and bound (module docstring): per survivor, its
    engines' key (-1: none, the floor does not apply), the refit seconds the screen gives it,
    and the floors learned so far by key."""

    def __init__(self, base: Run, cands: list[RLCandidate], apart: Any, refit_s: Any,
                 bound_keys: Any, tokens: Any = None) -> None:  # fmt: skip
        """``cands``: the survivors in the screen's arrays' order; ``apart``: which have
        engines apart (the screen's kinds); ``refit_s``: their refit seconds;
        ``bound_keys``: time bound -> (primary, secondary) sort keys of each survivor
        (:func:`rlmcost.plan.rl_search.bound_keys` bound to the objective); ``tokens``: their
        trained tokens per iteration (what a worker's check needs, :meth:`check`)."""
        from rlmcost.plan.mcore import is_megatron

        megatron = is_megatron(base)  # its engine's layout follows the trainer's (group_key)
        ids: dict[tuple[Any, ...], int] = {}
        self.keys = [ids.setdefault(self.key(c, megatron), len(ids))
                     if ok and c.rollout_tp > 0 else -1
                     for c, ok in zip(cands, apart, strict=True)]  # fmt: skip
        self.refit_s = refit_s
        self.bound_keys = bound_keys
        self.gpus = [c.gpus for c in cands]
        self.tokens = tokens
        self.learned: dict[int, tuple[float, float]] = {}

    @staticmethod
    def key(c: RLCandidate, megatron: bool) -> tuple[Any, ...]:
        """What the engines' group of ``c`` reads of the candidate (module docstring): its
        family and groups, the engine's TP, reservation and KV pool, the accelerators; under a
        Megatron engine the trainer's layout too."""
        own = (c.family, c.groups, c.rollout_tp, c.fraction, c.kv_gib, c.hardware)
        if not megatron:
            return own
        return (*own, c.tp, c.pp, c.cp, c.sp, c.ep, c.zero, c.ckpt, c.micro_batch, c.offload)

    def learn(self, j: int, row: dict[str, Any]) -> None:
        """Keep the engines' units of survivor ``j``'s exact ``row`` for its key."""
        k = self.keys[j]
        busy = getattr(row, "engines_s", None)
        if k >= 0 and busy is not None and k not in self.learned:
            self.learned[k] = busy

    def floor_s(self, j: int) -> float | None:
        """Survivor ``j``'s engines' floor in seconds (its exact iteration is at least this),
        None until a candidate with the same engines has been evaluated."""
        k = self.keys[j]
        busy = self.learned.get(k) if k >= 0 else None
        if busy is None:
            return None
        return floor_of(busy, float(self.refit_s[j]))

    def check(self, j: int, bound: tuple[float, float]) -> Check | None:
        """What a Dask worker needs to check survivor ``j``'s bound ``bound`` (its objective
        bound key) and floor where it evaluates it (:mod:`rlmcost.plan.floor_tasks`; its
        engines' key -1 where the floor does not apply); None without the tokens."""
        from rlmcost.plan.floor_tasks import Check

        if self.tokens is None:
            return None
        return Check(self.keys[j], float(self.refit_s[j]), self.gpus[j],
                     float(self.tokens[j]), bound)  # fmt: skip

    def beyond(self, j: int, kth: tuple[Any, ...], front_s: float) -> bool:
        """Whether survivor ``j``'s engines' floor places it past the k-th row's key ``kth``
        (the exact row is at least the floor: it cannot be among the top k) and at or past
        ``front_s``, the fastest fitting row found on as many GPUs or fewer (it cannot join
        the Pareto front over GPUs and time either)."""
        floor = self.floor_s(j)
        if floor is None or floor < front_s:
            return False
        return self.bound_keys(j, floor) > kth
