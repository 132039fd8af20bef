"""``rlmcost.plan(...)``: one call for both searches, returning a pandas DataFrame."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


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
    ``command`` column the query that reproduces it; ``df.attrs["plan"]`` holds the whole
    :class:`~rlmcost.plan.search.PlanResult`: Pareto front, counts, what never fit).

    ``algorithm``: an RL algorithm (``"grpo"``, ``"ppo"``, ...: :func:`rlmcost.plan.rl.
    plan_rl`; ``kwargs``: the workload ``batch``, ``group``, ``prompt_len``,
    ``response_len``, ``reward``, ``critic``, ``ref``, and ``space``, ``min_gpus``,
    ``workers``, ``cluster``) or ``"train"`` (:func:`rlmcost.plan.train.plan_train`;
    ``kwargs``: ``seq``, ``batch``, ``space``, ``refine``, ``workers``, ``cluster``).

    >>> import rlmcost
    >>> df = rlmcost.plan("train", "llama-3.1-8b", 8, batch=64, seq=4096, top=3)
    >>> len(df), bool(df["fits"].all())
    (3, True)
    """
    if algorithm == "train":
        from rlmcost.plan.train import plan_train

        result = plan_train(model, gpus, hardware=hardware, objective=objective, top=top,
                            **kwargs)  # fmt: skip
    else:
        from rlmcost.plan.rl import RLQuery, plan_rl

        names = ("batch", "group", "prompt_len", "response_len", "reward", "critic", "ref")
        q = RLQuery(algorithm, model, hardware, **{k: kwargs.pop(k) for k in names
                                                    if k in kwargs})  # fmt: skip
        result = plan_rl(q, gpus, objective=objective, top=top, **kwargs)
    df = result.frame()
    df.attrs["plan"] = result
    return df
