"""A hybrid model's Gated DeltaNet layers in an inference engine's decode step: what they cost
beyond the softmax-attention layer :class:`rlmcost.perf.generation.Engine` prices for every
layer.

A linear-attention layer (Qwen3-Next, Qwen3.5; :attr:`rlmcost.arch.Arch.linear_layers`) keeps
no KV cache: per sequence it holds a recurrent state of H_v d_k x d_v and a conv state of
(K - 1) x (2 H_k d_k + H_v d_v) (:attr:`rlmcost.arch.Arch.linear_state_width`). Each decode
step of an engine (SGLang's hybrid linear-attention backend, vLLM's GDN layer):

* **projections**: in_proj_qkvz d -> 2 H_k d_k + 2 H_v d_v, in_proj_ba d -> 2 H_v, out_proj
  H_v d_v -> d (transformers ``Qwen3NextGatedDeltaNet``), heads split by the engine's TP, in
  place of the attention's q, k, v and output projections: :func:`linear_gemms_delta_s`;
* **the recurrent update**: the sequence's state read and written back once per layer (the
  delta rule's recurrent form, Yang et al. 2024 eq. 10) and the conv state likewise:
  :func:`linear_state_s`, per sequence in flight, whatever its context. The recurrent state is
  fp32 by default in SGLang (radixark/miles docs/models/qwen/qwen3-8.md at bb6f7dbd, section
  5.3: "48 v-heads x 128 x 128 x FP32 x 48 layers ~ 151 MB per in-flight sequence";
  ``--sglang-mamba-ssm-dtype bfloat16`` halves it); vLLM's ``mamba_ssm_cache_dtype`` "auto"
  keeps it in the model's dtype (:mod:`rlmcost.deployment.engine_kv`): the engine's
  ``EngineOptions.state_bytes``, :data:`STATE_BYTES` by default;
* **no KV cache read**: decode attention reads the cache of the softmax layers only
  (:attr:`rlmcost.arch.Arch.n_softmax_layers`; ``Engine._attention_per_context_token``).

In a **prefill** chunk the linear-attention layers run fla's chunked delta rule over the
chunk's tokens (SGLang's and vLLM's GDN prefill call ``chunk_gated_delta_rule``) in place of
the softmax attention over the prompt's pairs, and write no KV cache: the chunk's attention and
KV writes are the softmax layers' (:attr:`~rlmcost.arch.Arch.n_softmax_layers`) and the core is
:func:`linear_prefill_core_s`, the training pass's forward kernels
(:func:`rlmcost.perf.linear_mixer.core_bytes_per_token_head`).

The attention layers' output gate (``attn_output_gate``: q_proj d -> 2 h d_h, the queries and
their sigmoid gate; transformers ``Qwen3NextAttention``) streams its half of q_proj too:
:func:`gate_gemms_s`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.perf.efficiency import Device

STATE_BYTES = 4
"""Bytes per element of the recurrent state where no engine says otherwise: fp32, SGLang's
default ``mamba_ssm_dtype`` as the miles Qwen3.8 page measures it (module docstring); vLLM's
``mamba_ssm_cache_dtype`` "auto" is the model's dtype (:mod:`rlmcost.deployment.engine_kv`)."""


def linear_gemms_delta_s(arch: Arch, shard: Arch, dev: Device, m: int) -> float:
    """GEMM seconds of the linear-attention layers' mixer for ``m`` tokens beyond the
    attention projections priced for them, all such layers, on one TP rank (``shard``:
    :func:`~rlmcost.parallel.shard.tp_shard` of ``arch``)."""
    n = int(arch.n_linear_layers)
    if not n or arch.is_mla:
        return 0.0
    d, q, kv = int(arch.d_model), int(shard.q_width), int(shard.kv_width)
    kd = int(shard.linear_key_heads) * int(arch.linear_key_head_dim)
    vd = int(shard.linear_value_heads) * int(arch.linear_value_head_dim)
    hv = int(shard.linear_value_heads)
    mixer = dev.gemm_s(m, 2 * kd + 2 * vd, d) + dev.gemm_s(m, 2 * hv, d) + dev.gemm_s(m, d, vd)
    return n * (mixer - dev.gemm_s(m, q + 2 * kv, d) - dev.gemm_s(m, d, q))


def gate_gemms_s(arch: Arch, shard: Arch, dev: Device, m: int) -> float:
    """GEMM seconds of the softmax layers' output-gate half of q_proj for ``m`` tokens (0
    without ``attn_output_gate``), on one TP rank."""
    if not arch.attn_output_gate or arch.is_mla:
        return 0.0
    return int(arch.n_softmax_layers) * dev.gemm_s(m, int(shard.q_width), int(arch.d_model))


def linear_prefill_core_s(arch: Arch, shard: Arch, dev: Device, tokens: int, x: int) -> float:
    """Seconds of fla's chunked delta rule over ``tokens`` prefill tokens, all linear-attention
    layers, on one TP rank: the forward kernels' bytes per token and value head
    (:func:`~rlmcost.perf.linear_mixer.core_bytes_per_token_head`, activations of ``x``
    bytes), as :func:`~rlmcost.perf.linear_mixer.linear_mixer_delta` prices the training
    forward's core."""
    from rlmcost.perf.linear_mixer import CORE_FWD_KERNELS, core_bytes_per_token_head

    n = int(arch.n_linear_layers)
    if not n or arch.is_mla:
        return 0.0
    hv, dk, dv = int(shard.linear_value_heads), int(arch.linear_key_head_dim), int(
        arch.linear_value_head_dim)  # fmt: skip
    core = tokens * hv * core_bytes_per_token_head(dk, dv, x)
    return n * dev.elementwise_s(core, CORE_FWD_KERNELS)


def linear_state_s(arch: Arch, shard: Arch, dev: Device, active: int, x: int,
                   state_bytes: int = STATE_BYTES) -> float:
    """Seconds one decode step spends reading and writing back the linear-attention states of
    ``active`` sequences on one TP rank: the recurrent state in ``state_bytes`` (the engine's:
    :func:`rlmcost.deployment.engine_kv.state_dtype`; SGLang's fp32 by default), the conv
    state in ``x`` bytes, each once in and once out per layer, plus one kernel gap per layer.

    >>> 48 * 48 * 128 * 128 * 4  # the miles page's "151 MB per in-flight sequence"
    150994944
    """
    n = int(arch.n_linear_layers)
    if not n:
        return 0.0
    hv, dk, dv = int(shard.linear_value_heads), int(arch.linear_key_head_dim), int(
        arch.linear_value_head_dim)  # fmt: skip
    conv = (int(arch.linear_conv_kernel) - 1) * (
        2 * int(shard.linear_key_heads) * dk + hv * dv)  # fmt: skip
    per_layer = 2 * active * (hv * dk * dv * state_bytes + conv * x)
    return n * dev.elementwise_s(per_layer, 1)
