"""Groups of different membership share a task's own numbers (``group_key.role_key`` and
``forward_key``: the own bytes, a training job's and a forward job's numbers) only where the
task reads nothing else of its group (``placement.task_reads``): every deployment of a grid
over the groups' membership, framework (OpenRLHF, NeMo RL), LoRA and between-phases offload
equals the evaluation that keeps nothing (``rlmcost.memo.plain``), and the actor's update on 8
GPUs is computed once for the groups ``actor`` and ``actor+reference``. The independent
reference is the plain evaluation, whose numbers the placement and perf tests check against
published figures and framework sources."""

from __future__ import annotations

import json
from typing import Any

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement import query as resolved
from rlmcost.run.spec import Run

SPLITS = (
    ("actor", "critic+reward+reference"),  # the reference without the actor: weights of its own
    ("actor+reference", "critic+reward"),  # beside the actor: LoRA's base, NeMo RL's swap
    ("actor:train", "actor:forward+critic+reward+reference"),  # the actor's phases apart
)


def _run(split: tuple[str, str], framework: str, lora: bool, offload: list[str]) -> Run:
    return Run.from_data({
        "algorithm": {"name": "ppo"},
        "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"framework": framework, "train": {"offload": offload},
                       **({"lora": {"rank": 16}} if lora else {}),
                       "groups": [{"members": "rollout", "gpus": 8},
                                  {"members": split[0], "gpus": 8},
                                  {"members": split[1], "gpus": 8}]},
        "cluster": {"hardware": "h100-sxm"},
    })  # fmt: skip


def _text(result: Any) -> str:
    if isinstance(result, SpecError):
        return f"SpecError: {result}"
    return json.dumps(result.to_json(), sort_keys=True, default=repr)


def _plain(run: Run) -> str:
    with memo.plain():
        try:
            return _text(evaluate_deployment(run))
        except SpecError as exc:
            return _text(exc)


def test_tasks_shared_across_membership_equal_plain() -> None:
    for framework in ("openrlhf", "nemo-rl"):  # one query each
        runs = [_run(s, framework, lora, off) for lora in (False, True)
                for off in ([], ["params-idle"]) for s in SPLITS]  # fmt: skip
        memo.clear_all()
        resolved._QUERIES.clear()
        fast = [_text(e) for e in evaluate_many(runs)]
        assert fast == [_plain(r) for r in runs]
        assert not any(f.startswith("SpecError") for f in fast)


def test_the_actors_update_is_computed_once_for_two_memberships() -> None:
    """``actor=8`` and ``actor+reference=8`` give the actor's update the same inputs (its
    model's tasks, the actor trained there, no Hybrid Engine): one kept training job; the
    reference's own bytes differ under LoRA (the actor's base beside it, or its own weights)."""
    runs = [_run(s, "openrlhf", True, []) for s in SPLITS[:2]]
    memo.clear_all()
    resolved._QUERIES.clear()
    fast = evaluate_many(runs)
    seen = next(iter(resolved._QUERIES.values())).groups_seen or {}
    trains = [k for k in seen if isinstance(k, tuple) and k[0] == "query"
              and k[1][0] == "train" and k[1][1][0] == "role"]  # fmt: skip
    assert len(trains) == 2  # the actor's (both deployments) and the critic's
    assert [_text(e) for e in fast] == [_plain(r) for r in runs]

    def reference_weights(e: Any) -> int:
        return next(j.own.weights for g in e.groups for j in g.jobs
                    if j.task.role == "reference")  # fmt: skip

    alone, beside = (reference_weights(e) for e in fast)
    assert alone > 0 and beside == 0
