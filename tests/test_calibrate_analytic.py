"""Analytic FLOPs and bytes of the micro-kernels, against closed forms written out by hand.

No torch here: these run in every environment. The closed forms are those of
tests/FLOP_CONVENTIONS.md (fwd = 2 T (L P_layer + P_head) + 4 L B h d_h S^2, ...).
"""

import doctest

import pytest

from rlmcost.calibrate import analytic as an
from rlmcost.calibrate import plan, profile
from rlmcost.calibrate.device import DeviceKind, match_hardware
from rlmcost.choices import Dtype, FfnKind
from rlmcost.errors import SpecError

B, S, D, H, KV, DH, FF, V = 2, 33, 96, 6, 2, 16, 160, 500  # odd sizes on purpose


def p_layer_attn(d=D, h=H, kv=KV, dh=DH):
    """q and o: d x h d_h each; k and v: d x kv d_h each."""
    return 2 * d * h * dh + 2 * d * kv * dh


def test_gemm_is_2mnk():
    # FLOP_CONVENTIONS §3: a @ b with M,K,N = 64,32,16 counts 65_536
    assert an.flops_gemm(64, 16, 32) == 65_536
    assert an.bytes_gemm(64, 16, 32, Dtype.BF16) == (64 * 32 + 32 * 16 + 64 * 16) * 2


def test_attention_is_4_b_h_dh_s_squared_full():
    arch = an.micro_arch(d_model=H * DH, n_heads=H, n_kv_heads=KV, head_dim=DH)
    # FLOP_CONVENTIONS §1: 4*L*B*h*dh*S^2, query heads under GQA, masked half included
    assert an.flops_attention(arch, B, S) == 4 * B * H * DH * S * S
    assert an.bytes_attention(arch, B, S, Dtype.FP32) == B * S * (2 * H + 2 * KV) * DH * 4


@pytest.mark.parametrize("kind,proj", [(FfnKind.PLAIN, 2), (FfnKind.GATED, 3)])
def test_ffn_is_2_t_proj_d_ff(kind, proj):
    arch = an.micro_arch(d_model=D, n_heads=1, n_kv_heads=1, head_dim=D, d_ff=FF, ffn_kind=kind)
    assert an.flops_ffn(arch, 77) == 2 * 77 * proj * D * FF
    assert an.bytes_ffn(arch, 77, Dtype.BF16) == (proj * D * FF + 2 * 77 * D) * 2


def test_moe_is_router_plus_top_k_experts():
    arch = an.micro_arch(
        d_model=D, n_heads=1, n_kv_heads=1, head_dim=D, n_experts=8, top_k=2, d_expert=48
    )
    # FLOP_CONVENTIONS §5: experts 2*T*top_k*3*d*I, router 2*T*d*E
    assert an.flops_ffn(arch, 50) == 2 * 50 * 2 * 3 * D * 48 + 2 * 50 * D * 8
    assert an.bytes_ffn(arch, 50, Dtype.FP32) == (8 * 3 * D * 48 + D * 8 + 2 * 50 * D) * 4


def test_block_forward_and_train():
    arch = an.micro_arch(d_model=D, n_heads=H, n_kv_heads=KV, head_dim=DH, d_ff=FF, vocab=V)
    p_layer = p_layer_attn() + 3 * D * FF
    fwd = 2 * B * S * p_layer + 4 * B * H * DH * S * S
    assert an.flops_block_forward(arch, B, S) == fwd
    # FLOP_CONVENTIONS §4: backward = exactly 2 x forward
    assert an.flops_block_train(arch, B, S) == 3 * fwd
    weights = p_layer + 2 * D + D  # two RMSNorms per layer, then the final norm
    assert an.bytes_block_forward(arch, B, S, Dtype.BF16) == (weights + 2 * B * S * D) * 2


