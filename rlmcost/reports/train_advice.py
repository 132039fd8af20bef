"""What to change when `rlmcost train`'s layout does not fit: the single layout changes that
make it fit, each evaluated by rebuilding the report (as the RL commands' "fits with" advice
evaluates its changes: :func:`rlmcost.evaluation.advice.suggestions`), else the changes
combined, else the fewest GPUs (doubling the data-parallel ranks, over which ZeRO shards the
states) at which the combined changes fit.

The changes are the training path's own memory levers, each a flag of `rlmcost train` at a
value other than the one in effect: ``--zero 3`` (with data parallelism to shard over),
``--ckpt full``, ``--micro-batch 1``, ``--sp`` (with TP), and ``--tp``, ``--pp``, ``--cp`` at
each power of two that takes its GPUs from data parallelism (``--tp`` within a node and
dividing the model's widths, :func:`~rlmcost.parallel.validate.tp_widths`), the smallest that
fits. ``--offload-optimizer`` is not offered: it moves the optimizer states to the host
(:func:`rlmcost.reports.train.host_adam`) at the price of a host round trip and a CPU Adam step
every iteration, a trade of time the user makes, not a layout change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage

Rerun = Callable[[Layout, int], Any]  # (layout, gpus) -> a TrainReport

MOST_GPUS_FACTOR = 64
"""How far the GPU search goes: up to this many times the query's GPUs (8 -> 512)."""


@dataclass(frozen=True)
class TrainFix:
    """A change that makes the layout fit: its flags and the peak memory per rank it leaves."""

    flags: str
    peak_bytes: int

    def to_json(self) -> dict[str, Any]:
        """One entry of `rlmcost train --json`'s ``fit_advice``: the keys of the RL commands'
        :meth:`rlmcost.evaluation.advice.Suggestion.to_json` that a training layout has (its
        peak is the most loaded rank's, bf16 weights as the report's ``dtypes`` state)."""
        return {"flags": self.flags, "peak_bytes_per_device": self.peak_bytes}


def _memory_changes(lay: Layout) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if lay.zero is not ZeroStage.OS_G_P and lay.dp > 1:
        out.append(("--zero 3", {"zero": ZeroStage.OS_G_P}))
    if lay.ckpt is not Checkpointing.FULL:
        out.append(("--ckpt full", {"ckpt": Checkpointing.FULL}))
    if lay.micro_batch > 1:
        out.append(("--micro-batch 1", {"micro_batch": 1}))
    if lay.tp > 1 and not lay.sp:
        out.append(("--sp", {"sp": True}))
    return out


def _degree_changes(lay: Layout, gpus_per_node: int,
                    widths: tuple[int, ...]) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    out: list[tuple[str, dict[str, Any]]] = []
    for name in ("tp", "pp", "cp"):
        factor = 2
        while lay.dp % factor == 0:
            degree = getattr(lay, name) * factor
            if name == "tp" and (degree > gpus_per_node or any(w % degree for w in widths)):
                break
            out.append((f"--{name} {degree}", {name: degree, "dp": lay.dp // factor}))
            factor *= 2
    return out


def _fit(rerun: Rerun, lay: Layout, gpus: int, changes: dict[str, Any]) -> Any:
    try:
        r = rerun(lay.with_(**changes), gpus)
    except (SpecError, ValueError):
        return None
    return r if r.fits else None


def train_fixes(report: Any, rerun: Rerun, gpus_per_node: int, widths: tuple[int, ...] = (),
                limit: int = 4) -> list[TrainFix]:  # fmt: skip
    """Up to ``limit`` changes that make ``report`` (a TrainReport that does not fit) fit,
    each evaluated with ``rerun`` (module docstring): single changes first (of each degree
    the smallest that fits), else the memory changes combined, alone and with each degree,
    else those at the fewest GPUs; empty where nothing within :data:`MOST_GPUS_FACTOR` fits."""
    lay, gpus = report.layout, report.gpus
    single = _memory_changes(lay)
    found: list[TrainFix] = []
    for flags, changes in (*single, *_degree_changes(lay, gpus_per_node, widths)):
        name = flags.split()[0]
        if any(f.flags.split()[0] == name for f in found):
            continue  # the smallest degree that fits
        r = _fit(rerun, lay, gpus, changes)
        if r is not None:
            found.append(TrainFix(flags, r.memory.total))
        if len(found) >= limit:
            return found
    if found:
        return found
    both = {k: v for _, c in single for k, v in c.items()}
    words = " ".join(f for f, _ in single)
    for flags, changes in ((words, {}), *_degree_changes(lay, gpus_per_node, widths)):
        r = _fit(rerun, lay, gpus, {**both, **changes}) if (both or changes) else None
        if r is not None:
            return [TrainFix(" ".join(w for w in (words, flags if changes else "") if w),
                             r.memory.total)]  # fmt: skip
    zero = [] if lay.zero is ZeroStage.OS_G_P or "--zero 3" in words else ["--zero 3"]
    more = " ".join([*zero, words]).strip()
    factor = 2
    while factor <= MOST_GPUS_FACTOR:
        r = _fit(rerun, lay, gpus * factor, {**both, "zero": ZeroStage.OS_G_P,
                                             "dp": lay.dp * factor})  # fmt: skip
        if r is not None:
            return [TrainFix(f"--gpus {gpus * factor} {more}".strip(), r.memory.total)]
        factor *= 2
    return []


def report_fixes(report: Any, rerun: Rerun, limit: int = 4) -> list[TrainFix]:
    """:func:`train_fixes` for ``report`` on its own hardware's node size and its model's TP
    widths (:func:`~rlmcost.parallel.validate.tp_widths`): what `rlmcost train` prints after
    "DOES NOT FIT" and its ``--json`` carries as ``fit_advice``."""
    from rlmcost.parallel.validate import tp_widths
    from rlmcost.specs import get_hardware, get_model

    per_node = get_hardware(report.hardware).gpus_per_node
    return train_fixes(report, rerun, per_node, tp_widths(get_model(report.model).arch()), limit)
