"""The vectorized sweep equals the scalar training step elementwise; the scalar step equals
the symbolic memory model and the rlmcost.timing roofline."""

from __future__ import annotations

import random

import numpy as np
import pytest
from compiled_strategies import BUILT_IN, SYNTHETIC, spec

from rlmcost import blocks as bl
from rlmcost.choices import AttnCounting, Dtype, Head
from rlmcost.compiled import arch_numbers
from rlmcost.compiled.memory import layout_ok
from rlmcost.compiled.sweep import codes, sweep_train_steps
from rlmcost.compiled.train_step import train_step
from rlmcost.parallel import memory as symbolic
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.specs import get_hardware
from rlmcost.timing import TRAIN, Roofline

H100 = get_hardware("h100")


def _columns(cases):
    layouts_ = [c[0] for c in cases]
    col = {f: np.array([getattr(lay, f) for lay in layouts_]) for f in
           ("dp", "tp", "pp", "cp", "ep", "sp", "micro_batch", "virtual_stages")}  # fmt: skip
    col["etp"] = np.array([lay.expert_tp for lay in layouts_])
    col["zero"] = codes(ZeroStage, [lay.zero for lay in layouts_])
    col["ckpt"] = codes(Checkpointing, [lay.ckpt for lay in layouts_])
    col["schedule"] = codes(PipelineSchedule, [lay.schedule for lay in layouts_])
    col["sequences"] = np.array([c[1] for c in cases])
    col["seq_len"] = np.array([c[2] for c in cases])
    return col


def _random_cases(model, n: int, seed: int):
    """Random candidates built from the layout strategy's choices with a seeded RNG."""
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        schedule = rng.choice(list(PipelineSchedule))
        cases.append((
            Layout(
                dp=rng.choice([1, 2, 3, 8]), tp=rng.choice([1, 2, 4, 8]),
                pp=rng.choice([1, 2, 3, 4]), cp=rng.choice([1, 2]),
                ep=rng.choice([1, 2, 4]) if model.is_moe else 1, sp=rng.random() < 0.5,
                etp=rng.choice([None, None, 1, 2]) if model.is_moe else None,
                zero=rng.choice(list(ZeroStage)), ckpt=rng.choice(list(Checkpointing)),
                micro_batch=rng.choice([1, 2, 3, 8]), schedule=schedule,
                virtual_stages=rng.choice([1, 2])
                if schedule is PipelineSchedule.INTERLEAVED else 1,
            ),
            rng.randint(1, 64),
            rng.choice([1, 100, 1024, 4097]),
        ))  # fmt: skip
    return cases


@pytest.mark.parametrize("model", [*BUILT_IN, *SYNTHETIC], ids=lambda m: getattr(m, "name", m))
@pytest.mark.parametrize("recompute", [True, False])
def test_sweep_equals_the_scalar_step_elementwise(model, recompute):
    model = spec(model)
    cases = _random_cases(model, 60, seed=sum(map(ord, model.name)))
    col = _columns(cases)
    got = sweep_train_steps(model, H100, recompute=recompute, **col)
    a = arch_numbers(model)
    for i, (layout, seqs, seq_len) in enumerate(cases):
        # Independent: the layout rules of validate.check_layout (via layout_ok, tested there).
        assert bool(got.valid[i]) == layout_ok(a, layout)
        if not got.valid[i]:
            assert not got.fits[i]
            continue
        want = train_step(model, H100, layout, seqs, seq_len, recompute=recompute)
        # Independent: the exact scalar step (ints and Fractions) of the same candidate.
        for part, value in want.memory.to_json().items():
            if part not in ("kv_cache", "engine", "overhead", "rollout"):  # none in a step
                mine = got.memory_bytes[i] if part == "total" else getattr(got, part)[i]
                assert mine == pytest.approx(value, rel=1e-12, abs=1), (part, layout)
        assert got.peak_stage[i] == want.peak_stage
        assert bool(got.fits[i]) == want.fits
        assert got.work_flops[i] == pytest.approx(want.work_flops, rel=1e-12)
        assert got.bubble[i] == pytest.approx(float(want.bubble), rel=1e-12)
        assert got.time_bound_s[i] == pytest.approx(want.time_bound_s, rel=1e-9)


