"""Adding data-parallel GPUs at a fixed per-GPU batch never makes a phase slower unless the
output names the term that grew (the exposed communication of a job, a transfer that now
crosses nodes, host work on a fixed number of actors, or the length tail that a larger batch
draws). Independent reasoning: with the per-GPU batch fixed, each GPU's compute is unchanged
for the same lengths, so only communication, fixed host work or the longest response (the
(2n - 1)/2n quantile of n responses, rlmcost.placement.lengths) can grow; the test checks the
output names which, in a note of that kind that lists the phase (not any note that happens to
mention it)."""

from __future__ import annotations

import pytest

from rlmcost.reports.estimate import estimate

SCALING_NOTES = ("exposed communication", "host work on a fixed number")


def _phases(e) -> dict[str, float]:  # noqa: ANN001
    return {p.name: p.time_s for p in e.evaluation.phases}


def _named(notes: list[str], phase: str) -> bool:
    """Whether a scaling note names ``phase``: '<phase> on <group>' in an exposed-communication
    or host-work note, or the phase in the length-tail note's list."""
    for n in notes:
        if n.startswith(SCALING_NOTES) and f"{phase} on " in n:
            return True
        if n.startswith("length tail: "):
            listed = n.split("each pass over the responses: ")[1].split(" (rlmcost")[0]
            if phase in listed.split(", "):
                return True
    return False


def _check(runs: list) -> None:  # noqa: ANN001
    for small_e, big_e in zip(runs, runs[1:], strict=False):
        small, big = _phases(small_e), _phases(big_e)
        for phase, t in big.items():
            if phase in small and t > small[phase] * (1 + 1e-9):
                assert _named(big_e.notes, phase), (phase, small[phase], t, big_e.notes)


@pytest.mark.parametrize("framework", ["none", "nemo-rl", "verl", "openrlhf", "trl", "slime"])
@pytest.mark.parametrize(("alg", "model", "hw"), [("ppo", "llama-2-7b", "a100-80gb"),
                                                 ("grpo", "llama-3.1-8b", "h100")])
def test_more_gpus_slow_a_phase_only_with_a_named_term(framework, alg, model, hw) -> None:  # noqa: ANN001
    zero = 1 if framework == "slime" else 3  # slime: Megatron-LM's distributed optimizer
    runs = [estimate(alg, model, hardware=hw, gpus=n, batch=n, group=4, zero=zero,
                     response_len=512, framework=framework) for n in (8, 16, 32)]  # fmt: skip
    _check(runs)


@pytest.mark.parametrize("framework", ["none", "nemo-rl", "verl", "openrlhf", "slime"])
@pytest.mark.parametrize(("alg", "model", "dist", "cap"), [
    ("ppo", "llama-2-7b", "lognormal:300,0.6,1024", 1024),
    ("grpo", "qwen3-30b-a3b", "reasoning", 4096),
])
def test_a_longer_tail_from_more_gpus_is_named(framework, alg, model, dist, cap) -> None:  # noqa: ANN001
    # spread lengths: the longest of 4 n responses grows with n, so generation and the
    # heaviest rank's passes grow at a fixed per-GPU batch (e.g. PPO 7B under NeMo RL's
    # defaults: generation 10.4 s on 8 GPUs, 11.5 s on 16), named by the length-tail note
    runs = [estimate(alg, model, hardware="h100", gpus=n, batch=n, group=4, response_len=cap,
                     length_dist=dist, framework=framework) for n in (8, 16, 32)]  # fmt: skip
    _check(runs)
    tail = [n for n in runs[1].notes if n.startswith("length tail: ")]
    assert len(tail) == 1 and "generation" in tail[0]


def test_the_tail_note_states_the_longest_drawn() -> None:
    # lognormal:300,0.6,1024 at the midpoint quantiles (rlmcost.placement.lengths): the
    # longest of 32 is min(1024, exp(mu + 0.6 z_{63/64})) = 920 tokens, of 64 the cap
    notes = {n: next(x for x in estimate("ppo", "llama-2-7b", hardware="a100-80gb", gpus=n,
                                         batch=n, group=4, response_len=1024,
                                         length_dist="lognormal:300,0.6,1024").notes
                     if x.startswith("length tail: "))
             for n in (8, 16)}  # fmt: skip
    assert "32 responses per iteration" in notes[8] and "longest 920 tokens" in notes[8]
    assert "64 responses per iteration" in notes[16] and "longest 1,024 tokens" in notes[16]
    fixed = estimate("ppo", "llama-2-7b", gpus=8, response_len=1024).notes
    assert not any(x.startswith("length tail: ") for x in fixed)
    assert any(x.startswith("every response is T = 1024 tokens") for x in fixed)


def test_a_weight_sync_that_crosses_nodes_between_groups_is_named() -> None:
    # verl's asynchronous GRPO (engines and trainer on groups of their own): on 8 GPUs the
    # refit stays inside one H100 node, on 16 the engines' group spans two and the NCCL refit
    # crosses nodes (rlmcost.placement.transfer.sync_span_gpus), so the weight sync grows; the
    # groups' own notes list only transfers inside a group, the sync note names it
    runs = [estimate("grpo", "llama-3.1-8b", hardware="h100", gpus=n, batch=n, group=4,
                     response_len=1024, framework="verl", placement="async")
            for n in (8, 16)]  # fmt: skip
    sync = [_phases(e)["weight sync"] for e in runs]
    assert sync[1] > sync[0]
    _check(runs)
    assert not any(n.startswith("exposed communication between device groups")
                   for n in runs[0].notes)  # fmt: skip
