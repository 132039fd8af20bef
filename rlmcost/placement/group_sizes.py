"""A group's sizes: the counts of the algorithm's formulas, the tasks' response lengths,
padded contexts and batches (:class:`GroupSizes`, a base of
:class:`~rlmcost.placement.group_own.GroupTasks`). The counts of a formula and the response
lengths depend on the query alone, so they are kept for every group of it
(``task_work.values_table``, ``group_key.per_query``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind
from rlmcost.errors import SpecError
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_key import per_query
from rlmcost.placement.inputs import Setup
from rlmcost.placement.lengths import runs
from rlmcost.placement.prefix_grouper import check_task
from rlmcost.placement.task_work import count_of, frozen_at, frozen_values, values_table


def counts_table(setup: Setup) -> dict[Any, Any]:
    """Where a group keeps its formula counts: the query's table (``task_work.values_table``),
    or its own inside :func:`rlmcost.memo.plain` (where the query's is never kept)."""
    return values_table(setup.values) if memo.enabled() else {}


class GroupSizes:
    """Sizes of a group's tasks (module docstring); ``s``, ``_lengths``, ``_seq``,
    ``_longest`` and ``_batch`` are set by :class:`~rlmcost.placement.group_own.GroupTasks`."""

    s: Setup
    _lengths: dict[int, tuple[int, ...]]
    _seq: dict[int, int]
    _longest: dict[int, int]
    _batch: dict[int, int]  # batch, per task
    _counts: dict[Any, Any]  # counts_table

    def _int(self, text: str, values: Mapping[str, object] | None = None) -> int:
        if values is None:
            return self._int_at(text, None)
        return self._checked(text, count_of(text, frozen_values(values, keep_t=True)))

    def _int_at(self, text: str, t: int | None) -> int:
        """``_int(text, {**values, "T": t})`` (``t`` None: the setup's values), kept per
        query (:func:`counts_table`)."""
        table = self._counts
        key = ("int", text, t)
        out = table.get(key)
        if out is None:
            out = self._checked(text, count_of(text, frozen_at(self.s.values, t)))
            table[key] = out
        return out

    def _checked(self, text: str, value: Any) -> int:
        if not isinstance(value, int) or value < 1:
            raise SpecError(
                f"{self.s.alg.name}: {text} = {value} is not a positive whole number of "
                "sequences/tokens; adjust the batch, group or --oversample"
            )
        return int(value)

    def lengths(self, task: Task) -> tuple[int, ...]:
        if task.index not in self._lengths:  # the same for every group of the query
            n = self._int(task.invocation.sequences)
            self._lengths[task.index] = per_query(
                self.s, ("lengths", n), lambda: self.s.lengths.lengths(n, self.s.response)
            )
        return self._lengths[task.index]

    def length_runs(self, task: Task) -> tuple[tuple[int, int], ...]:
        """:func:`~rlmcost.placement.lengths.runs` of :meth:`lengths` (ascending), kept per
        query with them."""
        n = self._int(task.invocation.sequences)
        lengths = self.lengths(task)
        return per_query(self.s, ("length runs", n), lambda: runs(lengths))

    def longest(self, task: Task) -> int:
        """``max(self.lengths(task))``, the task's longest response, kept per task."""
        try:
            return self._longest[task.index]
        except KeyError:
            out = max(t for t, _ in self.length_runs(task))  # over the distinct lengths
            self._longest[task.index] = out
            return out

    def seq_len(self, task: Task) -> int:
        """Padded context of the task's sequences: prompt + the longest response (a function
        of the query and the task alone: kept per query, ``setup.groups_seen``)."""
        try:
            return self._seq[task.index]
        except KeyError:
            pass
        seen = self.s.groups_seen
        key = ("seq_len", task)
        out = seen.get(key) if seen is not None else None
        if out is None:
            inv = task.invocation
            t = self.longest(task)
            out = self._int_at(inv.prompt, t) + self._int_at(inv.response, t)
            if seen is not None:
                seen[key] = out
        self._seq[task.index] = out
        return out

    def mini_batches(self, task: Task) -> int:
        """The optimizer steps of one pass of a training task over its batch (its mini-batches,
        each a :meth:`batch`); 1 for a forward, which runs its batch at once."""
        return self._int(task.invocation.steps) if task.kind is Kind.TRAIN else 1

    def batch(self, task: Task) -> int:
        """Sequences in memory at once (per optimizer step for train), kept per task."""
        try:
            return self._batch[task.index]
        except KeyError:
            out = self._batch[task.index] = self._batch_of(task)
            return out

    def _batch_of(self, task: Task) -> int:
        check_task(self, task)  # verl's PrefixGrouper on a layout it runs on
        inv = task.invocation
        n = self._int(inv.sequences)
        if inv.kind is Kind.TRAIN:
            steps = self._int(inv.steps)
            if n % steps:
                raise SpecError(
                    f"{self.s.alg.name}: {steps} mini-batches must divide the {n} training "
                    "sequences; change --mini-batches"
                )
            return n // steps
        if inv.kind is Kind.FORWARD:
            prefixes = self._int(inv.prefixes)
            if prefixes > 1 and self._int(inv.response) % prefixes:
                raise SpecError(
                    f"{self.s.alg.name}: {prefixes} PRM steps must divide the "
                    f"{self._int(inv.response)} response tokens; change --prm-steps"
                )
            return n * prefixes
        return n
