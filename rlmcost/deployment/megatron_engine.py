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
* **Decode.** In the engine's layout (the training one when shared: its TP and EP; a
  dedicated one takes the policy's PP and EP where only its TP is given:
  :func:`megatron_degrees`), with CUDA graphs unless ``cuda_graph_impl: none``
  (``--enforce-eager``); its own measured host time per sequence and step on the step's path
  (``rlmcost.perf.engine_host.MEGATRON_HOST_S_PER_SEQUENCE``: NeMo RL's ``LEGACY`` async
  scheduling), not vLLM's; prefix caching off unless ``enable_prefix_caching``
  (grpo_math_1B.yaml: false).
* **A full pool.** A decoding request that needs a block the pool cannot give is paused
  (it keeps its blocks and skips the step); paused requests keep blocks only within
  ``paused_buffer_size_gb``, which NeMo RL leaves unset (a budget of 0 blocks), so in the same
  step the engine evicts the right-most (most recently added) paused ones until the rest can
  resume: their blocks freed, each request checkpointed as prompt + tokens generated so far
  and put back at the head of the waiting queue, which is admitted from its head, first come
  first served, only while nothing is paused (``DynamicInferenceContext``'s
  ``evict_overflow_paused_requests`` and ``check_availability``; dynamic_engine.py
  ``post_process_requests``, ``schedule_non_chunked_prefill``). That is vLLM's recompute
  preemption (newest first, re-prefilled when readmitted, first come first served):
  rlmcost's paged admission
  (:mod:`rlmcost.placement.paged`), its preemptions the engine's evictions.
* **Hybrid models.** A model with recurrent layers (Gated DeltaNet or Mamba) keeps their
  states in :data:`MAMBA_STATE_SHARE` of the pool, which also caps the requests
  (:func:`hybrid_pool`, :mod:`rlmcost.placement.megatron_pool`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.deployment.kinds import EngineKind
from rlmcost.errors import SpecError
from rlmcost.frameworks.megatron_checks import check_megatron_framework, check_megatron_trainer
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
    "or under context parallelism, a dedicated inference copy, whose --rollout-pp/-ep left "
    "at 1 are the trainer's as NeMo RL merges mcore_generation_config over megatron_cfg, "
    "resharded into at each wake and kept in host memory while training), in a KV pool of "
    "--kv-buffer-gib per GPU (buffer_size_gb, default 10 GiB) that stays on the GPU while the "
    "trainer runs under --no-sleep (kv_cache_management_mode persist, NeMo RL's) and goes to "
    "host memory and back under --sleep (offload); CUDA graphs unless --enforce-eager; a "
    "host time of 1.45 us per sequence and step on the step's path (Megatron-LM PR 6467's "
    "post-sampling chain at batch 256; async_sched_mode LEGACY), not vLLM's 73 us; a full "
    "pool pauses the request it cannot extend and, with paused_buffer_size_gb unset, evicts "
    "the newest paused ones to be re-prefilled from the head of the queue: priced as "
    "vLLM's recompute preemption (the timeline's preemptions are these evictions) "
    "(rlmcost.deployment.megatron_engine)"
)
"""The note an estimate with a Megatron engine carries: what is priced and how."""

MAMBA_STATE_SHARE = 0.1
"""The share of the KV pool Megatron-core gives a hybrid model's recurrent (Mamba or Gated
DeltaNet) states as NeMo RL builds it: ``mamba_memory_ratio = 0.1 + 0.1 *
num_speculative_tokens`` for a hybrid model (nemo_rl/models/generation/megatron/
megatron_worker.py ``_initialize_inference_engine`` at 7ea279abf); ``DynamicInferenceContext``
then holds ``int(buffer * ratio // state_per_request)`` requests' states and pages the KV cache
in ``int(buffer * (1 - ratio))`` bytes (:func:`hybrid_pool`)."""

REQUEST_ROUNDER = 4
"""``DynamicInferenceContext.REQUEST_ROUNDER``: ``max_requests`` is a multiple of it."""


def kv_buffer_bytes(gib: float | None) -> int:
    """The KV pool per GPU: ``int(buffer_size_gb * 1024**3)`` (dynamic_context.py), NeMo RL's
    default when None.

    >>> kv_buffer_bytes(None) == 10 * 2**30
    True
    """
    return int((MEGATRON_KV_BUFFER_GIB if gib is None else gib) * 1024**3)


