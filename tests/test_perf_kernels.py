"""Kernel and collective times of rlmcost.perf against hand derivations (each names its source)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost.calibrate.profile import SCHEMA, Profile
from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.parallel.comm import Collective
from rlmcost.perf.collectives import Algorithm, Link, collective_time_s, link
from rlmcost.perf.efficiency import DEFAULT_PROFILES, KERNEL_GAP_S, Device, gemm_time_s
from rlmcost.specs import get_hardware

A100 = get_hardware("a100-80gb")
H100 = get_hardware("h100-sxm")


def test_one_large_gemm_by_waves_of_tiles():
    # Hand derivation (NVIDIA "Matrix Multiplication Background User's Guide", tile and wave
    # quantization): 8192^3 on an A100 in 256x128 tiles = 32 x 64 = 2048 tiles; 108 SMs run
    # them in ceil(2048/108) = 19 waves, each SM computing 2*256*128*8192 FLOPs per tile at
    # peak * eta / 108; the 128x128 choice (4096 tiles, 38 waves) takes the same time.
    eta = DEFAULT_PROFILES["a100-80gb"].gemm_efficiency
    by_hand = 19 * 108 * 2 * 256 * 128 * 8192 / (312e12 * eta) + KERNEL_GAP_S
    assert gemm_time_s(8192, 8192, 8192, Dtype.BF16, A100) == pytest.approx(by_hand, rel=1e-12)
    # 2048/2052 of the last-wave slots are busy: 99.8 % of the sustained rate
    assert 2 * 8192**3 / by_hand / (312e12 * eta) == pytest.approx(2048 / 2052, rel=1e-3)


def test_skinny_gemm_is_memory_bound():
    # A one-row GEMM (a decode step's projection) streams the whole [8192, 8192] bf16 weight:
    # time = bytes / (HBM bandwidth x 0.9) + gap, far below the GEMM peak (roofline).
    bytes_moved = (8192 + 8192 * 8192 + 8192) * 2
    by_hand = bytes_moved / (2.039e12 * 0.9) + KERNEL_GAP_S
    assert gemm_time_s(1, 8192, 8192, Dtype.BF16, A100) == pytest.approx(by_hand, rel=1e-12)


def test_small_gemm_runs_far_below_peak():
    # One 128x128 tile on a 108-SM GPU: one wave with 107 SMs idle.
    t = gemm_time_s(128, 128, 8192, Dtype.BF16, A100)
    assert 2 * 128 * 128 * 8192 / t / 312e12 < 0.01


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 20000), n=st.integers(1, 20000), k=st.integers(1, 20000),
    hw=st.sampled_from(["a100-80gb", "h100-sxm", "b200", "mi300x"]),
)  # fmt: skip
def test_gemm_never_beats_the_roofline(m, n, k, hw):
    spec = get_hardware(hw)
    t = gemm_time_s(m, n, k, Dtype.BF16, spec)
    assert t >= 2 * m * n * k / spec.peak(Dtype.BF16)
    assert t >= (m * k + k * n + m * n) * 2 / spec.hbm_bandwidth_bytes_per_s


def test_measured_profile_replaces_the_default_gemm_efficiency():
    profile = Profile(
        schema=SCHEMA, device="h100-sxm", device_name="NVIDIA H100", torch="2.13.0",
        dtype=Dtype.BF16, threads=1, quick=True, peak_flops_per_s=989.4e12,
        peak_bytes_per_s=3.35e12, peak_source="datasheet",
        compute_efficiency={"gemm": ((1.0, 0.5),)}, bandwidth_efficiency={"copy": ((1.0, 0.5),)},
    )  # fmt: skip
    flops = 2 * 8192**3
    # a flat 0.5 table: the GEMM takes flops / (peak / 2), no tile model
    expected = flops / (989.4e12 * 0.5) + KERNEL_GAP_S
    got = gemm_time_s(8192, 8192, 8192, Dtype.BF16, H100, calibration=profile)
    assert got == pytest.approx(expected, rel=1e-12)
    dev = Device(H100, Dtype.BF16, measured=profile)
    assert dev.memory_s(1e9) == pytest.approx(1e9 / (3.35e12 * 0.5))


def test_ring_all_reduce_by_hand():
    # NCCL-tests doc/PERFORMANCE.md: bus bytes of an all-reduce = 2 (n-1)/n x M; a ring takes
    # 2 (n-1) steps of latency alpha (Thakur et al. 2005). 8 A100s on NVLink: 300 GB/s per
    # direction at 0.8 bus efficiency, alpha = 2 us, M = 1 GiB.
    m, n = 2**30, 8
    by_hand = 2 * (n - 1) * 2e-6 + 2 * (n - 1) / n * m / (300e9 * 0.8)
    got = collective_time_s(Collective.ALL_REDUCE, m, n, link(A100, True), Algorithm.RING)
    assert got == pytest.approx(by_hand, rel=1e-12)
    # the bus bandwidth this implies, M x 2(n-1)/n / t, is just under the 240 GB/s link
    assert 240e9 * 0.99 < m * 2 * (n - 1) / n / got < 240e9


def test_tree_wins_small_messages_ring_large_ones():
    lk = Link(25e9, 5e-6, 0.9)
    n = 256
    small_ring = collective_time_s(Collective.ALL_REDUCE, 1e3, n, lk, Algorithm.RING)
    small_tree = collective_time_s(Collective.ALL_REDUCE, 1e3, n, lk, Algorithm.TREE)
    # latency: 2 * 255 steps vs 2 * log2(256) = 16 steps
    assert small_tree < small_ring / 20
    big_ring = collective_time_s(Collective.ALL_REDUCE, 1e10, n, lk, Algorithm.RING)
    big_tree = collective_time_s(Collective.ALL_REDUCE, 1e10, n, lk, Algorithm.TREE)
    assert big_ring < big_tree  # 2 (n-1)/n M vs 2 M per direction
    auto = collective_time_s(Collective.ALL_REDUCE, 1e10, n, lk, Algorithm.AUTO)
    assert auto == min(big_ring, big_tree)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(list(Collective)), size=st.floats(1, 1e11),
    n1=st.integers(2, 512), n2=st.integers(2, 512),
)  # fmt: skip
def test_collective_time_grows_with_ranks_and_bytes(kind, size, n1, n2):
    lk = link(H100, False)
    lo, hi = sorted((n1, n2))
    assert collective_time_s(kind, size, lo, lk) <= collective_time_s(kind, size, hi, lk)
    assert collective_time_s(kind, size, lo, lk) <= collective_time_s(kind, 2 * size, lo, lk)


def test_one_rank_moves_nothing_and_bad_links_are_spec_errors():
    assert collective_time_s(Collective.ALL_REDUCE, 1e9, 1, link(H100, True)) == 0
    with pytest.raises(SpecError):
        Link(0, 1e-6)
    with pytest.raises(SpecError):
        collective_time_s(Collective.ALL_GATHER, -1, 4, link(H100, True))


def test_every_builtin_accelerator_has_a_sourced_profile():
    for name, profile in DEFAULT_PROFILES.items():
        get_hardware(name)
        assert {k for k, _ in profile.sources} == {
            "sms", "gemm_efficiency", "hbm_efficiency", "flash_attention_efficiency",
            "fa2_attention_efficiency", "gemm_k_overhead", "mma_rows",
        }
        assert all(src for _, src in profile.sources)
        assert 0 < profile.gemm_efficiency < 1 and math.isfinite(profile.sms)


def test_every_builtin_accelerator_has_a_default_profile_with_sources():
    from rlmcost.perf.efficiency import default_profile
    from rlmcost.specs import hardware

    for hw in hardware():
        profile = default_profile(hw)
        assert {name for name, _ in profile.sources} == {
            "sms", "gemm_efficiency", "hbm_efficiency", "flash_attention_efficiency",
            "fa2_attention_efficiency", "gemm_k_overhead", "mma_rows",
        }
        assert all(source for _, source in profile.sources)


def test_gb200_gemm_efficiency_is_its_own_measured_mamf():
    # stas00/ml-engineering compute/accelerator/README.md (commit 68cd2e5), MAMF BF16 table:
    # NVIDIA GB200 SXM 1822.0 of 2500 TFLOP/s; scaled by the same source's sustained / burst
    # ratio 0.845 (H200 702.9 / 828.0, B200 1455.7 / 1732.6), as the A100 profile is.
    assert DEFAULT_PROFILES["gb200"].gemm_efficiency == round(1822.0 / 2500 * 0.845, 3)
    assert DEFAULT_PROFILES["gb200"].gemm_efficiency < DEFAULT_PROFILES["b200"].gemm_efficiency
