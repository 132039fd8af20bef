"""Megatron-core's dynamic inference engine as NeMo RL's Megatron generation backend runs it
(``policy.generation.backend: megatron``; ``--engine megatron``).

Sources: NVIDIA-NeMo/RL at 7ea279abf (2026-08-22): nemo_rl/models/generation/megatron/
{config.py, megatron_worker.py, megatron_generation.py}, nemo_rl/weight_sync/
megatron_weight_synchronizer.py, examples/configs/grpo_math_1B.yaml
``policy.generation.mcore_generation_config``; NVIDIA/Megatron-LM at d98e8a64d (2026-08-22):
megatron/core/inference/config.py ``InferenceConfig``, megatron/core/inference/contexts/
dynamic_context.py ``DynamicInferenceContext``.

What rlmcost prices, and how it differs from vLLM:

* **Weights.** Colocated, ``MegatronGenerationMixin._gen_model`` returns the training model
  itself unless ``dedicated_inference_megatron_cfg`` (config.py) finds the inference layout
  (``mcore_generation_config`` tensor/pipeline/expert parallel sizes, ``transformer_impl``)
  other than training's: the engine decodes from the policy's own weights in the training
  layout, no second copy and no refit (``MegatronWeightSynchronizer.sync_weights`` colocated:
  ``offload_before_refit`` then ``prepare_for_generation``, no transfer). With a dedicated
  layout the worker builds a second model and reshards into it on every wake
  (``_reshard_into_inference_model``: ``swap_model_weights`` on the same ranks), offloading it
  to host memory while training runs (``_offload_inference_model``): rlmcost's second layout
  (its copy and the reshard transfer of :mod:`rlmcost.placement.group_transfers`).
* **KV cache.** A pool of ``buffer_size_gb`` GiB per GPU (``int(buffer_size_gb * 1024**3)``
  bytes, dynamic_context.py), in blocks of ``block_size_tokens``, whatever the device's
  memory: no ``gpu_memory_utilization``. It holds at most ``max_requests`` sequences: the
  pool's blocks less one (a dummy block), rounded down to a multiple of TP and of
  ``REQUEST_ROUNDER`` (:func:`max_requests`); ``max_tokens`` is the token budget of one step
  (chunked prefill).
* **Sleep.** ``kv_cache_management_mode`` (config.py): ``persist`` (NeMo RL's default) keeps
  the pool allocated on the GPU while the trainer runs (CUDA graphs stay valid): rlmcost's
  ``sleep`` false, the pool beside training; ``offload`` moves it to host memory and back at
  each suspend/resume: ``sleep`` true.
* **Decode.** In the engine's layout (the training one when shared: its TP and EP), with CUDA
  graphs unless ``cuda_graph_impl: none`` (``--enforce-eager``); no vLLM host time per
  sequence (its scheduler is not vLLM's; no measurement: none priced, stated); prefix caching
  off unless ``enable_prefix_caching`` (grpo_math_1B.yaml: false).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.deployment.kinds import EngineKind
from rlmcost.errors import SpecError
from rlmcost.frameworks.preset_model import check_megatron_framework
from rlmcost.parallel.layout import ZeroStage

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment

MEGATRON_KV_BUFFER_GIB = 10.0
"""NeMo RL's ``mcore_generation_config.buffer_size_gb`` (examples/configs/grpo_math_1B.yaml at
7ea279abf: 10; Megatron-core's own ``InferenceConfig.buffer_size_gb`` default is 20): the KV
pool per GPU in GiB."""

MEGATRON_BLOCK_SIZE_TOKENS = 256
"""``block_size_tokens``: grpo_math_1B.yaml's 256, Megatron-core ``InferenceConfig``'s default."""

MEGATRON_MAX_TOKENS = 16384
"""``max_tokens``, the tokens of one forward step (prefill chunk): grpo_math_1B.yaml's 16384,
``DynamicInferenceContext.DEFAULT_MAX_TOKENS``."""

MEGATRON_NOTE = (
    "--engine megatron (Megatron-core's dynamic engine, NeMo RL's Megatron generation): it "
    "decodes from the policy's own weights in their training layout unless given other "
    "degrees (no second copy, no refit; with --rollout-tp/-pp/-ep other than the trainer's, "
    "or under context parallelism, a dedicated inference copy, "
    "resharded into at each wake and kept in host memory while training), in a KV pool of "
    "--kv-buffer-gib per GPU (buffer_size_gb, default 10 GiB) that stays on the GPU while the "
    "trainer runs under --no-sleep (kv_cache_management_mode persist, NeMo RL's) and goes to "
    "host memory and back under --sleep (offload); CUDA graphs unless --enforce-eager; no "
    "per-sequence host time priced (vLLM's is measured, Megatron-core's is not) "
    "(rlmcost.deployment.megatron_engine)"
)
"""The note an estimate with a Megatron engine carries: what is priced and how."""

REQUEST_ROUNDER = 4
"""``DynamicInferenceContext.REQUEST_ROUNDER``: ``max_requests`` is a multiple of it."""


def kv_buffer_bytes(gib: float | None) -> int:
    """The KV pool per GPU: ``int(buffer_size_gb * 1024**3)`` (dynamic_context.py), NeMo RL's
    default when None.

    >>> kv_buffer_bytes(None) == 10 * 2**30
    True
    """
    return int((MEGATRON_KV_BUFFER_GIB if gib is None else gib) * 1024**3)


def max_requests(blocks: int, tp: int) -> int:
    """Sequences the engine runs at once when ``max_requests`` is unset: the pool's ``blocks``
    less the dummy one, rounded down to a multiple of ``tp`` and of :data:`REQUEST_ROUNDER`
    (dynamic_context.py); at least 1 (a pool of fewer blocks fails there; rlmcost's paged
    admission reports it).

    >>> max_requests(1000, 2)
    996
    """
    n = (blocks - 1) // tp * tp
    return max(1, n // REQUEST_ROUNDER * REQUEST_ROUNDER)


def check_policy(dep: Deployment) -> None:
    """SpecError where a Megatron engine would generate from a trainer that shards its
    parameters (``--zero 3``). The engine wraps NeMo RL's Megatron policy: the backend needs
    ``policy.megatron_cfg.enabled`` (the import refuses it otherwise), whose distributed
    optimizer keeps whole parameters per TP/PP rank, and ``prepare_for_generation`` gathers
    them once before decoding ("Incompatible with FSDP2 or Megatron-FSDP for inference",
    megatron_worker.py at 7ea279abf). A ZeRO-3 trainer (NeMo RL's DTensor policy) would be
    priced gathering each layer at every decode step."""
    engines = [dep.engine.kind] + [g.engine.kind for g in dep.groups if g.engine is not None]
    layouts = [dep.train] + [g.train for g in dep.groups if g.train is not None]
    if EngineKind.MEGATRON in engines and not dep.ideal:
        check_megatron_framework(dep.framework)
    if EngineKind.MEGATRON in engines and any(t.zero is ZeroStage.OS_G_P for t in layouts):
        raise SpecError("--engine megatron generates on NeMo RL's Megatron policy "
                        "(megatron_cfg.enabled: Megatron-core with its distributed optimizer), "
                        "not on a ZeRO-3 / FSDP2 trainer (its DTensor policy): give --zero 1 "
                        "(or --zero 0), or another engine")  # fmt: skip
