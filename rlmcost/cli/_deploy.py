"""The deployment options every algorithm command takes (the Deployment they describe is
built by :mod:`rlmcost.cli._deploy_build`).

A ``--deployment FILE`` (YAML or JSON, safe loading) gives the starting point; every flag the
user gives overrides its field. ``--ideal`` is the paper's idealized iteration. Light to
import: the pydantic spec loads when a command runs, no sympy.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from rlmcost.choices import EpDispatcher
from rlmcost.cli._batching_options import batching_options
from rlmcost.cli._deploy_engine import engine_options
from rlmcost.cli._deploy_pipeline import RL_PIPELINE_OPTIONS, rl_pipeline_options
from rlmcost.cli._fp8 import FP8_OPTIONS, fp8_options
from rlmcost.cli._logits import LOGITS_OPTIONS, logits_options
from rlmcost.cli._moe_capacity import MOE_CAPACITY_OPTIONS, moe_capacity_options
from rlmcost.cli._mtp import MTP_OPTIONS, mtp_options
from rlmcost.cli._parse import framework_default
from rlmcost.deployment.init import InitLoad
from rlmcost.deployment.kinds import (
    EngineKind,
    GradReduce,
    LoraGather,
    RouterDtype,
    TrainerKernels,
)
from rlmcost.parallel.layout import Checkpointing


class ParamDtype(StrEnum):
    """``--param-dtype`` values: the dtypes a trainer stores its parameters in."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP32 = "fp32"

DEPLOY_PANEL = "Deployment (how the run is launched)"

DEPLOYMENT_OPTIONS = (
    "deployment_file",
    "micro_batch", "max_tokens_per_gpu",
    "forward_max_tokens_per_gpu", "forward_micro_batch",
    "packing", "fused_loss", "padded", "prefix_grouper", "activation_offload", "router_dtype",
    "ep_dispatcher",
    "moe_permute_fusion",
    "pp_overlap_p2p", "recompute_early_stop", "module_ckpt", "swiglu_fusion",
    "trainer_kernels", "ckpt", "cp", "ep", "etp", "zero_shard", "sp",
    "freeze_vision_tower", "disable_dropout",
    "offload",
    "param_dtype",
    "grad_reduce_dtype",
    "expandable_segments",
    "offload_idle",
    "init_load",
    "init_on_gpu",
    "lora_rank",
    "lora_targets",
    "lora_gather",
    "engine",
    "gpu_memory_utilization",
    "rollout_tp",
    "rollout_pp", "rollout_ep",
    "rollout_dtype",
    "kv_cache_dtype",
    "rollout_weights",
    "enforce_eager",
    "prefix_caching",
    "max_num_seqs",
    "context_length",
    "dp_attention",
    "schedule_policy",
    "env_workers",
    "max_num_batched_tokens",
    "sequences_per_call",
    "tp_gather_layers",
    "speculative_tokens",
    "speculative_draft",
    "speculative_acceptance",
    "refit", "kv_buffer_gib", "vllm_version",
    "no_sleep",
    "routing_replay",
    "partial_rollout",
    "in_flight_batches",
    "ideal",
) + RL_PIPELINE_OPTIONS + MOE_CAPACITY_OPTIONS + MTP_OPTIONS + FP8_OPTIONS + LOGITS_OPTIONS


