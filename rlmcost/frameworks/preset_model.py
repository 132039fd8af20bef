"""The shape of a framework preset: which frameworks, the default one, and a preset's
defaults, conventions and behaviour (:mod:`rlmcost.frameworks.presets` holds the data). Light
to import (dataclasses, enums and rlmcost.frozen only): the CLI reads it at start-up."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rlmcost.frameworks.megatron_checks import check_megatron_framework
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    from rlmcost.frameworks.tier_placement import TierPlacement

class Framework(StrEnum):
    """RL post-training frameworks with a preset (values are the CLI spellings)."""

    VERL = "verl"
    OPENRLHF = "openrlhf"
    TRL = "trl"
    NEMO_RL = "nemo-rl"
    SLIME = "slime"


class FrameworkChoice(StrEnum):
    """``--framework`` values: a framework, or ``none`` (rlmcost's bare layout)."""

    VERL = "verl"
    OPENRLHF = "openrlhf"
    TRL = "trl"
    NEMO_RL = "nemo-rl"
    SLIME = "slime"
    NONE = "none"


DEFAULT_FRAMEWORK = Framework.NEMO_RL
"""The default deployment: NeMo RL's defaults, applied when no ``--framework`` is given.

Why NeMo RL: its example configuration gives a value to every knob the step time depends on
(sequence packing with a token budget per micro-batch for training and for the log-prob
forwards, FSDP2, the vLLM engine's TP and memory reservation, colocation with sleep, the
reference kept in host memory, log-prob recomputation, a math verifier as the reward), where
verl leaves its micro-batch sizes unset (``ppo_micro_batch_size_per_gpu: null``); and NVIDIA
publishes step times for its own recipes, so the default can be checked against them.
``--framework none`` gives rlmcost's bare layout (ZeRO-0, micro-batch 1, no token budget, a
reward model); ``--ideal`` the paper's idealized iteration."""


def framework_name(given: str | None, ideal: bool = False) -> str | None:
    """The framework a query follows: ``given``, else :data:`DEFAULT_FRAMEWORK`; None for
    ``none`` and for the paper's idealized iteration. The name in lower case, as
    :func:`~rlmcost.frameworks.presets.get_preset` reads it (a file's ``framework: VERL`` is
    verl's preset and verl's semantics, not a name the framework checks miss)."""
    if ideal or (given is not None and str(given).lower() == "none"):
        return None
    return str(given).lower() if given is not None else DEFAULT_FRAMEWORK.value


OPTION_FIELDS = ("recompute_logprobs", "kl", "rule_reward", "global_batch")
"""Preset fields that are algorithm options (:class:`~rlmcost.algorithms.options.Options`),
not Deployment fields."""

LAYOUT_DEGREES = ("tp", "pp", "cp", "ep")
"""The trainer's parallel degrees (``train.*``): one given by a query lays its trainer out
whole (:data:`LAYOUT_FIELDS`)."""

LAYOUT_FIELDS = (*LAYOUT_DEGREES, "etp", "sp", "pp_split")
"""The trainer's parallel layout (``train.*``), which a size tier sets as one unit: a query
that gives any degree itself (``--tp/--pp/--cp/--ep/--dp``) lays the trainer out whole, the
fields it leaves out at rlmcost's defaults, not the tier's (DeepSeek-V3's tier's PP 16 and EP
16 under ``--tp 8 --dp 8 --gpus 64``)."""


@dataclass(frozen=True)
class Default:
    """One default of a framework: the rlmcost field it sets, the value, the flag, the source.

    ``field``: a dotted Deployment field (``train.zero``, ``engine.gpu_memory_utilization``) or
    one of :data:`OPTION_FIELDS`. ``flag``: the algorithm commands' flag that sets the same by
    hand (what an explicit flag overrides). ``engines``: the engine kinds whose setting it is
    (empty: any); under another ``--engine`` the field keeps rlmcost's default, the engine's
    own (NeMo RL's ``max_num_seqs`` 1024 is vLLM's ``LLM_CLASS`` default, not SGLang's).
    ``layers``: the decoder layers of the example's model, for a value that fits that model
    alone (a pipeline's first/last-stage layers): an actor of other depth keeps the field's
    default (Megatron-core's even split; 0: any actor, :meth:`Preset.for_params`).
    """

    field: str
    value: Any
    flag: str
    source: str
    engines: tuple[str, ...] = ()
    layers: int = 0


@dataclass(frozen=True)
class Behaviour:
    """What a framework does its own way, read by the time model (:mod:`rlmcost.perf.refit`):
    how it refits an engine on the trainer's GPUs (``colocated``) and on GPUs of their own
    (``apart``) — a ``perf.refit.Refit`` value — and whether a Ray single controller
    drives the iteration; ``source``: where the framework does it. ``param_round_trips``:
    under a between-phases parameter offload (``params-idle``), the times per iteration the
    parameter shard goes to the host and back (None: once per phase of the model, as verl
    loads and offloads it around each). ``deepspeed_hf_trainer``: it trains Hugging Face models
    under DeepSpeed ZeRO, DeepSpeed-Chat's trainer stack, whose steps run no faster than that
    stack's measured rate (:mod:`rlmcost.perf.deepspeed_chat`). ``padded_batch``: its driver
    passes each step's batch, padded to the configured maximum prompt and response lengths,
    to every worker call (:mod:`rlmcost.perf.controller_data`). ``megatron_colocated``: the
    colocated refit when the trainer is Megatron-core (a layout with tp, pp or ep > 1; None:
    ``colocated`` either way). ``engine_sleep_level``: the vLLM sleep level between phases (1:
    weights to host and back; 2: discarded, the refit reloads them). ``logprob_head``: the
    log-softmax over fp32 logits its log-prob forwards and loss run, a name of
    ``rlmcost.perf.logprob_head.HEADS`` (``fused``: rlmcost's default). ``reference_swap``: the
    reference's forward runs in the policy's model with the reference's weights swapped in
    through host memory; ``fsdp2_reduce_bytes``: its ZeRO-3 trainer is FSDP2 reducing gradients
    in a dtype of that many bytes (0: not FSDP2); all :mod:`rlmcost.perf.policy_worker`.
    ``hf_trainer``: when its trainer runs a Hugging Face model, with FlashAttention-2 or SDPA
    (``flash2``, :mod:`rlmcost.perf.efficiency`) where a Megatron-core trainer runs cuDNN /
    FlashAttention-3 class attention: ``""`` never, ``"zero3"`` under ZeRO-3 (NeMo RL's DTensor
    worker; its other stages are Megatron-core), ``"fsdp"`` without TP, PP or EP (verl's FSDP
    workers; a layout with any is its Megatron backend, as ``megatron_colocated`` reads it),
    ``"always"``; ``hf_eager``: that trainer runs the model's layers eagerly by default
    (unfused RMSNorm, RoPE, SiLU x up; :mod:`rlmcost.perf.policy_worker`) and
    ``hf_output_cast`` FSDP2's fp32 output casts around them; ``liger_logits``: its ``--logits
    fused`` means Liger's model patch, which fuses those layers too (no eager term then);
    ``hf_source``: the files that pick its attention implementation and kernels.
    ``hf_ckpt_early_stop``: with full recomputation that trainer checkpoints each decoder layer
    under torch's non-reentrant checkpoint (``use_reentrant=False``), whose early stop skips
    the rerun's FFN down projection (:mod:`rlmcost.perf.ckpt_early_stop`, where the sources
    are; ``TrainLayout.recompute_early_stop`` given: the run's own); ``hf_module_ckpt``: that
    checkpoint wraps each layer's attention, MLP and two norms apart, not the layer whole
    (NeMo RL's DTensor worker; :mod:`rlmcost.perf.module_ckpt`); ``peft_zero3_reentrant``:
    except with adapters (``Deployment.lora``) under ZeRO-3, where the trainer forces
    ``use_reentrant=True`` (TRL's GRPOTrainer from PR 4951, 0.28.0: no early stop).
    ``packed_loss_per_sequence``: under sequence packing its trainer calls the loss once per
    packed sequence unless ``TrainLayout.fused_loss`` (NeMo RL ``SequencePackingLossWrapper``;
    :mod:`rlmcost.perf.policy_worker`). ``pp_pads_packed_bins``: under sequence packing with
    pipeline parallelism its Megatron worker pads every packed micro-batch to the rank's largest
    one (NeMo RL; :mod:`rlmcost.perf.nemo_rl_packing`). ``optimizer_offload_pageable``: its
    between-phases optimizer offload copies the states tensor by tensor into pageable host
    memory and back; ``grads_offload_frees``: its between-phases gradient offload frees the
    buffers and re-zeroes them, moving nothing; ``grads_freed_after_update``: its update
    ends by setting every gradient to None (``optimizer.zero_grad()``, ``set_to_none`` by
    default since PyTorch 2.0), so a trained model holds no gradients outside its update
    (:meth:`rlmcost.placement.group_memory.GroupMemory.present`); ``low_memory_train_copies``:
    the ``positions x V`` buffers its low-memory log-probs hold at the head's backward, and
    ``logits_freed_before_layers``: they are gone before the rebuilt layer's backward (both
    :mod:`rlmcost.placement.head_peak`); ``budget_packs_lengths``: its dynamic batching
    fills micro-batches with the sequences' own lengths, not the padded maximum
    (:mod:`rlmcost.placement.packed_lengths`); ``param_offload_pageable``:
    of each round trip of its between-phases parameter offload, how many directions copy
    through pageable host memory (0, 1 or 2), ``megatron_param_offload_pageable`` the same
    for its Megatron-core backend (None: as ``param_offload_pageable``; all
    :mod:`rlmcost.perf.host_offload`).
    ``stream_group_gate``: its streaming rollout (``partial_rollout``) admits whole prompt
    groups and frees a group's place only when the group's last sample returns, and
    ``stream_keeps_kv``: the samples in flight keep their KV caches across a weight update, no
    re-prefill (NeMo RL; :mod:`rlmcost.placement.group_gate`). ``sharded_per_rank``: its
    driver serializes each call's data-parallel shard, padded to the batch's longest sequence,
    once per rank of the shard and fetches every rank's copy of a forward's results (NeMo RL's
    ``run_all_workers_sharded_data``; :mod:`rlmcost.perf.nemo_rl_dispatch`).
    ``stream_version_gate``: a batch's prompt groups start only once the weights its target
    step allows are in the engines (NeMo RL's target weight versions;
    :mod:`rlmcost.placement.version_gate`). ``env_workers``: its driver waits after
    generation for an environment that scores every response on that many verify actors
    (NeMo RL's math environment, ``env.math.num_workers``; :mod:`rlmcost.perf.nemo_rl_env`;
    0: no environment step priced). ``megatron_overlap_p2p``: its Megatron trainer runs the
    interleaved schedule with ``overlap_p2p_comm`` (:mod:`rlmcost.perf.megatron_pipe`): verl sets
    it with VPP > 1 (verl/models/mcore/config_converter.py line 49 @b178a3cd), slime runs
    Megatron-LM's arguments (on by default); NeMo RL builds Megatron-Bridge's ``ConfigContainer``
    without a ``comm_overlap`` (nemo_rl/models/megatron/setup.py @7ea279abf), which leaves
    Megatron-core's ``ModelParallelConfig.overlap_p2p_comm = False``.
    ``linear_mixer_tp_replicated``: its Megatron trainer runs a hybrid model's Gated DeltaNet
    whole on every TP rank (:mod:`rlmcost.perf.linear_mixer`). ``host_adam``: the CPU Adam
    of its Hugging Face trainer's optimizer offload, ``deepspeed`` (DeepSpeedCPUAdam: DeepSpeed's
    ZeRO-Offload) or ``torch`` (``torch.optim.AdamW`` on CPU tensors with neither ``foreach``
    nor ``fused``: the for-loop); a Megatron-core trainer's is torch's fused AdamW whatever this
    says (:func:`rlmcost.placement.pass_options.host_adam_impl`,
    :func:`rlmcost.perf.data_parallel.cpu_adam_s`). ``host_adam_threads``: the OpenMP threads
    each training rank's process runs that CPU Adam on (0: not limited, the host's bandwidth
    bounds it): a Ray actor gets ``OMP_NUM_THREADS = max(floor(num_cpus), 1)`` unless the
    variable is already set (ray/_private/utils.py ``set_omp_num_threads_if_unset``, called
    by _raylet.pyx ``execute_task`` before it loads the actor's class); torch and
    DeepSpeedCPUAdam's ``omp parallel for`` follow it. ``megatron_grad_reduce``: the dtype of
    its Megatron-core trainer's gradient buffer by default (``fp32``: ``grad_reduce_in_fp32``;
    ``param``: the parameters' dtype), the importers reading the run's own key
    (:mod:`rlmcost.placement.grad_buffer`, where the sources are). ``phase_offload_colocated``:
    its between-phases offloads (``*-idle``) run only on a trainer whose generation is colocated
    (NeMo RL: ``offload_before_refit`` / ``offload_after_refit`` under ``colocated_inference``,
    ``nemo_rl/algorithms/grpo.py`` ``refit_policy_generation`` @7ea279abf); a group without an
    engine keeps its states (:meth:`rlmcost.placement.group_own.GroupTasks.train_offload`)."""

    colocated: str
    apart: str
    ray_controller: bool
    source: str
    param_round_trips: int | None = None
    deepspeed_hf_trainer: bool = False
    padded_batch: bool = False
    megatron_colocated: str | None = None
    engine_sleep_level: int = 1
    logprob_head: str = "fused"
    reference_swap: bool = False
    fsdp2_reduce_bytes: int = 0
    hf_trainer: str = ""
    hf_eager: bool = False
    hf_output_cast: bool = False
    liger_logits: bool = False
    hf_source: str = ""
    hf_ckpt_early_stop: bool = False
    hf_module_ckpt: bool = False
    peft_zero3_reentrant: bool = False
    packed_loss_per_sequence: bool = False
    pp_pads_packed_bins: bool = False
    optimizer_offload_pageable: bool = False
    grads_offload_frees: bool = False
    grads_freed_after_update: bool = False
    low_memory_train_copies: int = 2
    logits_freed_before_layers: bool = False
    budget_packs_lengths: bool = False
    param_offload_pageable: int = 0
    megatron_param_offload_pageable: int | None = None
    stream_group_gate: bool = False
    stream_keeps_kv: bool = False
    sharded_per_rank: bool = False
    stream_version_gate: bool = False
    env_workers: int = 0
    megatron_overlap_p2p: bool = True
    linear_mixer_tp_replicated: bool = False
    host_adam: str = "deepspeed"
    host_adam_threads: int = 0
    megatron_grad_reduce: str = "param"
    phase_offload_colocated: bool = False
    teacher_policy_stored: bool = False


@dataclass(frozen=True)
class Sized:
    """The defaults of a framework's example for larger models, for an actor of at least
    ``min_params`` parameters (the example nearest the actor in size): each replaces the
    preset's default of the same field, or adds the field where the preset has none (verl's
    token budget per GPU, which its small-model defaults leave unset). ``example``: that
    example, in words. ``dense_only``: the example trains a dense model, whose layout (a
    Megatron TP that must divide the KV heads, no expert parallelism) a mixture-of-experts
    actor does not take: it keeps the preset's defaults; ``moe_only``, its mirror: the example
    trains a mixture of experts (expert parallelism), which a dense actor does not take.
    ``placement``: the example's device groups (a :class:`~rlmcost.frameworks.tier_placement.
    TierPlacement`; None: co-located), which a Run naming no placement nor groups takes,
    scaled to its GPUs (:mod:`rlmcost.run.tier_groups`). ``models``: the ``model_type``
    values of the example's own model, for an example that trains this very model (family):
    an actor of that type and of ``min_params`` up to ``max_params`` (0: any) takes it before
    every size tier (:meth:`Preset.tier`). ``fitted``: what
    :func:`~rlmcost.frameworks.preset_fit.fit_tier` changed for the actor, in words."""

    min_params: int
    defaults: tuple[Default, ...]
    example: str
    dense_only: bool = False
    placement: TierPlacement | None = None
    moe_only: bool = False
    summary: str = ""  # the preset's summary under this tier ("": the preset's own)
    models: tuple[str, ...] = ()
    max_params: int = 0
    fitted: tuple[str, ...] = ()

    def followed_by(self, dep: Any, layers: int | None = None) -> bool:
        """Whether the Deployment ``dep`` has every value of this tier that applies to its
        engine (and to an actor of ``layers`` decoder layers: ``Default.layers``): a run
        taken at the framework's own defaults (``--no-sized-defaults``, `rlmcost import`) or
        flagged otherwise does not follow the tier's example; a field its placement's
        co-located fallback sets may hold that value instead (``TierPlacement.colocated``)."""
        kind = str(dep.engine.kind)
        alt = dict(self.placement.colocated) if self.placement is not None else {}
        for d in self.defaults:
            if d.field in OPTION_FIELDS or (d.engines and kind not in d.engines) or \
                    (d.layers and d.layers != layers):  # fmt: skip
                continue
            node = dep
            for part in d.field.split("."):
                node = getattr(node, part, None)
            value = tuple(str(v) for v in node) if isinstance(node, tuple | list) else node
            want = tuple(d.value) if isinstance(d.value, tuple | list) else d.value
            if str(value) != str(want) and str(value) != str(alt.get(d.field)):
                return False
        return True


@dataclass(frozen=True)
class Preset:
    """A framework's defaults (:class:`Default`) and conventions (notes); ``sized``: the
    defaults its examples for larger models change, by ascending ``min_params``
    (:meth:`for_params`)."""

    framework: Framework
    summary: str
    defaults: tuple[Default, ...]
    conventions: tuple[str, ...]
    behaviour: Behaviour | None = None
    sized: tuple[Sized, ...] = ()

    def for_params(self, params: int | None, moe: bool = False, layers: int | None = None,
                   actor: Any = None) -> Preset:  # fmt: skip
        """The preset for an actor of ``params`` parameters (None: unknown, the preset as
        it is): the defaults of its :meth:`tier` in place of the same fields' (a tier names
        every field it changes from the preset's own), and after them the tier's fields the
        preset does not set. ``moe``: the actor is a mixture of experts (a ``dense_only`` tier
        passes it by, a ``moe_only`` one takes it alone); ``layers``: its decoder layers (a
        tier's default for another depth, ``Default.layers``, is left out); ``actor``: its
        ModelSpec (None: the size tiers alone, as they are), :meth:`tier`."""
        return self.sized_by(self.tier(params, moe, actor), layers)

    def sized_by(self, s: Sized | None, layers: int | None = None) -> Preset:
        """The preset under the tier ``s`` (None: as it is) for an actor of ``layers``
        decoder layers (:meth:`for_params`)."""
        if s is None:
            return self
        takes = [d for d in s.defaults if not d.layers or d.layers == layers]
        by_field = {d.field: d for d in takes}
        own = {d.field for d in self.defaults}
        defaults = (*(by_field.get(d.field, d) for d in self.defaults),
                    *(d for d in takes if d.field not in own))  # fmt: skip
        summary = f"{s.summary or self.summary} ({s.example})"
        return replace(self, defaults=defaults, summary=summary, sized=())

    def tier(self, params: int | None, moe: bool = False, actor: Any = None) -> Sized | None:
        """The tier of an actor of ``params`` parameters (None: none, or the size unknown):
        an example for the actor's own model where one matches (``Sized.models``: the
        ``actor`` ModelSpec's ``model_type`` and size), else the largest :attr:`sized` tier
        the size reaches; ``moe``: a mixture-of-experts actor, which no ``dense_only`` tier
        takes (and a dense one no ``moe_only`` tier). Given the ``actor``, the tier's layout
        fitted to it (:func:`~rlmcost.frameworks.preset_fit.fit_tier`)."""
        kind = getattr(actor, "model_type", None)
        tiers = [s for s in self.sized if params is not None and params >= s.min_params
                 and not (s.dense_only if moe else s.moe_only)
                 and (not s.max_params or params < s.max_params)]  # fmt: skip
        mine = [s for s in tiers if kind is not None and kind in s.models]
        tiers = mine or [s for s in tiers if not s.models]
        found = max(tiers, key=lambda t: t.min_params) if tiers else None
        if found is None or actor is None:
            return found
        from rlmcost.frameworks.preset_fit import fit_tier

        return fit_tier(found, actor)

    def deployment_data(self, engine: str | None = None) -> dict[str, Any]:
        """The Deployment fields the preset sets, nested (``{"engine": {"sleep": True}}``),
        with ``framework`` naming it; ``engine``: the engine kind the run uses (None: the
        preset's, else vLLM), which drops the defaults of other engines (``Default.engines``).
        A ``forward`` layout the preset gives by its batching starts from its trainer layout
        (without offload), as a framework's forwards do. ``--engine megatron`` under a framework
        that does not generate with it is a SpecError (:func:`check_megatron_framework`)."""
        if engine == "megatron":  # before the preset's vLLM sizes meet that engine's checks
            check_megatron_framework(self.framework.value)
        data: dict[str, Any] = {"framework": self.framework.value}
        kind = engine or next((str(d.value) for d in self.defaults if d.field == "engine.kind"),
                              "vllm")  # fmt: skip
        for d in self.defaults:
            if d.field in OPTION_FIELDS or (d.engines and kind not in d.engines):
                continue
            *path, last = d.field.split(".")
            node = data
            for part in path:
                node = node.setdefault(part, {})
            node[last] = list(d.value) if isinstance(d.value, tuple) else d.value
        return data

    def option(self, name: str) -> Any:
        """The preset's value of an algorithm option (None: the framework leaves it default)."""
        return next((d.value for d in self.defaults if d.field == name), None)

    def flags_line(self, applied: dict[str, Any], algorithm: str,
                   engine: str | None = None) -> str:  # fmt: skip
        """``as flags: ...`` (:meth:`flags` under ``applied``, for the run's ``engine``) and the
        option defaults the preset leaves out for ``algorithm`` (e.g. ``--reward rule`` for
        PPO)."""
        left = [d.flag for d in self.defaults if d.field in applied and d.value != applied[d.field]]
        tail = f"; not applied to {algorithm}: {' '.join(left)}" if left else ""
        return f"as flags: {self.flags(applied, engine)}{tail}"

    def flags(self, applied: dict[str, Any] | None = None, engine: str | None = None) -> str:
        """The preset written as the flags that set the same by hand (a flag that sets several
        fields, such as ``--packing`` for training and the forwards, once). ``applied``: the
        algorithm options the preset implies for one algorithm
        (:func:`rlmcost.frameworks.presets.preset_options`); an option default it does not
        apply (PPO keeps its reward model) is left out, and so is a default of an engine other
        than ``engine`` (None: the preset's), of which, as :meth:`deployment_data` merges them,
        an engine's own default of a field stands for the general one (``--no-sleep`` for
        Megatron-core)."""
        kind = engine or next((str(d.value) for d in self.defaults if d.field == "engine.kind"),
                              "vllm")  # fmt: skip
        use = [d for d in self.defaults if not d.engines or kind in d.engines]
        last = {d.field: d for d in use}  # the later default of a field wins, as in the data
        return " ".join(dict.fromkeys(d.flag for d in use if last[d.field] is d
                                      and (applied is None or d.field not in OPTION_FIELDS
                                           or applied.get(d.field) == d.value)))  # fmt: skip
