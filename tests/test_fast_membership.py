"""The same task in the same layout on groups of different membership (``actor``,
``actor+reference``, the actor's phases apart) reads different things of its group: under
LoRA the reference is the actor's base beside the actor and has weights of its own without it
(``GroupTasks.shares_base``), NeMo RL's reference waits for the actor's trainer
(``group_passes.reference_swap_s_of``), a trainer under a between-phases parameter offload
makes one round trip per phase of its model on the group (``GroupOffload._train_param_trips``).
The fast evaluation, which keeps group estimates and a task's numbers across deployments
(``placement.group_key``), equals the evaluation that keeps nothing (``rlmcost.memo.plain``)
on every deployment of a grid over the membership, framework (OpenRLHF, NeMo RL), LoRA and
between-phases offload, evaluated as one query each. The independent reference is the plain
evaluation, whose numbers the placement and perf tests check against published figures and
framework sources."""

from __future__ import annotations

from typing import Any

from fast_plain import fresh_fast_equals_plain

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


def _reference_weights(e: Any) -> int:
    return next(j.own.weights for g in e.groups for j in g.jobs if j.task.role == "reference")


def test_groups_of_other_members_equal_plain() -> None:
    for framework in ("openrlhf", "nemo-rl"):  # one query each
        runs = [_run(s, framework, lora, off) for lora in (False, True)
                for off in ([], ["params-idle"]) for s in SPLITS]  # fmt: skip
        results = fresh_fast_equals_plain(runs)
        # under LoRA (runs 6 and 7: no offload) the reference alone holds weights of its
        # own, beside the actor none (the grid reaches what it says it does)
        assert _reference_weights(results[6]) > 0 == _reference_weights(results[7])
