"""``rlmcost.plan(...)``: one call for both searches, returning a pandas DataFrame."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    import pandas as pd

    from rlmcost.plan.search import PlanResult

SEARCHED = ("layout", "tp", "pp", "zero", "micro_batch", "gpus", "placement", "groups",
            "deployment")  # fmt: skip
"""Run keywords an RL plan searches over (give them in ``space`` instead)."""


def plan(
    algorithm: str,
    model: str,
    gpus: str | int | list[int] = "8..64",
    *,
    hardware: str = "h100-sxm",
    objective: str = "time",
    top: int = 10,
    **kwargs: Any,
) -> pd.DataFrame:
    """The best deployments as a DataFrame, best first (one row per deployment, its
    ``command`` column the query that reproduces it, its ``run`` column the candidate's
    Run as data, ``rlmcost.Run.from_data(df["run"][0])``; ``df.attrs["plan"]`` holds the
    whole :class:`~rlmcost.plan.search.PlanResult`: Pareto front, counts, what never fit).
    Units: ``time_s`` seconds per iteration, ``memory_bytes_per_device`` bytes (an exact int),
    ``cost_per_iteration_usd`` USD, ``gpu_hours`` GPU-hours per iteration.

    ``algorithm``: an RL algorithm (``"grpo"``, ``"ppo"``, ...: :func:`rlmcost.plan.rl.
    plan_rl` of the base Run :func:`rlmcost.reports.estimate.run_of` ``(algorithm, model,
    hardware=hardware, **kwargs)``: the workload ``batch``, ``group``, ``prompt_len``,
    ``response_len``, ``length_dist``, the models ``reward`` (or ``"rule"``), ``critic``,
    ``ref``, ``judge``, ``options``; and the search's ``space``, ``min_gpus``, ``workers``,
    ``cluster``; ``engine`` (``"megatron"``: NeMo RL's Megatron generation, its families and
    KV pools searched, :mod:`rlmcost.plan.mcore`) and ``kv_buffer_gib`` (its pool, kept);
    ``hardware`` may be a pool, ``"h20:32,h100:16"`` (:mod:`rlmcost.plan.pool`),
    and ``price`` USD per GPU-hour by accelerator, ``{"h20": 1.2}`` or ``"h20=1.2"``
    (:mod:`rlmcost.specs.prices`; ``objective="cost"`` ranks by USD per iteration);
    :func:`~rlmcost.plan.rl.plan_rl` takes a whole base Run; the families and the base Run of
    each are chosen as `rlmcost plan` chooses them: with ``framework`` those it launches, else
    every default family, each under the framework that launches it,
    :mod:`rlmcost.plan.families`) or ``"train"``
    (:func:`rlmcost.plan.train.plan_train`; ``kwargs``: ``seq``, ``batch``, ``space``,
    ``refine``, ``workers``, ``cluster``).

    >>> import rlmcost
    >>> df = rlmcost.plan("train", "llama-3.1-8b", 8, batch=64, seq=4096, top=3)
    >>> len(df), bool(df["fits"].all())
    (3, True)
    """
    from rlmcost.plan.distributed import Compute

    if model is None or (isinstance(model, str) and not model.strip()):
        raise SpecError(f"model={model!r}: give a model name (see `rlmcost models`) or a "
                        "config.json path")  # fmt: skip
    if algorithm == "train":
        unknown = sorted(set(kwargs) - _TRAIN_KEYWORDS)
        if unknown:
            raise SpecError(f"plan('train', ...): unknown argument(s) {', '.join(unknown)}; "
                            f"it takes {', '.join(sorted(_TRAIN_KEYWORDS))}")  # fmt: skip
    compute = Compute(kwargs.pop("workers", None), kwargs.pop("cluster", None),
                      kwargs.pop("progress", None))  # fmt: skip
    if compute.progress is not None and not callable(compute.progress):  # had been a TypeError
        raise SpecError(f"progress={compute.progress!r:.40} must be a callable (done, total)")
    if algorithm == "train":
        from rlmcost.plan.train import plan_train

        result = plan_train(model, gpus, hardware=hardware, objective=objective, top=top,
                            compute=compute, **kwargs)  # fmt: skip
    else:
        result = _plan_rl(algorithm, model, gpus, hardware, objective, top, compute, kwargs)
    df = result.frame()
    df.attrs["plan"] = result
    return df


_TRAIN_KEYWORDS = {"seq", "batch", "space", "refine", "workers", "cluster", "progress"}
"""The keywords :func:`plan` takes for ``"train"`` (:func:`~rlmcost.plan.train.plan_train`'s
own, and the compute's)."""


def _plan_rl(algorithm: str, model: str, gpus: Any, hardware: str, objective: str, top: int,
             compute: Any, kwargs: dict[str, Any]) -> PlanResult:  # fmt: skip
    from dataclasses import replace

    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.plan.families import DEFAULT_FAMILIES, launcher_bases, searched_families
    from rlmcost.plan.kinds import parse_pool, require_space
    from rlmcost.plan.rl import RLSpace, plan_rl
    from rlmcost.plan.rl_space import check_staleness
    from rlmcost.reports.estimate import run_of
    from rlmcost.specs.prices import check_prices, parse_prices

    search = {k: kwargs.pop(k) for k in ("space", "min_gpus") if k in kwargs}
    price = kwargs.pop("price", None)
    searched = sorted(set(kwargs) & set(SEARCHED))
    if searched:
        raise SpecError(f"the plan searches {', '.join(searched)}; give their values in "
                        "space=RLSpace(...) instead")  # fmt: skip
    engine = _engine(kwargs)
    if engine:  # the engine the base Run holds (its framework's defaults then follow it)
        kwargs["deployment"] = {"engine": engine}
    pool = parse_pool(hardware)
    one = pool[0][0] if pool else hardware
    base = run_of(algorithm, model, hardware=one, **kwargs)
    prices = parse_prices(price) if isinstance(price, str) else check_prices(price)

    def priced(run: Any) -> Any:
        return run.replace(cluster={"prices": prices}) if prices else run

    space = search.get("space") or RLSpace()
    require_space(space)
    framework = kwargs.get("framework")
    if space.placements == DEFAULT_FAMILIES:  # the families as `rlmcost plan` picks them
        space = replace(space, placements=searched_families(
            None, space.groups, None if framework is None else str(framework),
            engine.get("kind"), offline=get_algorithm(base.algorithm.name).offline))
    search["space"] = replace(space, pool=pool) if pool else space
    check_staleness(base.deployment.staleness, space.placements)
    bases = None
    if framework is None and not base.deployment.ideal:  # each family under its launcher
        bases = launcher_bases(base, search["space"].placements, lambda fw: priced(
            run_of(algorithm, model, hardware=one, framework=fw, **kwargs))) or {}
    return plan_rl(priced(base), gpus, objective=objective, top=top, compute=compute,
                   bases=bases, **search)


def _engine(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The base Run's engine fields of :func:`plan`'s ``engine`` and ``kv_buffer_gib``
    keywords (taken out of ``kwargs``), as ``--engine`` and ``--kv-buffer-gib`` give them."""
    out: dict[str, Any] = {}
    if kwargs.get("engine") is not None:
        out["kind"] = str(kwargs["engine"])
    if kwargs.get("kv_buffer_gib") is not None:
        out["kv_buffer_gib"] = kwargs["kv_buffer_gib"]
    kwargs.pop("engine", None)
    kwargs.pop("kv_buffer_gib", None)
    return out
