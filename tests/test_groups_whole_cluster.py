"""User device groups hold their own trainer replicas: with `--groups`, tp*pp*cp need divide each
trainer's group, not the whole cluster (`--gpus 8 --pp 3 --groups rollout=2,actor=3,
reference=3` is the deployment the same groups give without --gpus, whose evaluation sums them
to 8). The independent reference: the same command without --gpus, which never checked the
cluster-wide product."""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate

GROUPS = ["--pp", "3", "--groups", "rollout=2,actor=3,reference=3"]


def test_groups_need_not_divide_the_cluster() -> None:
    given = evaluate(run_from_argv("grpo", ["-m", "8b", "--gpus", "8", *GROUPS]))
    summed = evaluate(run_from_argv("grpo", ["-m", "8b", *GROUPS]))
    assert given.gpus == summed.gpus == 8
    assert given.time_s == summed.time_s
    assert given.evaluation is not None and summed.evaluation is not None
    assert [g.peak_memory_bytes_per_device for g in given.evaluation.groups] == \
        [g.peak_memory_bytes_per_device for g in summed.evaluation.groups]  # fmt: skip


def test_a_trainer_group_still_holds_whole_replicas() -> None:
    with pytest.raises(SpecError, match="group actor has 4 GPUs, not a multiple of"):
        evaluate(run_from_argv("grpo", ["-m", "8b", "--gpus", "8", "--pp", "3", "--groups",
                                        "rollout=2,actor=4,reference=2"]))  # fmt: skip


def test_without_groups_the_cluster_holds_whole_replicas() -> None:
    with pytest.raises(SpecError, match="does not divide 8"):
        evaluate(run_from_argv("grpo", ["-m", "8b", "--gpus", "8", "--pp", "3"]))
