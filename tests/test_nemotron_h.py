"""Nemotron-H (``nemotron_h``): Mamba-2, attention, MLP and MoE blocks read from config.json
(rlmcost.specs.hf_nemotron_h), their parameters and FLOPs against transformers 5.24's
``NemotronHForCausalLM`` (the independent source: the model class itself, on the meta device
for the counts and on CPU under FlopCounterMode for the FLOPs)."""

from __future__ import annotations

from typing import Any

import pytest

from rlmcost import blocks as bl
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.specs.hf_config import spec_from_config

#: Nemotron 3 Nano 30B-A3B: the shape of NeMo Megatron-Bridge's recipe (src/megatron/bridge/
#: recipes/nemotronh/h100/nemotron_3_nano.py at 067f987d: pattern, widths, heads, experts,
#: Mamba sizes) with the checkpoint config's vocab_size, max_position_embeddings and
#: chunk_size (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json).
NANO3 = dict(model_type="nemotron_h", vocab_size=131072, hidden_size=2688, intermediate_size=1856,
             hybrid_override_pattern="MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
             num_attention_heads=32, num_key_value_heads=2, head_dim=128, mamba_num_heads=64,
             mamba_head_dim=64, ssm_state_size=128, n_groups=8, conv_kernel=4, chunk_size=128,
             n_routed_experts=128, num_experts_per_tok=6, moe_intermediate_size=1856,
             moe_shared_expert_intermediate_size=3712, max_position_embeddings=262144,
             tie_word_embeddings=False)  # fmt: skip
#: Nemotron Nano 12B v2 (the same recipe file's nemotron_nano_v2.py at 067f987d).
NANO12 = dict(model_type="nemotron_h", vocab_size=131072, hidden_size=5120,
              intermediate_size=20480, num_attention_heads=40, num_key_value_heads=8,
              hybrid_override_pattern="M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-"
                                      "M-M-M-M-",
              head_dim=128, mamba_num_heads=128, mamba_head_dim=80, ssm_state_size=128,
              n_groups=8, conv_kernel=4, chunk_size=128, max_position_embeddings=131072,
              tie_word_embeddings=False)  # fmt: skip
#: A small NemotronH that runs on CPU: every block kind but the MLP, B and C in 2 groups.
TINY = dict(model_type="nemotron_h", vocab_size=256, hidden_size=64, intermediate_size=96,
            hybrid_override_pattern="MEM*E", num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, mamba_num_heads=8, mamba_head_dim=8, ssm_state_size=16, n_groups=2,
            conv_kernel=4, chunk_size=16, n_routed_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=32, moe_shared_expert_intermediate_size=48)  # fmt: skip


def _model(cfg: dict[str, Any], meta: bool) -> Any:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = transformers.NemotronHConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    config._attn_implementation = "eager"  # attention as matmuls the counter sees
    config._experts_implementation = "eager"  # the routed experts as F.linear per expert
    if meta:
        with torch.device("meta"):
            return transformers.NemotronHForCausalLM(config)
    torch.manual_seed(0)
    return transformers.NemotronHForCausalLM(config).eval()


def test_reading_pairs_ffn_blocks_with_mixers():
    a = spec_from_config(NANO3, "nano3").arch()
    # 23 'M', 6 '*', 23 'E' (the pattern): 29 mixer layers, 23 of them with the MoE after them
    assert (a.n_layers, a.n_linear_layers, a.n_softmax_layers, a.ffn_free_layers) == (29, 23, 6, 6)
    assert (a.linear_key_heads, a.linear_value_heads, a.linear_key_head_dim,
            a.linear_value_head_dim, a.linear_chunk) == (8, 64, 128, 64, 128)  # fmt: skip
    b = spec_from_config(NANO12, "nano12").arch()
    assert (b.n_layers, b.n_linear_layers, b.ffn_free_layers, b.is_moe) == (34, 28, 6, False)


@pytest.mark.parametrize("cfg", [NANO3, NANO12, TINY], ids=["nano3-30b", "nano-12b-v2", "tiny"])
def test_parameter_count_equals_transformers(cfg):
    # independent: sum(p.numel()) of NemotronHForCausalLM built from the same config (meta)
    expected = sum(p.numel() for p in _model(cfg, meta=True).parameters())
    assert int(bl.params(spec_from_config(cfg, "x").arch())) == expected


