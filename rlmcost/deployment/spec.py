"""The typed description of a deployment: what a user launches (DESIGN.md §6b).

A :class:`Deployment` says, for the run as a whole and optionally per device group, how each
invocation kind runs:

* ``train`` (a :class:`TrainLayout`): the trainer's layout (FSDP/ZeRO or Megatron
  TP/PP/CP/EP/SP), checkpointing, micro-batch or per-GPU token budget (dynamic batching), CPU
  offload of optimizer states, parameters or gradients; ``forward`` the forwards' layout
  over the trainer's (without offload) field by field (``given.forward_over_train``);
* ``engine`` (an :class:`EngineSpec`): the inference engine of generation (vLLM, SGLang) with
  its own TP/PP per replica, its memory reservation (``gpu_memory_utilization``), the most
  sequences it runs at once, its KV block size, and whether it sleeps (frees its memory) while
  the trainer runs;
* ``lora`` (a :class:`LoraSpec`): low-rank adapters on the trained models;
* ``offload_idle``: reference/reward models wait in host memory between uses;
* ``logits``: the log-probs over materialized full-vocabulary logits or a fused/chunked kernel;
* ``routing_replay``: an MoE actor's routed-expert ids kept from generation for the update
  (rollout buffers, :mod:`rlmcost.deployment.buffers`);
* ``partial_rollout``: under asynchronous placements the engines stream without draining a
  batch: generation interrupted at a weight update resumes from its partial output
  (:mod:`rlmcost.placement.streaming`); ``rollout_in_flight``: how many batches it lets into
  the engines at once (NeMo RL: ``max_trajectory_age_steps``);
* ``init_load``: where a model is materialised before it is sharded (``deployment.init``);
* ``overhead``: the fixed per-process device memory (:class:`Overhead`).

``ideal=True`` is the paper's idealized iteration: no engine reservation (the KV cache is the
exact need), no fixed overhead, logits as Table III counts them, nothing offloaded. The co-located
baseline, the Table IX configurations and ``--groups`` are deployments too (``placement`` and
``groups``). Light to import (pydantic only): the CLI builds one at start-up.
"""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from rlmcost.choices import Dtype, EpDispatcher, Fp8Recipe
from rlmcost.deployment.engine import (  # noqa: F401 - re-exported
    ENGINE_BLOCK_SIZE,
    ENGINE_COLOCATED_FRACTION,
    ENGINE_DEDICATED_FRACTION,
    ENGINE_MAX_NUM_SEQS,
    EngineSpec,
)
from rlmcost.deployment.given import GIVEN, forward_over_train
from rlmcost.deployment.init import InitLoad
from rlmcost.deployment.kinds import (
    GradReduce,
    LogitsMode,
    LoraGather,
    Offload,
    RouterDtype,
    TrainerKernels,
    parse_offloads,
)
from rlmcost.deployment.overhead import (  # noqa: F401 - re-exported
    ALLOCATOR_SLACK,
    ALLOCATOR_SLACK_EXPANDABLE,
    ALLOCATOR_SLACK_SWITCHING,
    COMMUNICATOR_BYTES,
    CUDA_CONTEXT_BYTES,
    Overhead,
)
from rlmcost.deployment.pipeline_split import PipelineSplit
from rlmcost.deployment.trainer_only import check_forwards
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage, dp_unit
from rlmcost.specs.validation import Checked

GIB, MIB = 1024**3, 1024**2

_STRICT = ConfigDict(frozen=True, extra="forbid")


def _degree(v: int | None, info: ValidationInfo) -> int | None:
    """A degree, at most ``specs.limits.MAX_GPUS`` (the layout checks walk its divisors)."""
    from rlmcost.specs.limits import MAX_GPUS, check_count

    if v is not None:
        check_count(f"{info.field_name} degree", v, MAX_GPUS, f"give a smaller {info.field_name}")
    return v


