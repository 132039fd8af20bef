"""Predicted versus published RL step times (the RL rows of ``rlmcost validate``).

Each row of ``rl_rows`` in ``rlmcost/perf/data/published.json`` is a published RL iteration
("step") time with its setup, read from the source's own recipe where the table is silent:
the algorithm and its knobs (prompts, samples per prompt, mini-batches, KL, log-prob
recomputation), the model (a built-in name or an inline :class:`~rlmcost.specs.ModelSpec`),
the GPUs, the deployment (engine TP and memory reservation, trainer layout, token budgets)
and the response-length distribution. The assumptions each row needs beyond its source are
listed in the row. The prediction is the full evaluation
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment` of the row's
:class:`~rlmcost.run.Run`): its predicted iteration time
(``iteration_time_s``), compared with the published step time; error = predicted /
published - 1.

The evaluation is imported inside :func:`predict_rl_row`: this module is a view over the
whole model (deployment, placement, perf), kept here beside the training-step validation.
"""

from __future__ import annotations

from typing import Any

from rlmcost.frozen import dataclass


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
    from rlmcost.deployment.spec import Deployment
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.run.spec import Run

    dep = Deployment.model_validate(row["deployment"])
    gpus = int(row["gpus"])
    run = Run.from_data(
        {
            "algorithm": {"name": row["algorithm"], **row.get("options", {})},
            "models": {"actor": row["model"]},  # a name, or an inline ModelSpec mapping
            "workload": {
                "prompts": row["batch"],
                "samples_per_prompt": row.get("group"),
                "prompt_len": row["prompt_len"],
                "response_len": row["response_len"],
                "length_dist": row.get("length_dist"),
            },
            "deployment": row["deployment"],
            "cluster": {"hardware": row["hardware"], "gpus": gpus,
                        "dp": gpus // (dep.train.tp * dep.train.pp * dep.train.cp)},  # fmt: skip
        },
        f"RL row {row['id']}",
    )
    result = evaluate_deployment(run)
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
