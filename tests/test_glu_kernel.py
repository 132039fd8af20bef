"""The gated FFN and the q/k norms as each trainer's kernels keep them for the backward.

Independent sources: torch autograd's saved tensors (``saved_tensors_hooks``) of transformers'
Qwen3 MLP and the inputs of its q/k RMSNorms, built from a config (no weights, no download);
the frameworks' sources for which trainer fuses its SwiGLU (rlmcost.placement.glu_kernel's
docstring, each file @ commit).
"""

from __future__ import annotations

import pytest
import sympy as sp

from rlmcost import symbols as sy
from rlmcost.deployment.spec import Deployment, TrainLayout
from rlmcost.parallel.activations import saved_bytes_per_token_layer
from rlmcost.placement.glu_kernel import fused_glu
from rlmcost.specs import get_model

TOKENS = 2 * 37


def _qwen3(dtype):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = transformers.Qwen3Config(
        vocab_size=100, hidden_size=64, intermediate_size=176, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, torch_dtype=dtype,
    )  # fmt: skip
    torch.manual_seed(0)
    return torch, cfg


def _saved_bytes(module, *inputs):
    """Bytes autograd keeps for backward in ``module(*inputs)``, parameters excluded, each
    storage once (tests/torch_models.py)."""
    import torch_models as tm  # tests/ is on sys.path under pytest; needs torch

    return tm.saved_tensor_bytes(module, lambda: module(*inputs))[0]


def _ffn_bytes_per_width(fused: bool) -> sp.Expr:
    """rlmcost's bf16 bytes per element of d_ff a token keeps (dense layer, one rank)."""
    arch = get_model("qwen3-8b").arch().with_(d_ff=sy.d_ff)
    return sp.diff(saved_bytes_per_token_layer(arch, fused_glu=fused), sy.d_ff)


def test_transformers_mlp_saves_its_input_and_four_d_ff_as_the_unfused_count():
    # source: autograd's saved tensors of transformers' Qwen3MLP in bf16 (CPU):
    # down_proj(act_fn(gate_proj(x)) * up_proj(x)) keeps x, gate, up, act(gate) and the product
    torch, cfg = _qwen3("bfloat16")
    from transformers.models.qwen3.modeling_qwen3 import Qwen3MLP

    mlp = Qwen3MLP(cfg).to(torch.bfloat16)
    x = torch.randn(2, 37, cfg.hidden_size, dtype=torch.bfloat16, requires_grad=True)
    saved = _saved_bytes(mlp, x)
    per_width = _ffn_bytes_per_width(False)
    assert per_width == 2 * 4
    assert saved == TOKENS * (2 * cfg.hidden_size + per_width * cfg.intermediate_size)
    # a fused SwiGLU keeps its input (gate and up) and the down projection's input
    assert _ffn_bytes_per_width(True) == 2 * 3


def test_q_and_k_norms_keep_their_inputs_and_an_fp32_statistic_per_head():
    # source: the inputs transformers' Qwen3Attention hands its q_norm and k_norm (forward
    # pre-hooks), and the fp32 per-row tensors Qwen3RMSNorm saves (saved_tensors_hooks)
    torch, cfg = _qwen3("float32")
    from transformers.models.qwen3.modeling_qwen3 import Qwen3Attention, Qwen3RotaryEmbedding

    cfg._attn_implementation = "eager"
    attention = Qwen3Attention(cfg, layer_idx=0)
    inputs: list[int] = []
    for norm in (attention.q_norm, attention.k_norm):
        norm.register_forward_pre_hook(lambda mod, args: inputs.append(args[0].numel()))
    rows: list[int] = []

    def pack(t):
        if t.dim() and t.shape[-1] == 1 and t.dtype == torch.float32:
            rows.append(t.numel())
        return t

    x = torch.randn(2, 37, cfg.hidden_size, requires_grad=True)
    rope = Qwen3RotaryEmbedding(cfg)(x, torch.arange(37).expand(2, 37))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        attention(x, rope, None)
    heads = cfg.num_attention_heads + cfg.num_key_value_heads
    assert sum(inputs) == TOKENS * heads * cfg.head_dim
    # one fp32 row statistic per head and token; the eager norm keeps two (its variance and
    # 1 / rms), Transformer Engine's and Liger's fused norms one (rsigma / RSTD): one counted
    assert sorted(rows) == sorted([TOKENS * cfg.num_attention_heads] * 2
                                  + [TOKENS * cfg.num_key_value_heads] * 2)  # fmt: skip
    arch = get_model("qwen3-8b").arch().with_(
        d_model=cfg.hidden_size, n_heads=cfg.num_attention_heads,
        n_kv_heads=cfg.num_key_value_heads, head_dim=cfg.head_dim, d_ff=cfg.intermediate_size,
    )  # fmt: skip
    added = saved_bytes_per_token_layer(arch) - saved_bytes_per_token_layer(
        arch.with_(qk_norm=False))  # fmt: skip
    assert TOKENS * added == 2 * sum(inputs) + 4 * TOKENS * heads  # bf16 inputs, fp32 1 / rms


MOE = get_model("qwen3-30b-a3b").arch()
DENSE = get_model("qwen3-8b").arch()


@pytest.mark.parametrize(
    "framework, train, logits, arch, fused",
    [
        ("slime", {"tp": 2}, "materialized", DENSE, True),  # Megatron-LM's default on
        ("nemo-rl", {"tp": 2}, "materialized", DENSE, True),  # setdefault(..., True)
        ("nemo-rl", {"zero": "3"}, "materialized", DENSE, False),  # DTensor: transformers
        ("verl", {"tp": 2}, "materialized", MOE, True),  # mbridge's MoE bridges
        ("verl", {"tp": 2}, "materialized", DENSE, False),  # mbridge's dense: core's default
        ("verl", {}, "fused", DENSE, False),  # FSDP worker: transformers' MLP
        ("openrlhf", {}, "materialized", DENSE, False),
        ("openrlhf", {}, "fused", DENSE, True),  # --use_liger_kernel: LigerSwiGLUMLP
        ("trl", {}, "fused", MOE, True),
        (None, {"tp": 2}, "materialized", MOE, False),  # no framework: rlmcost's default
    ],
)
def test_which_trainers_fuse_their_swiglu(framework, train, logits, arch, fused):
    dep = Deployment(framework=framework, train=TrainLayout(**train), logits=logits)
    assert fused_glu(dep, dep.train, arch) is fused


def test_the_idealized_run_keeps_rlmcosts_unfused_count():
    dep = Deployment(framework="slime", ideal=True, train=TrainLayout(tp=2))
    assert fused_glu(dep, dep.train, MOE) is False
