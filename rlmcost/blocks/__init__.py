"""Table III: the building blocks' work (FLOPs), depth and memory as sympy expressions.

Every function takes an :class:`~rlmcost.arch.Arch` (symbolic like ``CANONICAL`` or numeric
like Llama-3.1-70B) and token counts (symbols or integers) and returns a sympy expression; with
numeric inputs the result is an exact ``sympy.Integer``.

Conventions (seed paper, Table III caption):

* A FLOP is one add or one multiply; a length-x dot product costs 2x. Only matrix products are
  counted (linear layers, attention scores and values, the LM head), exactly as
  ``torch.utils.flop_counter.FlopCounterMode`` counts them: bias adds, norms, softmax,
  activations, rotary embeddings, embedding lookups and the router's top-k are left out
  (together < 1 % of the total for d >= 1024).
* Teacher-forced attention (prefill, assessment, training) is counted ``full`` by default (all
  S x S query-key pairs, the masked half too, which is what PyTorch's counter reports); pass
  ``AttnCounting.CAUSAL`` for the S(S+1)/2 unmasked pairs (fewer in a sliding-window layer).
* A decode step "at context c" feeds one new token that attends to c positions (its own
  included; min(c, W) in a sliding-window layer of window W). A rollout is a prefill of S
  prompt tokens (LM head on the last position only, as inference engines do) plus T decode
  steps at contexts S+1 ... S+T.
* Depths count the GEMM reduction chains: a length-x dot product is one multiply level plus
  ceil(log2 x) add levels. Suppressed (Table III caption): the logarithmic reductions of
  normalization, attention/vocabulary softmax, sampling and distributed collectives.
* Memory functions return elements unless their name ends in ``_bytes``; byte versions name
  the dtype they assume.

Multi-head latent attention (MLA: DeepSeek-V2/V3/R1, arXiv:2405.04434 §2.1, and transformers'
``DeepseekV3Attention``), with d_c = kv_lora_rank, d_cq = q_lora_rank, d_nope, d_rope, d_v:

* queries: ``q_a_proj`` d -> d_cq, RMSNorm, ``q_b_proj`` d_cq -> h (d_nope + d_rope) (or one
  ``q_proj`` d -> h (d_nope + d_rope) when q_lora_rank is None);
* keys/values: ``kv_a_proj_with_mqa`` d -> d_c + d_rope (the latent and one shared RoPE key),
  RMSNorm on the latent, ``kv_b_proj`` d_c -> h (d_nope + d_v); ``o_proj`` h d_v -> d.
* Teacher-forced passes (forward, prefill, training) run the expanded form: every token's
  latent goes through kv_b_proj, then h-head attention with q.k over d_nope + d_rope and
  values of d_v: 2 h (d_nope + d_rope + d_v) FLOPs per query-key pair. Inference engines
  prefill the same way (compute-bound), so both conventions agree there.
* A decode step has two conventions (``choices.MlaDecode``): ``reference`` re-expands all c
  cached latents through kv_b_proj every step (transformers' eager code, what FlopCounterMode
  counts); ``absorbed`` (the default, vLLM/SGLang/FlashMLA) folds W_UK into the query and W_UV
  into the output, so the per-token projections are the same weights and attention runs over
  the cached latent: 2 h (2 d_c + d_rope) FLOPs per key.
* The KV cache holds d_c + d_rope elements per token and layer (``Arch.kv_cache_width``): the
  latent, as engines cache it and as transformers' DynamicCache stores it for DeepSeek-V2/V3.

Sliding-window attention (``Arch.sliding_window`` = W, on all layers or, as in Gemma 2/3, on
some): a query attends to itself and the W - 1 positions before it, and the cache keeps the last
W - 1 positions, as transformers' masks and ``DynamicSlidingWindowLayer`` do; the convention, its
sources and what vLLM keeps are in :mod:`rlmcost.blocks.window`.

Modules: :mod:`~rlmcost.blocks.params` (|M|), :mod:`~rlmcost.blocks.attention` (widths and
per-pair FLOPs), :mod:`~rlmcost.blocks.window` (attended keys, cached positions),
:mod:`~rlmcost.blocks.work`, :mod:`~rlmcost.blocks.depth`, :mod:`~rlmcost.blocks.memory` and
:mod:`~rlmcost.blocks.asymptotic` (Big-O); every public name is importable from here.
"""

