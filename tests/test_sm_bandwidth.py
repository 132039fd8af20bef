"""The H20's streaming bandwidth: what its 78 Hopper SMs draw (rlmcost.perf.sm_bandwidth)."""

import pytest

from rlmcost.choices import Dtype
from rlmcost.perf import sm_bandwidth as sb
from rlmcost.perf.efficiency import Device, default_profile
from rlmcost.perf.elementwise_bw import HOPPER_ELEMENTWISE_EFFICIENCY
from rlmcost.specs import get_hardware


def test_module_constants_are_the_registry_h20():
    # NVIDIA H20 product brief (hardware.json): 4.0 TB/s HBM3; 78 SMs (the profile's count)
    assert get_hardware("h20").hbm_bandwidth_bytes_per_s == sb.H20_HBM_BYTES_PER_S
    assert default_profile("h20").sms == sb.H20_SMS


def test_measured_figures_give_the_h20_fraction_and_its_high_end():
    # benchmarks/bench_decode_gemv.py on an H100 SXM: 78 SMs drew 2.425 TB/s, 39 SMs 1.502
    assert sb.H20_STREAM_EFFICIENCY == round(2.425e12 / 4.0e12, 2) == 0.61
    assert sb.H20_STREAM_HIGH == round(78 * 1.502e12 / 39 / 4.0e12, 2) == 0.75


def test_per_sm_rate_falls_as_more_sms_share_the_hbm():
    # Little's law with a loaded memory system: more SMs draw more in all, less each
    table = sorted(sb.HOPPER_SM_READ_BYTES_PER_S.items())
    totals = [bw for _, bw in table]
    per_sm = [bw / n for n, bw in table]
    assert totals == sorted(totals)
    assert per_sm == sorted(per_sm, reverse=True)
    # all 132 SMs of the H100 reach the HBM bound the Hopper profiles take (0.87 vs 0.90)
    assert table[-1][1] / 3.35e12 == pytest.approx(HOPPER_ELEMENTWISE_EFFICIENCY, abs=0.04)


def test_h20_profile_takes_it_and_the_other_hopper_parts_do_not():
    p = default_profile("h20")
    assert p.hbm_efficiency == sb.H20_STREAM_EFFICIENCY
    assert "bench_decode_gemv" in dict(p.sources)["hbm_efficiency"]
    for name in ("h100-sxm", "h200", "h800"):
        assert default_profile(name).hbm_efficiency == HOPPER_ELEMENTWISE_EFFICIENCY


def test_a_memory_bound_kernel_on_h20_streams_at_the_measured_rate():
    # 1 GB moved at 0.61 x 4.0 TB/s = 2.44 TB/s: 0.41 ms (the datasheet fraction 0.9 gave 0.28)
    dev = Device(get_hardware("h20"), Dtype.BF16)
    assert dev.memory_s(1e9) == pytest.approx(1e9 / 2.44e12)


def test_h20_decode_attention_reads_the_kv_cache_at_the_measured_rate():
    # Qwen3-8B (36 layers, 8 KV heads x 128, bf16): 147,456 KV bytes per context token; at a
    # 64,512-token context one step reads 9.51 GB, 3.90 ms at 2.44 TB/s
    from rlmcost.perf.generation import Engine
    from rlmcost.specs import get_model

    arch = get_model("qwen3-8b").arch()
    eng = Engine(arch, Device(get_hardware("h20"), Dtype.BF16))
    ctx = 64512
    step = eng.decode_step(1, ctx)
    gaps = int(arch.n_layers) * default_profile("h20").kernel_gap_s
    assert step.attention_s - gaps == pytest.approx(ctx * 147456 / 2.44e12, rel=1e-9)
