"""What an inference engine's KV cache holds for the layers that are not plain full attention:
sliding-window layers and the recurrent state of Gated DeltaNet layers.

**Sliding-window layers** (``Arch.sliding_window``; Mistral-7B-v0.1, Phi-3, Gemma 2/3):

* vLLM (V1): the hybrid KV cache manager (vllm-project/vllm#17996, mid-2025) gives each kind
  of layer its own group (``HybridKVCacheCoordinator``, vllm/v1/core/kv_cache_coordinator.py)
  and the sliding layers' ``SlidingWindowManager`` (vllm/v1/core/
  single_type_kv_cache_manager.py, ``remove_skipped_blocks``) frees the blocks wholly outside
  the window as a request decodes: a sliding layer holds its last W - 1 positions (plus up
  to one partly skipped block; rlmcost counts per token, as
  ``blocks.window.cached_positions`` does). On by default
  (``SchedulerConfig.disable_hybrid_kv_cache_manager`` False; vLLM turns it off with a KV
  transfer connector, which no modelled framework sets); a model whose layers all slide
  (Mistral-7B-v0.1) had the window manager in V1 since vllm-project/vllm#14097 (v0.8).
  Assumption: the pool admits by one sequence's bytes at its final context, per token
  (``GroupMemory.engine_pool``), as for the Gated DeltaNet state: a sequence still shorter
  than that context is counted at its average, less than its sliding layers hold then.
* SGLang: the SWA pool (``SWAKVPool``, python/sglang/srt/mem_cache/swa_memory_pool.py, the
  full and sliding layers in pools of their own, ``--disable-hybrid-swa-memory`` off by
  default) serves only the architectures ``is_hybrid_swa_model`` lists
  (python/sglang/srt/configs/model_config.py: Llama 4, GPT-OSS, MiMo-V2, Step-3.5, Gemma
  4); every other model, Gemma 2/3, Mistral and Phi-3 of rlmcost's registry among them, gets
  the one ``MHATokenToKVPool`` whose every layer holds every token: the whole context.
  The SWA pool is sized with the full one, not per request: ``HybridSWAPoolConfigurator``
  (python/sglang/srt/model_executor/pool_configurator.py) charges each full-pool token the
  full layers' KV plus ``swa_full_tokens_ratio`` (0.8, server_args.py) times the sliding
  layers' KV, and the scheduler admits by the full pool's tokens; a request's sliding layers
  are evicted to its window, so with responses longer than the window the full pool binds.
  rlmcost counts a sliding layer of GPT-OSS (``model_type`` ``gpt_oss``, the one registry
  type on that list: :data:`SGLANG_HYBRID_SWA_TYPES`) at 0.8 of the context's positions,
  rounded up (``Workload.kv_swa_pool``; :func:`swa_pool`): 32.4 layers' KV per context token
  for GPT-OSS 120B's 18 full and 18 sliding layers, not 36. (``SWAChunkCapPoolConfigurator``,
  which sizes the SWA pool from ``--max-running-requests`` with the radix cache off, is not
  modelled: no modelled framework sets both.)
* Hugging Face ``generate`` and DeepSpeed-Chat's Hybrid Engine: counted at the whole context
  as before (the padded static batch's cache; transformers' ``DynamicSlidingWindowLayer``
  trims it only in recent versions).

**The Gated DeltaNet recurrent state** (H_v d_k d_v per layer and sequence):

* vLLM: ``CacheConfig.mamba_ssm_cache_dtype`` "auto" (vllm/config/cache.py, v0.10.2 on,
  when Qwen3-Next arrived) falls back to ``mamba_cache_dtype`` "auto", the model's dtype
  (``MambaStateDtypeCalculator.gated_delta_net_state_dtype``,
  vllm/model_executor/layers/mamba/mamba_utils.py): bf16 for a bf16 checkpoint;
* SGLang: ``ServerArgs.mamba_ssm_dtype`` "float32" (python/sglang/srt/server_args.py), the
  temporal state of its ``MambaPool`` (radixark/miles docs/models/qwen/qwen3-8.md at bb6f7dbd,
  section 5.3, measures it: "48 v-heads x 128 x 128 x FP32 x 48 layers ~ 151 MB");
* Hugging Face ``generate`` (and DeepSpeed's, on the same modelling code): fp32, the final
  state fla's ``chunk_gated_delta_rule`` / ``fused_recurrent_gated_delta_rule`` return (and
  transformers' torch fallback computes in float32), which ``Qwen3NextDynamicCache`` stores
  as it comes (transformers models/qwen3_next/modeling_qwen3_next.py);
* the conv state stays in the model's dtype in all of them (vLLM ``mamba_cache_dtype``,
  SGLang's conv dtype), counted in the KV dtype as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rlmcost.choices import Dtype
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import MAMBA_STATE_SHARE
from rlmcost.perf.engine_step import window_read

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.specs.workload import Workload

SGLANG_MAMBA_SSM_DTYPE = Dtype.FP32
"""SGLang's ``--mamba-ssm-dtype`` default (python/sglang/srt/server_args.py ``mamba_ssm_dtype:
str = "float32"``)."""


SGLANG_HYBRID_SWA_TYPES = frozenset({"gpt_oss"})
"""Registry ``model_type`` values whose architecture SGLang's ``is_hybrid_swa_model`` lists
(``GptOssForCausalLM``; python/sglang/srt/configs/model_config.py): its SWA pool serves them."""


def swa_pool(kind: EngineKind, model_type: str) -> bool:
    """SGLang keeps the model's sliding layers in its hybrid SWA pool (module docstring).

    >>> swa_pool(EngineKind.SGLANG, "gpt_oss"), swa_pool(EngineKind.SGLANG, "gemma2")
    (True, False)
    """
    return EngineKind(kind) is EngineKind.SGLANG and model_type in SGLANG_HYBRID_SWA_TYPES


def keeps_window(kind: EngineKind) -> bool:
    """The engine's KV cache holds a sliding-window layer's window only (module docstring):
    vLLM's hybrid KV cache manager; SGLang (for the models outside its hybrid-SWA list),
    Hugging Face and DeepSpeed hold the whole context."""
    return EngineKind(kind) is EngineKind.VLLM


def state_dtype(kind: EngineKind, model_dtype: Dtype, mamba: bool = False) -> Dtype:
    """The dtype of a Gated DeltaNet layer's recurrent state in ``kind``'s cache (module
    docstring): vLLM's "auto", the model's dtype; Megatron-core's the model's too
    (``MambaInferenceStateConfig.from_model``: ``ssm_states_dtype = model.config.params_dtype``
    unless given, megatron/core/inference/config.py at d98e8a64d; NeMo RL passes one only with
    ``mcore_generation_config.mamba_inference_ssm_states_dtype``, which grpo_math_1B.yaml
    leaves out); fp32 in SGLang and Hugging Face.

    A Mamba-2 model's (``mamba``, Nemotron-H) in vLLM: fp32, ``NemotronHForCausalLMConfig.
    update_mamba_ssm_cache_dtype`` (vllm/model_executor/models/config.py: "auto" becomes the
    HF config's ``mamba_ssm_cache_dtype``, float32 in the Nemotron configs and by default).

    >>> [str(state_dtype(k, Dtype.BF16)) for k in (EngineKind.SGLANG, EngineKind.VLLM)]
    ['fp32', 'bf16']
    """
    if mamba and EngineKind(kind) is EngineKind.VLLM:
        return Dtype.FP32
    own = (EngineKind.VLLM, EngineKind.MEGATRON)
    return model_dtype if EngineKind(kind) in own else SGLANG_MAMBA_SSM_DTYPE



def reads_window(kind: EngineKind, arch: Arch) -> bool:
    """The engine's decode attention reads a sliding layer's window only: vLLM's attention
    backends take every layer's window (``window_size`` in vllm/v1/attention/backends/
    flash_attn.py); SGLang's only where the model file hands RadixAttention a
    ``sliding_window_size`` (python/sglang/srt/models/gemma2.py, gemma3_causal.py: the
    models that interleave sliding and full layers), not llama.py, which serves Mistral and
    Phi-3 there and attends over the whole cache; Hugging Face and DeepSpeed's ``generate``
    are counted at the whole cache, as before."""
    kind = EngineKind(kind)
    if kind is EngineKind.SGLANG:
        return bool(arch.full_attention_layers)
    return kind is EngineKind.VLLM


def cache_options(kind: EngineKind, arch: Arch, model_dtype: Dtype, ideal: bool,
                  lengths: Callable[[], tuple[int, int]]) -> dict[str, Any]:  # fmt: skip
    """``EngineOptions`` fields for ``kind``'s cache (:mod:`rlmcost.perf.engine_step`), none
    for the ``ideal`` deployment or a model of full-attention layers only: a Gated DeltaNet
    state's bytes (:func:`state_dtype`) and, with a window the engine reads only, the sliding
    layers' read per context token over a rollout from ``prompt`` to ``context`` tokens
    (``lengths()``; :func:`~rlmcost.perf.engine_step.window_read`)."""
    out: dict[str, Any] = {}
    if arch.index_topk is not None:  # DSA: every deployment's sparse decode reads the top k
        prompt, context = lengths()  # (perf.decode_kernels.dsa_decode_per_token)
        out["window_read"] = window_read(int(arch.index_topk), prompt, max(context - prompt, 1))
    if ideal:
        return out
    if arch.linear_layers:
        out["state_bytes"] = state_dtype(kind, model_dtype, bool(arch.linear_mamba)).bytes
    if arch.sliding_window is not None and reads_window(kind, arch):
        prompt, context = lengths()
        out["window_read"] = window_read(int(arch.sliding_window), prompt,
                                         max(context - prompt, 1))  # fmt: skip
    return out


def read_workload(kind: EngineKind, arch: Arch, workload: Workload, ideal: bool) -> Workload:
    """``workload`` with the sliding layers at their window where the engine's decode reads
    only the window (:func:`reads_window`): the KV bytes per context token a decode step
    reads, for the rollout's roofline (``DecodeCost.kv_bytes_per_token``). SGLang holds a
    Gemma's whole context but reads its window: the bound counts the reads (averaged at the
    final context, at most what the decode reads, so still a lower bound). Unchanged for the
    ``ideal`` deployment."""
    if ideal or workload.kv_window or arch.sliding_window is None or not reads_window(kind, arch):
        return workload
    return workload.model_copy(update={"kv_window": True})


def engine_notes(kinds: set[EngineKind], archs: list[Arch], ideal: bool) -> list[str]:
    """What the generating engines' caches do with the models' sliding windows and Gated
    DeltaNet states (this module), one note each, and what a Megatron engine is priced as
    (:data:`~rlmcost.deployment.megatron_engine.MEGATRON_NOTE`); none for the ideal
    deployment."""
    if ideal:
        return []
    names = "/".join(sorted(EngineKind(k).value for k in kinds))
    out = []
    if any(a.sliding_window is not None for a in archs):
        out.append(
            f"sliding-window layers on {names}: vLLM holds their last W - 1 positions (its hybrid "
            "KV cache manager frees the blocks outside the window) and reads only those; SGLang "
            "and Hugging Face hold the whole context, SGLang reads the window where sliding and "
            "full layers interleave (its Gemma 2/3 and GPT-OSS model files pass the window; "
            "OLMo 3 priced alike, unchecked) and holds GPT-OSS's in its SWA pool at 0.8 of the "
            "full layers' slots "
            "(rlmcost.deployment.engine_kv)"
        )
    if any(a.linear_layers and a.linear_mamba for a in archs):
        out.append(
            f"Mamba-2 SSM state on {names}: vLLM in fp32 (NemotronHForCausalLMConfig sets "
            "mamba_ssm_cache_dtype auto to the config's float32), Megatron-core in the model's "
            f"dtype (params_dtype) and in {MAMBA_STATE_SHARE:.0%} of its KV pool (NeMo RL's "
            "mamba_memory_ratio), SGLang and Hugging Face in fp32; the conv state in the KV "
            "dtype (rlmcost.deployment.engine_kv)"
        )
    if any(a.linear_layers and not a.linear_mamba for a in archs):
        out.append(
            f"Gated DeltaNet recurrent state on {names}: vLLM in the model's dtype "
            "(mamba_ssm_cache_dtype auto), Megatron-core in it too (params_dtype) and in "
            f"{MAMBA_STATE_SHARE:.0%} of its KV pool (NeMo RL's mamba_memory_ratio), SGLang in "
            "fp32 (--mamba-ssm-dtype float32), Hugging Face in fp32; the conv state in the KV "
            "dtype (rlmcost.deployment.engine_kv)"
        )
    if EngineKind.MEGATRON in kinds:
        from rlmcost.deployment.megatron_engine import MEGATRON_NOTE

        out.append(MEGATRON_NOTE)
    return out
