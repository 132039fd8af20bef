"""PyTorch's bf16 elementwise kernels on Hopper at their measured bandwidth (issue 18).

Reference numbers: pytorch/pytorch PR 141959 (and its re-land PR 145746), the description's H100
``relu`` table and the 2024-12-05 comment's A100 ``relu`` / ``gelu`` table.
"""

from __future__ import annotations

from rlmcost.perf import elementwise_bw as eb
from rlmcost.perf.efficiency import DEFAULT_PROFILES, Device
from rlmcost.specs import get_hardware

HOPPER = ("h100-sxm", "h100-pcie", "h200", "h800", "h100-hbm2e-500w", "h20")


def test_datasheet_bandwidth_is_the_registry_one() -> None:
    # NVIDIA H100 datasheet, SXM5: 3.35 TB/s; the fractions below are of this figure
    assert get_hardware("h100-sxm").hbm_bandwidth_bytes_per_s == eb.H100_SXM_HBM_BYTES_PER_S


def test_h100_bf16_relu_streams_at_point_nine() -> None:
    # PR 141959: 2^28 bf16 elements (1 GiB moved) in 0.356 ms after, 0.371 ms before
    n = 1 << 28
    after, before = eb.H100_RELU_BF16_S[n]
    assert eb.streaming_bytes(n, 2) == 1 << 30
    assert 0.895 < eb.bandwidth_fraction(n, after, eb.H100_SXM_HBM_BYTES_PER_S) < 0.905
    assert 0.855 < eb.bandwidth_fraction(n, before, eb.H100_SXM_HBM_BYTES_PER_S) < 0.87
    assert (eb.HOPPER_ELEMENTWISE_LOW, eb.HOPPER_ELEMENTWISE_EFFICIENCY,
            eb.HOPPER_ELEMENTWISE_HIGH) == (0.86, 0.9, 0.91)  # fmt: skip


def test_bandwidth_grows_with_size() -> None:
    # the H100 table: a 64 MiB relu runs at 0.66, 1 GiB at 0.90 (fixed per-call cost)
    fractions = [
        eb.bandwidth_fraction(n, t[0], eb.H100_SXM_HBM_BYTES_PER_S)
        for n, t in sorted(eb.H100_RELU_BF16_S.items())
    ]
    assert fractions == sorted(fractions)
    assert fractions[0] < 0.7 < 0.9 < fractions[-1]


def test_the_0843_ms_gelu_row_is_an_a100_2_to_28_row() -> None:
    # the A100 comment's gelu bf16 "before" at 268435456 = 2^28 elements: 0.842 ms
    n = 1 << 28
    relu, gelu, gelu_before = eb.A100_BF16_S[n]
    assert round(gelu_before * 1e3, 3) == 0.842
    # read as 2^29 elements on an H100 it would be 2.55 TB/s = 0.76; it is 1.27 TB/s
    misread = eb.bandwidth_fraction(2 * n, gelu_before, eb.H100_SXM_HBM_BYTES_PER_S)
    assert 0.75 < misread < 0.77
    assert 1.27e12 < eb.streaming_bytes(n, 2) / gelu_before < 1.28e12
    # on that device gelu and relu take the same time: both bandwidth-bound
    assert abs(gelu / relu - 1) < 0.01
    # and on the H100 relu is 2.2 x faster than the A100's at the same size
    assert eb.A100_BF16_S[n][0] / eb.H100_RELU_BF16_S[n][0] > 2.2


def test_hopper_profiles_use_the_measured_figure() -> None:
    # the H20 excepted: its 78 SMs draw 0.61 of its 4.0 TB/s (rlmcost.perf.sm_bandwidth,
    # tests/test_sm_bandwidth.py), not what an H100's 132 SMs draw of its 3.35
    from rlmcost.perf.sm_bandwidth import H20_STREAM_EFFICIENCY

    assert DEFAULT_PROFILES["h20"].hbm_efficiency == H20_STREAM_EFFICIENCY
    for name in set(HOPPER) - {"h20"}:
        p = DEFAULT_PROFILES[name]
        assert p.hbm_efficiency == eb.HOPPER_ELEMENTWISE_EFFICIENCY
        assert eb.HOPPER_ELEMENTWISE_LOW <= p.hbm_efficiency <= eb.HOPPER_ELEMENTWISE_HIGH
        assert "PR 141959" in dict(p.sources)["hbm_efficiency"]
    assert "PR 141959" not in dict(DEFAULT_PROFILES["a100-80gb"].sources)["hbm_efficiency"]


def test_device_prices_the_measured_relu_within_its_gap() -> None:
    # the model's 1 GiB bf16 elementwise kernel on an H100 against PR 141959's 0.356 ms
    n = 1 << 28
    dev = Device(get_hardware("h100-sxm"))
    predicted = dev.elementwise_s(eb.streaming_bytes(n, 2))
    assert abs(predicted - eb.H100_RELU_BF16_S[n][0]) < 5e-6
