"""Sizing the built-in configurations (`rlmcost placements`, ``--placement``) by the plan's
search: fits first, then fastest, saying so when nothing fits; an asynchronous
configuration is compared with the best synchronous split of the same GPUs and, generating
with NeMo RL's Megatron engine (``--engine megatron``), with async on one group of the same
GPUs (NeMo RL's async GRPO colocated with Megatron generation, PR 2884;
:mod:`rlmcost.plan.mcore`), which its search also sizes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate
from rlmcost.placement.allocate import COARSE_SPLITS, ranking_time_s

if TYPE_CHECKING:
    from rlmcost.placement.estimate import PlacementEstimate
    from rlmcost.reports.placement import PlacementComparison
    from rlmcost.run.spec import Run

# rlmcost.reports.placement (with reports.estimate) loads in the functions that size a
# configuration: an algorithm command without --placement evaluates its Run and no more.


@dataclass(frozen=True)
class Outside:
    """A deployment beyond the built-in configurations that a sizing note compares one with
    (:func:`async_note`: the best synchronous split of the same GPUs and that split
    overlapped; :func:`colocated_note`: async on one group): what it is, its predicted
    iteration, the flags that run it over the compared query's (`rlmcost placements FLAGS`),
    or, where the plan's search also set its layout, ``command``: the line that reproduces
    it (the search's row's)."""

    what: str
    time_s: float
    flags: str
    command: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"deployment": self.what, "time_s": self.time_s, "flags": self.flags,
                "command": self.command}  # fmt: skip

    def text(self) -> str:
        """As the comparison's headline says it."""
        from rlmcost.units import format_seconds

        how = "its layout searched: --json faster_outside has its command" if self.command \
            else self.flags  # fmt: skip
        return f"{self.what}, {format_seconds(self.time_s)} ({how})"


def compare_sized(run: Run) -> PlacementComparison:
    """:func:`~rlmcost.reports.placement.compare_runs` with every configuration sized by
    :func:`sized`, and the deployments beyond them that its notes compare with
    (``outside``, fastest first, each once), so the comparison's headline can say where
    one is faster than the fastest configuration that fits."""
    from rlmcost.reports.placement import compare_runs

    found: dict[str, Outside] = {}

    def size(one: Run) -> tuple[Run, PlacementEstimate]:
        done, e, outside = _sized(one)
        for o in outside:
            found.setdefault(o.flags, o)
        return done, e

    c = compare_runs(run, size)
    return replace(c, outside=tuple(sorted(found.values(), key=lambda o: o.time_s)))


def sizing_space(run: Run) -> Any:
    """The layouts :func:`sized` searches for ``run``: its own values, plus full
    checkpointing and the optimizer in host memory (the two memory savers every framework
    offers: verl ``enable_gradient_checkpointing``, OpenRLHF ``--gradient_checkpointing``
    and ``--adam_offload``), every TP within a node when the run takes TP per model, every
    engine TP and the engine reservations of :class:`~rlmcost.plan.rl_candidates.RLSpace`
    beside its own (a Megatron engine: its trainer's layout and every TP, its KV pool or the
    plan's, :func:`rlmcost.plan.mcore.pools`; its async on one group beside the async
    split)."""
    from rlmcost.parallel.layout import Checkpointing
    from rlmcost.plan.mcore import ASYNC_COLOCATED, is_megatron
    from rlmcost.plan.rl_candidates import RLSpace

    t, eng = run.deployment.train, run.deployment.engine
    frac = eng.gpu_memory_utilization
    name = run.deployment.placement or "baseline"
    one = (ASYNC_COLOCATED,) if name == "async" and is_megatron(run) else ()
    return RLSpace(
        placements=(name, *one),
        tp=None if run.tp_per_model else (t.tp,), pp=(t.pp,), cp=(t.cp,), sp=(t.sp,),
        zero=(t.zero,), ckpt=tuple(dict.fromkeys((t.ckpt, Checkpointing.FULL))),
        micro_batch=(t.micro_batch,),
        offload=tuple(dict.fromkeys(("optimizer" in t.offload, True))),
        rollout_tp=None, fractions=tuple(dict.fromkeys(
            (*((frac,) if frac is not None else ()), *RLSpace.fractions))),
    )  # fmt: skip