def test_a_grid_broadcasts_like_the_flat_candidates():
    model = spec("llama-3.1-70b")
    tp = np.array([1, 2, 4, 8])[:, None, None]
    mbs = np.array([1, 2, 4])[None, :, None]
    seq = np.array([1024, 8192])[None, None, :]
    grid = sweep_train_steps(model, H100, sequences=64, seq_len=seq, tp=tp, pp=4, dp=2,
                             micro_batch=mbs, zero=1, ckpt=1)  # fmt: skip
    assert grid.memory_bytes.shape == (4, 3, 2)
    flat = np.broadcast_arrays(tp, mbs, seq)
    one = sweep_train_steps(model, H100, sequences=64, seq_len=flat[2].ravel(),
                            tp=flat[0].ravel(), pp=4, dp=2, micro_batch=flat[1].ravel(),
                            zero=1, ckpt=1)  # fmt: skip
    # Independent: the same candidates evaluated one by one (no broadcasting).
    assert np.array_equal(grid.memory_bytes.ravel(), one.memory_bytes)
    assert np.array_equal(grid.time_bound_s.ravel(), one.time_bound_s)


@pytest.mark.parametrize(
    "layout",
    [
        Layout(tp=8, pp=2, dp=2, micro_batch=2),
        Layout(tp=4, dp=4, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.FULL),
        Layout(pp=4, schedule=PipelineSchedule.INTERLEAVED, virtual_stages=2, micro_batch=1),
    ],
)
def test_the_scalar_step_is_the_symbolic_memory_and_the_timing_roofline(layout):
    model = spec("llama-3.1-8b")
    arch = model.arch()
    seqs, seq_len = 24, 2048
    got = train_step(model, H100, layout, seqs, seq_len, recompute=False)
    stages = symbolic.memory_per_stage(arch, layout, symbolic.Mode.TRAIN, seqs, seq_len)
    own = max(stages, key=lambda b: b.total)
    read = own.weights
    if layout.zero is ZeroStage.OS_G_P:
        read = symbolic.memory_per_rank(
            arch, layout.with_(zero=ZeroStage.NONE), symbolic.Mode.TRAIN, seqs, seq_len
        ).weights
    share = symbolic.data_share(layout, seqs, seq_len)
    load = layout.dp * share.sequences / seqs
    work = int(bl.work_train(arch, seqs, seq_len, AttnCounting.FULL, Head.LM))
    bubble = bubble_fraction(layout.schedule, layout.pp, share.micro_batches,
                             layout.virtual_stages)  # fmt: skip
    phase = Roofline(H100, layout.n_gpus, Dtype.BF16).phase(
        work * load, 2 * read + 2 * own.gradients + 2 * own.optimizer, TRAIN
    ).scaled(1 + bubble)
    # Independent: parallel.memory (sympy), blocks.work_train and rlmcost.timing.Roofline, as
    # reports.estimate composes them for one optimizer step.
    assert got.memory == own
    assert got.work_flops == work
    assert got.time_bound_s == pytest.approx(phase.bound_s, rel=1e-12)


def test_recomputation_adds_the_recomputed_forward():
    model = spec("llama-3.1-8b")
    layout = Layout(tp=2, ckpt=Checkpointing.FULL)
    with_ = train_step(model, H100, layout, 8, 1024)
    without = train_step(model, H100, layout, 8, 1024, recompute=False)
    from rlmcost.parallel.activations import work_recompute

    # Independent: parallel.activations.work_recompute (sympy): one more forward of the body.
    extra = int(work_recompute(model.arch(), 8, 1024, Checkpointing.FULL))
    assert with_.work_flops - without.work_flops == extra


def test_out_of_range_codes_are_one_line_spec_errors():
    from rlmcost.errors import SpecError

    with pytest.raises(SpecError, match=r"Checkpointing codes must be 0..2") as err:
        sweep_train_steps(spec("gpt-2"), H100, sequences=8, seq_len=128, ckpt=np.array([0, 3]))
    assert "\n" not in str(err.value)
