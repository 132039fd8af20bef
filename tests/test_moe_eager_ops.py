"""Megatron-core's eager kernels around the grouped expert GEMMs (rlmcost.perf.moe_eager_ops):
the clamped GLU's clamp and concatenation, the second projection's per-expert bias loop.

Sources: megatron/core/fusions/fused_bias_geglu.py and megatron/core/transformer/moe/
experts.py at NVIDIA/Megatron-LM cba6b0ed (Megatron-Bridge r0.2.0's 3rdparty submodule, the
25.11 container's), PyTorch's ``clamp_backward`` (torch/csrc/autograd/FunctionsManual.cpp)."""

from __future__ import annotations

import copy

import pytest

from rlmcost.perf.efficiency import Device, default_profile
from rlmcost.perf.moe_eager_ops import clamp_cat_bytes, fc2_bias_bytes
from rlmcost.perf.triton_attention import FLASH_ATTENTION_2, pre_fa3_kernel_profile
from rlmcost.perf.validate import load_table, predict_row
from rlmcost.specs import get_hardware

H100_ROW = "megatron-bridge-25.11-h100-gpt-oss-120b-bf16"


def test_clamp_and_cat_bytes_by_kernel():
    # GPT-OSS H100 row's rank: 16,384 tokens x top-4 = 65,536 copies, d_e 2880, bf16
    rows, w, x = 65_536, 2880, 2
    h = rows * w
    # forward: clamp(glu half) r+w, clamp(linear half) r+w, cat(2 halves) r+w
    forward = (h * x + h * x) + (h * x + h * x) + (2 * h * x + 2 * h * x)
    # backward: glu half le(r x, w bool) + where(r bool, r x, w x); linear half ge, le
    # (r x, w bool each), logical_and_ (r 2 bool, w bool), where (r bool, r x, w x); the
    # chunk's backward cat (r 2h x, w 2h x)
    glu = (h * x + h) + (h + h * x + h * x)
    linear = 2 * (h * x + h) + 3 * h + (h + h * x + h * x)
    backward = glu + linear + 4 * h * x
    assert clamp_cat_bytes(rows, w, x) == (forward, 3, backward, 9)
    assert forward == 3_019_898_880  # 3.02 GB a layer's forward, bf16


def test_fc2_bias_loop_bytes_by_kernel():
    # 3 local experts of 5, 7 and 4 rows, output width 6, 4-byte dtype: summed per expert
    ns, d, x = (5, 7, 4), 6, 4
    fwd = sum((n * x + d * x + n * d * x) + (2 * n * d * x + n * d * x) for n in ns)  # b*p, t+bp
    fwd += 2 * sum(ns) * d * x  # torch.cat
    bwd = sum((2 * n * d * x + n * x) + (n * d * x + d * x)  # g * p, summed over rows
              + (2 * n * d * x + d * x) + (n * d * x + n * x) for n in ns)  # g * b, over width
    bwd += 2 * sum(ns) * d * x + 2 * sum(ns) * x  # the splits' backward: cat of t's, p's grads
    assert fc2_bias_bytes(sum(ns), d, len(ns), x) == (fwd, 7, bwd, 14)


def _variant(**options: bool):
    raw = copy.deepcopy({r["id"]: r for r in load_table()["rows"]}[H100_ROW])
    raw["options"].update(options)
    return raw, predict_row(raw).step


def test_the_h100_row_adds_exactly_the_clamp_kernels():
    # with and without moe_act_clamp: the elementwise part grows by the clamp's forward and
    # backward, the recompute part by its forward (moe_act is in the row's recompute_modules),
    # for the slowest stage's 9 MoE layers x 8 micro-batches
    raw, on = _variant(moe_act_clamp=True)
    _, off = _variant(moe_act_clamp=False)
    assert "moe_act" in raw["options"]["recompute_modules"]
    hw = get_hardware(raw["hardware"])
    dev = Device(hw, profile=pre_fa3_kernel_profile(default_profile(hw), FLASH_ATTENTION_2))
    fb, fk, bb, bk = clamp_cat_bytes(65_536, 2880, 2)
    per_layer = dev.elementwise_s(fb, fk) + dev.elementwise_s(bb, bk)
    n = 8 * 9
    assert on.compute_s["elementwise"] - off.compute_s["elementwise"] == pytest.approx(
        n * per_layer, rel=1e-9
    )
    assert on.compute_s["recompute"] - off.compute_s["recompute"] == pytest.approx(
        n * dev.elementwise_s(fb, fk), rel=1e-9
    )
    assert on.step_s > off.step_s


def test_the_expert_bias_loop_is_priced_for_mlp_bias_only():
    # the same row without expert biases (mlp_bias false): the fc2 bias loop's kernels leave
    raw, on = _variant(moe_act_clamp=False)
    spec = dict(raw["model"]["spec"], mlp_bias=False)
    raw["model"] = {"spec": spec, "seq": raw["model"]["seq"]}
    off = predict_row(raw).step
    hw = get_hardware(raw["hardware"])
    dev = Device(hw, profile=pre_fa3_kernel_profile(default_profile(hw), FLASH_ATTENTION_2))
    fb, fk, bb, bk = fc2_bias_bytes(65_536, 2880, 16, 2)
    per_layer = dev.elementwise_s(fb, fk) + dev.elementwise_s(bb, bk)
    assert on.compute_s["elementwise"] - off.compute_s["elementwise"] == pytest.approx(
        8 * 9 * per_layer, rel=1e-9
    )


def test_gpt_oss_rows_state_what_ran():
    rows = [r for r in load_table()["rows"]
            if "gpt-oss" in r["id"] and r["source"] == "megatron_bridge"]  # the 25.11 rows
    assert len(rows) == 3
    for r in rows:
        text = " ".join(r["assumptions"])
        assert r["options"]["moe_act_clamp"] is True
        assert "cuDNN 9.13.1.26" in text and "TE 2.9" in text and "_apply_bias" in text
        if "-b200-gpt" in r["id"]:
            assert "EP 64" in text and "8047" in text and "13722" in text
            assert r["layout"]["ep"] == 64  # the container's preset (the row says why)
        if "-gb200-gpt" in r["id"]:
            assert "gaod/r0.2.0_test" in text and "hybridep" in text and "no CUDA graphs" in text
