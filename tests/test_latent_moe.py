"""Latent MoE (Nemotron 3 Super: ``moe_latent_size``): the routed experts at the latent width l
behind fc1_latent_proj (d -> l) and fc2_latent_proj (l -> d). Independent sources: transformers
5.24's ``NemotronHForCausalLM`` itself (its parameters on the meta device, its FLOPs on CPU under
FlopCounterMode), the checkpoint's safetensors size, Megatron-Core's dispatcher width."""

from __future__ import annotations

from typing import Any

import pytest
from test_nemotron_h import _model  # the transformers model from a config (tests/ on sys.path)

from rlmcost import blocks as bl
from rlmcost.choices import AttnCounting
from rlmcost.parallel.comm import traffic_per_rank
from rlmcost.parallel.layout import Layout
from rlmcost.specs.hf_config import spec_from_config
from rlmcost.specs.registry import get_model

#: nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 config.json (the keys rlmcost reads).
SUPER = dict(model_type="nemotron_h", vocab_size=131072, hidden_size=4096,
             intermediate_size=2688, num_attention_heads=32, num_key_value_heads=2, head_dim=128,
             hybrid_override_pattern="MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*"
                                     "EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
             mamba_num_heads=128, mamba_head_dim=64, ssm_state_size=128, n_groups=8,
             conv_kernel=4, chunk_size=128, n_routed_experts=512, n_shared_experts=1,
             num_experts_per_tok=22, moe_intermediate_size=2688,
             moe_shared_expert_intermediate_size=5376, moe_latent_size=1024, n_group=1,
             topk_group=1, max_position_embeddings=262144, tie_word_embeddings=False,
             num_nextn_predict_layers=1, mtp_hybrid_override_pattern="*E")  # fmt: skip
#: A small latent NemotronH that runs on CPU: every block kind but the MLP, l < d.
TINY = dict(model_type="nemotron_h", vocab_size=256, hidden_size=64, intermediate_size=96,
            hybrid_override_pattern="MEM*E", num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, mamba_num_heads=8, mamba_head_dim=8, ssm_state_size=16, n_groups=2,
            conv_kernel=4, chunk_size=16, n_routed_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=32, moe_shared_expert_intermediate_size=48,
            moe_latent_size=24, n_group=1, topk_group=1)  # fmt: skip


def test_reading_the_latent():
    a = spec_from_config(SUPER, "super").arch()
    assert (a.n_layers, a.n_linear_layers, a.ffn_free_layers, a.moe_latent) == (48, 40, 8, 1024)
    assert a.expert_width == 1024 and spec_from_config(SUPER, "super").mtp_layers == 1


@pytest.mark.parametrize("cfg", [SUPER, TINY], ids=["super-120b", "tiny"])
def test_parameter_count_equals_transformers(cfg):
    # independent: sum(p.numel()) of NemotronHForCausalLM built from the same config (meta)
    expected = sum(p.numel() for p in _model(cfg, meta=True).parameters())
    assert int(bl.params(spec_from_config(cfg, "x").arch())) == expected


def test_super_total_and_builtin():
    # the BF16 checkpoint's safetensors hold 123,611,012,096 weights, 2,942,324,736 of them the
    # MTP module transformers does not build (its model.safetensors.index.json shard sizes / 2)
    a = get_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16").arch()
    assert int(bl.params(a)) == 123_611_012_096 - 2_942_324_736
    assert a == spec_from_config(SUPER, "x").arch().with_(name=a.name)
    # "A12B": 12.77 B parameters a token passes through (22 of 512 experts in 40 MoE layers)
    assert int(bl.params_active_per_token(a)) == 12_770_216_960


