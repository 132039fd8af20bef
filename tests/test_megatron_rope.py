"""Megatron-core's unfused RoPE (rlmcost.perf.megatron_rope) against the kernels PyTorch runs.

Sources: ``_apply_rotary_pos_emb_bshd`` and ``_rotate_half`` of megatron/core/models/common/
embeddings/rope_utils.py at NVIDIA/Megatron-LM cba6b0ed (the 25.11 container's Megatron-LM,
Megatron-Bridge r0.2.0's submodule), copied below as written for the non-interleaved, non-MLA
case; every aten call they and their autograd backward make, with the bytes of its tensor
arguments and results, recorded by ``torch.utils._python_dispatch.TorchDispatchMode`` on CPU
(views excluded: they launch no kernel). The GPT-OSS rows' settings: Megatron-Bridge
gpt_oss_provider.py and utils/fusions.py @046518960.
"""

from __future__ import annotations

import copy

import pytest

from rlmcost.perf.efficiency import Device, default_profile
from rlmcost.perf.megatron_rope import unfused_rope_bytes
from rlmcost.perf.triton_attention import FLASH_ATTENTION_2, pre_fa3_kernel_profile
from rlmcost.perf.validate import load_table, predict_row
from rlmcost.specs import get_hardware

H100_ROW = "megatron-bridge-25.11-h100-gpt-oss-120b-bf16"
VIEWS = {"view", "_unsafe_view", "slice", "split", "split_with_sizes", "chunk", "narrow",
         "expand", "t", "transpose", "permute", "unsqueeze", "squeeze", "as_strided", "alias",
         "detach", "select", "unbind", "_reshape_alias", "reshape"}  # fmt: skip


def _traced(shape: tuple[int, int, int, int], mscale: float) -> tuple[int, int, int, int]:
    """(forward bytes, kernels, backward bytes, kernels) of Megatron-core's function."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    def _rotate_half(x, rotary_interleaved):  # rope_utils.py @cba6b0ed
        x1, x2 = torch.chunk(x, 2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    def _apply_rotary_pos_emb_bshd(t, freqs, rotary_interleaved=False, mscale=1.0):
        rot_dim = freqs.shape[-1]
        t, t_pass = t[..., :rot_dim], t[..., rot_dim:]
        cos_ = (torch.cos(freqs) * mscale).to(t.dtype)
        sin_ = (torch.sin(freqs) * mscale).to(t.dtype)
        t = (t * cos_) + (_rotate_half(t, rotary_interleaved) * sin_)
        return torch.cat((t, t_pass), dim=-1)

    class Count(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.bytes, self.kernels = 0, 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.overloadpacket.__name__ not in VIEWS:
                leaves = tree_flatten((args, kwargs, out))[0]
                ts = [a for a in leaves if isinstance(a, torch.Tensor)]
                self.bytes += sum(a.numel() * a.element_size() for a in ts)
                self.kernels += 1
            return out

    s, b, h, d = shape
    t = torch.randn(s, b, h, d, dtype=torch.bfloat16, requires_grad=True)
    freqs = torch.randn(s, 1, 1, d)  # fp32, as Megatron-core's rotary embeddings
    fwd, bwd = Count(), Count()
    with fwd:
        y = _apply_rotary_pos_emb_bshd(t, freqs, mscale=mscale)
    grad = torch.randn_like(y)
    with bwd:
        y.backward(grad)
    return fwd.bytes, fwd.kernels, bwd.bytes, bwd.kernels


@pytest.mark.parametrize("shape", [(16, 2, 4, 64), (24, 1, 8, 64), (8, 4, 2, 32)])
def test_bytes_and_kernels_are_what_pytorch_runs(shape):
    # q-like and k-like tensors, bf16, GPT-OSS's YaRN mscale 0.1 ln 32 + 1
    s, b, h, d = shape
    assert _traced(shape, 1.3466) == unfused_rope_bytes(s * b * h * d, s, d, 2)


def test_the_h100_row_replaces_the_fused_pass_by_the_eager_kernels():
    # the row with and without rope_unfused: the elementwise part changes by exactly the eager
    # kernels of q (64 heads x 64) and k (8 x 64) less the fused pass (2 (q + k) x forward,
    # twice that backward), for the slowest stage's 9 layers x 8 micro-batches of 4 x 4096
    rows = {r["id"]: r for r in load_table()["rows"]}
    raw = copy.deepcopy(rows[H100_ROW])
    assert raw["options"]["rope_unfused"] is True
    on = predict_row(raw).step
    raw["options"]["rope_unfused"] = False
    off = predict_row(raw).step
    hw = get_hardware(raw["hardware"])
    dev = Device(hw, profile=pre_fa3_kernel_profile(default_profile(hw), FLASH_ATTENTION_2))
    tokens, s, x = 4 * 4096, 4096, 2
    eager = 0.0
    for width in (64 * 64, 8 * 64):
        fb, fk, bb, bk = unfused_rope_bytes(tokens * width, s, 64, x)
        eager += dev.elementwise_s(fb, fk) + dev.elementwise_s(bb, bk)
    fused = tokens * 2 * (64 * 64 + 8 * 64) * x
    fused_s = dev.elementwise_s(fused, 1) + dev.elementwise_s(2 * fused, 2)
    assert on.compute_s["elementwise"] - off.compute_s["elementwise"] == pytest.approx(
        8 * 9 * (eager - fused_s), rel=1e-9
    )
    assert on.step_s > off.step_s


def test_gpt_oss_rows_state_their_unfused_rope():
    for r in load_table()["rows"]:
        if "gpt-oss" in r["id"]:
            assert r["options"]["rope_unfused"] is True
            assert any("validate_rope_fusion_compatibility" in a for a in r["assumptions"])
        else:  # every other row keeps the fused pass it ran
            assert not r["options"].get("rope_unfused", False)
