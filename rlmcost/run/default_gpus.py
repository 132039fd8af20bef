"""The GPUs a co-located query runs on when it names none: whole trainer and engine
replicas (:func:`engine_filled_gpus`)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.run.spec import Run


def engine_filled_gpus(run: Run) -> tuple[int | None, str | None]:
    """The GPUs of a co-located Run that names neither ``cluster.gpus`` nor ``cluster.dp``
    (nor a placement, groups or ``tp_per_model``), and the note that says so: None (the
    trainer's layout, tp*pp*cp GPUs) unless the engine's replica, its own TP times its PP (a
    Megatron engine's: times the trainer's PP), does not divide that, or an expert grid
    needs more data-parallel ranks (``Layout.dp_unit``: etp*ep must divide tp*cp*dp); then
    the least common multiple of the two, the fewest GPUs that hold whole trainer and
    engine replicas (data parallelism fills the rest), as a framework needs: verl builds
    its rollout mesh only when the world size is a multiple of the replica
    (verl/workers/fsdp_workers.py @b178a3cd: ``assert self.world_size % infer_world_size ==
    0``, infer_world_size = rollout TP x DP x PP), so ``--framework verl`` (rollout TP 2)
    runs on 2 GPUs, not 1. An engine given no TP (HF generate, a Megatron engine on the
    policy's layout) still takes the expert grid's ranks, as does an algorithm that
    generates nothing (DPO: the trainer's alone). The idealized iteration keeps the
    trainer's."""
    from math import lcm

    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.deployment.kinds import EngineKind

    c, d = run.cluster, run.deployment
    if c.gpus is not None or c.dp is not None or run.grouped or run.tp_per_model or d.ideal:
        return None, None
    e, t = d.engine, d.train
    alg = get_algorithm(run.algorithm.name)
    generates = not alg.offline and any(i.kind is Kind.GENERATE for i in alg.invocations)
    tp = e.tp if generates else None  # no engine (DPO): the trainer's expert grid alone
    # an engine given no TP (HF generate, a Megatron engine on the policy) is one replica a GPU
    replica = 1 if not generates else \
        (tp or 1) * (t.pp if e.kind is EngineKind.MEGATRON else e.pp)  # fmt: skip
    trainer = t.tp * t.pp * t.cp
    unit = trainer * t.layout().dp_unit  # an expert grid's data-parallel ranks (resolve)
    if unit == trainer and trainer % replica == 0:
        return None, None
    gpus = lcm(unit, replica)
    grid = "" if unit == trainer else f" times {unit // trainer} for the expert grid"
    both, engine = ("", "") if tp is None else \
        ("both ", f" and the engine ({replica} GPUs: rollout TP {tp})")  # fmt: skip
    return gpus, (f"GPUs not given: {gpus}, the fewest that hold whole replicas of {both}the "
                  f"trainer (tp*pp*cp = {trainer}{grid}){engine}; give --gpus to "
                  "choose")  # fmt: skip


def run_gpus(run: Run) -> tuple[int | None, str | None]:
    """The GPUs of ``run`` and the note that says how they were chosen: ``cluster.gpus``, else
    :func:`engine_filled_gpus`; checked against its size tier's layout first
    (:func:`check_tier_layout`)."""
    gpus, note = ((run.cluster.gpus, None) if run.cluster.gpus is not None
                  else engine_filled_gpus(run))  # fmt: skip
    check_tier_layout(run, gpus)
    check_divides(run, gpus)
    return gpus, note


def check_divides(run: Run, gpus: int | None) -> None:
    """SpecError where ``gpus`` hold no whole trainer replicas (tp*pp*cp), as the evaluation's
    :func:`~rlmcost.deployment.resolve.resolve_layout` refuses them, its mend naming only the
    TP degrees the actor's heads, KV heads and FFN widths take
    (:func:`~rlmcost.parallel.validate.tp_widths`). The user's device groups are checked
    group by group instead (each trainer's replicas on its own GPUs; their sum against
    ``gpus``)."""
    t = run.deployment.train
    if gpus is None or run.tp_per_model or run.deployment.groups \
            or gpus % (t.tp * t.pp * t.cp) == 0:  # user groups: each holds its own replicas
        return
    from rlmcost.deployment.resolve import resolve_layout
    from rlmcost.parallel.validate import tp_widths
    from rlmcost.run.defaults import actor_spec

    spec = actor_spec(run.models.actor)
    widths = () if spec is None else tp_widths(spec.arch())
    resolve_layout(t.layout(dp=run.cluster.dp or 1), gpus, widths)


@cache
def _places(framework: str) -> bool:
    """``framework`` has a size tier with device groups of its own (TRL, OpenRLHF, slime)."""
    from rlmcost.frameworks.presets import get_preset

    return any(s.placement is not None for s in get_preset(framework).sized)


def check_tier_layout(run: Run, gpus: int | None) -> None:
    """SpecError where ``run`` trains in the layout its framework's size tier gave it (every
    degree of ``train.tp/pp/cp/ep`` the tier sets, at the tier's value: a degree the user
    gave otherwise is the user's layout, whose own checks apply) and that layout does not
    hold: ``gpus`` not whole replicas of it (tp*pp*cp, times the data-parallel ranks an
    expert grid needs), or the actor's heads or experts not divided by its TP or EP (the
    engine's TP too, where it is the tier's). A Run on the tier's own device groups
    (:func:`~rlmcost.run.tier_groups.tier_placed`: slime's 235 B example) is checked the same
    way but for the GPUs, which the tier's split sizes. The error names the example the
    layout came from and how to mend it."""
    d = run.deployment
    if d.framework is None or d.ideal or run.tp_per_model:
        return
    placed = run.grouped  # the tier's own groups (sized by its split), else the user's: none
    if placed and not _places(d.framework):
        return
    from rlmcost.errors import SpecError
    from rlmcost.frameworks.preset_model import LAYOUT_DEGREES
    from rlmcost.run.defaults import actor_tier

    tier = actor_tier(d.framework, run.models.actor)  # kept per the actor
    if tier is None:
        return
    t = d.train
    given = {x.field[len("train."):]: x.value for x in tier.defaults
             if x.field[len("train."):] in LAYOUT_DEGREES and x.field.startswith("train.")}
    if not given or any(getattr(t, f) != v for f, v in given.items()):
        return
    if placed:  # after the cheap tests: tier_placed writes the deployment's JSON
        from rlmcost.run.tier_groups import tier_placed

        if not tier_placed(run):
            return
    engine_tp = next((x.value for x in tier.defaults if x.field == "engine.tp"), None)
    problem = _tier_problem(run, None if placed else gpus,
                            d.engine.tp if d.engine.tp == engine_tp else None)
    if problem is None:
        return
    degrees = " ".join(f"--{f} {getattr(t, f)}" for f in LAYOUT_DEGREES if getattr(t, f) > 1)
    raise SpecError(
        f"{d.framework}'s layout for this actor ({degrees}) comes from its example "
        f"{tier.example.split(',')[0]} and does not hold here: {problem}; or give your own "
        "--tp/--pp/--cp/--ep (--rollout-tp), or --no-sized-defaults (the framework's defaults "
        "at any size)"
    )


def _tier_problem(run: Run, gpus: int | None, engine_tp: int | None) -> str | None:
    """What :func:`check_tier_layout` refuses, in words (None: nothing)."""
    from rlmcost.deployment.resolve import divide_fix
    from rlmcost.errors import SpecError
    from rlmcost.parallel.layout import Layout
    from rlmcost.parallel.validate import check_layout, tp_widths
    from rlmcost.run.defaults import actor_spec

    t = run.deployment.train
    lay = t.layout()
    split = lay.tp * lay.pp * lay.cp
    unit = split * lay.dp_unit
    spec = actor_spec(run.models.actor)
    if gpus is not None and gpus % unit:
        widths = () if spec is None else tp_widths(spec.arch())
        return (f"{gpus} GPUs: " + divide_fix(gpus, t.tp, t.pp, t.cp, widths) if unit == split else
                f"{gpus} GPUs: give --gpus a multiple of {unit} (tp*pp*cp = {split}, times "
                f"{lay.dp_unit} data-parallel ranks for the expert grid: etp*ep = "
                f"{lay.expert_tp}*{lay.ep} must divide tp*cp*dp)")  # fmt: skip
    if spec is None:
        return None
    arch = spec.arch()
    try:
        check_layout(arch, lay.with_(dp=lay.dp_unit), unit)
        if engine_tp is not None:
            att = run.deployment.engine.dp_attention  # SGLang's DP attention
            check_layout(arch, Layout(tp=engine_tp, attention_dp=att), engine_tp,
                         replicate_kv=True)  # fmt: skip
    except SpecError as exc:
        return f"{spec.name}: {exc}"
    return None