def test_forward_flops_equal_flop_counter():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    model, arch = _model(TINY, meta=False), spec_from_config(TINY, "tiny").arch()
    b, s = 2, 16
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.randint(0, 256, (b, s)), use_cache=False, logits_to_keep=0)
    t = TINY
    h, p, n, g, k, q = (t["mamba_num_heads"], t["mamba_head_dim"], t["ssm_state_size"],
                        t["n_groups"], t["conv_kernel"], t["chunk_size"])  # fmt: skip
    conv, chunks = h * p + 2 * g * n, -(-s // q)
    # what transformers' torch path multiplies beyond the kernels' count, per sequence and
    # Mamba layer (as tests/test_nemotron_h.py derives it)
    torch_path = (2 * (h - g) * q * q * n * chunks + 2 * (chunks + 1) ** 2 * h * p * n
                  + 2 * k * conv * (k - 1))  # fmt: skip
    expected = int(bl.work_forward(arch, b, s, AttnCounting.FULL))
    assert counter.get_total_flops() == expected + b * arch.n_linear_layers * torch_path
    # the latent is what the count turns on: with the experts at d the same model counts more
    wide = int(bl.work_forward(arch.with_(moe_latent=0), b, s, AttnCounting.FULL))
    assert wide > expected


def test_expert_all_to_all_moves_latent_tokens():
    # Megatron-Core's MoELayer projects the tokens to the latent before the token dispatcher
    # (megatron/core/transformer/moe/moe_layer.py @d98e8a64dd: fc1_latent_proj in
    # dispatch_preprocess), so each all-to-all carries k copies of l-wide rows, not d-wide
    a = get_model("nemotron-3-super-120b-a12b").arch()
    lay = Layout(ep=8, dp=8)
    rows = [t for t in traffic_per_rank(a, lay, 8, 1024) if t.strategy == "ep"]
    assert rows and {t.payload_bytes for t in rows} == {1024 * 22 * 1024 * 2}  # tokens k l bf16


#: One Mamba-2 block and one relu^2 MLP block (``M-``), small enough for CPU.
MAMBA_MLP = dict(model_type="nemotron_h", vocab_size=256, hidden_size=64, intermediate_size=96,
                 hybrid_override_pattern="M-", num_attention_heads=4, num_key_value_heads=2,
                 head_dim=16, mamba_num_heads=8, mamba_head_dim=8, ssm_state_size=16,
                 n_groups=2, conv_kernel=4, chunk_size=16)  # fmt: skip


def _megatron_mamba_bytes(x: int) -> int:
    """What Megatron-Core's MambaMixer._ssm_training keeps per token for MAMBA_MLP's block,
    tensor by tensor (megatron/core/ssm/mamba_mixer.py @d98e8a64dd; mamba_ssm's
    MambaSplitConv1dScanCombinedFn.save_for_backward(zxbcdt, ..., out_x, ...))."""
    d, hp, gn, h, g = 64, 8 * 8, 2 * 16, 8, 2
    norm_and_in_proj = 2 * d  # TELayerNormColumnParallelLinear: input, normalized input
    zxbcdt = 2 * hp + 2 * gn + h  # in_proj's output: z, x, B, C, dt
    out_x, norm_in, out_proj_in = hp, hp, hp  # SSD output; gated RMSNorm input; out_proj input
    return x * (norm_and_in_proj + zxbcdt + out_x + norm_in + out_proj_in) + 4 * g  # + 1/rms


def test_mamba_saved_bytes_as_megatron_saves_them():
    from rlmcost.choices import Dtype

    arch = spec_from_config(MAMBA_MLP, "x").arch()
    ffn = 2 * (2 * 64) + 2 * (2 * 96)  # FFN norm input, FFN input; relu^2 input, down input
    assert int(bl.activation_bytes_per_token_layer(arch, Dtype.BF16)) == (
        _megatron_mamba_bytes(2) + ffn
    )


def test_torch_path_saves_more_than_the_fused_kernels():
    """transformers' torch path (no mamba_ssm kernels: ``torch_forward``'s chunked SSD) saves
    the chunk-level intermediates the fused kernel recomputes in backward (the segment-sum
    decays, C B^T per chunk, the chunk states, the conv's padded output, fp32 copies): measured
    with autograd's saved-tensor hooks on one Mamba block, 9,614 bytes a token in fp32 against
    the fused kernels' 2,088 (4.6x). rlmcost prices the trainers' fused kernels."""
    torch = pytest.importorskip("torch")
    model = _model(MAMBA_MLP, meta=False)
    block = model.model.layers[0] if hasattr(model, "model") else model.backbone.layers[0]
    b, s = 2, 32
    x = torch.randn(b, s, 64, requires_grad=True)
    params = {p.data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t: Any) -> Any:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params and ptr != x.data_ptr():
            seen[ptr] = max(seen.get(ptr, 0), t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        block(x)
    measured = sum(seen.values()) // (b * s)
    fused = _megatron_mamba_bytes(4) - 4 * 64  # fp32; the block's input is not counted here
    assert 3 * fused < measured  # the chunk-level intermediates above, not a smaller set