def test_prefill_and_decode_step():
    arch = an.micro_arch(
        d_model=D, n_heads=H, n_kv_heads=KV, head_dim=DH, d_ff=FF, vocab=V, n_layers=3
    )
    p_layer = p_layer_attn() + 3 * D * FF
    # prefill = fwd - 2 B (S-1) P_head  (logits_to_keep=1)
    fwd = 2 * B * S * (3 * p_layer + D * V) + 4 * 3 * B * H * DH * S * S
    assert an.flops_prefill(arch, S, B) == fwd - 2 * B * (S - 1) * D * V
    # decode = 2 B (L P_layer + P_head) + 4 L B h dh c
    c = 70
    assert (
        an.flops_decode_step(arch, c, B) == 2 * B * (3 * p_layer + D * V) + 4 * 3 * B * H * DH * c
    )
    weights = 3 * (p_layer + 2 * D) + D + D * V
    kv_cache = 2 * 3 * KV * DH * B * c
    assert an.bytes_decode_step(arch, c, B, Dtype.BF16) == (weights + B * D + kv_cache) * 2


def test_collective_bus_bytes():
    # NCCL-tests PERFORMANCE.md: all-reduce 2(p-1)/p, all-gather and reduce-scatter (p-1)/p
    assert an.collective_bus_bytes("all_reduce", 8 << 20, 8) == 2 * 7 * (1 << 20)
    assert an.collective_bus_bytes("all_gather", 8 << 20, 8) == 7 * (1 << 20)
    assert an.collective_bus_bytes("reduce_scatter", 1024, 2) == 512
    assert an.collective_bus_bytes("all_reduce", 1024, 1) == 0
    with pytest.raises(SpecError, match="multiple of ranks"):
        an.collective_bus_bytes("all_gather", 1000, 3)
    with pytest.raises(SpecError, match="unknown collective"):
        an.collective_bus_bytes("broadcast", 1024, 2)


def test_micro_arch_rejects_kv_heads_that_do_not_divide():
    with pytest.raises(SpecError, match="must divide"):
        an.micro_arch(d_model=96, n_heads=6, n_kv_heads=4, head_dim=16)


@pytest.mark.parametrize("kind", list(DeviceKind))
@pytest.mark.parametrize("quick", [True, False])
def test_plans_cover_every_kernel_and_class(kind, quick):
    cases = plan.kernel_plan(kind, quick, Dtype.BF16)
    names = {c.name for c in cases}
    assert names == {
        "gemm",
        "sdpa_causal",
        "sdpa_full",
        "attention_eager",
        "mlp_gated",
        "mlp_plain",
        "block_forward",
        "block_train",
        "prefill",
        "decode_step",
        "moe_ffn",
        "copy",
    }
    classes = {c.kernel_class for c in cases}
    assert classes == set(plan.COMPUTE_CLASSES) | set(plan.BANDWIDTH_CLASSES)
    for c in cases:
        assert isinstance(c.flops, int) and isinstance(c.bytes_moved, int)
        assert c.bytes_moved > 0 and (c.flops > 0) == (c.name != "copy")


def test_quick_plan_is_a_smaller_plan():
    for kind in DeviceKind:
        quick = plan.kernel_plan(kind, True, Dtype.FP32)
        full = plan.kernel_plan(kind, False, Dtype.FP32)
        assert len(quick) < len(full)
        assert sum(c.flops for c in quick) < sum(c.flops for c in full)


@pytest.mark.parametrize(
    "name,spec",
    [
        ("NVIDIA H200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("AMD Instinct MI300X", "mi300x"),
    ],
)
def test_cuda_device_names_map_to_builtin_hardware(name, spec):
    assert match_hardware(name).name == spec


def test_unknown_cuda_device_name_asks_for_hardware():
    with pytest.raises(SpecError, match="--hardware"):
        match_hardware("NVIDIA GeForce RTX 4090")


@pytest.mark.parametrize("module", [an, profile])  # rlmcost.timing: pytest's doctests
def test_doctests_of_torch_free_modules(module):
    # pytest's addopts skip rlmcost/calibrate (torch is optional); run the doctests here
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