from __future__ import annotations

from rlmcost.blocks.asymptotic import _dominates as _dominates  # rlmcost.parallel.asymptotics
from rlmcost.blocks.asymptotic import big_o
from rlmcost.blocks.attention import (
    Expr,
    attention_flops_per_key_absorbed,
    attention_flops_per_pair,
)
from rlmcost.blocks.depth import (
    depth_backward,
    depth_decode_step,
    depth_forward,
    depth_generation,
    depth_layer_backward,
    depth_layer_forward,
    depth_prefill,
    depth_train,
)
from rlmcost.blocks.memory import (
    activation_bytes_per_token_layer,
    memory_activations_bytes,
    memory_activations_paper,
    memory_adam_states,
    memory_adam_states_bytes_rajbhandari2020,
    memory_inference_buffer,
    memory_inference_buffer_bytes,
    memory_kv_cache,
    memory_kv_cache_bytes,
    memory_logits,
    memory_logits_bytes,
    memory_params_bytes,
)
from rlmcost.blocks.params import (
    params,
    params_active_per_token,
    params_attention_per_layer,
    params_embedding,
    params_ffn,
    params_head,
    params_latent_proj,
    params_layer_dense,
    params_layer_moe,
    params_linear_attention_per_layer,
    params_linear_mixer_delta,
    params_mla_attention_per_layer,
    params_moe_per_layer,
    params_norm,
    params_routed_expert,
)
from rlmcost.blocks.window import (
    attended_keys,
    attended_keys_sum,
    attended_pairs,
    cached_positions,
)
from rlmcost.blocks.work import (
    work_attention_per_token,
    work_backward,
    work_backward_per_token,
    work_decode_step,
    work_forward,
    work_forward_per_token,
    work_head_per_token,
    work_linear_per_token,
    work_prefill,
    work_rollout,
    work_train,
)

__all__ = [
    "Expr",
    "activation_bytes_per_token_layer",
    "attended_keys",
    "attended_keys_sum",
    "attended_pairs",
    "attention_flops_per_key_absorbed",
    "attention_flops_per_pair",
    "big_o",
    "cached_positions",
    "depth_backward",
    "depth_decode_step",
    "depth_forward",
    "depth_generation",
    "depth_layer_backward",
    "depth_layer_forward",
    "depth_prefill",
    "depth_train",
    "memory_activations_bytes",
    "memory_activations_paper",
    "memory_adam_states",
    "memory_adam_states_bytes_rajbhandari2020",
    "memory_inference_buffer",
    "memory_inference_buffer_bytes",
    "memory_kv_cache",
    "memory_kv_cache_bytes",
    "memory_logits",
    "memory_logits_bytes",
    "memory_params_bytes",
    "params",
    "params_active_per_token",
    "params_attention_per_layer",
    "params_linear_attention_per_layer",
    "params_linear_mixer_delta",
    "params_embedding",
    "params_ffn",
    "params_latent_proj",
    "params_routed_expert",
    "params_head",
    "params_layer_dense",
    "params_layer_moe",
    "params_mla_attention_per_layer",
    "params_moe_per_layer",
    "params_norm",
    "work_attention_per_token",
    "work_backward",
    "work_backward_per_token",
    "work_decode_step",
    "work_forward",
    "work_forward_per_token",
    "work_head_per_token",
    "work_linear_per_token",
    "work_prefill",
    "work_rollout",
    "work_train",
]
