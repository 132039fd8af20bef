"""The advice's fit probes (rlmcost.placement.untimed): an evaluation made for memory and fit
alone has the full evaluation's ``fits`` (and, where no split search picks group sizes by
time, its every peak), and the longest-response search's answer and probe count."""

import pytest

from rlmcost.errors import SpecError
from rlmcost.evaluation.advice import max_response_len
from rlmcost.placement import rollout
from rlmcost.placement.untimed import UNTIMED, untimed
from rlmcost.reports.estimate import estimate


def _fit(e):
    """The fit and the peaks per stage (bytes per device) of an evaluation."""
    peaks = tuple((str(k), s.memory_bytes_per_device) for k, s in e.stages.items())
    return e.fits, peaks, e.host_memory_bytes_per_node


def _both(base, t):
    """(full, untimed) fit of ``base`` at response length ``t`` (a SpecError as its text)."""
    out = []
    for ctx in (None, untimed):
        try:
            if ctx is None:
                out.append(_fit(estimate(base=base, response_len=t)))
            else:
                with ctx():
                    out.append(_fit(estimate(base=base, response_len=t)))
        except SpecError as exc:
            out.append(str(exc))
    return out


# T from well inside memory to past it: the fit flips inside this range for each case
LENGTHS = (512, 6144, 16384)


@pytest.mark.parametrize("kw", [
    dict(algorithm="grpo", model="8b", batch=2000, gpus=16),  # paged vLLM, prefix sharing
    dict(algorithm="grpo", model="8b", batch=512, gpus=8, length_dist="reasoning"),
    dict(algorithm="ppo", model="70b", batch=256, gpus=32),
])  # fmt: skip
def test_untimed_has_the_full_evaluations_fit_and_peaks(kw):
    kw = dict(kw)
    base = estimate(kw.pop("algorithm"), kw.pop("model"), **kw).run
    seen = set()
    for t in LENGTHS:
        full, fast = _both(base, t)
        assert fast == full, t
        seen.add(full[0])
    assert seen == {True, False}  # the range crosses the fit: the test can fail


@pytest.mark.parametrize("placement", ["disaggregated", "combined", "async"])
def test_untimed_split_search_keeps_fits(placement):
    # a split search (placement.allocate) ranks splits fitting first, so whether the chosen
    # split fits is whether any does, whatever the seconds; the chosen split may differ
    base = estimate("grpo", "8b", batch=512, gpus=16, placement=placement).run
    seen = set()
    for t in LENGTHS:
        full, fast = _both(base, t)
        assert fast[0] == full[0], t
        seen.add(full[0])
    assert seen == {True, False}


def test_untimed_keeps_nothing_and_skips_the_paged_replay(monkeypatch):
    base = estimate("grpo", "8b", batch=512, gpus=8).run
    calls = []
    real = rollout.Paged.admit

    def admit(self, *a, **k):
        calls.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(rollout.Paged, "admit", admit)
    with untimed():
        assert UNTIMED[0] == 1
        estimate(base=base, response_len=3000)
    assert UNTIMED[0] == 0 and calls == []
    estimate(base=base, response_len=3000)  # not kept from the untimed one: replayed now
    assert calls


def test_longest_response_probes_by_doubling_then_bisection():
    # 8B GRPO on 16 H100s, B 10000 (NeMo RL's default deployment): the limit (the model's
    # 131,072-token context less the prompt) first, doubling 2048, 4096, 8192, then
    # bisection to 256 tokens: 6144, 7168, 7680, 7936: 8 probes, 7,680 tokens fit
    e = estimate("grpo", "8b", batch=10000, gpus=16)
    asked: list[int] = []

    def run(**changes):
        asked.append(changes["response_len"])
        return estimate(base=e.run, **changes)

    longest = max_response_len(run, e)
    assert asked == [130048, 2048, 4096, 8192, 6144, 7168, 7680, 7936]
    assert (longest.response_len, longest.stopped_by) == (7680, "memory")


def test_fit_only_shrinks_as_the_response_grows():
    # the bisection's premise: memory grows with the response length (KV cache, activations,
    # logits, rollout buffers), so the fits over rising lengths are True then False, once
    base = estimate("grpo", "8b", batch=2000, gpus=16).run
    fits = []
    for t in range(1024, 16385, 1024):
        with untimed():
            fits.append(estimate(base=base, response_len=t).fits)
    assert fits[0] and not fits[-1]
    assert fits == sorted(fits, reverse=True), fits


def test_untimed_runs_a_version_gated_stream():
    # NeMo RL v0.7 GB200 Qwen3-32B 1-step off (tests/test_version_gate.py's row): its stream
    # behind the version gate divides by the steps more batches add; untimed keeps the gate
    # (only the KV pool's replay is left out), so the steps still grow and the fit is the same
    from test_version_gate import RECORDS, recipe, run_from_argv

    r = recipe(RECORDS["nemo-rl-v0.7-gb200-qwen3-32b-grpo-1off-32gpu"])
    assert r.query is not None
    run = run_from_argv(r.query.algorithm, list(r.argv))
    run = run.replace(**r.overlay) if r.overlay else run
    for t in (4096, 65536):
        full = estimate(base=run, response_len=t).fits
        with untimed():
            assert estimate(base=run, response_len=t).fits == full
