"""DeepSpeed's inference workspace as DeepSpeed-Chat's Hybrid Engine allocates it.

The Hybrid Engine (deepspeed/runtime/hybrid_engine.py, DeepSpeed at 9408a86, 2023-04-12, the
release the DeepSpeed-Chat blog ran on) generates with DeepSpeed-Inference's fused transformer
layers (``DeepSpeedInferenceConfig(max_out_tokens=hybrid_engine.max_out_tokens,
min_out_tokens=hybrid_engine.max_out_tokens)``; ``HybridEngineConfig.max_out_tokens`` defaults
to 512 in deepspeed/runtime/config.py, and DeepSpeed-Chat's dschat/utils/ds_utils.py
``get_train_ds_config`` does not set it). The first layer's first forward allocates one
workspace (deepspeed/model_implementations/transformers/ds_transformer.py ``forward``:
``allocate_workspace(hidden_size, heads, prompt_len, batch, layers, mp_size, bloom, ...)``)
sized by ``InferenceContext::GenWorkSpace`` (csrc/transformer/inference/includes/
inference_context.h):

- ``activation_size = 10 * heads * effective_head_size * batch`` (head size padded to 32, 64
  or 128; larger heads kept), *not* divided by the TP degree;
- ``temp_size = batch * (heads / mp_size) * max_out_tokens`` (attention scores);
- ``cache_size = layers * batch * (heads * effective_head_size / mp_size) * 2`` (K and V);
- all three per token position, times ``max_seq_len = min(max_out_tokens, what is free)``,
  which must reach ``min_out_tokens`` (= 512 here) or the allocation raises "Workspace can't
  be allocated"; ``external_cache`` (the K, V part left out) is set for BLOOM only.

So a generate() call of ``batch`` sequences needs the whole workspace at 512 positions. The
workspace is ``cudaMalloc``'d outside PyTorch's allocator and freed only by
``release_workspace``, which the engine calls after generate() only under
``hybrid_engine.release_inference_cache`` (hybrid_engine.py ``generate``); DeepSpeed-Chat's
``--release_inference_cache`` is off by default (step3_rlhf_finetuning/main.py at DeepSpeedExamples
e468799f: "Release the memory cache used for inference. This makes generation preparation
slower but might increase e2e throughput by using larger batch size") and no run script sets
it, so the workspace stays allocated through the reference, critic, reward forwards and both
updates.

Light to import (no rlmcost imports).
"""

from __future__ import annotations

from rlmcost.frozen import dataclass

HYBRID_ENGINE_MAX_OUT_TOKENS = 512
"""``HybridEngineConfig.max_out_tokens`` default (deepspeed/runtime/config.py at 9408a86),
also the engine's ``min_out_tokens`` (hybrid_engine.py ``DeepSpeedInferenceConfig``)."""

WORKSPACE_ACTIVATION_SLOTS = 10
"""Hidden-sized activation buffers per token position in ``GenWorkSpace``
(``activation_size = 10 * (num_heads * effective_head_size) * batch_size``)."""


@dataclass(frozen=True)
class Workspace:
    """Bytes of one device's DeepSpeed-Inference workspace, by part (exact ints)."""

    activations: int  # activation_size x positions x element
    scores: int  # temp_size x positions x element
    kv_cache: int  # cache_size x positions x element

    @property
    def total(self) -> int:
        return self.activations + self.scores + self.kv_cache


def effective_head_size(head_size: int) -> int:
    """``GenWorkSpace``'s padding of the head size for flash attention: 32, 64 or 128, a
    larger head as it is.

    >>> [effective_head_size(h) for h in (32, 48, 64, 80, 128, 256)]
    [32, 64, 64, 128, 128, 256]
    """
    if head_size > 128:
        return head_size
    return 32 if head_size <= 32 else (64 if head_size <= 64 else 128)


def inference_workspace(
    layers: int, hidden: int, heads: int, batch: int, tp: int, element_bytes: int,
    max_out_tokens: int = HYBRID_ENGINE_MAX_OUT_TOKENS,
) -> Workspace:  # fmt: skip
    """The workspace ``GenWorkSpace`` allocates on each device for generate() calls of
    ``batch`` sequences (the inputs of the TP group together: hybrid_engine.py all-gathers
    them) at inference TP ``tp`` (``mp_size``), ``max_out_tokens`` positions (module
    docstring).

    >>> w = inference_workspace(64, 9216, 72, 256, 8, 2)  # OPT-66B, 8 x 32 sequences, fp16
    >>> w.activations, w.scores, w.kv_cache
    (24159191040, 1207959552, 38654705664)
    """
    if min(layers, hidden, heads, batch, tp, element_bytes, max_out_tokens) < 1:
        raise ValueError("workspace sizes need positive layers, hidden, heads, batch, tp, "
                         "element bytes and positions")  # fmt: skip
    width = heads * effective_head_size(hidden // heads)
    per_position = element_bytes * max_out_tokens
    return Workspace(
        activations=WORKSPACE_ACTIVATION_SLOTS * width * batch * per_position,
        scores=batch * (heads // tp) * max_out_tokens * per_position,
        kv_cache=layers * batch * (width // tp) * 2 * per_position,
    )