def max_requests(blocks: int, tp: int, states: int | None = None) -> int:
    """Sequences the engine runs at once when ``max_requests`` is unset: the pool's ``blocks``
    less the dummy one (at most ``states``, the requests whose recurrent states a hybrid
    model's share holds: :func:`hybrid_pool`), rounded down to a multiple of ``tp`` and of
    :data:`REQUEST_ROUNDER` (dynamic_context.py); at least 1 (a pool of fewer blocks fails
    there; rlmcost's paged admission reports it).

    >>> max_requests(1000, 2), max_requests(1000, 2, 130)
    (996, 128)
    """
    n = blocks - 1 if states is None else min(blocks - 1, states)
    return max(1, n // tp * tp // REQUEST_ROUNDER * REQUEST_ROUNDER)


def hybrid_pool(pool: int, state_per_request: int, speculative: int = 0) -> tuple[int, int]:
    """``(kv_bytes, states)`` of a hybrid model's pool of ``pool`` bytes per GPU: the bytes
    paged into KV blocks and the requests whose recurrent states (``state_per_request`` bytes
    each, per GPU) fit, as ``DynamicInferenceContext.__init__`` splits them by
    ``mamba_memory_ratio`` (dynamic_context.py at d98e8a64d, in its float arithmetic;
    NeMo RL's ratio: :data:`MAMBA_STATE_SHARE` plus as much per speculative token).

    >>> hybrid_pool(10 * 2**30, 2**20)  # 1 MiB of state per request in a 10 GiB pool
    (9663676416, 1024)
    """
    ratio = MAMBA_STATE_SHARE + MAMBA_STATE_SHARE * speculative
    states = int(pool * ratio // state_per_request)
    return int(pool * (1.0 - ratio)), states


def megatron_degrees(pp: int, ep: int, train_pp: int, train_ep: int) -> tuple[int, int]:
    """The engine's pipeline and expert degrees: each given one (above 1), else the policy's.
    NeMo RL builds the inference ``megatron_cfg`` as the policy's ``megatron_cfg`` with
    ``mcore_generation_config`` over it (config.py ``merged_inference_megatron_cfg`` at
    7ea279abf), so a key the generation config leaves out, such as
    ``expert_model_parallel_size`` beside a ``tensor_model_parallel_size``, keeps the
    trainer's value: ``--rollout-tp 4`` under ``--ep 8`` decodes at TP 4 and EP 8. A degree of
    1 counts as not given (an inference EP of 1 under a trainer's EP above 1 is not expressed;
    stated in :data:`MEGATRON_NOTE`).

    >>> megatron_degrees(1, 1, 2, 8), megatron_degrees(1, 4, 1, 8)
    ((2, 8), (1, 4))
    """
    return (pp if pp > 1 else train_pp), (ep if ep > 1 else train_ep)


def check_policy(dep: Deployment, generates: bool = True) -> None:
    """SpecError where a Megatron engine would generate from a trainer that shards its
    parameters (``--zero 3``). The engine wraps NeMo RL's Megatron policy: the backend needs
    ``policy.megatron_cfg.enabled`` (the import refuses it otherwise), whose distributed
    optimizer keeps whole parameters per TP/PP rank, and ``prepare_for_generation`` gathers
    them once before decoding ("Incompatible with FSDP2 or Megatron-FSDP for inference",
    megatron_worker.py at 7ea279abf). A ZeRO-3 trainer (NeMo RL's DTensor policy) would be
    priced gathering each layer at every decode step. Also a ZeRO-3 trainer under a framework
    that trains with Megatron-core alone (slime: :func:`~rlmcost.frameworks.preset_model.
    check_megatron_trainer`), whether or not the run generates (DPO trains too), and NeMo
    RL's DTensor policy packing under context parallelism, which it refuses
    (:func:`check_dtensor_packing`); the engine's checks
    only where a task generates (``generates``)."""
    engines = [dep.engine.kind] + [g.engine.kind for g in dep.groups if g.engine is not None]
    layouts = [dep.train] + [g.train for g in dep.groups if g.train is not None]
    if not dep.ideal:  # a trainer its framework cannot shard so; DTensor's packing under CP
        check_megatron_trainer(dep.framework, layouts)
        forwards = [dep.forward] + [g.forward for g in dep.groups]
        check_dtensor_packing(dep.framework, (*layouts, *forwards))
    if not generates:
        return
    if EngineKind.MEGATRON in engines and not dep.ideal:
        check_megatron_framework(dep.framework)
    if EngineKind.MEGATRON in engines and any(t.zero is ZeroStage.OS_G_P for t in layouts):
        raise SpecError("--engine megatron generates on NeMo RL's Megatron policy "
                        "(megatron_cfg.enabled: Megatron-core with its distributed optimizer), "
                        "not on a ZeRO-3 / FSDP2 trainer (its DTensor policy): give --zero 1 "
                        "(or --zero 0), or another engine")  # fmt: skip


def check_dtensor_packing(framework: str | None, layouts: tuple[Any, ...]) -> None:
    """SpecError where NeMo RL's DTensor policy (its ZeRO-3 / FSDP2 trainer; its Megatron
    policy shards the optimizer alone) would pack sequences under context parallelism, which
    both its workers refuse: ``dtensor_policy_worker.py`` (v1) and, for v2,
    ``nemo_rl/models/automodel/setup.py`` @7ea279abf raise "Context parallel is not supported
    for sequence packing". ``layouts``: the run's trainer and forward layouts
    (``TrainLayout``), its one worker's: any of them packed under any one's CP.

    A mixed-precision Megatron policy (``--zero 1``/``0``) alone is allowed."""
    if framework != "nemo-rl":
        return
    given = [t for t in layouts if t is not None]  # one worker: one packing and CP setting
    cp = max((t.cp for t in given), default=1)
    if cp > 1 and any(str(t.zero) == "3" for t in given) and any(t.packing for t in given):
        raise SpecError(
            f"--cp {cp} with --packing: NeMo RL's DTensor (FSDP2, --zero 3) policy refuses "
            "context parallelism with sequence packing (dtensor_policy_worker.py: 'Context "
            "parallel is not supported for sequence packing'); give --no-packing, or --zero 1 "
            "for its Megatron policy, which packs and splits the bins over CP"
        )
