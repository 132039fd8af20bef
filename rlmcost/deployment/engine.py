"""The generation engine of a deployment (:class:`EngineSpec`) and vLLM's defaults it takes.

Split from :mod:`rlmcost.deployment.spec`, which re-exports every name here.
"""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
from typing import Literal

from pydantic import (
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from rlmcost.choices import Dtype
from rlmcost.deployment.kinds import EngineKind
from rlmcost.perf.speculative import MTP, MTP_ACCEPTANCE
from rlmcost.specs.limits import MAX_SPECULATIVE_TOKENS
from rlmcost.specs.validation import Checked

_STRICT = ConfigDict(frozen=True, extra="forbid")


ENGINE_COLOCATED_FRACTION = 0.5
"""Default ``gpu_memory_utilization`` of an engine that shares its GPUs with a trainer: verl's
``actor_rollout_ref.rollout.gpu_memory_utilization: 0.5`` (verl trainer config,
ppo_trainer.yaml)."""

ENGINE_DEDICATED_FRACTION = 0.9
"""Default of an engine on GPUs of its own: vLLM's ``gpu_memory_utilization`` default 0.9
(vLLM EngineArgs). An SGLang engine on GPUs of its own takes SGLang's own default instead
(:func:`rlmcost.deployment.sglang_fraction.sglang_default_fraction`: 0.834 on an H100 at
TP 1, 0.817 at TP 8; server_args.py ``_handle_gpu_memory_settings`` @ v0.5.5)."""

ENGINE_MAX_NUM_SEQS = 256
"""vLLM's default ``max_num_seqs`` (sequences in one continuous batch), EngineArgs."""

ENGINE_BLOCK_SIZE = 16
"""vLLM's default KV block size in tokens (EngineArgs ``block_size``)."""

MAX_BLOCK_SIZE = 4096
"""Largest KV block a Run may name, in tokens: a bound on the input, not an engine constant.
vLLM's CacheConfig takes 1..256 (``BlockSize = Literal[1, 8, 16, 32, 64, 128, 256]``,
vllm/config/cache.py) and enlarges the attention blocks of hybrid attention/Mamba models to
the state's page (hundreds of tokens); past a few thousand the paged admission's per-block
lists (rlmcost.placement.paged) would fill memory instead of answering."""


HYBRID_ENGINE_GATHER_LAYERS = 8
"""DeepSpeed-Chat step-3 main.py's ``--tp_gather_partition_size`` default (DeepSpeedExamples
e468799f): "Granularity to bring in layers for TP sharding inside the hybrid engine"."""


_SGLANG_ONLY = (("schedule_policy", "fcfs", "orders SGLang's waiting queue"),
                ("context_length", None, "sizes SGLang's request pool"))
"""Engine settings only SGLang reads: the field, its unset value, what it does there."""


class EngineSpec(Checked):
    """The generation engine: its layout per replica and its memory settings.

    ``gpu_memory_utilization``: the fraction of the device's memory the engine reserves up
    front (weights, activation workspace and the KV-cache pool); None takes the default for
    where it runs (:data:`ENGINE_COLOCATED_FRACTION` beside a trainer,
    :data:`ENGINE_DEDICATED_FRACTION` alone). ``sleep``: while the trainer runs, the engine
    frees its KV cache and offloads its weights (vLLM sleep mode level 1, verl
    ``free_cache_engine``, OpenRLHF ``--vllm_enable_sleep``). ``dtype``: the engine's weights
    and GEMMs (None = the workload's weight dtype); ``fp8`` is vLLM's online FP8 quantization
    (``quantization="fp8"``: weights cast to FP8 E4M3 with a per-tensor scale at load and at
    each refit, activations quantized dynamically per token, W8A8 GEMMs; vLLM docs,
    "Quantization > FP8 W8A8"), as NeMo RL's ``vllm_cfg.precision: fp8`` runs it; the
    embedding, LM head, norms and MoE routers stay 16-bit (``Workload.unquantized_dtype``). The KV
    cache keeps the workload's KV dtype unless ``kv_cache_dtype`` names the engine's own
    (vLLM / SGLang ``kv_cache_dtype``), and the trainer sends its own dtype at refit.
    ``eager``: vLLM's ``enforce_eager`` (verl ``rollout.enforce_eager``, NeMo RL
    ``vllm_cfg.enforce_eager``, OpenRLHF ``--enforce_eager``): decode steps launch every kernel
    from the host instead of replaying a captured CUDA graph, so a step lasts at least their
    launch time per layer (:mod:`rlmcost.perf.eager_launch`: dense and MoE layers apart), as
    HF ``generate`` (which always runs eagerly). ``speculative_tokens``: speculative decoding
    (vLLM ``speculative_config``), each step ``N`` drafts from ``speculative_draft`` verified
    in one forward over N + 1 positions (:mod:`rlmcost.perf.speculative`). ``refit``: how
    the engine takes the trained weights when it has GPUs of its own; ``disk``: the trainer
    saves them to shared storage and every server reloads them (AReaL's
    ``update_weights_from_disk``, :mod:`rlmcost.perf.disk_refit`); None: the framework's refit
    (``--framework``), else a copy over the links. ``prefix_caching``: a prompt group's K
    samples share the prompt's KV blocks (:mod:`rlmcost.placement.prefix_share`).
    """

    model_config = _STRICT

    kind: EngineKind = Field(default=EngineKind.VLLM, description="what generates the "
                             "rollouts (deployment.kinds.EngineKind)")
    tp: int | None = Field(default=None, ge=1, description="TP per replica (None = trainer's)")
    pp: int = Field(default=1, ge=1, description="pipeline stages per replica")
    ep: int = Field(default=1, ge=1, description="expert parallelism per replica")
    gpu_memory_utilization: float | None = Field(
        default=None, description="fraction of device memory reserved, in (0, 1]"
    )
    max_num_seqs: int | None = Field(
        default=None, ge=1, description="sequences one replica runs at once at most (vLLM "
        "max_num_seqs, SGLang --max-running-requests); None = the engine's default: vLLM's "
        "256 (EngineArgs), SGLang's derived from its KV pool (deployment.sglang_limits)"
    )
    schedule_policy: Literal["fcfs", "lpm"] = Field(
        default="fcfs", description="SGLang's --schedule-policy: 'fcfs' (its default) or "
        "'lpm' (longest cached prefix first while at most 128 requests wait; "
        "placement.sglang_admit)"
    )
    context_length: int | None = Field(
        default=None, ge=1, description="SGLang's --context-length, which sizes its request "
        "pool and so its default running cap (deployment.sglang_limits); None = the "
        "checkpoint's context (ModelSpec.max_context)"
    )
    dp_attention: int = Field(
        default=1, ge=1, description="data-parallel attention inside a replica: N attention "
        "ranks of tp / N GPUs each run attention for their own requests with their own KV "
        "pool, the MoE / FFN layers stay over all tp GPUs; SGLang's --enable-dp-attention "
        "--dp-size N (python/sglang/srt/layers/dp_attention.py) or vLLM's data parallelism "
        "with expert parallelism (--data-parallel-size N --enable-expert-parallel: EP = "
        "N x its TP = tp; rlmcost.perf.dp_attention); 1 = off"
    )
    block_size: int = Field(default=ENGINE_BLOCK_SIZE, ge=1, le=MAX_BLOCK_SIZE,
                            description="KV block [tokens]")  # fmt: skip
    max_num_batched_tokens: int | None = Field(
        default=None, ge=1, description="vLLM's token budget per step, the size of the forward "
        "its start-up memory profile runs (rlmcost.deployment.vllm_profile); None = vLLM's "
        "offline default for the device: 16384 on GPUs of >= 70 GiB other than A100, else 8192"
    )
    sleep: bool = Field(default=True, description="free the engine's memory during training")
    sequences_per_call: int | None = Field(
        default=None, ge=1, description="sequences per generate() call the trainer hands a "
        "replica, each call decoded to its last token before the next starts (OpenRLHF before "
        "PR 507, 2024-11-07: one call per micro_rollout_batch_size on a synchronous Ray "
        "actor; verl's DAPO dynamic sampling: one call of gen_batch_size x n per round, "
        "batched continuously inside when larger than the engine's slots); None: the "
        "replica gets its whole share at once"
    )
    dtype: Dtype | None = Field(default=None, description="engine weights and GEMMs: bf16, "
                                "fp16 or fp8 (None = the workload's weight dtype)")
    eager: bool = Field(default=False, description="no CUDA graphs (vLLM enforce_eager): each "
                        "decode step launches its kernels from the host")
    gather_layers: int = Field(
        default=HYBRID_ENGINE_GATHER_LAYERS, ge=1, description="ds-hybrid at inference TP > 1: "
        "decoder layers gathered whole at once to slice their TP shards (DeepSpeed-Chat "
        "--tp_gather_partition_size; hybrid_engine.py generate)"
    )

    prefix_caching: bool | None = Field(
        default=None, description="the engine caches a prompt group's shared prompt and "
        "prefills it once (vLLM enable_prefix_caching, SGLang's radix cache; "
        "placement.prefix_share); None = the engine's default: on in vLLM V1 and SGLang"
    )
    refit: Literal["disk"] | None = Field(
        default=None, description="how a dedicated engine takes the trained weights: 'disk' "
        "(saved to shared storage, reloaded by every server: AReaL's generation-server "
        "manager, which also routes each prompt's samples to one server); None = the "
        "framework's refit, else a copy over the links"
    )
    speculative_tokens: int = Field(
        default=0, ge=0, le=MAX_SPECULATIVE_TOKENS, description="draft tokens per decode "
        "step, verified by the model in one forward over N + 1 positions (vLLM "
        "speculative_config num_speculative_tokens); 0 = no speculative decoding "
        "(perf.speculative)"
    )
    speculative_draft: str = Field(
        default=MTP, description="what drafts: 'mtp' (the checkpoint's multi-token-prediction "
        "layer, vLLM method deepseek_mtp) or a built-in model name (a draft model)"
    )
    speculative_acceptance: float | None = Field(
        default=None, description="probability each draft token is accepted, in [0, 1] "
        "(None = MTP_ACCEPTANCE for mtp; a draft model needs one)"
    )
    kv_buffer_gib: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="--engine megatron: its KV pool "
        "per GPU in GiB "
        "(Megatron-core InferenceConfig.buffer_size_gb, NeMo RL "
        "mcore_generation_config.buffer_size_gb); None = NeMo RL's 10 "
        "(deployment.megatron_engine)"
    )

    weight_format: str | None = Field(
        default=None, description="4-bit weights the engine serves its weight_parts in: "
        "nvfp4, mxfp4, int4-g32 or int4-g128 (W4A16: dequantized in the GEMM kernel, computed "
        "in the activation dtype; the rest in dtype; rlmcost.parallel.packed_weights), or "
        "nvfp4-w4a4 (W4A4: activations quantized to NVFP4, FP4 GEMMs where the part has FP4 "
        "tensor cores, else W4A16; rlmcost.perf.fp4_gemm); None: none"
    )
    weight_parts: Literal["linear", "mlp", "experts"] = Field(
        default="linear", description="which weights take weight_format: linear (every "
        "Linear layer and expert; the embedding, LM head, norms and routers 16-bit), mlp (FFNs "
        "and experts) or experts (routed experts)"
    )
    kv_cache_dtype: Dtype | None = Field(
        default=None, description="what the engine's KV cache stores keys and values in: "
        "bf16, fp16 or fp8 (vLLM / SGLang --kv-cache-dtype fp8, fp8_e4m3, fp8_e5m2: one byte "
        "an element, twice the pool's tokens); the recurrent and conv states of linear-"
        "attention layers keep their own dtypes; None = 'auto', the model's dtype"
    )

    vllm_version: str | None = Field(
        default=None, description="the vLLM release the engine runs, X.Y[.Z] in 0.9.0-0.20.x "
        "(deployment.vllm_release: the start-up profile's sampler, the batch defaults); None = "
        "the framework's pin"
    )

    @field_validator("vllm_version", mode="before")
    @classmethod
    def _vllm_version(cls, v: object) -> object:
        from rlmcost.deployment.vllm_release import check_vllm_version
        from rlmcost.errors import SpecError

        if v is None:
            return v
        try:
            return check_vllm_version(str(v))
        except SpecError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _megatron_settings(self) -> "EngineSpec":
        megatron = self.kind is EngineKind.MEGATRON
        if self.vllm_version is not None and self.kind is not EngineKind.VLLM:
            raise ValueError(f"--vllm-version {self.vllm_version} with engine {self.kind}: it "
                             "names the vLLM release a vLLM engine runs; add --engine vllm or "
                             "drop --vllm-version")  # fmt: skip
        if self.kv_buffer_gib is not None and not megatron:
            raise ValueError(f"--kv-buffer-gib sizes Megatron-core's KV pool; the engine here "
                             f"is {self.kind}: add --engine megatron or drop --kv-buffer-gib")
        if megatron and self.gpu_memory_utilization is not None:
            raise ValueError("--gpu-memory-utilization with --engine megatron: Megatron-core "
                             "reserves no fraction of the device, its KV pool is "
                             "--kv-buffer-gib (buffer_size_gb) per GPU; drop "
                             "--gpu-memory-utilization")  # fmt: skip
        if megatron and self.dtype is not None:
            raise ValueError(f"engine dtype {self.dtype} with --engine megatron: it decodes "
                             "from the policy's own weights; --rollout-dtype applies to vLLM "
                             "and SGLang engines")  # fmt: skip
        return self

    @property
    def kv_block_tokens(self) -> int:
        """Tokens per KV block: ``block_size``, except that a Megatron engine left at vLLM's
        default takes Megatron-core's ``block_size_tokens`` (:data:`~rlmcost.deployment.
        megatron_engine.MEGATRON_BLOCK_SIZE_TOKENS`)."""
        from rlmcost.deployment.megatron_engine import MEGATRON_BLOCK_SIZE_TOKENS

        if self.kind is EngineKind.MEGATRON and self.block_size == ENGINE_BLOCK_SIZE:
            return MEGATRON_BLOCK_SIZE_TOKENS
        return self.block_size

    @model_validator(mode="after")
    def _speculation(self) -> "EngineSpec":
        p = self.speculative_acceptance
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"speculative acceptance {p} must be in [0, 1], e.g. "
                             f"{MTP_ACCEPTANCE} (DeepSeek-V3 MTP, arXiv 2412.19437 §5.4.3)")
        if not self.speculative_tokens:
            return self
        if self.kind.static or self.kind.hybrid_engine:
            raise ValueError(f"speculative decoding with engine {self.kind}: it runs in vLLM "
                             "and SGLang engines; use --engine vllm or sglang")
        if self.speculative_draft != MTP and p is None:
            raise ValueError(f"draft model {self.speculative_draft!r}: give its acceptance "
                             "(--speculative-acceptance P); it depends on the pair")
        return self

    @property
    def max_seqs(self) -> int:
        """``max_num_seqs``, else vLLM's default :data:`ENGINE_MAX_NUM_SEQS` (an SGLang
        engine's default depends on its KV pool: :func:`rlmcost.placement.engine_budget.
        running_cap`)."""
        return self.max_num_seqs if self.max_num_seqs is not None else ENGINE_MAX_NUM_SEQS

    @property
    def shares_prefix(self) -> bool:
        """Whether the engine shares a group's cached prompt: ``prefix_caching``, else its
        default (:data:`~rlmcost.perf.rl_constants.VLLM_PREFIX_CACHING_ENABLED` for vLLM;
        SGLang's radix cache is on unless ``--disable-radix-cache``, server_args.py; off for
        Megatron-core unless given: grpo_math_1B.yaml ``enable_prefix_caching: false``); never
        for static batchers (HF generate, DeepSpeed-Chat's Hybrid Engine)."""
        from rlmcost.perf.rl_constants import VLLM_PREFIX_CACHING_ENABLED

        if self.kind is EngineKind.MEGATRON:  # NeMo RL: enable_prefix_caching false
            return bool(self.prefix_caching)
        if self.kind not in (EngineKind.VLLM, EngineKind.SGLANG):
            return False
        if self.prefix_caching is not None:
            return self.prefix_caching
        return bool(VLLM_PREFIX_CACHING_ENABLED.value) if self.kind is EngineKind.VLLM else True

    @field_validator("tp", "pp", "ep")
    @classmethod
    def _degree_at_most(cls, v: int | None, info: ValidationInfo) -> int | None:
        from rlmcost.specs.limits import MAX_GPUS, check_count

        if v is not None:
            check_count(f"engine {info.field_name} degree", v, MAX_GPUS,
                        f"give a smaller --rollout-{info.field_name}")  # fmt: skip
        return v

    @field_validator("dtype", mode="before")
    @classmethod
    def _engine_dtype(cls, v: object) -> object:
        if v is None:
            return v
        name = str(getattr(v, "value", v)).strip().lower()
        if name not in (Dtype.BF16.value, Dtype.FP16.value, Dtype.FP8.value):
            raise ValueError(f"engine dtype {name}: give bf16, fp16 or fp8 (engines serve 16-bit "
                             "or FP8 weights)")  # fmt: skip
        return name

    @model_validator(mode="after")
    def _sglang_settings(self) -> "EngineSpec":
        for field, unset, what in _SGLANG_ONLY:
            value = getattr(self, field)
            if self.kind is not EngineKind.SGLANG and value != unset:
                flag = "--" + field.replace("_", "-")
                raise ValueError(f"{field.replace('_', ' ')} {value} with engine {self.kind}: "
                                 f"it {what}; add --engine sglang or drop {flag}")  # fmt: skip
        return self

    @model_validator(mode="after")
    def _dp_attention_divides_tp(self) -> "EngineSpec":
        n = self.dp_attention
        if n != 1 and self.kind not in (EngineKind.SGLANG, EngineKind.VLLM):
            raise ValueError(f"dp attention {n} with engine {self.kind}: it is SGLang's "
                             "data-parallel attention or vLLM's data parallelism with expert "
                             "parallelism; add --engine sglang or vllm, or drop --dp-attention")
        if self.tp is not None and self.tp % n:
            raise ValueError(f"dp attention {n} with engine tp {self.tp}: N must divide the "
                             "engine's TP (SGLang's attention TP is tp_size // dp_size)")
        return self

    @model_validator(mode="after")
    def _prefix_caching_needs_an_engine(self) -> "EngineSpec":
        if self.prefix_caching and (self.kind.static or self.kind.hybrid_engine):
            raise ValueError(f"prefix caching with engine {self.kind}: it generates in static "
                             "batches without a shared KV cache; --prefix-caching applies to "
                             "vllm and sglang")  # fmt: skip
        return self

    @field_validator("kv_cache_dtype", mode="before")
    @classmethod
    def _kv_cache_dtype(cls, v: object) -> object:
        from rlmcost.deployment.engine_quant import kv_cache_dtype_name

        return kv_cache_dtype_name(v)

    @field_validator("weight_format", mode="before")
    @classmethod
    def _weight_format(cls, v: object) -> object:
        from rlmcost.deployment.engine_quant import weight_format_name

        return weight_format_name(v)

    @model_validator(mode="after")
    def _quantized_cache_and_weights(self) -> "EngineSpec":
        from rlmcost.deployment.engine_quant import check_quantized

        check_quantized(self)
        return self

    @model_validator(mode="after")
    def _dtype_needs_an_engine(self) -> "EngineSpec":
        if self.dtype is not None and self.kind.static:
            raise ValueError(f"engine dtype {self.dtype} with engine {self.kind}: it generates "
                             "from the training weights; --rollout-dtype applies to vLLM and "
                             "SGLang engines")  # fmt: skip
        return self

    @field_validator("gpu_memory_utilization")
    @classmethod
    def _fraction(cls, v: float | None) -> float | None:
        if v is not None and not (0 < v <= 1):
            raise ValueError(
                f"gpu_memory_utilization={v} must be in (0, 1], e.g. 0.5 (verl) or 0.9 (vLLM)"
            )
        return v