class TrainLayout(Checked):
    """The layout of a trainer (or of the forwards): degrees, sharding, batching, offload.
    ``dp`` is not given: data parallelism fills the group's GPUs."""

    model_config = _STRICT

    tp: int = Field(default=1, ge=1, description="tensor-parallel degree (1 = no TP)")
    pp: int = Field(default=1, ge=1, description="pipeline stages (1 = no PP)")
    cp: int = Field(default=1, ge=1, description="context-parallel degree (1 = no CP)")
    ep: int = Field(default=1, ge=1, description="expert-parallel degree (1 = no EP), folded "
                    "inside dp*tp*cp as Megatron-core folds it (no extra GPUs)")
    etp: int | None = Field(default=None, ge=1, description="expert tensor-parallel degree "
                            "(None = tp, Megatron-core's default; NeMo RL and slime set 1)")
    sp: bool = Field(default=False, description="sequence parallelism inside the TP group")
    zero: ZeroStage = Field(default=ZeroStage.NONE, description="ZeRO stage (3 = FSDP)")
    zero_shard: int | None = Field(default=None, ge=1, description="hybrid sharding (HSDP): "
        "ZeRO states sharded over this many ranks, replicated across the rest (None or >= "
        "dp*cp: over all; verl fsdp_size, parallel.zero_groups)")  # fmt: skip
    ckpt: Checkpointing = Field(default=Checkpointing.NONE, description="checkpointing")
    micro_batch: int = Field(default=1, ge=1, description="sequences per micro-batch")
    max_tokens_per_gpu: int | None = Field(default=None, ge=1, description="dynamic batching: "
        "tokens per micro-batch per GPU (None = micro_batch sequences); verl "
        "ppo_max_token_len_per_gpu, OpenRLHF packing")  # fmt: skip
    packing: bool = Field(default=False, description="sequence packing: micro_batch x (prompt "
        "+ response) packed tokens a micro-batch (NeMo RL sequence_packing.train_mb_tokens)")
    padded: bool = Field(default=False, description="each sequence padded to the batch's "
        "width (prompt + longest response) in training and forwards: verl's FSDP workers "
        "without use_remove_padding (rlmcost.placement.dynamic_bsz)")  # fmt: skip
    activation_offload: bool = Field(default=False, description="an update's saved "
        "activations to host memory but its last two layers' (verl model.enable_activation_"
        "offload; rlmcost.parallel.act_offload)")  # fmt: skip
    prefix_grouper: bool = Field(default=False, description="the actor's and reference's "
        "passes compute a group's prompt once, one row per group (verl actor."
        "use_prefix_grouper; needs padded: rlmcost.placement.prefix_grouper)")  # fmt: skip
    fused_loss: bool = Field(default=False, description="packed micro-batch's loss in one "
        "call (NeMo RL sequence_packing.fuse_loss); False: per sequence (perf.policy_worker)")
    router_dtype: RouterDtype = Field(default=RouterDtype.FP32, description="MoE router "
        "dtype: fp32 (16-bit GEMM, fp32 logits; Megatron-core's default None prices alike), "
        "fp64 (NeMo RL moe_router_dtype; rlmcost.perf.moe_router)")  # fmt: skip
    ep_dispatcher: EpDispatcher = Field(default=EpDispatcher.ALLTOALL, description="MoE token "
        "dispatcher (Megatron-core moe_token_dispatcher_type; rlmcost.perf.ep_dispatch)")
    moe_permute_fusion: bool = Field(default=True, description="TE's fused MoE permute "
        "(moe_permute_fusion); False: unfused (rlmcost.perf.moe_permute)")
    moe_capacity_factor: float | None = Field(default=None, gt=0, allow_inf_nan=False,
        description="MoE capacity factor (moe_expert_capacity_factor; None = dropless)")
    moe_pad_to_capacity: bool = Field(default=False, description="every expert computes its "
        "capacity (Megatron-core moe_pad_expert_input_to_capacity; needs the factor)")
    kernels: TrainerKernels = Field(default=TrainerKernels.FUSED, description="fused (TE), "
        "realhf (perf.realhf_rate) or liger (Liger's patch: placement.pass_options)")  # fmt: skip
    schedule: PipelineSchedule = Field(default=PipelineSchedule.ONE_F_ONE_B)
    virtual_stages: int = Field(default=1, ge=1)
    pp_split: PipelineSplit | None = Field(default=None, description="Megatron-core's split")
    offload: tuple[Offload, ...] = Field(default=(), description="states kept in host memory")
    param_dtype: Dtype | None = Field(default=None, description="dtype the trainer stores "
        "its parameters and gradients in (None: the weight dtype, with an fp32 master copy in "
        "Adam); fp32: FSDP mixed precision, bf16 compute copy per unit, Adam m and v only "
        "(verl's actor, NeMo RL's DTensor policy)")  # fmt: skip
    grad_reduce_dtype: GradReduce | None = Field(default=None, description="a Megatron-core "
        "trainer's gradient buffer: fp32 (grad_reduce_in_fp32) or param (its parameters' "
        "dtype); None: the framework's (rlmcost.placement.grad_buffer)")  # fmt: skip
    pp_overlap_p2p: bool | None = Field(default=None, description="interleaved schedule's "
        "overlap_p2p_comm (None: the framework's; rlmcost.perf.megatron_pipe)")
    recompute_early_stop: bool | None = Field(default=None, description="torch non-reentrant "
        "checkpoint's early stop (None: the framework's; rlmcost.perf.ckpt_early_stop)")
    module_ckpt: bool | None = Field(default=None, description="full recomputation per module "
        "(None: the framework's; rlmcost.perf.module_ckpt); False: each layer whole")
    swiglu_fusion: bool | None = Field(default=None, description="a Megatron-core trainer's "
        "TransformerConfig.bias_activation_fusion (None: the framework's; placement.glu_kernel)")
    disable_dropout: bool = Field(default=False, description="the trainer sets the model's "
        "dropout to 0 (TRL disable_dropout); False: its config's (placement.model_dropout)")
    freeze_vision_tower: bool = Field(default=False, description="a vision-language model's "
        "tower is not trained (no backward through it; verl actor.freeze_vision_tower)")
    mtp_layers: int = Field(default=0, ge=0, le=64, description="multi-token-prediction "
        "depths the trainer runs and trains with the policy (Megatron-core mtp_num_layers; "
        "rlmcost.placement.mtp); 0: none")  # fmt: skip
    mtp_repeated: bool = Field(default=False, description="one MTP module's weights run at "
        "every depth (Megatron-core mtp_use_repeated_layer); False: one module per depth")
    mtp_detach_heads: bool = Field(default=False, description="the MTP depths' output head "
        "and embedding get no gradient from them (Megatron-core mtp_detach_heads)")
    fp8: Fp8Recipe | None = Field(default=None, description="Transformer Engine FP8 recipe "
        "of the Megatron-core trainer's Linear layers (fp8_recipe; perf.fp8_train); None: bf16")
    fp8_param: bool = Field(default=False, description="primary weights kept in FP8 "
        "(Megatron-core fp8_param; needs fp8): 1-byte parameters, the fp32 master in Adam")

    @field_validator("tp", "pp", "cp", "ep", "etp", "zero_shard")
    @classmethod
    def _degree_at_most(cls, v: int | None, info: ValidationInfo) -> int | None:
        return _degree(v, info)

    def token_budget(self, seq_len: int) -> int | None:
        """Tokens per micro-batch per GPU for sequences of at most ``seq_len`` tokens:
        ``max_tokens_per_gpu`` (dynamic batching), else under packing NeMo RL's bin (``micro_batch
        x seq_len``) over the ``cp`` ranks (``nemo_rl_batching.packed_tokens_per_gpu``), else
        None (``micro_batch`` padded sequences)."""
        if self.max_tokens_per_gpu is not None:
            return self.max_tokens_per_gpu
        return -(-self.micro_batch * seq_len // self.cp) if self.packing else None

    @field_validator("offload", mode="before")
    @classmethod
    def _offload_list(cls, v: object) -> object:
        return parse_offloads(v)

    def layout(self, dp: int = 1, micro_batch: int | None = None) -> Layout:
        """The intra-model :class:`~rlmcost.parallel.layout.Layout` with ``dp`` replicas."""
        cf, pad = self.moe_capacity_factor, self.moe_pad_to_capacity
        return Layout(
            dp=dp, tp=self.tp, pp=self.pp, cp=self.cp, ep=self.ep, etp=self.etp, sp=self.sp,
            zero=self.zero, ckpt=self.ckpt, micro_batch=micro_batch or self.micro_batch,
            schedule=self.schedule, virtual_stages=self.virtual_stages, zero_shard=self.zero_shard,
            moe_capacity_factor=cf, moe_pad_to_capacity=pad,
            **(self.pp_split or PipelineSplit()).layout_fields())

    @property
    def split(self) -> int:
        """The GPU granularity of the layout, of which every GPU count it runs on is a multiple:
        tp*pp*cp times the least dp whose ranks hold the etp*ep grid (``layout.dp_unit``)."""
        return self.tp * self.pp * self.cp * dp_unit(self.tp, self.cp, self.ep, self.etp)


LORA_ALL_LINEAR = ("q", "k", "v", "o", "gate", "up", "down")
_LORA_USE = f"use any of {', '.join(LORA_ALL_LINEAR)} or all-linear"


class LoraSpec(Checked):
    """Low-rank adapters (Hu et al. 2021, arXiv:2106.09685) on every trained model:
    W + B A with A: r x d_in, B: d_out x r on the ``targets`` projections of every layer."""

    model_config = _STRICT

    rank: int = Field(ge=1, le=65536, description="r, the adapters' rank")
    targets: tuple[str, ...] = Field(default=LORA_ALL_LINEAR)
    gather: LoraGather | None = Field(default=None, description="what the trainer gathers "
        "to refit a colocated engine: adapters, layers (one FSDP unit at a time) or model "
        "(every parameter at once); None: the framework's (placement.lora_gather)")  # fmt: skip

    @field_validator("targets", mode="before")
    @classmethod
    def _targets(cls, v: object) -> object:
        if isinstance(v, str):
            v = [w.strip() for w in v.split(",") if w.strip()]
        if v in (["all-linear"], ("all-linear",)):
            return LORA_ALL_LINEAR
        aliases = {"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o",
                   "gate_proj": "gate", "up_proj": "up", "down_proj": "down"}  # fmt: skip
        out = []
        for w in cast("Iterable[object]", v):  # pydantic passes a list or tuple here
            word = aliases.get(str(w), str(w))
            if word not in LORA_ALL_LINEAR:
                raise ValueError(f"unknown LoRA target '{w}'; {_LORA_USE}")
            out.append(word)
        if not out:  # adapters on no projection would train nothing
            raise ValueError(f"LoRA targets name no projection; {_LORA_USE}")
        return tuple(dict.fromkeys(out))


class GroupLayouts(Checked):
    """One device group of ``--groups`` with its own layouts: ``members`` in ``--groups``
    syntax (``actor+reference``, ``rollout``, ``critic:train``), ``gpus`` devices."""

    model_config = _STRICT

    members: str
    gpus: int = Field(ge=1)
    settings: str | None = Field(
        default=None,
        description="overrides of the run's layout on this group, in --groups bracket syntax: "
        "'tp=4;zero=3' (tp/pp/ep also set a rollout group's engine layout)",
    )
    hardware: str | None = Field(
        default=None,
        description="the group's accelerator, a name of `rlmcost hardware` (None: the run's "
        "cluster.hardware); memory, roofline, links and calibration come from it",
    )
    train: Annotated[TrainLayout | None, GIVEN] = None  # GIVEN: written with its given fields
    forward: Annotated[TrainLayout | None, GIVEN] = None
    engine: Annotated[EngineSpec | None, GIVEN] = Field(default=None, description="the fields "
        "given over the run's engine (deployment.group_engine); None: the run's")  # fmt: skip

    @field_validator("gpus")
    @classmethod
    def _at_most(cls, v: int, info: ValidationInfo) -> int:
        from rlmcost.specs.limits import MAX_GPUS, check_count

        members = info.data.get("members", "?")
        check_count(f"GPUs of group {members}", v, MAX_GPUS, "give it fewer in --groups")
        return v

    @field_validator("hardware")
    @classmethod
    def _hardware(cls, v: str | None) -> str | None:  # the canonical name: h100 -> h100-sxm
        from rlmcost.specs.registry import hardware_name

        try:
            return None if v is None else hardware_name(v)
        except SpecError as exc:
            raise ValueError(str(exc)) from None


class Deployment(Checked):
    """Everything a launch sets that changes cost (module docstring). Every field has a
    default; ``ideal=True`` switches off every deployment effect (the paper's iteration)."""

    model_config = _STRICT

    framework: str | None = Field(
        default=None,
        description="the RL framework whose defaults and semantics the deployment follows "
        "(rlmcost.frameworks; None: rlmcost's bare layout)",
    )
    placement: str | None = Field(
        default=None, description="Table IX configuration (None = baseline or the groups)"
    )
    staleness: int | None = Field(default=None, ge=0)
    groups: tuple[GroupLayouts, ...] = Field(default=())
    train: TrainLayout = Field(default_factory=TrainLayout)
    forward: TrainLayout | None = None  # over train: given.forward_over_train
    engine: EngineSpec = Field(default_factory=EngineSpec)
    lora: LoraSpec | None = None
    offload_idle: bool = Field(default=False, description="idle models wait in host memory")
    logits: LogitsMode = Field(default=LogitsMode.MATERIALIZED)
    logits_chunk_tokens: int = Field(default=1024, ge=1, description="the fused and chunked "
                                     "modes' chunk (positions)")
    routing_replay: bool = Field(
        default=False,
        description="MoE routing replay: the engine's routed-expert ids of every token kept "
        "for the update (slime --use-rollout-routing-replay); false = not kept",
    )
    partial_rollout: bool = Field(default=False, description="asynchronous rollout streams "
        "across batches: interrupted at each weight update and resumed (AReaL interruptible "
        "generation, verl fully-async async_training.partial_rollout); false = each batch "
        "drains to its longest sample")  # fmt: skip
    rollout_in_flight: int = Field(default=1, ge=1, description="batches a streaming rollout "
        "(partial_rollout) lets into the engines at once, at most the staleness (NeMo RL: "
        "num_prompts_per_step x max_trajectory_age_steps prompt groups, async_utils.py); 1 = "
        "one batch")  # fmt: skip
    init_load: InitLoad = Field(
        default=InitLoad.SHARDED,
        description="where the trainers materialise a model at start-up before sharding it "
        "(deployment.init.InitLoad): sharded, gpu (OpenRLHF --actor_init_on_gpu), host-rank0 "
        "(verl, NeMo RL), host-each (accelerate, DeepSpeed ZeRO-1/2)",
    )
    overhead: Overhead = Field(default_factory=Overhead)
    ideal: bool = Field(default=False, description="the paper's idealized iteration")
    env_workers: int | None = Field(default=None, ge=1, description="actors of the environment "
                                    "scoring the responses (NeMo RL env.math.num_workers); "
                                    "None = the framework's (Behaviour.env_workers)")

    @model_validator(mode="after")
    def _consistent(self) -> "Deployment":
        if self.ideal and (self.lora is not None or self.train.offload or self.train.fp8
                           or self.train.grad_reduce_dtype is not None):  # fmt: skip
            raise ValueError("ideal=True is the paper's iteration without deployment effects; "
                             "drop lora/offload/grad_reduce_dtype/fp8 or set ideal to false")
        forward_over_train(self)  # the fields a forward layout does not give: the trainer's
        check_forwards(self)  # a forward layout's trainer-only field: refused, not ignored
        return self

    def forward_layout(self) -> TrainLayout:
        """The forwards' layout: ``forward``, else the trainer's without offload."""
        return self.forward or self.train.model_copy(update={"offload": ()})

    def group(self, members: str) -> GroupLayouts | None:
        """The settings of the group named ``members`` (None: not given)."""
        for g in self.groups:  # a loop, not a generator: read for every group of every job
            if g.members == members:
                return g
        return None

    # -- files ---------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Plain values (a group's own settings as given), as ``--deployment FILE`` reads them."""
        return self.model_dump(mode="json", exclude_defaults=False)

    def dump(self, path: str | Path) -> None:
        """Write JSON (``.json``) or YAML (``.yaml``/``.yml``)."""
        p = Path(path)
        data = self.to_json()
        if p.suffix in (".yaml", ".yml"):
            import yaml

            p.write_text(yaml.safe_dump(data, sort_keys=False))
        else:
            p.write_text(json.dumps(data, indent=2) + "\n")


def load_deployment(path: str | Path) -> Deployment:
    """A deployment from a JSON or YAML file (YAML through ``yaml.safe_load``: no tags, no
    code). SpecError for an unreadable file, a malformed one or a bad field."""
    from rlmcost.specs.validation import build

    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise SpecError(f"cannot read deployment file {p}: {exc.strerror}; check the path") \
            from None
    except UnicodeDecodeError:
        raise SpecError(f"deployment file {p} is not UTF-8 text; give a YAML or JSON "
                        "deployment") from None
    from rlmcost.deployment.files import parse_document
    data = parse_document(text, str(p))
    return build(Deployment, data, f"deployment {p.name}")
