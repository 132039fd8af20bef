"""The shortcuts of a fresh deployment's evaluation, each equal to the path it replaces:
``Roofline.phase`` at the datasheet peaks against ``Roofline.steps`` of one phase (bit for
bit, the sign of a zero included), a groups' part of an iteration summed per group estimate
(``iteration_groups._merged`` of ``_sums``) against its definition over the jobs
(``_stages``, ``_waves``, ``trained_tokens``), and the kept pass options and GEMM times
against the ones computed inside ``memo.plain``, and the weight syncs kept by what they read
(``weight_syncs.sync_reads``) against the ones computed for each run alone."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import memo
from rlmcost.choices import Dtype
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.perf.efficiency import Device
from rlmcost.placement import iteration_groups as ig
from rlmcost.placement.pass_options import step_options
from rlmcost.run.spec import Run
from rlmcost.specs import get_hardware
from rlmcost.timing import Roofline


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


_NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=10**22),
    st.floats(min_value=0, max_value=1e25, allow_nan=False),
    st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308]),
)


@settings(max_examples=300, deadline=None)
@given(_NUMBERS, _NUMBERS, st.integers(min_value=1, max_value=4096),
       st.sampled_from(["a100-80gb", "h100", "h20"]), st.sampled_from([Dtype.BF16, Dtype.FP8]))
def test_phase_at_the_peaks_is_steps_of_one_phase(flops: Any, nbytes: Any, gpus: int,
                                                  hw: str, dtype: Dtype) -> None:  # fmt: skip
    # independent: Roofline.steps, the general path over lists (timing.py), bit for bit
    spec = get_hardware(hw)
    if dtype not in spec.peak_flops_per_s:
        dtype = Dtype.BF16
    r = Roofline(spec, gpus, dtype)
    one, listed = r.phase(flops, nbytes), r.steps([float(flops)], [nbytes])
    for name in ("compute_s", "memory_s", "bound_s", "compute_bound_s"):
        assert _bits(getattr(one, name)) == _bits(getattr(listed, name)), name


def test_phase_refuses_negative_inputs_as_steps_does() -> None:
    r = Roofline(get_hardware("h100"), 8, Dtype.BF16)
    for flops, nbytes in ((-1.0, 0), (0, -1)):
        with pytest.raises(Exception) as fast:
            r.phase(flops, nbytes)
        with pytest.raises(Exception) as listed:
            r.steps([float(flops)], [nbytes])
        assert (type(fast.value), str(fast.value)) == (type(listed.value), str(listed.value))


def _runs() -> list[Run]:
    base = {"algorithm": {"name": "ppo"}, "models": {"actor": "8b"}, "cluster": {"gpus": 16}}
    out = [Run.from_data(base)]
    for placement in ("async", "disaggregated", "hybrid", "combined"):
        out.append(Run.from_data({**base, "deployment": {"placement": placement}}))
    verl = {"framework": "verl", "placement": "disaggregated"}
    out.append(Run.from_data({**base, "deployment": verl}))
    return out


@pytest.mark.parametrize("run", _runs(), ids=lambda r: r.deployment.placement or "baseline")
def test_groups_part_summed_per_estimate_is_summed_over_the_jobs(run: Run) -> None:
    # independent: the per-job definitions (_stages over jobs_of, _waves, trained_tokens)
    groups = evaluate_deployment(run).groups
    sums = [ig._sums(g) for g in groups]
    assert all(s[5] for s in sums)  # ints: the sums regroup exactly
    jobs = ig.jobs_of(groups)
    stages, waves, tokens = ig._merged(sums)
    assert list(stages.items()) == list(ig._stages(jobs).items())
    assert waves == list(ig._waves(groups))
    assert tokens == ig.trained_tokens(jobs.values())
    part = ig._build(groups)  # the part as built holds them
    assert (part.stages, list(part.wave_notes), part.trained_tokens) == (stages, waves, tokens)
    firsts = {r: k for k, r, _, _ in reversed(part.shape)}
    assert part.first_of == firsts and list(part.first_of) == list(dict.fromkeys(
        r for _, r, _, _ in part.shape))  # fmt: skip
    assert part.last_of == {r: k for k, r, _, _ in part.shape}


@pytest.mark.parametrize("framework", [None, "verl", "nemo-rl", "openrlhf", "slime"])
def test_kept_pass_options_are_the_plain_ones(framework: str | None) -> None:
    # independent: step_options computed inside memo.plain (nothing kept or interned)
    for zero in ("1", "3"):
        dep = Deployment(framework=framework, train={"zero": zero})
        with memo.plain():
            fresh = step_options(dep)
        assert step_options(dep) == fresh
        assert step_options(dep) is step_options(dep)  # by the deployment's identity
        twin = Deployment(framework=framework, train={"zero": zero})
        assert step_options(twin) == fresh  # an equal deployment: the same options


def test_kept_gemm_times_are_the_plain_ones() -> None:
    # independent: Device.gemm_s computed inside memo.plain
    dev = Device(get_hardware("a100-80gb"), Dtype.BF16)
    for shape in ((4096, 8192, 8192), (1, 8192, 8192), (7, 5, 3), (128, 128, 64)):
        with memo.plain():
            fresh = dev.gemm_s(*shape)
        assert dev.gemm_s(*shape) == fresh
        assert Device(get_hardware("a100-80gb"), Dtype.BF16).gemm_s(*shape) == fresh
    with pytest.raises(Exception, match="must be positive"):
        dev.gemm_s(0, 1, 1)


def _sync_runs() -> list[Run]:
    """Deployments of one query whose weight syncs differ in one read each: the framework's
    refit (verl, NeMo RL's packed broadcast, OpenRLHF), an engine's own disk refit, the FP8
    engine NeMo RL requantizes for, the engine's TP, a streamed rollout, the split of GPUs."""
    base = {"algorithm": {"name": "grpo"}, "models": {"actor": "8b"}, "cluster": {"gpus": 16}}
    out = []
    trainers = {None: "actor+reference+reward", "verl": "actor", "nemo-rl": "actor+reference",
                "openrlhf": "actor+reference+reward"}  # each framework's GRPO models
    for framework, members in trainers.items():
        for engine in ({}, {"tp": 2}, {"dtype": "fp8"}, {"refit": "disk"}):
            for extra in ({}, {"placement": "async", "partial_rollout": True}):
                for rollout in (4, 8):
                    groups = [{"members": "rollout", "gpus": rollout},
                              {"members": members, "gpus": 16 - rollout}]
                    dep = {"framework": framework, "engine": engine, "groups": groups, **extra}
                    out.append(Run.from_data({**base, "deployment": dep}))
    return out


def _syncs(run: Run) -> Any:
    try:
        return [s.to_json() if hasattr(s, "to_json") else repr(s)
                for s in evaluate_deployment(run).syncs]
    except SpecError as exc:
        return repr(exc)


def test_weight_syncs_kept_by_their_reads_are_each_runs_own() -> None:
    # independent: each run's syncs computed inside memo.plain (nothing kept, no key)
    runs = _sync_runs()
    with memo.plain():
        plain = [_syncs(r) for r in runs]
    memo.clear_all()
    kept = [_syncs(r) for r in runs]  # one query: a key missing a read would hit wrongly
    assert kept == plain
    assert [_syncs(r) for r in reversed(runs)] == plain[::-1]  # found, in the other order
    refits = {s.split("(")[-1] for p in plain if isinstance(p, list) for s in map(repr, p)
              if "refit" in s}  # fmt: skip
    assert len(refits) >= 3  # the mechanisms differ among the runs (not vacuous)


def test_phases_joined_per_group_are_the_phases_summed() -> None:
    # independent: _phases_summed, the sums over every group's jobs and transfers in order
    apart = 0
    for run in [*_runs(), *_sync_runs()[::3]]:
        try:
            groups = evaluate_deployment(run).groups
        except SpecError:
            continue
        owns = [ig._own_phases(g) for g in groups]
        apart += sum(map(len, owns)) == len({n for own in owns for n in own})
        joined, summed = ig._phases(groups), ig._phases_summed(groups)
        assert [(n, k, _bits(p), _bits(b)) for n, k, p, b in joined[0]] == \
            [(n, k, _bits(p), _bits(b)) for n, k, p, b in summed[0]]  # fmt: skip
        assert [p.to_json() for p in joined[1]] == [p.to_json() for p in summed[1]]
        assert joined[2] == summed[2]
    assert apart >= 5  # the joined path is taken (not vacuous)
