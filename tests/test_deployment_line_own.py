"""The default deployment's line lists the default framework's (NeMo RL's) flags; where the
query gives its own value of one of them the line says so, so that `--zero 3` in it does not
read as the run's when the title says zero=1."""

from __future__ import annotations

import itertools

import pytest

import rlmcost
from rlmcost.cli.deployment_line import deployment_line


def _line(**deployment: object) -> str:
    data = {"algorithm": {"name": "grpo"}, "models": {"actor": "8b"}, "cluster": {"gpus": 8},
            "deployment": deployment}
    return deployment_line(rlmcost.Run.from_data(data))


def test_defaults_kept_say_nothing():
    for alg, actor in itertools.product(("grpo", "ppo", "dpo", "rlvr", "kto", "remax"),
                                        ("8b", "70b", "qwen3-30b-a3b")):
        run = rlmcost.Run.from_data({"algorithm": {"name": alg}, "models": {"actor": actor},
                                     "cluster": {"gpus": 64}})
        assert "sets its own" not in deployment_line(run), (alg, actor)


@pytest.mark.parametrize(("deployment", "flags"), [
    ({"train": {"zero": "1"}}, "--zero"),  # NeMo RL's DTensor policy: --zero 3 in the line
    ({"train": {"offload": []}}, "--offload"),  # its optimizer-idle,params-idle
    ({"engine": {"sleep": False, "gpu_memory_utilization": 0.7}},
     "--gpu-memory-utilization, --sleep"),  # its 0.6 and --sleep
])
def test_given_values_are_named(deployment, flags):
    line = _line(**deployment)
    assert "as flags: --zero 3 " in line  # the preset's, as before
    assert f"; the query sets its own {flags})" in line
