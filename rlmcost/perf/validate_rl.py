"""Predicted versus published RL step times (the RL rows of ``rlmcost validate``).

Each row of ``rl_rows`` in ``rlmcost/perf/data/published.json`` is a published RL iteration
("step") time with its setup, read from the source's own recipe where the table is silent:
the algorithm and its knobs (prompts, samples per prompt, mini-batches, KL, log-prob
recomputation), the model (a built-in name or an inline :class:`~rlmcost.specs.ModelSpec`),
the GPUs, the deployment (engine TP and memory reservation, trainer layout, token budgets)
and the response-length distribution. The assumptions each row needs beyond its source are
listed in the row. The prediction is the full evaluation
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment`): its predicted iteration time
(``iteration_time_s``), compared with the published step time; error = predicted /
published - 1.

The evaluation is imported inside :func:`predict_rl_row`: this module is a view over the
whole model (deployment, placement, perf), kept here beside the training-step validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RlRow:
    """One published RL step time and its prediction."""

    id: str
    source: str
    setup: str
    cite: str
    published_s: float
    predicted_s: float
    lower_bound_s: float
    phases: dict[str, float]
    assumptions: tuple[str, ...]

    @property
    def error(self) -> float:
        return self.predicted_s / self.published_s - 1

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "setup": self.setup,
            "metric": "step_time_s",
            "published": self.published_s,
            "predicted": self.predicted_s,
            "error": self.error,
            "time_lower_bound_s": self.lower_bound_s,
            "predicted_phases_s": self.phases,
            "assumptions": list(self.assumptions),
            "cite": self.cite,
        }


def predict_rl_row(row: dict[str, Any]) -> RlRow:
    """Evaluate one RL row (module docstring)."""
    from rlmcost.algorithms.options import Options
    from rlmcost.deployment.spec import Deployment
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.specs import ModelSpec

    model: Any = row["model"]
    if isinstance(model, dict):
        model = ModelSpec(**model)
    dep = Deployment.model_validate(row["deployment"])
    gpus = int(row["gpus"])
    layout = dep.train.layout(dp=gpus // dep.train.split)
    result = evaluate_deployment(
        row["algorithm"],
        model,
        deployment=dep,
        placement="baseline",
        batch=row["batch"],
        group=row.get("group"),
        prompt_len=row["prompt_len"],
        response_len=row["response_len"],
        length_dist=row.get("length_dist"),
        layout=layout,
        hardware=row["hardware"],
        gpus=gpus,
        options=Options(**row.get("options", {})),
    )
    phases = {p.name: p.time_s for p in result.phases}
    return RlRow(
        id=row["id"],
        source=row["source"],
        setup=row["setup"],
        cite=row["cite"],
        published_s=float(row["published"]),
        predicted_s=result.iteration_time_s,
        lower_bound_s=result.iteration_time_lower_bound_s,
        phases=phases,
        assumptions=tuple(row.get("assumptions", ())),
    )