def deployment_options() -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)) of the deployment options."""
    p = DEPLOY_PANEL
    return {
        "deployment_file": (Annotated[str | None, typer.Option(
            "--deployment", help="A deployment file (YAML or JSON, see `--json`'s `deployment` "
            "key); flags override its fields, --framework its framework.", rich_help_panel=p)],
            None),  # fmt: skip
        "micro_batch": (
            Annotated[
                int | None,
                typer.Option(help="Sequences per micro-batch. " + framework_default("1"), min=1,
                             rich_help_panel=p),
            ],
            None,
        ),
        "max_tokens_per_gpu": (
            Annotated[
                int | None,
                typer.Option(
                    help="Dynamic batching: tokens per micro-batch per GPU (verl "
                    "ppo_max_token_len_per_gpu); must hold one sequence. "
                    + framework_default("none (--micro-batch sequences)"),
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "forward_max_tokens_per_gpu": (
            Annotated[
                int | None,
                typer.Option(
                    help="Token budget per micro-batch per GPU of the log-prob, reference, "
                    "reward and value forwards (verl log_prob_max_token_len_per_gpu, NeMo RL "
                    "logprob_mb_tokens). " + framework_default("the trainer's"),
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "engine": (
            Annotated[
                EngineKind | None,
                typer.Option(
                    help="What generates the rollouts: vllm/sglang (an engine with its own "
                    "reservation and continuous batching), megatron (NeMo RL's Megatron-core "
                    "engine: the policy's own weights and layout, a --kv-buffer-gib pool), hf "
                    "(HF generate on the training model) or ds-hybrid (DeepSpeed-Chat's Hybrid "
                    "Engine; ds-hybrid-unpinned: each layer gathered per decode step); hf and "
                    "ds-hybrid run static batches of --max-num-seqs. " + framework_default("vllm"),
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "forward_micro_batch": (Annotated[int | None, typer.Option(
            help="Sequences per micro-batch of the forwards (NeMo RL logprob_batch_size, verl "
            "log_prob_micro_batch_size_per_gpu). " + framework_default("the trainer's"), min=1,
            rich_help_panel=p)], None),  # fmt: skip
        **batching_options(p),  # packing, padding, PrefixGrouper, activation offload
        "router_dtype": (Annotated[RouterDtype | None, typer.Option(
            help="MoE router dtype: fp64 runs the router GEMM as DGEMMs with fp64 casts "
            "(Megatron-core moe_router_dtype; NeMo RL's base config sets fp64: "
            "rlmcost.perf.moe_router); default fp32, or --framework's.",
            rich_help_panel=p)], None),  # fmt: skip
        "ep_dispatcher": (Annotated[EpDispatcher | None, typer.Option(
            help="The trainer's MoE token dispatcher (Megatron-core moe_token_dispatcher_type): "
            "alltoall (NCCL all-to-all; at EP > 1 with several local experts it also "
            "sorts the received tokens by local expert and back: rlmcost.perf.moe_sort_chunks), "
            "deepep (flex + DeepEP: once per remote node, then NVLink) or allgather "
            "(Megatron-core's own default: all-gather over the expert-TP x EP group, "
            "reduce-scatter back; rlmcost.perf.ep_dispatch). " + framework_default("alltoall"),
            rich_help_panel=p)], None),  # fmt: skip
        "moe_permute_fusion": (Annotated[bool | None, typer.Option(
            "--moe-permute-fusion/--no-moe-permute-fusion", help="TE's fused MoE permute "
            "(Megatron-core moe_permute_fusion); off: the unfused kernels with atomic "
            "scatter-adds (rlmcost.perf.moe_permute); default on, or --framework's.",
            rich_help_panel=p)], None),  # fmt: skip
        "pp_overlap_p2p": (Annotated[bool | None, typer.Option(
            "--pp-overlap-p2p/--no-pp-overlap-p2p", help="Under an interleaved schedule "
            "(--virtual-stages > 1): Megatron's overlap_p2p_comm, the steady 1F1B's pipeline "
            "sends behind the opposite pass (rlmcost.perf.megatron_pipe); default: "
            "--framework's (verl and slime on, NeMo RL off), on without one.",
            rich_help_panel=p)], None),  # fmt: skip
        "recompute_early_stop": (Annotated[bool | None, typer.Option(
            "--recompute-early-stop/--no-recompute-early-stop", help="Under --ckpt full: "
            "torch's non-reentrant checkpoint's early stop, each dense layer's rerun ends before "
            "the FFN's down projection (rlmcost.perf.ckpt_early_stop; NeMo RL's DTensor worker "
            "per module: rlmcost.perf.module_ckpt); default: --framework's (verl FSDP, OpenRLHF "
            "and TRL on, TRL off with --lora-rank under --zero 3; NeMo RL's v2 worker off, on "
            "with --module-ckpt), off without one; an error without --ckpt full.",
            rich_help_panel=p)], None),  # fmt: skip
        "module_ckpt": (Annotated[bool | None, typer.Option(
            "--module-ckpt/--no-module-ckpt", help="Under --ckpt full: each layer's attention, "
            "MLP and norms checkpointed apart (NeMo RL's DTensor v1 worker; rlmcost.perf."
            "module_ckpt, its early stop on), or each layer whole (off: the v2 worker's "
            "transformers models, the NeMo RL preset's); default off.", rich_help_panel=p)],
            None),  # fmt: skip
        "swiglu_fusion": (Annotated[bool | None, typer.Option(
            "--swiglu-fusion/--no-swiglu-fusion", help="A Megatron-core trainer's fused SwiGLU "
            "(TransformerConfig.bias_activation_fusion: 3 d_ff kept a token for the backward, "
            "not 4; rlmcost.placement.glu_kernel); default: --framework's (slime, NeMo RL on; "
            "verl for MoE models), off without one; an error on a Hugging Face trainer.",
            rich_help_panel=p)], None),  # fmt: skip
        "trainer_kernels": (Annotated[TrainerKernels | None, typer.Option(
            help="The trainer's implementation: fused (Megatron-core / TE kernels; default) "
            "or, without a --framework preset, realhf (AReaL v0.3's ReaLModel: "
            "FlashAttention-2, eager fp32 RMSNorm and SiLU x up, fused RoPE, and its "
            "steps no faster than the rate AReaL measured; rlmcost.perf.realhf_rate); liger: "
            "a --framework's Hugging Face trainer under Liger's patch (verl model.use_liger: "
            "fused RMSNorm, RoPE and SwiGLU, 3 d_ff kept a token; logits as --logits says).",
            rich_help_panel=p)], None),  # fmt: skip
        "ckpt": (Annotated[Checkpointing | None, typer.Option(
            help="Activation checkpointing. " + framework_default("none"), rich_help_panel=p)],
            None),
        "cp": (Annotated[int | None, typer.Option(
            help="Context-parallel degree. " + framework_default("1"), min=1,
            rich_help_panel=p)], None),  # fmt: skip
        "ep": (
            Annotated[int | None, typer.Option(
                help="Expert-parallel degree (MoE), folded inside dp*tp*cp as Megatron-core "
                "folds it: no extra GPUs (TP 4 x EP 8 runs on 8 GPUs with --etp 1); etp*ep "
                "must divide tp*cp*dp. Above 1 each MoE layer runs at the busiest EP "
                "rank's load, 1.30 x the mean (rlmcost.perf.moe_imbalance; not with --ideal). "
                + framework_default("1"),
                min=1, rich_help_panel=p)],
            None,
        ),
        "etp": (
            Annotated[int | None, typer.Option(
                help="Expert tensor-parallel degree: ranks that split each routed expert "
                "(NeMo RL and slime use 1). " + framework_default("tp, Megatron-core's"), min=1,
                rich_help_panel=p)],
            None,
        ),
        "zero_shard": (
            Annotated[int | None, typer.Option(
                help="Hybrid sharding (HSDP; verl fsdp_size): ZeRO/FSDP states sharded over "
                "this many ranks, a divisor of dp*cp, replicated across the rest (default: "
                "all of them).", min=1, rich_help_panel=p)],
            None,
        ),
        "sp": (
            Annotated[bool | None, typer.Option(
                "--sp/--no-sp", help="Sequence parallelism inside TP (default: off, or "
                "--framework's: slime's 32 B example sets it).", rich_help_panel=p)],
            None,
        ),
        "freeze_vision_tower": (
            Annotated[bool, typer.Option(
                "--freeze-vision-tower", help="A vision-language model's tower is not "
                "trained: no backward through it (verl actor.freeze_vision_tower).",
                rich_help_panel=p)],
            False,
        ),
        "disable_dropout": (Annotated[bool, typer.Option(
            "--disable-dropout", help="The trainer sets the model's dropout to 0 (TRL "
            "disable_dropout; DeepSpeed-Chat's release). Default: training steps run the model "
            "config's dropout, each kind where it acts (hidden, GPT-2's and Phi-3's "
            "resid_pdrop, OPT's dropout: the model's own dropout kernels, and the "
            "checkpoint's early stop ends after the saved mask; attention: inside the "
            "attention kernel, a pre-FA3 kernel on Hopper; rlmcost.perf.dropout); log-prob "
            "forwards run in eval mode, without it.", rich_help_panel=p)],
            False),  # fmt: skip
        "offload": (
            Annotated[
                str | None,
                typer.Option(
                    help="Trainer states kept in host memory: any of optimizer,params,grads "
                    "(params needs --zero 3), or between phases (back on the GPU for the "
                    "update, verl/NeMo RL): optimizer-idle,params-idle,grads-idle. NeMo RL's "
                    "optimizer states and verl's FSDP2 parameters move through pageable "
                    "host memory at 4.18 GB/s (rlmcost.perf.host_offload). "
                    + framework_default("none"),
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "param_dtype": (Annotated[ParamDtype | None, typer.Option(
            help="What the trainer stores its parameters and gradients in: bf16 (Adam keeps an "
            "fp32 master copy, 2 + 2 + 12 B/param) or fp32 (FSDP mixed precision: bf16 compute "
            "copy per unit, Adam m and v only, 4 + 4 + 8 B/param; verl's actor, NeMo RL's "
            "DTensor policy). Default: --framework's.", rich_help_panel=p)], None),  # fmt: skip
        "grad_reduce_dtype": (Annotated[GradReduce | None, typer.Option(
            help="A Megatron-core trainer's gradient buffer, where micro-batches accumulate and "
            "the data-parallel reduce runs: fp32 (grad_reduce_in_fp32: 4 B/param, whole on each "
            "rank under --zero 1; Megatron-LM for bf16, so slime and miles, and verl) or param "
            "(the parameters' dtype; NeMo RL's configs). Default: --framework's "
            "(rlmcost.placement.grad_buffer); without one, param.", rich_help_panel=p)],
            None),  # fmt: skip
        "expandable_segments": (
            Annotated[
                bool | None,
                typer.Option(
                    "--expandable-segments/--no-expandable-segments",
                    help="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the trainer: "
                    "2% allocator slack; without it 5%, or 10% on GPUs that switch between "
                    "generation and training (default: --framework's; verl sets it).",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "offload_idle": (
            Annotated[
                bool | None,
                typer.Option(
                    "--offload-idle/--no-offload-idle",
                    help="Idle models (reference, reward, ...) wait in host memory between "
                    "uses (default: no, or --framework's: NeMo RL's reference does).",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "init_load": (
            Annotated[
                InitLoad | None,
                typer.Option(
                    help="Where the trainers build a model at start-up before sharding it: "
                    "sharded (Megatron, ZeRO-3 zero.Init), gpu (whole on each GPU), "
                    "host-rank0 (verl, NeMo RL), host-each (accelerate, ZeRO-1/2). Default: "
                    "--framework's. The timeline's init entry and the verdict show the peak.",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "init_on_gpu": (
            Annotated[
                bool,
                typer.Option("--init-on-gpu", help="Same as --init-load gpu (OpenRLHF "
                             "--actor_init_on_gpu).", rich_help_panel=p),
            ],
            False,
        ),
        "lora_rank": (
            Annotated[
                int | None,
                typer.Option(help="Train LoRA adapters of rank R (the reference is the base "
                             "model, no copy of its own).", min=1, rich_help_panel=p),
            ],
            None,
        ),
        "lora_targets": (
            Annotated[
                str | None,
                typer.Option(help="LoRA target projections: all-linear (default) or a list "
                             "of q,k,v,o,gate,up,down.", rich_help_panel=p),
            ],
            None,
        ),
        "lora_gather": (Annotated[LoraGather | None, typer.Option(
            help="What a colocated trainer gathers to refit its engine under LoRA: adapters, "
            "layers (one FSDP unit at a time: verl rollout.layered_summon) or model (every "
            "parameter, unsharded, on each GPU: verl on FSDP1, TRL on DeepSpeed ZeRO-3); "
            "default: --framework's (verl, TRL: model; others: adapters).",
            rich_help_panel=p)], None),  # fmt: skip
        **engine_options(p),
        **rl_pipeline_options(p),
        **moe_capacity_options(p), **mtp_options(p), **fp8_options(p), **logits_options(p),
        "routing_replay": (
            Annotated[bool, typer.Option(
                "--routing-replay", rich_help_panel=p,
                help="MoE routing replay: keep the engine's routed experts of every token for "
                "the update (slime --use-rollout-routing-replay; rollout buffers).")],
            False,
        ),  # fmt: skip
        "partial_rollout": (
            Annotated[bool, typer.Option(
                "--partial-rollout", rich_help_panel=p,
                help="Asynchronous rollout streams across batches: generation interrupted at a "
                "weight update resumes with its partial output (AReaL, verl fully-async "
                "partial_rollout, NeMo RL in-flight weight updates, which admit whole prompt "
                "groups, keep the stale KV caches and start a step's groups only at the weight "
                "version its staleness allows); needs --placement async or combined.")],
            False,
        ),  # fmt: skip
        "in_flight_batches": (
            Annotated[int | None, typer.Option(
                "--in-flight-batches", rich_help_panel=p, min=1,
                help="With --partial-rollout: batches the engines hold in flight at once, at "
                "most --staleness (NeMo RL max_trajectory_age_steps); default 1.")],
            None,
        ),  # fmt: skip
        "ideal": (Annotated[bool, typer.Option(
            "--ideal", help="The paper's idealized iteration: no engine reservation, overheads, "
            "logits peak or offload; datasheet capacity.", rich_help_panel=p)], False),
    }
