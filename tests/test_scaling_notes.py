"""Adding data-parallel GPUs at a fixed per-GPU batch never makes a phase slower unless the
output names the term that grew (the exposed communication of a job, or a transfer that now
crosses nodes). Independent reasoning: with the per-GPU batch fixed, each GPU's compute is
unchanged, so only communication can grow; the test checks the output says which."""

from __future__ import annotations

import pytest

from rlmcost.reports.estimate import estimate


def _phases(e) -> dict[str, float]:  # noqa: ANN001
    return {p.name: p.time_s for p in e.evaluation.phases}


@pytest.mark.parametrize("framework", ["none", "nemo-rl", "verl"])
@pytest.mark.parametrize(("alg", "model", "hw"), [("ppo", "llama-2-7b", "a100-80gb"),
                                                 ("grpo", "llama-3.1-8b", "h100")])
def test_more_gpus_slow_a_phase_only_with_a_named_term(framework, alg, model, hw) -> None:  # noqa: ANN001
    runs = [estimate(alg, model, hardware=hw, gpus=n, batch=n, group=4, zero=3,
                     response_len=512, framework=framework) for n in (8, 16)]  # fmt: skip
    small, big = (_phases(e) for e in runs)
    notes = " | ".join(runs[1].notes)
    for phase, t in big.items():
        if phase in small and t > small[phase] * (1 + 1e-9):
            assert f"{phase} on" in notes, (phase, small[phase], t, notes)