def test_known_totals():
    # NVIDIA's model card: "31.6B total parameters" (Nemotron 3 Nano 30B-A3B)
    assert int(bl.params(spec_from_config(NANO3, "x").arch())) == 31_577_937_344


def _mamba_sizes() -> tuple[int, int, int, int, int, int]:
    t = TINY
    return (t["mamba_num_heads"], t["mamba_head_dim"], t["ssm_state_size"], t["n_groups"],
            t["conv_kernel"], t["chunk_size"])  # fmt: skip


def test_forward_flops_equal_flop_counter():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    model, arch = _model(TINY, meta=False), spec_from_config(TINY, "tiny").arch()
    b, s = 2, 16
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.randint(0, 256, (b, s)), use_cache=False, logits_to_keep=0)
    h, p, n, g, k, q = _mamba_sizes()
    conv, chunks = h * p + 2 * g * n, -(-s // q)
    # what transformers' torch path (mamba2_chunk_scan, causal_conv1d_fn) multiplies beyond
    # the kernels' count (blocks.attention.mamba_core_flops_per_token), per sequence and
    # Mamba layer: C B^T for every head, not every group; the einsum over (chunks + 1)^2 chunk
    # pairs combining the chunk states; the conv's K - 1 padded outputs it discards
    torch_path = (2 * (h - g) * q * q * n * chunks + 2 * (chunks + 1) ** 2 * h * p * n
                  + 2 * k * conv * (k - 1))  # fmt: skip
    expected = int(bl.work_forward(arch, b, s, AttnCounting.FULL))
    assert counter.get_total_flops() == expected + b * arch.n_linear_layers * torch_path


def test_decode_flops_equal_flop_counter():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    model, arch = _model(TINY, meta=False), spec_from_config(TINY, "tiny").arch()
    b, s = 2, 16
    with torch.no_grad():
        cache = model(torch.randint(0, 256, (b, s)), use_cache=True).past_key_values
        with FlopCounterMode(display=False) as counter:
            model(torch.randint(0, 256, (b, 1)), cache=cache, use_cache=True)
    h, p, n, g, k, _ = _mamba_sizes()
    conv = h * p + 2 * g * n
    # per sequence and Mamba layer: the counter sees the state read-out (a bmm, 2 P N per head)
    # but not the decay, the rank-1 input and its addition (3 P N per head, elementwise); the
    # torch conv update convolves K + 1 positions (a K-wide state and the token) and drops one
    # of its 2 outputs
    torch_path = -3 * h * p * n + 2 * k * conv
    expected = int(bl.work_decode_step(arch, s + 1, b))
    assert counter.get_total_flops() == expected + b * arch.n_linear_layers * torch_path


def test_engine_state_is_vllm_mamba2_shape():
    a = spec_from_config(NANO3, "x").arch()
    # vLLM MambaStateShapeCalculator.mamba2_state_shape: conv (K - 1) x (H P + 2 G N),
    # temporal H x P x N, per Mamba layer; no KV for those layers
    h, p, n, g, k = 64, 64, 128, 8, 4
    per_layer = (k - 1) * (h * p + 2 * g * n) + h * p * n
    kv = 2 * 2 * 128 * 6 * 1000  # 2 KV heads of 128, 6 attention layers, 1000 tokens
    assert int(bl.memory_kv_cache(a, 1000)) == kv + 23 * per_layer


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"hybrid_override_pattern": "M-E*"}, "MLP .* and MoE .* blocks in one"),
        ({"hybrid_override_pattern": "MEEE"}, "pairs each FFN block"),
        ({"hybrid_override_pattern": "MX*E"}, "letter 'X'"),
        ({"use_conv_bias": False}, "use_conv_bias"),
    ],
)
def test_what_is_not_modelled_is_refused(change, says):
    with pytest.raises(SpecError, match=says):
        spec_from_config({**NANO3, **change}, "x")


def test_vllm_keeps_the_mamba_state_in_fp32():
    from rlmcost.choices import Dtype
    from rlmcost.deployment.engine_kv import state_dtype
    from rlmcost.deployment.kinds import EngineKind

    # vLLM NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype: "auto" -> the HF config's
    # mamba_ssm_cache_dtype (float32); a Gated DeltaNet model keeps vLLM's "auto" (the model's)
    assert state_dtype(EngineKind.VLLM, Dtype.BF16, mamba=True) is Dtype.FP32
    assert state_dtype(EngineKind.VLLM, Dtype.BF16) is Dtype.BF16
