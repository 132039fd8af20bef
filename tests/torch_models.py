"""Reference transformers models and FlopCounterMode counts, for testing rlmcost.

Builds small but structurally real causal LMs (and full-size ones on ``meta`` for
parameter counting) from config objects only (no hub access), and counts FLOPs with
``torch.utils.flop_counter.FlopCounterMode``.  See ``tests/FLOP_CONVENTIONS.md`` for
what that counter does and does not see.

Import from a test after ``pytest.importorskip("torch")`` and
``pytest.importorskip("transformers")``.

Defaults are chosen so that every count is exact and cheap:

* ``device="meta"``: no memory, no arithmetic; a count takes milliseconds.
* ``attn_implementation="eager"``: attention is two ``bmm`` (counted) on every
  device.  (``"sdpa"`` is also counted on ``meta``, where it decomposes into the same
  ``bmm`` ops, but NOT on CPU, where it runs ``aten._scaled_dot_product_flash_attention_for_cpu``,
  which FlopCounterMode has no formula for.)
* MoE experts: ``"batched_mm"`` on ``meta`` (``bmm`` over per-token gathered expert
  weights: counted, routing-independent, runs on meta but needs O(tokens*top_k*d*I)
  memory on a real device) and ``"eager"`` elsewhere (per-expert ``mm`` loop using
  ``nonzero``: counted, sums to the same total for any routing, fails on meta).
  The transformers default ``"grouped_mm"`` runs ``aten._grouped_mm``: NOT counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

# --------------------------------------------------------------------------------------
# Small configs
# --------------------------------------------------------------------------------------

_COMMON: dict[str, Any] = dict(
    vocab_size=1000,
    hidden_size=256,
    num_hidden_layers=2,
    num_attention_heads=8,
    max_position_embeddings=4096,
    tie_word_embeddings=False,
)

#: family -> (transformers config class name, default kwargs).  Every default can be
#: overridden through ``build(family, **overrides)`` / ``make_config``.
FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": (
        "LlamaConfig",
        dict(_COMMON, intermediate_size=688, num_key_value_heads=8),
    ),
    "llama-gqa": (
        "LlamaConfig",
        dict(_COMMON, intermediate_size=688, num_key_value_heads=2),
    ),
    "mistral": (
        "MistralConfig",
        dict(_COMMON, intermediate_size=704, num_key_value_heads=2, sliding_window=None),
    ),
    "qwen2": (  # q/k/v biases (o_proj has none)
        "Qwen2Config",
        dict(_COMMON, intermediate_size=704, num_key_value_heads=2),
    ),
    "gpt2": (  # tied head, GELU MLP 4d, learned positions, LayerNorm, biases everywhere
        "GPT2Config",
        dict(
            vocab_size=1000,
            n_embd=256,
            n_layer=2,
            n_head=8,
            n_positions=4096,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            bos_token_id=None,
            eos_token_id=None,
        ),
    ),
    "mixtral": (
        "MixtralConfig",
        dict(
            _COMMON,
            intermediate_size=384,
            num_key_value_heads=2,
            num_local_experts=4,
            num_experts_per_tok=2,
            sliding_window=None,
        ),
    ),
    "qwen2_moe": (  # routed experts + always-on shared expert scaled by sigmoid(shared_expert_gate)
        "Qwen2MoeConfig",
        dict(
            _COMMON,
            num_key_value_heads=2,
            intermediate_size=512,  # only used by dense (mlp_only_layers) layers
            moe_intermediate_size=128,
            shared_expert_intermediate_size=512,
            num_experts=8,
            num_experts_per_tok=2,
            decoder_sparse_step=1,
        ),
    ),
    "qwen3_moe": (  # head_dim decoupled from d/h, q_norm/k_norm, no attention bias
        "Qwen3MoeConfig",
        dict(
            _COMMON,
            num_key_value_heads=2,
            head_dim=64,
            intermediate_size=512,
            moe_intermediate_size=128,
            num_experts=8,
            num_experts_per_tok=2,
            decoder_sparse_step=1,
        ),
    ),
}

MOE_FAMILIES = ("mixtral", "qwen2_moe", "qwen3_moe")

_MLA_COMMON: dict[str, Any] = dict(
    _COMMON,
    num_hidden_layers=3,
    num_key_value_heads=8,
    intermediate_size=512,  # the first_k_dense_replace leading dense layers
    moe_intermediate_size=64,
    n_routed_experts=8,
    num_experts_per_tok=2,
    n_shared_experts=2,  # one shared MLP of width 2 x 64
    first_k_dense_replace=1,
    kv_lora_rank=64,
    qk_nope_head_dim=32,
    qk_rope_head_dim=16,
    v_head_dim=24,  # decoupled from the q/k head width 48, as nothing forces them equal
)

#: Multi-head latent attention families (DeepSeek-V2/V3). Kept apart from ``FAMILIES``: their
#: FlopCounterMode decode step is the reference form (kv_b_proj re-expands the cache), and
#: ``dims``/``expected_*`` describe MHA/GQA only; tests/test_mla.py covers them.
MLA_FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "deepseek_v3": (  # query latent, sigmoid group-limited routing, shared experts
        "DeepseekV3Config",
        dict(_MLA_COMMON, q_lora_rank=96, n_group=2, topk_group=1),
    ),
    "deepseek_v3-noqlora": (  # plain q projection (q_lora_rank None, as DeepSeek-V2-Lite)
        "DeepseekV3Config",
        dict(_MLA_COMMON, q_lora_rank=None, n_group=2, topk_group=1),
    ),
    "deepseek_v2": (  # V2 classes: softmax greedy routing, no query latent
        "DeepseekV2Config",
        dict(_MLA_COMMON, q_lora_rank=None),
    ),
}

# --------------------------------------------------------------------------------------
# Full-size configs (published config.json values), for parameter counting on meta
# --------------------------------------------------------------------------------------

#: name -> (family, config kwargs).  Use ``build_full(name)`` (meta device).
FULL_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama-3.1-8b": (
        "llama",
        dict(
            vocab_size=128256,
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            tie_word_embeddings=False,
            max_position_embeddings=131072,
        ),
    ),
    "llama-3.1-70b": (
        "llama",
        dict(
            vocab_size=128256,
            hidden_size=8192,
            intermediate_size=28672,
            num_hidden_layers=80,
            num_attention_heads=64,
            num_key_value_heads=8,
            tie_word_embeddings=False,
            max_position_embeddings=131072,
        ),
    ),
    "mistral-7b": (
        "mistral",
        dict(
            vocab_size=32000,
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            tie_word_embeddings=False,
            sliding_window=4096,
        ),
    ),
    "qwen2-7b": (
        "qwen2",
        dict(
            vocab_size=152064,
            hidden_size=3584,
            intermediate_size=18944,
            num_hidden_layers=28,
            num_attention_heads=28,
            num_key_value_heads=4,
            tie_word_embeddings=False,
        ),
    ),
    "gpt2": (
        "gpt2",
        dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024),
    ),
    "mixtral-8x7b": (
        "mixtral",
        dict(
            vocab_size=32000,
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            num_local_experts=8,
            num_experts_per_tok=2,
            tie_word_embeddings=False,
        ),
    ),
    "qwen1.5-moe-a2.7b": (
        "qwen2_moe",
        dict(
            vocab_size=151936,
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=24,
            num_attention_heads=16,
            num_key_value_heads=16,
            moe_intermediate_size=1408,
            shared_expert_intermediate_size=5632,
            num_experts=60,
            num_experts_per_tok=4,
            tie_word_embeddings=False,
        ),
    ),
    "deepseek-v3": ("deepseek_v3", {}),  # DeepseekV3Config() defaults are DeepSeek-V3's config
    "deepseek-v2-lite": (
        "deepseek_v2",
        dict(
            vocab_size=102400,
            hidden_size=2048,
            intermediate_size=10944,
            moe_intermediate_size=1408,
            num_hidden_layers=27,
            num_attention_heads=16,
            num_key_value_heads=16,
            n_shared_experts=2,
            n_routed_experts=64,
            num_experts_per_tok=6,
            first_k_dense_replace=1,
            kv_lora_rank=512,
            q_lora_rank=None,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
            max_position_embeddings=163840,
            tie_word_embeddings=False,
        ),
    ),
    "qwen3-30b-a3b": (
        "qwen3_moe",
        dict(
            vocab_size=151936,
            hidden_size=2048,
            intermediate_size=6144,
            num_hidden_layers=48,
            num_attention_heads=32,
            num_key_value_heads=4,
            head_dim=128,
            moe_intermediate_size=768,
            num_experts=128,
            num_experts_per_tok=8,
            tie_word_embeddings=False,
        ),
    ),
}

#: ``param_count(build_full(name))``, each checked against the published figure
#: (model card / safetensors metadata) where one is known.
EXPECTED_PARAMS: dict[str, int] = {
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "mistral-7b": 7_241_732_096,
    "qwen2-7b": 7_615_616_512,
    "gpt2": 124_439_808,
    "mixtral-8x7b": 46_702_792_704,
    "qwen1.5-moe-a2.7b": 14_315_784_192,
    "qwen3-30b-a3b": 30_532_122_624,
    # DeepSeek-V3 paper (arXiv:2412.19437): "671B total parameters"; 61 layers, no MTP module,
    # the routers' e_score_correction_bias (58 x 256) is a buffer, not a parameter
    "deepseek-v3": 671_026_404_352,
    "deepseek-v2-lite": 15_706_484_224,  # model card: "15.7B" total
}


# --------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------


def make_config(family: str, **overrides: Any) -> transformers.PretrainedConfig:
    """The config of ``family`` with ``overrides`` applied (keys as in transformers)."""
    known = {**FAMILIES, **MLA_FAMILIES}
    if family not in known:
        raise KeyError(f"unknown family {family!r}; known: {sorted(known)}")
    cls_name, defaults = known[family]
    kwargs = dict(defaults)
    kwargs.update(overrides)
    return getattr(transformers, cls_name)(**kwargs)


def build(
    family: str,
    *,
    device: str | torch.device = "meta",
    dtype: torch.dtype = torch.float32,
    attn_implementation: str = "eager",
    experts_implementation: str | None = None,
    seed: int = 0,
    **overrides: Any,
) -> torch.nn.Module:
    """A small ``family`` causal LM (eval mode) built from its config.

    ``overrides`` go to the config (e.g. ``num_hidden_layers=4``, ``num_key_value_heads=4``).
    ``experts_implementation`` only applies to MoE families; ``None`` picks
    ``"batched_mm"`` on meta and ``"eager"`` elsewhere (both counted exactly, see module doc).
    """
    cfg = make_config(family, **overrides)
    return build_from_config(
        cfg,
        device=device,
        dtype=dtype,
        attn_implementation=attn_implementation,
        experts_implementation=experts_implementation,
        seed=seed,
    )


def build_from_config(
    cfg: transformers.PretrainedConfig,
    *,
    device: str | torch.device = "meta",
    dtype: torch.dtype = torch.float32,
    attn_implementation: str = "eager",
    experts_implementation: str | None = None,
    seed: int = 0,
) -> torch.nn.Module:
    """``AutoModelForCausalLM.from_config(cfg)`` on ``device`` in eval mode.

    ``experts_implementation=None`` (MoE only): ``"batched_mm"`` on meta, else ``"eager"``.
    """
    kwargs: dict[str, Any] = dict(attn_implementation=attn_implementation, dtype=dtype)
    if _is_moe_config(cfg):
        if experts_implementation is None:
            is_meta = torch.device(device).type == "meta"
            experts_implementation = "batched_mm" if is_meta else "eager"
        kwargs["experts_implementation"] = experts_implementation
    torch.manual_seed(seed)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(cfg, **kwargs)
    return model.eval()


def build_full(name: str, *, device: str | torch.device = "meta", **kwargs: Any) -> torch.nn.Module:
    """A full-size published model (by ``FULL_CONFIGS`` name) on ``meta``, for param counts."""
    family, cfg_kwargs = FULL_CONFIGS[name]
    cls_name, _ = {**FAMILIES, **MLA_FAMILIES}[family]
    cfg = getattr(transformers, cls_name)(**cfg_kwargs)
    return build_from_config(cfg, device=device, **kwargs)


def _is_moe_config(cfg: transformers.PretrainedConfig) -> bool:
    return any(getattr(cfg, k, 0) for k in ("num_local_experts", "num_experts"))


def param_count(model: torch.nn.Module) -> int:
    """Number of parameters; tied weights (GPT-2 wte/lm_head) are counted once."""
    return sum(p.numel() for p in model.parameters())


# --------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------


def _device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def _ids(model: torch.nn.Module, batch: int, seq: int, seed: int = 0) -> torch.Tensor:
    dev = _device(model)
    if dev.type == "meta":
        return torch.zeros(batch, seq, dtype=torch.long, device=dev)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), generator=g)
    return ids.to(dev)


def _full_forward(model: torch.nn.Module, ids: torch.Tensor) -> Any:
    # use_cache=True is deliberate: with neither a cache nor a mask, transformers checks
    # position_ids for packed sequences with a data-dependent .item() (fails on meta); an
    # explicit all-ones mask fails too under sdpa (fast_all(mask)).  Filling a fresh
    # DynamicCache costs no counted FLOPs.
    return model(input_ids=ids, use_cache=True)


def _count(fn: Callable[[], Any]) -> tuple[int, Any, FlopCounterMode]:
    counter = FlopCounterMode(display=False)
    with counter:
        out = fn()
    return counter.get_total_flops(), out, counter


def flop_breakdown(counter: FlopCounterMode) -> dict[str, int]:
    """``{"aten.mm": n, "aten.bmm": n, ...}`` totals of a finished counter."""
    return {str(op): int(n) for op, n in counter.get_flop_counts()["Global"].items()}


def count_forward(model: torch.nn.Module, batch: int, seq: int) -> int:
    """FLOPs of one full forward from an empty cache (logits for all ``seq`` positions)."""
    ids = _ids(model, batch, seq)
    with torch.no_grad():
        flops, _, _ = _count(lambda: _full_forward(model, ids))
    return flops


def count_forward_backward(model: torch.nn.Module, batch: int, seq: int) -> tuple[int, int]:
    """(forward, backward) FLOPs; backward is ``logits.float().sum().backward()``.

    Gradients flow to all parameters (embedding included), so every weight matmul has
    both its input- and weight-gradient matmul.  ``.grad`` is cleared afterwards.
    """
    ids = _ids(model, batch, seq)
    model.zero_grad(set_to_none=True)
    fwd, out, _ = _count(lambda: _full_forward(model, ids))
    loss = out.logits.float().sum()
    bwd, _, _ = _count(loss.backward)
    model.zero_grad(set_to_none=True)
    return fwd, bwd


def count_prefill(model: torch.nn.Module, batch: int, seq: int) -> int:
    """FLOPs of a prefill: full forward, LM head on the last position only.

    Uses ``logits_to_keep=1`` (all families here support it; the head then costs
    ``2*B*d*V`` instead of ``2*B*S*d*V``).  The KV cache is built (``use_cache=True``),
    which costs no counted FLOPs.
    """
    ids = _ids(model, batch, seq)
    with torch.no_grad():
        flops, _, _ = _count(lambda: model(input_ids=ids, use_cache=True, logits_to_keep=1))
    return flops


def count_decode_step(model: torch.nn.Module, batch: int, context: int) -> int:
    """FLOPs of one decode step at total context ``context``.

    A prefill of ``context - 1`` tokens fills the KV cache (not counted); then one new
    token per sequence attends to all ``context`` keys (cache + itself).
    """
    if context < 2:
        raise ValueError("context must be >= 2 (prefill needs at least one token)")
    ids = _ids(model, batch, context)
    with torch.no_grad():
        out = model(input_ids=ids[:, :-1], use_cache=True, logits_to_keep=1)
        cache = out.cache
        flops, _, _ = _count(lambda: model(input_ids=ids[:, -1:], cache=cache, use_cache=True))
    return flops


@contextlib.contextmanager
def counting():
    """``with counting() as c: ...`` then ``c.get_total_flops()`` / ``flop_breakdown(c)``."""
    counter = FlopCounterMode(display=False)
    with counter:
        yield counter


# --------------------------------------------------------------------------------------
# Closed forms that FlopCounterMode matches exactly (eager attention or meta; counted experts)
# --------------------------------------------------------------------------------------


def dims(model_or_cfg: Any) -> dict[str, int]:
    """Shape constants of a model/config: L, d, h, kv, dh, V, and per-token matmul
    weights ``P_layer`` (one layer: attention projections + MLP/MoE as seen by one token:
    router ``d*E`` + ``top_k`` experts ``3*d*I`` (+ Qwen2-MoE shared expert ``3*d*I_s`` and
    its gate ``d``); biases excluded) and ``P_head = d*V`` (counted even when tied)."""
    c = getattr(model_or_cfg, "config", model_or_cfg)
    if getattr(c, "kv_lora_rank", None):
        raise NotImplementedError("closed forms here are MHA/GQA; MLA is in tests/test_mla.py")
    if c.model_type == "gpt2":
        d, L, h, V = c.n_embd, c.n_layer, c.n_head, c.vocab_size
        ff = c.n_inner or 4 * d
        p_layer = 4 * d * d + 2 * d * ff  # c_attn 3d*d, c_proj d*d, c_fc d*ff, mlp c_proj ff*d
        return dict(L=L, d=d, h=h, kv=h, dh=d // h, V=V, P_layer=p_layer, P_head=d * V)
    d, L, h, V = c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.vocab_size
    kv = c.num_key_value_heads
    dh = getattr(c, "head_dim", None) or d // h
    p_attn = 2 * d * h * dh + 2 * d * kv * dh
    n_exp = getattr(c, "num_local_experts", None) or getattr(c, "num_experts", None)
    if n_exp:
        if getattr(c, "mlp_only_layers", None) or getattr(c, "decoder_sparse_step", 1) != 1:
            raise NotImplementedError("closed form assumes every layer is MoE")
        i_exp = getattr(c, "moe_intermediate_size", None) or c.intermediate_size
        p_mlp = d * n_exp + c.num_experts_per_tok * 3 * d * i_exp
        if getattr(c, "shared_expert_intermediate_size", None):
            p_mlp += 3 * d * c.shared_expert_intermediate_size + d
    else:
        p_mlp = 3 * d * c.intermediate_size
    return dict(L=L, d=d, h=h, kv=kv, dh=dh, V=V, P_layer=p_attn + p_mlp, P_head=d * V)


def expected_forward(model_or_cfg: Any, batch: int, seq: int) -> int:
    """``2*B*S*(L*P_layer + P_head) + 4*L*B*h*dh*S^2`` (full S x S scores, masked half included)."""
    k = dims(model_or_cfg)
    tokens = batch * seq
    return (
        2 * tokens * (k["L"] * k["P_layer"] + k["P_head"])
        + 4 * k["L"] * batch * k["h"] * k["dh"] * seq * seq
    )


def expected_prefill(model_or_cfg: Any, batch: int, seq: int) -> int:
    """``expected_forward`` minus the LM head on all but the last position."""
    k = dims(model_or_cfg)
    return expected_forward(model_or_cfg, batch, seq) - 2 * batch * (seq - 1) * k["P_head"]


def expected_decode_step(model_or_cfg: Any, batch: int, context: int) -> int:
    """``2*B*(L*P_layer + P_head) + 4*L*B*h*dh*context`` (one query against ``context`` keys)."""
    k = dims(model_or_cfg)
    return (
        2 * batch * (k["L"] * k["P_layer"] + k["P_head"])
        + 4 * k["L"] * batch * k["h"] * k["dh"] * context
    )


def saved_tensor_bytes(module: torch.nn.Module, run: Callable[[], Any]) -> tuple[int, Any]:
    """Bytes autograd keeps for the backward while ``run()`` executes (``saved_tensors_hooks``),
    ``module``'s parameters excluded, each storage counted once; and ``run()``'s result."""
    params = {p.untyped_storage().data_ptr() for p in module.parameters()}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            seen[s.data_ptr()] = max(seen.get(s.data_ptr(), 0), s.nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run()
    return sum(seen.values()), out
