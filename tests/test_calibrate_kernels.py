"""The torch micro-kernels: analytic FLOPs (rlmcost.blocks) == FlopCounterMode, and timing.

Small odd shapes (GQA, MQA, S not a power of two) so that a wrong factor cannot hide; each
count runs on CPU and, where a fused CPU kernel hides FLOPs from the counter, on meta.
"""

import time

import pytest

torch = pytest.importorskip("torch")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from rlmcost.calibrate import kernels, measure, plan  # noqa: E402
from rlmcost.choices import Dtype, FfnKind  # noqa: E402

F32 = Dtype.FP32

CASES = [
    plan.gemm(33, 17, 65, F32),
    plan.gemm(1, 256, 128, F32),
    plan.attention("sdpa_causal", 2, 37, 6, 2, 16, F32),
    plan.attention("sdpa_causal", 1, 64, 4, 1, 32, F32),  # MQA
    plan.attention("sdpa_full", 2, 37, 6, 3, 16, F32),
    plan.attention("attention_eager", 2, 37, 6, 2, 16, F32),
    plan.mlp(FfnKind.GATED, 45, 64, 176, F32),
    plan.mlp(FfnKind.PLAIN, 45, 64, 256, F32),
    plan.block(False, 2, 29, 96, 6, 2, 160, F32),
    plan.block(True, 2, 29, 96, 6, 2, 160, F32),
    plan.block(True, 1, 16, 64, 4, 4, 128, F32),  # MHA
    plan.prefill(2, 23, 64, 4, 2, 96, 3, 211, F32),
    plan.decode_step(3, 41, 64, 4, 2, 96, 3, 211, F32),
    plan.decode_step(1, 1, 64, 4, 1, 96, 2, 211, F32),  # first decode step: context 1
    plan.moe(40, 64, 8, 2, 48, F32),
    plan.moe(7, 64, 4, 3, 32, F32),  # fewer tokens than experts: some experts idle
    plan.copy(1000, F32),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.name}-{c.label}")
def test_analytic_flops_equal_flop_counter(case):
    count = measure.count_flops(lambda where: kernels.build(case, where, torch.float32), "cpu")
    # FlopCounterMode (tests/FLOP_CONVENTIONS.md) vs rlmcost.blocks via calibrate.analytic
    assert count.flops == case.flops
    fused = case.name in {
        "sdpa_causal",
        "sdpa_full",
        "block_forward",
        "block_train",
        "prefill",
        "decode_step",
    }
    assert count.counted_on == ("meta" if fused else "cpu")
    assert ("_scaled_dot_product_flash_attention_for_cpu" in count.note) == fused


def test_cpu_sdpa_is_invisible_to_the_counter_so_meta_is_needed():
    case = plan.attention("sdpa_causal", 2, 37, 6, 2, 16, F32)
    kernel = kernels.build(case, "cpu", torch.float32)
    with FlopCounterMode(display=False) as counter:
        kernel()
    # FLOP_CONVENTIONS §2: aten._scaled_dot_product_flash_attention_for_cpu counts 0
    assert counter.get_total_flops() == 0 < case.flops


def test_census_names_the_uncounted_fused_ops():
    assert measure.uncounted_fused_ops(
        {"aten.mm", "aten._scaled_dot_product_flash_attention_for_cpu", "aten.softmax"}
    ) == ["aten._scaled_dot_product_flash_attention_for_cpu"]
    # CUDA's fused SDPA has a formula, so it is not reported
    assert measure.uncounted_fused_ops({"aten._scaled_dot_product_flash_attention"}) == []


def test_training_kernel_returns_fresh_gradients_each_call():
    case = plan.block(True, 1, 8, 32, 4, 2, 64, F32)
    kernel = kernels.build(case, "cpu", torch.float32)
    first = kernel().clone()
    second = kernel()
    assert torch.equal(first, second)  # not accumulated into 2 x first


def test_decode_step_writes_the_last_cache_position_and_is_repeatable():
    case = plan.decode_step(2, 9, 32, 4, 2, 64, 2, 50, F32)
    kernel = kernels.build(case, "cpu", torch.float32)
    assert kernel().shape == (2, 1, 50)
    assert torch.equal(kernel(), kernel())


def test_cpu_timing_is_positive_and_budgeted():
    budget = measure.Budget(warmup=1, warmup_time_s=0.0, min_time_s=0.02, min_reps=3)
    t = measure.time_kernel(lambda: time.sleep(0.002), "cpu", budget)
    assert 0.002 <= t.min_seconds <= t.seconds < 0.05
    assert 3 <= t.reps <= 11


