"""cuDNN's fused attention at head dim 64 and on a 128-key window against its published rates
(rlmcost.perf.head_dim_attention).

Every TFLOP/s figure and kernel time below is read from NVIDIA/cudnn-frontend's committed SDPA
benchmark results (benchmark/sdpa_benchmark_training/results/...; bf16, non-deterministic
backward), written out here apart from the module's tables so that an edit of either side fails.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlmcost.parallel.layout import Layout
from rlmcost.perf import head_dim_attention as hd
from rlmcost.perf.attention_shapes import causal_pairs, pair_flops, window_pairs
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_options import AttentionKernel, StepOptions
from rlmcost.perf.step_pass import StepContext, _layer
from rlmcost.specs import Workload, get_hardware
from rlmcost.specs.registry import get_model


def _weighted(fwd: float, bwd: float) -> float:
    return 3.5 / (1 / fwd + 2.5 / bwd)  # 1 forward + 2.5 forward-FLOPs of backward


def _mean_ratio(slow: list[tuple[float, float]], base: list[tuple[float, float]]) -> float:
    return sum(_weighted(*a) / _weighted(*b) for a, b in zip(slow, base, strict=True)) / len(slow)


def test_head_dim_64_ratios_from_the_cudnn_919_runs() -> None:
    # cudnn-frontend@df73764 results/gb200_919_only_cudnn: gpt_oss_20260226_175022.csv (64 / 8
    # heads of 64, 1024-key window) and llama3.1_20260226_174648.csv (64 / 8 of 128, causal),
    # fwd_tflops, bwd_tflops at 8k / 16k / 32k
    gb200_64 = [(609.0, 646.0), (624.0, 658.0), (632.0, 660.0)]
    gb200_128 = [(1598.0, 1311.0), (1687.0, 1402.0), (1720.0, 1473.0)]
    # results/h200_919_only_cudnn: gpt_oss_20260227_034819.csv, llama3.1_20260227_034703.csv
    h200_64 = [(349.0, 300.0), (355.0, 303.0), (358.0, 299.0)]
    h200_128 = [(644.0, 541.0), (673.0, 579.0), (688.0, 581.0)]
    assert list(hd.GB200_HD64_TFLOPS.values()) == gb200_64
    assert list(hd.GB200_HD128_TFLOPS.values()) == gb200_128
    assert list(hd.H200_HD64_TFLOPS.values()) == h200_64
    assert list(hd.H200_HD128_TFLOPS.values()) == h200_128
    assert round(_mean_ratio(gb200_64, gb200_128), 2) == hd.BLACKWELL_HEAD_DIM_64 == 0.44
    assert round(_mean_ratio(h200_64, h200_128), 2) == hd.HOPPER_HEAD_DIM_64 == 0.53
    # the head-dim-128 rows are those rlmcost.perf.blackwell_attention quotes for 9.19.1 on GB200
    assert [round(_weighted(*r) / 2500, 3) for r in gb200_128] == [0.553, 0.589, 0.614]


def test_window_128_ratio_from_the_cudnn_922_run() -> None:
    # cudnn-frontend@50c8aeb results/gpt_oss/gb200/gpt_oss_20260424_100011.csv (128 / 128 heads
    # of 64, 128-key window, batch 2) and results/llama3.1/gb200/llama3.1_20260424_100750.csv
    # (top_left, batch 2), the non-deterministic fwd and bwd rows at 8k / 16k / 32k
    window = [(165.0, 187.0), (167.0, 188.0), (104.0, 186.0)]
    causal = [(1574.0, 1332.0), (1708.0, 1328.0), (1622.0, 1226.0)]
    assert list(hd.GB200_WINDOW_128_TFLOPS.values()) == window
    assert list(hd.GB200_HD128_922_TFLOPS.values()) == causal
    assert round(_mean_ratio(window, causal), 2) == hd.BLACKWELL_WINDOW_128 == 0.12


@pytest.mark.parametrize(("seq", "ms", "tflops"), [(8192, 0.414, 165.0), (16384, 0.822, 167.0)])
def test_the_benchmarks_window_pairs_are_rlmcosts(seq: int, ms: float, tflops: float) -> None:
    # the same CSV's forward kernel times: batch 2 x 128 heads x the window's pairs x 4 x 64
    # FLOPs over the time reproduce its TFLOP/s, so its FLOPs count rlmcost's window pairs
    flops = 2 * 128 * window_pairs(seq, 128) * 4 * 64
    assert flops / (ms * 1e-3) / 1e12 == pytest.approx(tflops, rel=0.01)


def test_factors_apply_only_where_the_arch_has_the_feature() -> None:
    oss, llama = get_model("gpt-oss-120b").arch(), get_model("llama-3.1-8b").arch()
    assert (int(oss.head_dim), oss.sliding_window) == (64, 128)
    assert hd.rate_factors(oss, "gb200") == hd.rate_factors(oss, "b200") == (0.44, 0.12)
    assert hd.rate_factors(oss, "h100-sxm") == (0.53, 0.53)  # no Hopper window figure
    for part in ("a100-80gb", "h20", "mi300x"):  # nothing measured there
        assert hd.rate_factors(oss, part) == (1.0, 1.0)
    assert hd.rate_factors(llama, "gb200") == hd.rate_factors(llama, "h100-sxm") == (1.0, 1.0)
    assert hd.rate_factors(get_model("deepseek-v3").arch(), "gb200") == (1.0, 1.0)  # MLA
    no_window = replace(oss, sliding_window=None)  # head dim 64, every layer full
    assert hd.rate_factors(no_window, "gb200") == (0.44, 0.44)
    wide = replace(oss, sliding_window=1024)  # the 1024-key band takes the head-dim factor
    assert hd.rate_factors(wide, "gb200") == (0.44, 0.44)


def _context(arch, hardware: str, **options) -> StepContext:
    lay = Layout(dp=1, tp=1, pp=1, micro_batch=1, ep=1)
    dev = Device(get_hardware(hardware))
    return StepContext(arch=arch, layout=lay, seq=8192, micro_batch=1, tokens=8192,
                       positions=8192, device=dev, options=StepOptions(**options),
                       workload=Workload(), gpus_per_node=8)  # fmt: skip


def test_timed_flops_weigh_each_layer_kind_by_hand() -> None:
    oss = get_model("gpt-oss-120b").arch()
    c = _context(oss, "gb200")
    flops = pair_flops(oss, 64) * causal_pairs(oss, 8192)
    full, window = 8192 * 8193 // 2, 128 * 129 // 2 + (8192 - 128) * 128
    # 18 full and 18 sliding layers of 36, each kind's pairs over its factor
    expected = pair_flops(oss, 64) * (18 * full / 0.44 + 18 * window / 0.12) / 36
    assert hd.timed_attention_flops(c, flops) == pytest.approx(expected, rel=1e-6)
    llama = get_model("llama-3.1-8b").arch()
    plain = pair_flops(llama, 32) * causal_pairs(llama, 8192)
    assert hd.timed_attention_flops(_context(llama, "gb200"), plain) == plain
    # FlashAttention-2 kernels are not cuDNN's: unchanged; cuDNN's dropout runs are scaled too
    assert hd.timed_attention_flops(_context(oss, "gb200", attention=AttentionKernel.FLASH2),
                                    flops) == flops
    dropout = _context(oss, "gb200", attention_dropout=True)
    assert hd.timed_attention_flops(dropout, flops) == pytest.approx(expected, rel=1e-6)
    assert hd.timed_attention_flops(_context(oss, "a100-80gb"), flops) == flops


def test_the_step_pass_times_only_the_attention_slower() -> None:
    oss = get_model("gpt-oss-120b").arch()
    slow = _layer(_context(oss, "gb200"), moe=True)
    base = _layer(_context(oss, "gb200", attention=AttentionKernel.FLASH2), moe=True)
    assert slow.flops == base.flops  # FLOPs are counted, not timed
    assert slow.fwd["gemm"] == base.fwd["gemm"]
    dev, flops = Device(get_hardware("gb200")), pair_flops(oss, 64) * causal_pairs(oss, 8192)
    priced = dev.flash_attention_s(flops, False)  # the head-dim-128 figure, unscaled
    # between the full layers' 1 / 0.44 and the sliding layers' 1 / 0.12 (launch gap aside)
    assert 1 / 0.44 < slow.fwd["attention"] / priced < 1 / 0.12
    timed = hd.timed_attention_flops(_context(oss, "gb200"), flops)
    assert slow.fwd["attention"] == pytest.approx(dev.flash_attention_s(timed, False))
