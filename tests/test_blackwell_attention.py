"""Blackwell's fused-attention efficiencies against their published rates
(rlmcost.perf.blackwell_attention).

Every TFLOP/s figure below is read from NVIDIA/cudnn-frontend's committed benchmark CSVs
(benchmark/sdpa_benchmark_training/...; causal, head dim 128, bf16, batch 1, forward FLOPs
4 b s^2 h d / 2 and backward 2.5 x those), written out here apart from the module's tables so
that an edit of either side fails.
"""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.perf import blackwell_attention as bw
from rlmcost.perf.efficiency import DEFAULT_PROFILES, FLASH_BACKWARD_FACTOR, Device
from rlmcost.specs import get_hardware


def _weighted(fwd: float, bwd: float) -> float:
    return 3.5 / (1 / fwd + 2.5 / bwd)  # 1 forward + 2.5 forward-FLOPs of backward


def test_cudnn_913_b200_rows_give_049() -> None:
    # cudnn-frontend@0b1577c artifacts/sdpa_bf16_benchmark_results_NVIDIA_B200.csv, backend
    # pyt_cudnn (cuDNN 9.13.1, pytorch:25.09), fwd_tflops_per_sec, bwd_tflops_per_sec
    rows = {8192: (1171.278, 942.509), 16384: (1332.415, 1074.776), 32768: (1419.000, 1108.688)}
    assert bw.CUDNN_913_B200_TFLOPS == rows
    effs = [_weighted(f, b) / 2250 for f, b in rows.values()]
    assert [round(e, 3) for e in effs] == [0.444, 0.506, 0.526]
    assert round(sum(effs) / 3, 2) == bw.BLACKWELL_FLASH_EFFICIENCY == 0.49
    assert bw.fwd_bwd_tflops(1171.278, 942.509) == pytest.approx(_weighted(1171.278, 942.509))


def test_flashattention2_b200_rows_give_015() -> None:
    # the same CSV, backends pyt_flash_attention (torch 2.9.0 SDPA) and flash_attention (2.7.4)
    sdpa = {8192: (373.392, 298.867), 16384: (394.495, 319.979), 32768: (403.739, 330.801)}
    fa2 = {8192: (399.925, 318.004), 16384: (425.128, 336.635), 32768: (435.762, 345.634)}
    assert bw.FA2_B200_TFLOPS == {"pyt_flash_attention": sdpa, "flash_attention": fa2}
    effs = [_weighted(f, b) / 2250 for rows in (sdpa, fa2) for f, b in rows.values()]
    assert 0.14 < min(effs) and max(effs) < 0.17
    assert round(sum(effs) / 6, 2) == bw.BLACKWELL_FA2_EFFICIENCY == 0.15


def test_cudnn_9102_agrees_and_later_cudnn_is_faster() -> None:
    # cudnn-frontend@9793df5 (cuDNN 9.10.2, NeMo RL v0.5's wheel), same B200 CSV and rows
    old = [(1197.391, 939.954), (1349.763, 1072.799), (1429.616, 1124.432)]
    assert sum(_weighted(f, b) / 2250 for f, b in old) / 3 == pytest.approx(0.49, abs=0.005)
    # cudnn-frontend@b372d39 artifacts/sdpa_bf16_benchmark_results_NVIDIA_GB200.csv (cuDNN
    # 9.17.0, profiler kernel time): cudnn_fe at 8k / 16k / 32k, over GB200's 2,500
    new = [(1584.0, 1211.0), (1668.0, 1304.0), (1681.0, 1348.0)]
    later = sum(_weighted(f, b) / 2500 for f, b in new) / 3
    assert later == pytest.approx(0.549, abs=0.001) and later > bw.BLACKWELL_FLASH_EFFICIENCY


def test_blackwell_profiles_take_the_published_figures() -> None:
    for part in ("b200", "gb200"):
        p = DEFAULT_PROFILES[part]
        assert p.flash_attention_efficiency == 0.49
        assert p.fa2_attention_efficiency == p.fa2_backward_efficiency == 0.15
        src = dict(p.sources)
        assert "cudnn-frontend@0b1577c" in src["flash_attention_efficiency"]
        assert "FlashAttention-2 on B200" in src["fa2_attention_efficiency"]
    # Hopper and Ampere keep theirs (FlashAttention-3 §4.1 and abstract; FA2 Fig. 6)
    h100, a100 = DEFAULT_PROFILES["h100-sxm"], DEFAULT_PROFILES["a100-80gb"]
    assert (h100.flash_attention_efficiency, h100.fa2_attention_efficiency) == (0.55, 0.35)
    assert a100.flash_attention_efficiency == a100.fa2_attention_efficiency == 0.6


def test_b200_attention_time_is_flops_over_049_of_peak() -> None:
    dev = Device(get_hardware("b200"))
    gap = dev.defaults.kernel_gap_s
    assert dev.flash_attention_s(1e12, False) - gap == pytest.approx(1e12 / (2.25e15 * 0.49))
    bwd = dev.flash_attention_s(1e12, True, fa2=True) - gap
    assert bwd == pytest.approx(2.5e12 / (2.25e15 * 0.15))


def test_constants_match_the_model_and_the_registry() -> None:
    assert bw.BACKWARD_FLOPS_FACTOR == FLASH_BACKWARD_FACTOR
    assert get_hardware("b200").peak_flops_per_s["bf16"] == bw.B200_BF16_PEAK_TFLOPS * 10**12
    with pytest.raises(SpecError, match="positive"):
        bw.fwd_bwd_tflops(0.0, 1.0)
