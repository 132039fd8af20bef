"""A Hopper GEMM tile's fixed cost (prologue, epilogue) as K-steps (issue 18).

Sources: TileLang's FP16 GEMM K sweep at M = N = 8192 on an H800 (xwhzz/tilelang
benchmark/matmul/README.md @b2acfc3791: 628 / 705 / 736 / 758 / 766 TFLOP/s at K = 1024 /
2048 / 4096 / 8192 / 16384); the H200's MSMF shape 8192 x 8448 x 20480 (ml-engineering commit
082816f); NVIDIA/TransformerEngine issue 2053 (an H100 DGX, torch.nn.Linear BF16 forward of 8192
tokens at hidden 2048: 100.06 us of GPU time) and the H100 SXM's MAMF 794.5 TFLOP/s
(ml-engineering compute/accelerator/README.md, BF16 table).
"""

from __future__ import annotations

import dataclasses

import pytest

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.perf.efficiency import (
    HOPPER_GEMM_K_OVERHEAD,
    MSMF_REFERENCE_K,
    Device,
    default_profile,
)
from rlmcost.specs import get_hardware

TILELANG_H800_TFLOPS = {1024: 628, 2048: 705, 4096: 736, 8192: 758, 16384: 766}


def _rate(device: Device, m: int, n: int, k: int) -> float:
    return 2 * m * n * k / (device.gemm_s(m, n, k) - device.defaults.kernel_gap_s)


def test_the_fitted_k_overhead_reproduces_the_h800_k_sweep():
    # TileLang's sweep on an H800, relative to its K = 16384 point: the tile model with K_0
    # gives the same shape of curve within 2 % at every K of the training range
    dev = Device(get_hardware("h800"))
    ref = _rate(dev, 8192, 8192, 16384)
    for k, tflops in TILELANG_H800_TFLOPS.items():
        model = _rate(dev, 8192, 8192, k) / ref
        assert model == pytest.approx(tflops / TILELANG_H800_TFLOPS[16384], rel=0.02), k
    # without the term the model would call K = 1024 as fast as K = 16384 (measured: 18 % slower)
    flat = Device(get_hardware("h800"), profile=dataclasses.replace(
        default_profile("h800"), gemm_k_overhead=0))  # fmt: skip
    assert _rate(flat, 8192, 8192, 1024) == pytest.approx(_rate(flat, 8192, 8192, 16384))


def test_a_gemm_at_the_msmf_shape_still_runs_at_the_measured_efficiency():
    # ml-engineering's H200 MSMF was measured at 8192 x 8448 x 20480: the renormalized K-loop
    # rate gives back gemm_efficiency there (within the shape's wave quantization, < 0.5 %)
    p = default_profile("h200")
    assert (p.gemm_k_overhead, p.gemm_reference_k) == (HOPPER_GEMM_K_OVERHEAD, MSMF_REFERENCE_K)
    dev = Device(get_hardware("h200"))
    eff = _rate(dev, 8192, 8448, 20480) / dev.peak_flops_per_s
    assert eff == pytest.approx(p.gemm_efficiency, rel=0.005)
    assert p.k_loop_efficiency > p.gemm_efficiency


def test_short_k_gemms_are_slower_on_hopper_only():
    # a hidden-2048 model's QKV GEMM: 9 % below the large-GEMM rate on an H100, none on A100
    h100 = Device(get_hardware("h100-sxm"))
    short, long_ = _rate(h100, 16384, 6144, 2048), _rate(h100, 16384, 6144, 16384)
    assert short / long_ == pytest.approx(2048 / (2048 + HOPPER_GEMM_K_OVERHEAD) * (
        16384 + HOPPER_GEMM_K_OVERHEAD) / 16384, rel=1e-9)  # fmt: skip
    a100 = Device(get_hardware("a100-80gb"))
    assert default_profile("a100-80gb").gemm_k_overhead == 0
    assert _rate(a100, 16384, 6144, 2048) == pytest.approx(_rate(a100, 16384, 6144, 16384))
    assert default_profile("h20").gemm_k_overhead == 0  # its capped tensor rate: stated


def test_te_issue_2053_linear_matches_at_the_burst_clock():
    # TE issue 2053: one nn.Linear forward (8192 x 2048 x 2048) on an H100 at 100.06 us, a lone
    # kernel at the boost clock: the tile model with K_0 at the H100's burst MAMF (794.5 / 989)
    # agrees within 3 %; at the sustained MSMF that training steps run at it is ~12 % longer
    burst = dataclasses.replace(default_profile("h100-sxm"), gemm_efficiency=794.5 / 989,
                                gemm_reference_k=13312)  # MAMF's shape 2048x2048x13312
    t = Device(get_hardware("h100-sxm"), Dtype.BF16, burst).gemm_s(8192, 2048, 2048)
    assert t == pytest.approx(100.06e-6, rel=0.03)
    sustained = Device(get_hardware("h100-sxm")).gemm_s(8192, 2048, 2048)
    assert sustained / t == pytest.approx(0.803 / 0.711, rel=0.02)


def test_negative_overhead_is_rejected():
    with pytest.raises(SpecError, match="gemm_k_overhead"):
        dataclasses.replace(default_profile("h100-sxm"), gemm_k_overhead=-1)


def test_blackwell_k_overhead_is_the_fit_of_openxla_sm100_table():
    # OpenXLA's measured default matmul table (xla/service/gpu/model/matmul_interpolator_data.h,
    # sm_100, bf16, b 4, M = N = 4096): time = a (K + K_0) by least squares over K 1024-4096
    # gives K_0 = 358; the B200 and GB200 profiles carry it, renormalized at K = 20480
    from rlmcost.perf.gemm_tile_cost import BLACKWELL_GEMM_K_OVERHEAD, XLA_SM100_B4_4096

    ks = sorted(XLA_SM100_B4_4096)
    ts = [4 * 2 * 4096 * 4096 * k / (XLA_SM100_B4_4096[k] * 1e12) for k in ks]
    mk, mt = sum(ks) / len(ks), sum(ts) / len(ts)
    num = sum((k - mk) * (t - mt) for k, t in zip(ks, ts, strict=True))
    slope = num / sum((k - mk) ** 2 for k in ks)
    assert (mt - slope * mk) / slope == pytest.approx(BLACKWELL_GEMM_K_OVERHEAD, abs=1)
    for name in ("b200", "gb200"):
        p = default_profile(name)
        assert (p.gemm_k_overhead, p.gemm_reference_k) == (358, MSMF_REFERENCE_K)
    # the tile model then reproduces the table's shape of curve (relative to K = 4096) within 1 %
    dev = Device(get_hardware("b200"))
    ref = _rate(dev, 4096 * 4, 4096, 4096)
    for k in ks:
        model = _rate(dev, 4096 * 4, 4096, k) / ref
        assert model == pytest.approx(XLA_SM100_B4_4096[k] / XLA_SM100_B4_4096[4096], rel=0.01)
    # a hidden-2880 GEMM (GPT-OSS 120B) now runs 11 % below the large-GEMM rate on GB200
    gb = Device(get_hardware("gb200"))
    short, long_ = _rate(gb, 16384, 5760, 2880), _rate(gb, 16384, 5760, 20480)
    assert short / long_ == pytest.approx(2880 / (2880 + 358) * (20480 + 358) / 20480, rel=0.01)