def fitting_space(run: Run) -> Any:
    """:func:`sizing_space` widened for a configuration that fits nothing as given: every
    TP within a node (as `rlmcost placements` searches with TP per model) and, beside the
    run's own ZeRO stage, the stage its framework's trainer shards with
    (:func:`rlmcost.plan.mcore.trainer_zeros`: ZeRO-3/FSDP, or Megatron's distributed
    optimizer). The comparisons of :func:`async_note` and :func:`colocated_note` keep the
    run's own TP and stage."""
    from rlmcost.plan.mcore import trainer_zeros

    zeros = (run.deployment.train.zero, *trainer_zeros(run, None))
    return replace(sizing_space(run), tp=None, zero=tuple(dict.fromkeys(zeros)))


def estimate(algorithm: Any = None, model: Any = None, **fields: Any) -> Any:
    """``rlmcost.estimate``: one iteration of ``algorithm`` (default PPO) on ``model`` (default
    Llama-3.1-8B) from keywords (:func:`rlmcost.reports.estimate.keyword_run`, the fields of
    :func:`rlmcost.run_of` and ``efficiency``), evaluated as the algorithm commands evaluate:
    a built-in ``placement`` without ``groups`` sized by :func:`evaluate_sized`, so
    ``rlmcost.estimate("ppo", placement="combined", gpus=8)`` and `rlmcost ppo --placement
    combined --gpus 8` answer alike.

    >>> from rlmcost.parallel.layout import Layout
    >>> e = estimate("ppo", "70b", layout=Layout(tp=8))
    >>> e.gpus, e.fits, e.dominant_stage
    (8, False, <Stage.TRAINING: 'training'>)
    """
    from rlmcost.reports.estimate import keyword_run

    run, efficiency = keyword_run(algorithm, model, fields)
    return evaluate_sized(run, efficiency=efficiency)


def evaluate_sized(run: Run, efficiency: Any = None) -> Any:
    """:func:`rlmcost.evaluate` of ``run``, a built-in placement without groups first sized
    by :func:`sized` (the algorithm commands' ``--placement``, as `placements` does it): the
    Evaluation of the sized Run, with the sizing's notes; ``efficiency`` (measured
    efficiencies, :class:`~rlmcost.timing.Efficiency`) prices that Run, the sizing's search
    ranking at the built-in ones."""
    from dataclasses import replace as with_fields

    d = run.deployment
    if d.placement is None or d.groups or run.cluster.gpus is None or d.ideal:
        return evaluate(run, efficiency=efficiency)
    run, e = sized(run)
    result = evaluate(run, efficiency=efficiency)
    extra = tuple(n for n in e.notes if n not in result.notes)
    if not extra:
        return result
    placed = result.evaluation  # the placement's report prints its own notes
    if placed is not None:
        placed = with_fields(placed, notes=(*placed.notes, *extra))
    return with_fields(result, notes=result.notes + extra, evaluation=placed)


def sized(run: Run) -> tuple[Run, PlacementEstimate]:
    """:func:`_sized` without the deployments beyond the configuration."""
    done, e, _ = _sized(run)
    return done, e


