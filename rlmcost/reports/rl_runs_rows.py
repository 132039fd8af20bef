"""Predicted versus published RL step times over the published runs (``rlmcost validate --rl``).

Each :class:`~rlmcost.reports.rl_runs.Recipe` becomes a Run (the caller's ``build``: the CLI's
flag parser on the recipe's command, then the recipe's overlay), evaluated by
:func:`rlmcost.evaluation.query.evaluate`. A row has the published step seconds
(:func:`~rlmcost.reports.rl_runs.published_step_s`), the predicted seconds and their interval
(``time_interval_s``), error = predicted / published - 1, whether the published value falls
inside the interval, the published phases beside rlmcost's (:data:`~rlmcost.reports.rl_runs.
PHASES`), and whether the deployment fits. A run that cannot be expressed, or whose Run
rlmcost refuses (a SpecError), keeps its row with the reason and no prediction.

The summary per framework and over all runs: runs, runs predicted, the median and maximum of
|error|, coverage (the share of predicted runs whose published value lies inside the interval)
and the runs that do not fit. Nothing here is fitted: the rows are what the model says. A run
whose record says why it is no measurement of the framework's normal step (``excluded``: a bug
report of an anomalous run, say) is predicted and printed like the others, its error included,
but left out of the summary's statistics (``excluded`` counts it); the reason is the source's."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.reports.rl_runs import (
    PHASE_SUMS,
    PHASES,
    STAGE_PHASES,
    Recipe,
    assumed_workloads,
    load_runs,
    published_step_s,
    recipes,
)

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

Build = Callable[[str, list[str]], "Run"]
"""The Run of ``rlmcost ALGORITHM ARGV`` (the CLI's parser; :func:`rlmcost.cli.validate.
run_from_argv`)."""


@dataclass(frozen=True)
class PhaseRow:
    """A published phase and rlmcost's phase of the same name (None where one has none)."""

    published_key: str
    name: str | None
    published_s: float
    predicted_s: float | None

    def to_json(self) -> dict[str, Any]:
        return {"published_key": self.published_key, "phase": self.name,
                "published_s": self.published_s, "predicted_s": self.predicted_s}  # fmt: skip


@dataclass(frozen=True)
class RlRunRow:
    """One published run and its prediction (module docstring); ``status`` is ``ok`` or the
    reason the run has no prediction."""

    recipe: Recipe
    published_s: float
    status: str = "ok"
    run: Run | None = None
    predicted_s: float | None = None
    interval_s: tuple[float, float] | None = None
    lower_bound_s: float | None = None
    fits: bool | None = None
    shortfall_bytes: int = 0
    problems: tuple[str, ...] = ()
    phases: tuple[PhaseRow, ...] = ()
    predicted_phases_s: tuple[tuple[str, float], ...] = ()

    @property
    def error(self) -> float | None:
        if self.predicted_s is None:
            return None
        return self.predicted_s / self.published_s - 1

    @property
    def excluded(self) -> str | None:
        """Why the run is left out of the summary's statistics (module docstring), or None."""
        reason = self.recipe.record.get("excluded")
        return str(reason) if reason else None

    @property
    def inside(self) -> bool | None:
        """Whether the published seconds lie in the predicted interval."""
        if self.interval_s is None:
            return None
        return self.interval_s[0] <= self.published_s <= self.interval_s[1]

    def to_json(self) -> dict[str, Any]:
        rec = self.recipe.record
        return {
            "id": self.recipe.id,
            "framework": self.recipe.framework,
            "source": rec["source"],
            "setup": rec["setup"],
            "cite": rec["cite"],
            "metric": "step_time_s",
            "published_metric": rec["metric"],
            "published_figure": float(rec["published"]),
            "conversion": rec.get("conversion"),
            "published": self.published_s,
            "predicted": self.predicted_s,
            "error": self.error,
            "time_interval_s": list(self.interval_s) if self.interval_s else None,
            "inside_interval": self.inside,
            "time_lower_bound_s": self.lower_bound_s,
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "problems": list(self.problems),
            "status": self.status,
            "excluded": self.excluded,
            "phases": [p.to_json() for p in self.phases],
            "predicted_phases_s": dict(self.predicted_phases_s),
            "mapping": self.recipe.mapping,
            "command": self.recipe.command,
            "choices": list(self.recipe.choices),
            "notes": list(self.recipe.query.notes) if self.recipe.query else [],
            "ignored_keys": list(self.recipe.query.ignored) if self.recipe.query else [],
            "assumptions": list(rec["assumptions"]),
            "run": self.run.to_json() if self.run is not None else None,
        }


def build_run(recipe: Recipe, build: Build) -> Run:
    """The recipe's Run: its command parsed by ``build``, the overlay merged over it."""
    assert recipe.query is not None
    run = build(recipe.query.algorithm, recipe.argv)
    return run.replace(**recipe.overlay) if recipe.overlay else run


def evaluate_recipe(recipe: Recipe, build: Build) -> RlRunRow:
    """The row of one recipe (module docstring); a run whose source chose its batch as the
    largest that fits (``batch_rule``) by :func:`largest_fitting`; an OpenRLHF run whose
    engines' TP the source leaves open at the smallest that fits
    (:mod:`rlmcost.reports.rl_runs_engine_tp`)."""
    from rlmcost.reports.rl_runs_engine_tp import leaves_engine_tp_open, smallest_fitting_engine_tp

    if recipe.record.get("batch_rule") == "largest_fitting":
        return largest_fitting(recipe, build)
    if recipe.record.get("batch_rule") == "named_command":
        return named_command(recipe, build)
    if leaves_engine_tp_open(recipe):
        return smallest_fitting_engine_tp(recipe, build)
    return _evaluate(recipe, build)


def largest_fitting(recipe: Recipe, build: Build) -> RlRunRow:
    """DeepSpeed-Chat's benchmark rule (DeepSpeedExamples applications/DeepSpeed-Chat/training/
    step3_rlhf_finetuning/BenckmarkSetting.md): "whenever the global training token batch size
    does not exceed our limit of 524,288, we always use the largest training batch size" that
    runs. The per-GPU batch starts at the cap (``prompts_per_step`` / GPUs) and halves until
    rlmcost's memory model fits it (or reaches 1). When no batch fits with the script's
    settings, the search goes on with a larger inference TP (:func:`largest_fitting_options`:
    the blog's "leverage tensor-parallelism (TP) when [the model] does not [fit in single GPU
    memory]. Using TP in the generation phase instead of ZeRO to fit the model reduces the
    inter-GPU communication"), then DeepSpeed-Chat's ``--offload``, ``--unpin_actor_parameters``
    and both (:data:`LARGEST_FITTING_FALLBACKS`). An option whose largest fitting batch has a
    roofline bound (datasheet peaks, no efficiency: ``time_lower_bound_s``) above the published
    step at that batch cannot be the run that was timed, and the search goes on to the next
    (:func:`_ruled_out`); when every fitting option is ruled out, the first that fits stays,
    and the choices say so. The published hours convert over the chosen batch's step count
    (:func:`~rlmcost.reports.rl_runs.published_step_s`). The rule is the source's; which batch
    (and options) it picks is the memory model's, and the row's choices say so."""
    from rlmcost.reports.rl_runs_frameworks import recipe as recipe_of

    record = recipe.record
    gpus = int(record["gpus"])
    cap = int(record["prompts_per_step"]) * int(record["samples_per_prompt"]) // gpus
    first: tuple[int, list[str], int, RlRunRow] | None = None
    skipped: list[str] = []
    options = largest_fitting_options(record)
    tp, offload = options[0]
    for tp, offload in options:
        settings = {**record["framework_settings"], "--inference_tp_size": tp}
        per_gpu = cap
        row = _evaluate(_with(recipe_of({**record, "framework_settings": settings}), offload),
                        build)  # fmt: skip
        while row.fits is False and per_gpu > 1:
            per_gpu //= 2
            smaller = recipe_of({**record, "framework_settings": settings,
                                 "prompts_per_step": per_gpu * gpus})  # fmt: skip
            row = _evaluate(_with(smaller, offload), build)
        if row.fits is False:
            continue
        first = first or (tp, offload, per_gpu, row)
        if not _ruled_out(row):
            break
        what = " ".join(offload) or "the script's settings"
        skipped.append(f"{what} at inference TP {tp} ({per_gpu} per GPU: bound "
                       f"{row.lower_bound_s:.1f} s > published {row.published_s:.1f} s)")
    else:
        if first is not None:
            tp, offload, per_gpu, row = first
    return replace(row, recipe=replace(row.recipe, choices=(
        *row.recipe.choices, *_fitting_choices(record, tp, offload, per_gpu, skipped, row))))


def named_command(recipe: Recipe, build: Build) -> RlRunRow:
    """A DeepSpeed-Chat row whose figure the blog gives with the command that produced it
    (blogs/deepspeed-chat/README.md Tables 4 and 5: ``python train.py --actor-model ...
    --deployment-type ...``, which runs training_scripts/<deployment>/run_<size>.sh, train.py
    ``get_script`` at DeepSpeedExamples e468799f) runs that script's per-device batch
    (``--per_device_generation_batch_size``, the record's framework_settings), within the
    1024-pair cap, in place of :func:`largest_fitting`'s search; the published hours convert
    over that batch's step count. The row's choices name the batch and say whether rlmcost's
    memory model fits it."""
    from rlmcost.reports.rl_runs_frameworks import recipe as recipe_of

    record = recipe.record
    gpus = int(record["gpus"])
    cap = int(record["prompts_per_step"]) * int(record["samples_per_prompt"]) // gpus
    per_gpu = min(cap, int(record["framework_settings"]["--per_device_generation_batch_size"]))
    row = _evaluate(recipe_of({**record, "prompts_per_step": per_gpu * gpus}), build)
    script = str(record["framework_settings"].get("script", "")).rsplit("/", 1)[-1]
    fits = "fits" if row.fits else "does not fit"
    return replace(row, recipe=replace(row.recipe, choices=(*row.recipe.choices, (
        f"pairs per step: {per_gpu * gpus} ({per_gpu} per GPU), the per-device batch of the "
        f"command the blog names for this figure ({script}: --per_device_generation_batch_size"
        f" {per_gpu}; batch_rule named_command), not the largest that fits; rlmcost's memory "
        f"model {fits} it"))))  # fmt: skip


def largest_fitting_options(record: Mapping[str, Any]) -> list[tuple[int, list[str]]]:
    """What :func:`largest_fitting` tries, in order, as (inference TP, extra flags): the
    script's ``--inference_tp_size``; each doubling of it that divides the heads, up to the
    GPUs of a node (8: hybrid_engine.py slices the gathered layers over an intra-node
    ``mp_group``, as run_66b.sh's ``--inference_tp_size 8`` does), as the blog says the Hybrid
    Engine fits a model in generation; then, at the script's TP,
    :data:`LARGEST_FITTING_FALLBACKS`."""
    tp0 = int(record["framework_settings"].get("--inference_tp_size", 1))
    heads = int(record["model_config"]["heads"])
    options: list[tuple[int, list[str]]] = [(tp0, [])]
    tp = 2 * tp0
    while tp <= min(8, int(record["gpus"])) and heads % tp == 0:
        options.append((tp, []))
        tp *= 2
    return options + [(tp0, flags) for flags in LARGEST_FITTING_FALLBACKS[1:]]


def _fitting_choices(
    record: Mapping[str, Any], tp: int, offload: list[str], per_gpu: int, skipped: list[str],
    row: RlRunRow,
) -> list[str]:  # fmt: skip
    """The row's choices naming the batch and options :func:`largest_fitting` picked."""
    gpus = int(record["gpus"])
    choices = [f"pairs per step: {per_gpu * gpus} ({per_gpu} per GPU), the largest per-GPU "
               "batch (halving from the 1024-pair cap) that rlmcost's memory model fits, as "
               "the benchmark chose the largest batch that runs (BenckmarkSetting.md)"]  # fmt: skip
    if skipped:
        kept = " (every fitting option is; the first is kept)" if _ruled_out(row) else ""
        choices.append("ruled out by the published time, their roofline bound being above "
                       f"it: {'; '.join(skipped)}{kept}")  # fmt: skip
    why = "what fits before it is ruled out above" if skipped else ""
    script_tp = int(record["framework_settings"].get("--inference_tp_size", 1))
    if tp != script_tp:
        choices.append(f"{why or 'nothing fits'} at the script's inference TP {script_tp}, so "
                       f"inference TP {tp} (--inference_tp_size {tp}): the blog's Hybrid "
                       "Engine uses TP in generation when the model does not fit one GPU "
                       "(blogs/deepspeed-chat/README.md, Effective Throughput Analysis)")
    if "--offload" in offload:
        choices.append(f"{why or 'nothing fits with the states on the GPUs'}, so "
                       "DeepSpeed-Chat's --offload (dschat/utils/ds_utils.py get_train_ds_config: "
                       "ZeRO-3 parameters and optimizer states, with the gradient partition, on "
                       "the CPU) is assumed: --offload optimizer,params,grads")
    if "ds-hybrid-unpinned" in offload:
        choices.append(f"{why or 'nothing fits with the whole actor gathered for generation'}"
                       ", so DeepSpeed-Chat's --unpin_actor_parameters (hybrid_engine "
                       "pin_parameters false: each layer gathered per forward, _zero3_forward) "
                       "is assumed: --engine ds-hybrid-unpinned")  # fmt: skip
    return choices


def _ruled_out(row: RlRunRow) -> bool:
    """The row's configuration cannot have produced its published step: the roofline bound of
    its step (datasheet peak FLOP/s and HBM bandwidth, transfers at link bandwidth; no
    efficiency) exceeds the published seconds."""
    return row.lower_bound_s is not None and row.lower_bound_s > row.published_s


LARGEST_FITTING_FALLBACKS: tuple[list[str], ...] = (
    [],
    ["--offload", "optimizer,params,grads"],
    ["--engine", "ds-hybrid-unpinned"],
    ["--engine", "ds-hybrid-unpinned", "--offload", "optimizer,params,grads"],
)
"""What :func:`largest_fitting` tries, at the script's inference TP, after the larger inference
TPs: DeepSpeed-Chat step-3 main.py's ``--offload``, ``--unpin_actor_parameters``, and both.
``--offload`` sets DeepSpeed's ``offload_param`` and ``offload_optimizer``
(dschat/utils/ds_utils.py get_train_ds_config), and ZeRO-Offload keeps the gradient partition
on the host too (:data:`~rlmcost.frameworks.openrlhf.DEEPSPEED_ADAM_OFFLOAD`):
optimizer,params,grads."""


def _with(recipe: Recipe, flags: list[str]) -> Recipe:
    """``recipe`` with extra ``flags`` (pairs of flag and value) set on its query."""
    if recipe.query is not None:
        for flag, value in zip(flags[::2], flags[1::2], strict=True):
            recipe.query.set(flag, value)
    return recipe


def _evaluate(recipe: Recipe, build: Build) -> RlRunRow:
    """The row of one recipe as its record states it."""
    from rlmcost.evaluation.query import evaluate

    published = published_step_s(recipe.record)
    if recipe.query is None:
        return RlRunRow(recipe, published, f"not expressible: {recipe.unexpressible}")
    try:
        run = build_run(recipe, build)
        ev = evaluate(run)
    except SpecError as exc:
        return RlRunRow(recipe, published, f"not expressible: {exc}")
    phases = ev.evaluation.phases if ev.evaluation is not None else ()
    predicted = {p.name: p.time_s for p in phases}
    stages = ev.evaluation.stages if ev.evaluation is not None else {}
    sums = {**STAGE_PHASES, **PHASE_SUMS}
    names = {**PHASES, **{k: "+".join(v) for k, v in sums.items()}}
    spans = {"+".join(v): sum(r.time_s for s, r in stages.items() if str(s) in v)
             for v in STAGE_PHASES.values()}  # published stage spans: their stages summed
    spans.update({"+".join(v): sum(predicted.get(p, 0.0) for p in v)
                  for v in PHASE_SUMS.values() if any(p in predicted for p in v)})
    published_phases = tuple(
        PhaseRow(key, names.get(key), float(v), {**predicted, **spans}.get(names.get(key) or ""))
        for key, v in (recipe.record.get("published_phases") or {}).items()
    )  # fmt: skip
    problems = tuple(ev.evaluation.problems) if ev.evaluation is not None else ()
    interval = ev.time_interval_s
    for ends in assumed_workloads(recipe.record):  # the assumed inputs' spreads
        other = evaluate(run.replace(workload=ends)).time_interval_s
        interval = (min(interval[0], other[0]), max(interval[1], other[1]))
    untimed = untimed_s(recipe, predicted)
    interval = (interval[0] - untimed, interval[1] - untimed)
    return RlRunRow(
        recipe, published, "ok", run, ev.time_s - untimed, interval,
        min(ev.time_lower_bound_s, ev.time_s - untimed), ev.fits, ev.shortfall_bytes, problems,
        published_phases, tuple(predicted.items()),
    )  # fmt: skip


def untimed_s(recipe: Recipe, predicted: Mapping[str, float]) -> float:
    """Predicted seconds of the phases the source's step leaves out (:attr:`Recipe.untimed`;
    they do not depend on the response lengths, so the interval's ends shift by the same)."""
    return sum(predicted.get(name, 0.0) for name in recipe.untimed)


def summarize(rows: Sequence[RlRunRow]) -> dict[str, dict[str, Any]]:
    """Per framework and ``all``: runs, predicted, median and max |error|, coverage, runs that
    do not fit, over the runs not ``excluded`` (module docstring; ``excluded`` counts those)."""
    groups: dict[str, list[RlRunRow]] = {}
    for r in rows:
        groups.setdefault(r.recipe.framework, []).append(r)
    if rows:
        groups["all"] = list(rows)
    out: dict[str, dict[str, Any]] = {}
    for name, every in groups.items():
        group = [r for r in every if r.excluded is None]
        errs = [abs(r.error) for r in group if r.error is not None]
        inside = [r.inside for r in group if r.inside is not None]
        out[name] = {
            "runs": len(group),
            "predicted": len(errs),
            "median_abs_error": statistics.median(errs) if errs else None,
            "max_abs_error": max(errs) if errs else None,
            "coverage": sum(inside) / len(inside) if inside else None,
            "not_fitting": sum(1 for r in group if r.fits is False),
            "excluded": len(every) - len(group),
        }
    return out


@dataclass(frozen=True)
class RlRunsReport:
    rows: tuple[RlRunRow, ...]
    sources: dict[str, dict[str, Any]]

    def summary(self) -> dict[str, dict[str, Any]]:
        return summarize(self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "rl_runs": [r.to_json() for r in self.rows],
            "rl_runs_summary": self.summary(),
            "sources": self.sources,
        }


def validate_rl_runs(build: Build, select: str | None = None) -> RlRunsReport:
    """Every published run (``select``: one framework's or source's) predicted and compared."""
    rows = tuple(evaluate_recipe(r, build) for r in recipes(select))
    return RlRunsReport(rows, load_runs()["sources"])