class FakeCuda:
    """Stands in for torch.cuda: events read a clock that only the kernel advances, and
    every synchronize is logged, so the CUDA timing path runs without a GPU."""

    def __init__(self):
        self.clock_ms = 0.0
        self.log = []

    def synchronize(self):
        self.log.append("sync")

    def Event(self, enable_timing=False):  # noqa: N802 (torch's name)
        assert enable_timing
        fake = self

        class Event:
            def record(self):
                fake.log.append("record")
                self.at = fake.clock_ms

            def elapsed_time(self, end):
                return end.at - self.at

        return Event()

    def kernel(self):
        self.log.append("kernel")
        self.clock_ms += 4.0  # every call takes 4 ms of device time


def test_cuda_timing_uses_events_and_synchronizes_around_them():
    cuda = FakeCuda()
    times = measure.time_calls(cuda.kernel, "cuda", 3, cuda)
    assert times == [0.004, 0.004, 0.004]
    assert cuda.log[0] == "sync" and cuda.log[-1] == "sync"
    assert cuda.log[1:-1] == ["record", "kernel", "record"] * 3


def test_cuda_time_kernel_sizes_reps_from_a_probe():
    cuda = FakeCuda()
    budget = measure.Budget(warmup=2, warmup_time_s=0.0, min_time_s=0.1, min_reps=3)
    timing = measure.time_kernel(cuda.kernel, "cuda", budget, cuda)
    assert timing.seconds == 0.004
    assert timing.reps == 25  # ceil(0.1 s / 4 ms)
    # each warm-up call is synchronized
    assert cuda.log[:4] == ["kernel", "sync", "kernel", "sync"]


def test_reps_for_bounds():
    b = measure.Budget(min_time_s=1.0, min_reps=3, max_reps=100)
    assert measure.reps_for(0.0, b) == 3
    assert measure.reps_for(2.0, b) == 3
    assert measure.reps_for(0.05, b) == 20
    assert measure.reps_for(1e-6, b) == 100


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none here)")
def test_cuda_kernels_count_exactly():
    for case in CASES:
        count = measure.count_flops(
            lambda where, c=case: kernels.build(c, where, torch.bfloat16),
            "cuda",
            torch.cuda.synchronize,
        )
        assert count.flops == case.flops, case


def test_collective_input_errors_are_one_line():
    from rlmcost.calibrate.collectives import run_collectives
    from rlmcost.errors import SpecError

    with pytest.raises(SpecError, match="at least 2 ranks"):
        run_collectives(1, "cpu", [1024])
    with pytest.raises(SpecError, match="multiple of ranks"):
        run_collectives(2, "cpu", [1022])
    if torch.cuda.device_count() < 2:
        with pytest.raises(SpecError, match="--ranks 2 needs 2 GPUs"):
            run_collectives(2, "cuda", [1024])


def test_run_calibration_rejects_unknown_choices():
    from rlmcost.calibrate import run_calibration
    from rlmcost.errors import SpecError

    with pytest.raises(SpecError, match="unknown device 'tpu'; use one of: cpu, cuda"):
        run_calibration("tpu")
    with pytest.raises(SpecError, match="unknown dtype 'int4'"):
        run_calibration("cpu", dtype="int4")
    with pytest.raises(SpecError, match="--ranks 0 must be at least 1"):
        run_calibration("cpu", ranks=0)


def test_a_selected_cpu_run_keeps_its_reference_kernels():
    from rlmcost.calibrate import run_calibration

    report = run_calibration("cpu", quick=True, ranks=1, only=("moe_ffn",))
    assert {k.name for k in report.kernels} == {"gemm", "copy", "moe_ffn"}
    assert not report.mismatches
    assert set(report.profile().compute_efficiency) == {"gemm", "moe"}


@pytest.mark.parametrize("case", [c for c in CASES if c.kernel_class == "attention"],
                         ids=lambda c: f"{c.name}-{c.label}")
def test_gqa_attention_without_a_countable_enable_gqa_repeats_kv(case, monkeypatch) -> None:
    """Where the installed torch's FlopCounterMode cannot count a grouped-query sdpa (torch
    2.11's sdpa_flop_count asserts equal heads: seen on the H100 device), the fused path
    repeats K/V to the query heads first (transformers' repeat_kv): the same output and the
    same counted FLOPs as the analytic count (rlmcost.blocks)."""
    from rlmcost.calibrate import modules

    q, kv = torch.randn(1, 6, 5, 16), torch.randn(1, 2, 5, 16)
    fused = modules.attend(q, kv, kv, causal=True)
    monkeypatch.setattr(modules, "sdpa_gqa_countable", lambda *where: False)
    count = measure.count_flops(lambda where: kernels.build(case, where, torch.float32), "cpu")
    assert count.flops == case.flops
    assert torch.allclose(modules.attend(q, kv, kv, causal=True), fused, atol=1e-5)