def _sized(run: Run) -> tuple[Run, PlacementEstimate, list[Outside]]:
    """``run``'s built-in configuration with its groups sized by the plan's search, fits
    first, then fastest: as given when it fits (the evaluation's split search,
    :mod:`rlmcost.placement.allocate`, picks the counts); else the fastest fitting
    deployment of :func:`sizing_space` (:func:`rlmcost.plan.rl.plan_rl` restricted to the
    configuration), saying what it changed; else as given, saying that nothing fits. An
    asynchronous configuration is compared with the best synchronous split of the same GPUs
    (:func:`async_note`); the third item: the deployments beyond the configuration its notes
    compare it with (:class:`Outside`)."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import configure
    from rlmcost.placement.configs import build
    from rlmcost.reports.placement import placed

    alg = configure(get_algorithm(run.algorithm.name), run.options())
    build(run.deployment.placement, alg, staleness=run.deployment.staleness)  # bad input
    try:
        e: PlacementEstimate | None = placed(evaluate(run))
    except SpecError as exc:  # e.g. too few GPUs for the groups at TP per model
        if run.cluster.gpus is None:
            raise
        e, error = None, exc
    notes: list[str] = []
    if (e is None or not e.fits) and run.cluster.gpus is not None:
        from rlmcost.plan.rl import plan_rl
        from rlmcost.run.spec import Run as RunSpec

        name = run.deployment.placement or "baseline"
        result = plan_rl(run, run.cluster.gpus, space=fitting_space(run), top=1)
        if result.best is not None:
            run = RunSpec.from_data(result.best["run"])
            e = placed(evaluate(run))
            notes.append(f"{name}: nothing fits as given, so the plan's search sized it: "
                         f"{_changes(result.best)} (fastest that fits of "
                         f"{result.counts.fitting} fitting)")  # fmt: skip
        elif e is None:
            raise error
        else:
            notes.append(f"{name}: nothing fits on {run.cluster.gpus} GPUs, as given or with "
                         "full checkpointing, the optimizer in host memory, any TP within a "
                         "node and the trainer's sharded stages (the plan's search); shown as "
                         "given: raise --gpus")  # fmt: skip
    assert e is not None
    outside: list[Outside] = []
    if e.placement.staleness and e.fits:
        for note, found in (async_note(run, e), colocated_note(run, e)):
            if note:
                notes.append(note)
            outside += found
    return run, replace(e, notes=(*notes, *e.notes)) if notes else e, outside


def _changes(row: dict[str, Any]) -> str:
    groups = f"groups {row['groups']}, " if row["groups"] else ""
    off = f"offload {row['offload']}" if row["offload"] else "no offload"
    return (f"{groups}tp {row['tp']}, zero {row['zero']}, ckpt {row['ckpt']}, {off}, engine "
            f"tp {row['rollout_tp']}")  # fmt: skip


def async_note(run: Run, e: PlacementEstimate) -> tuple[str | None, list[Outside]]:
    """Why the asynchronous ``run`` (estimate ``e``) is slower than the best synchronous split
    of the same GPUs (engines apart, every model on the rest, :mod:`rlmcost.plan.families`
    ``split``, every split of the GPUs in power-of-two steps, at most
    :data:`~rlmcost.placement.allocate.COARSE_SPLITS` of them: a note's comparison, searched
    as coarsely as the placements' own first pass; ``run``'s layout), or None when it is
    not; with the split, and that split overlapped where that is faster still."""
    from rlmcost.plan.rl import plan_rl
    from rlmcost.reports.placement import placed

    gpus = sum(g.gpus for g in e.groups)
    space = replace(sizing_space(run), placements=("split",), exhaustive=True,
                    split_limit=COARSE_SPLITS, ckpt=(run.deployment.train.ckpt,),
                    offload=("optimizer" in run.deployment.train.offload,))  # fmt: skip
    best = plan_rl(run.replace(deployment={"staleness": None}), gpus, space=space, top=1).best
    t = ranking_time_s(e)
    if best is None or best["time_s"] >= t:
        return None, []
    found = [Outside("the synchronous split " + best["groups"], best["time_s"],
                     f"--groups {best['groups']}", best["command"])]  # fmt: skip
    why = (f"its groups ({', '.join(f'{g.name}={g.gpus}' for g in e.groups)}) hold "
           "the assessment forwards on the rollout side and shadow copies of the trained "
           "models (Table IX), and the overlap saves less than the split costs")
    over = run.replace(deployment={"groups": _groups_data(best["groups"], run)})
    try:
        o = placed(evaluate(over))
    except SpecError:
        o = None
    if o is not None and o.fits and ranking_time_s(o) < best["time_s"]:
        flags = f"--placement {e.placement.name.split('+')[0]} --groups {best['groups']}"
        why += f"; overlapping that split instead takes {ranking_time_s(o):.3g} s ({flags})"
        found.append(Outside(f"the split {best['groups']} overlapped "
                             f"({e.placement.name.split('+')[0]})", ranking_time_s(o),
                             flags))  # fmt: skip
    return (f"{e.placement.name} ({t:.3g} s) is slower than the best synchronous split of "
            f"the same {gpus} GPUs, {best['groups']} ({best['time_s']:.3g} s; at most "
            f"{COARSE_SPLITS} splits searched, in power-of-two steps): {why}"), found


def _groups_data(text: str, run: Run) -> list[dict[str, Any]]:
    from rlmcost.evaluation.query import groups_from_text

    return [g.model_dump(mode="json") for g in groups_from_text(text, run.deployment.train)]


def colocated_note(run: Run, e: PlacementEstimate) -> tuple[str | None, list[Outside]]:
    """For the asynchronous ``run`` (estimate ``e``) on groups apart, generating with a
    Megatron engine: how async on one group of the same GPUs compares (NeMo RL PR 2884: the
    engine stands down for each training step, the step the sum of its phases; the fastest of
    :func:`sizing_space`'s layouts, ``async-colocated`` of :mod:`rlmcost.plan.mcore`), with
    the flags that run it, and it where it is faster; None for other engines, user groups or
    when none of it fits."""
    from rlmcost.plan.mcore import ASYNC_COLOCATED, is_megatron
    from rlmcost.plan.rl import plan_rl

    if not is_megatron(run) or run.deployment.groups or len(e.groups) < 2:
        return None, []
    gpus = sum(g.gpus for g in e.groups)
    space = replace(sizing_space(run), placements=(ASYNC_COLOCATED,))
    best = plan_rl(run, gpus, space=space, top=1).best
    if best is None:
        return None, []
    t, one = ranking_time_s(e), best["time_s"]
    pool = f" --kv-buffer-gib {best['kv_buffer_gib']:g}" if best["kv_buffer_gib"] else ""
    engine = f" --rollout-tp {best['rollout_tp']}" if best["rollout_tp"] else ""
    t_ = run.deployment.train  # the layout the search changed, as flags
    for key, flag in (("zero", "--zero"), ("ckpt", "--ckpt"), ("micro_batch", "--micro-batch")):
        if best[key] is not None and str(best[key]) != str(getattr(t_, key)):
            engine += f" {flag} {best[key]}"
    kinds = best["run"]["deployment"]["train"]["offload"]
    if kinds != [str(k) for k in t_.offload]:
        engine += " --offload " + (",".join(kinds) or "''")
    flags = f"--placement async --groups {best['groups']} --tp {best['tp']}{engine}{pool}"
    how = (f"{flags}, the engine standing down for each step on the same GPUs (NeMo RL's async "
           "GRPO colocated with Megatron generation, PR 2884)")  # fmt: skip
    if one < t:
        return (f"{e.placement.name} ({t:.3g} s) on groups apart is slower than async on one "
                f"group of the same {gpus} GPUs ({one:.3g} s): {how}"), \
            [Outside("async on one group", one, flags, best["command"])]  # fmt: skip
    return (f"async on one group of the same {gpus} GPUs takes {one:.3g} s, slower than "
            f"{e.placement.name}'s groups apart ({t:.3g} s): {how}"), []
