"""The fused-MoE expert GEMMs' streaming rate (rlmcost/perf/fused_moe.py).

Reference numbers: vLLM ``benchmarks/kernels/benchmark_moe.py`` sweeps printed in vLLM PRs
24700 (H100: Mixtral-8x7B bf16 TP 2; Qwen3-30B-A3B fp8), 31448 (B200: Qwen3-Omni-30B-A3B bf16)
and 19049 (A100-PCIe-40GB: Qwen3-30B-A3B bf16); vLLM PR 23151 (H100 Qwen3-30B-A3B serving
TPOT); Qwen3-30B-A3B's config.json (128 experts, top-8,
hidden 2048, moe_intermediate_size 768, 48 layers); datasheet HBM bandwidths of
rlmcost/specs/data/hardware.json (H100 SXM 3.35 TB/s, B200 7.7 TB/s).
"""

from __future__ import annotations

import pytest

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.perf import fused_moe as fm
from rlmcost.perf.decode_kernels import expected_experts_touched
from rlmcost.perf.efficiency import Device
from rlmcost.perf.engine_step import weight_streaming_device
from rlmcost.perf.generation import Engine
from rlmcost.perf.rl_constants import VLLM_DECODE_HBM_FRACTION
from rlmcost.specs import get_hardware, get_model

QWEN3_EXPERT_BYTES = 3 * 2048 * 768 * 2  # w1 [1536, 2048] + w2 [2048, 768], bf16


def test_the_fit_recovers_a_line_it_was_built_from():
    # a synthetic sweep on the A100-PCIe shape: t = 50 us + bytes / (0.8 x 1.555 TB/s)
    e, k, nbytes, bw = fm.A100_QWEN3_BF16_SHAPE
    sweep = tuple(
        (b, 50.0 + expected_experts_touched(e, k, b) * nbytes / (0.8 * bw) * 1e6)
        for b in (1, 4, 16, 64)
    )
    t0, f = fm.stream_fit(sweep, e, k, nbytes, bw)
    assert t0 == pytest.approx(50e-6)
    assert f == pytest.approx(0.8)


def test_each_constant_is_the_slope_of_its_cited_sweep():
    # vLLM PR 24700 (H100, Mixtral bf16 TP 2): batch 8 -> 64 adds 48.2 us for 141 MB more
    # experts; the least-squares line over batch 1-64 streams at 3.14 TB/s = 0.937 x 3.35 TB/s
    t0, f = fm.stream_fit(fm.H100_MIXTRAL_BF16_SWEEP, *fm.H100_MIXTRAL_BF16_SHAPE)
    assert round(f, 3) == fm.fused_moe_stream("h100-sxm", 2).value == 0.937
    assert 30e-6 < t0 < 40e-6  # the top-k, align, activation and sum kernels
    assert fm.fused_moe_stream("h100-sxm", 1).value == 0.768  # Qwen3-30B-A3B fp8, same H100
    assert fm.fused_moe_stream("b200", 2).value == 0.773  # PR 31448, 5.95 TB/s of 7.7
    assert fm.fused_moe_stream("a100-40gb", 2).value == 0.892  # PR 19049, 1.39 TB/s of 1.555


def test_parts_without_a_sweep_keep_the_engine_dense_rate():
    for name in ("h200", "h20", "mi300x", "l40s"):
        assert fm.fused_moe_stream(name, 2) is None
        dev = Device(get_hardware(name), Dtype.BF16)
        dense = weight_streaming_device(dev)
        assert fm.fused_moe_device(dev, dense) is dense


def test_hand_case_h100_qwen3_batch8_expert_gemms_stream_at_the_measured_rate():
    """One MoE layer of Qwen3-30B-A3B at batch 8 on an H100 SXM, bf16: 51.6 touched experts
    x 9.44 MB = 487 MB of weights (plus 1.2 rows of activations each), read once, at
    0.937 x 3.35 TB/s = 155 us, plus two launch gaps; the 16 padded rows' FLOPs (7.8 GFLOP)
    are far below it."""
    dev = Device(get_hardware("h100-sxm"), Dtype.BF16)
    fused = fm.fused_moe_device(dev, weight_streaming_device(dev))
    touched = expected_experts_touched(128, 8, 8)
    local, rows = round(touched), -(-8 * 8 // round(touched))
    got = fused.gemm_s(rows, 1536, 2048, local, 16) + fused.gemm_s(rows, 2048, 768, local, 16)
    weights = local * QWEN3_EXPERT_BYTES
    acts = local * rows * ((2048 + 1536) + (768 + 2048)) * 2  # [m, k] in, [m, n] out, each
    gap = dev.defaults.kernel_gap_s
    want = (weights + acts) / (3.35e12 * 0.937) + 2 * gap
    assert got == pytest.approx(want, rel=1e-9)
    assert 150e-6 < got - 2 * gap < 160e-6


def test_the_engine_prices_the_h100_expert_gemms_faster_than_the_dense_rate():
    arch = get_model("qwen3-30b-a3b").arch()
    dev = Device(get_hardware("h100-sxm"), Dtype.BF16)
    eng = Engine(arch, dev)
    dense = weight_streaming_device(dev)
    assert eng.moe_device.defaults.hbm_efficiency == 0.937
    assert dense.defaults.hbm_efficiency == VLLM_DECODE_HBM_FRACTION.value
    # the expert weights dominate the layer: the step's GEMMs shrink by most of 1 - 0.75/0.937
    fast = eng.decode_step(8, 8 * 512).gemm_s
    at_dense = Engine(arch, dev)
    at_dense.moe_device = dense  # the pricing before perf.fused_moe
    slow = at_dense.decode_step(8, 8 * 512).gemm_s
    assert 0.80 * slow < fast < 0.85 * slow


def test_h100_qwen3_concurrency_10_decode_step_nearer_the_published_tpot():
    """vLLM PR 23151 (H100, Qwen3-30B-A3B bf16 TP 1, benchmark_serving at concurrency 10,
    2048 in / 1024 out): mean TPOT 13.18 ms (a sweep these constants were not taken from). The
    decode step of 10 sequences at a mean 2,560-token context is within 12 % of it with the
    fused-MoE rate, 28 % slow at the dense rate."""
    arch = get_model("qwen3-30b-a3b").arch()
    dev = Device(get_hardware("h100-sxm"), Dtype.BF16)
    step = Engine(arch, dev).decode_step(10, 10 * 2560).total_s
    assert step == pytest.approx(13.18e-3, rel=0.12)
    dense = Engine(arch, dev)
    dense.moe_device = weight_streaming_device(dev)
    assert dense.decode_step(10, 10 * 2560).total_s > 1.25 * 13.18e-3


def test_a_bad_sweep_is_a_one_line_spec_error():
    with pytest.raises(SpecError, match="two or more"):
        fm.stream_fit(((8, 100.0),), 128, 8, QWEN3_EXPERT_BYTES, 3.35e12)
    with pytest.raises(SpecError, match="different expert counts"):
        fm.stream_fit(((8, 100.0), (8, 110.0)), 128, 8, QWEN3_EXPERT_BYTES, 3.35e12)
