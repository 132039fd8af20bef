"""The generation phase's options of every algorithm command: the engine's, and the actors of
the environment that scores its responses (part of :func:`rlmcost.cli._deploy.
deployment_options`; split from it by purpose)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from rlmcost.cli._parse import framework_default


class EngineRefit(StrEnum):
    """``--refit``: a weight update other than the framework's (``EngineSpec.refit``)."""

    DISK = "disk"  # AReaL's save and reload through shared storage (perf/disk_refit.py)


class SchedulePolicy(StrEnum):
    """``--schedule-policy``: SGLang's waiting-queue order (``EngineSpec.schedule_policy``)."""

    FCFS = "fcfs"  # first come first served, SGLang's default
    LPM = "lpm"  # longest cached prefix first while <= 128 wait (placement/sglang_admit.py)


def engine_options(p: str) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)) of the engine's settings, in the
    help panel ``p``."""
    return {
        "gpu_memory_utilization": (
            Annotated[
                float | None,
                typer.Option(
                    help="Generation engine's memory reservation, a fraction in (0, 1] "
                    "(verl 0.5 beside its trainer, NeMo RL 0.6, vLLM's own 0.9). "
                    + framework_default("0.5 beside a trainer, 0.9 on the engine's own GPUs "
                                      "(SGLang there: its own mem_fraction_static, 0.834 on "
                                      "an H100 at TP 1)"),
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "rollout_tp": (
            Annotated[int | None, typer.Option(
                help="Engine TP per replica. " + framework_default("--tp"), min=1,
                rich_help_panel=p)],
            None,
        ),
        "rollout_pp": (
            Annotated[int | None, typer.Option(help="Engine pipeline stages per replica.",
                                               min=1, rich_help_panel=p)],
            None,
        ),
        "rollout_ep": (
            Annotated[int | None, typer.Option(
                help="Engine expert parallelism per replica (an MoE model's experts over that "
                "many GPUs; NeMo RL mcore_generation_config.expert_model_parallel_size).",
                min=1, rich_help_panel=p)],
            None,
        ),
        "enforce_eager": (
            Annotated[
                bool | None,
                typer.Option(
                    "--enforce-eager/--cuda-graphs",
                    help="The engine decodes without CUDA graphs (vLLM enforce_eager): a step "
                    "lasts at least its host launch time per layer (rlmcost.perf."
                    "eager_launch). " + framework_default("CUDA graphs"),
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "prefix_caching": (
            Annotated[
                bool | None,
                typer.Option(
                    "--prefix-caching/--no-prefix-caching",
                    help="The engine caches a prompt group's shared prompt: prefilled once, "
                    "its KV blocks held once while a sample runs (vLLM enable_prefix_caching, "
                    "SGLang's radix cache; rlmcost.placement.prefix_share). "
                    + framework_default("on for vllm and sglang"),
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "rollout_dtype": (
            Annotated[
                str | None,
                typer.Option(
                    help="Engine weights and GEMMs: bf16, fp16 or fp8 (vLLM's online FP8 "
                    "W8A8 quantization, NeMo RL vllm_cfg.precision fp8: weights at 1 B/param "
                    "but the embedding, LM head, norms and MoE routers at 2 B, "
                    "GEMMs at the FP8 peak; KV cache and refit keep their dtypes). "
                    + framework_default("the workload's dtype"),
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "rollout_weights": (
            Annotated[
                str | None,
                typer.Option(
                    help="4-bit weights the engine serves, FORMAT[:PARTS]: nvfp4 (E2M1 + an FP8 "
                    "scale per 16, 9/16 B an element), nvfp4-w4a4 (the same weights, activations "
                    "quantized to NVFP4 too: W4A4, its GEMMs at the FP4 tensor peak on B200 / "
                    "GB200, W4A16 on parts without FP4 tensor cores as vLLM's Marlin fallback), "
                    "mxfp4 (E8M0 scale per 32, 17/32 B), int4-g32 / int4-g128 (INT4 + a bf16 "
                    "scale per 32 / 128, 9/16 / 33/64 B); PARTS linear (default: every Linear "
                    "layer and expert), mlp (FFNs and experts) or experts (routed experts). "
                    "W4A16: decode streams the packed bytes, GEMMs compute in the activation "
                    "dtype (rlmcost.parallel.packed_weights, rlmcost.perf.fp4_gemm). NeMo RL "
                    "policy.generation.real_quant (NVFP4; its W4A4 recipes nvfp4-w4a4), slime "
                    "INT4 --hf-checkpoint folders and Kimi-K2-Thinking: `rlmcost import` sets it. "
                    "Default: none.",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "kv_cache_dtype": (
            Annotated[
                str | None,
                typer.Option(
                    help="What the engine's KV cache stores keys and values in: auto (the "
                    "model's dtype), bf16, fp16 or fp8 (vLLM --kv-cache-dtype fp8 / fp8_e4m3 / "
                    "fp8_e5m2, SGLang --kv-cache-dtype fp8_e4m3: one byte an element, so twice "
                    "the pool's tokens and half the decode's KV reads; linear-attention states "
                    "keep their dtypes). NeMo RL vllm_cfg.kv_cache_dtype, slime "
                    "--sglang-kv-cache-dtype, verl engine_kwargs: `rlmcost import` reads them. "
                    "Default: auto; no framework preset sets it.",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "max_num_seqs": (
            Annotated[
                int | None,
                typer.Option(
                    help="Sequences an engine replica decodes at once at most (vLLM "
                    "max_num_seqs, SGLang --max-running-requests; default: vLLM's 256, "
                    "SGLang's min(KV pool tokens // 2, request pool of 2048-4096 rows) "
                    "(rlmcost.deployment.sglang_limits); NeMo RL's vllm.LLM: 1024 on GPUs of "
                    ">= 70 GiB other than A100). NeMo RL's async engine (vllm_cfg.async_engine) "
                    "runs vLLM's ENGINE_CONTEXT default of 128 (SchedulerConfig."
                    "DEFAULT_MAX_NUM_SEQS; vLLM PR 37393): `rlmcost import nemo-rl` sets it. "
                    "0: the engine's own default, also under a --framework preset that sets "
                    "one (verl before PR 3134 ran SGLang's own).",
                    min=0,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "dp_attention": (
            Annotated[
                int | None,
                typer.Option(
                    help="Data-parallel attention inside a replica: SGLang's --enable-dp-"
                    "attention --dp-size N (slime's large-MoE scripts), or vLLM's "
                    "--data-parallel-size N with --enable-expert-parallel (EP = N x TP; NeMo "
                    "RL's and verl's vLLM expert parallelism): N attention ranks of "
                    "rollout-tp / N GPUs, each attending for its own requests with its own KV "
                    "pool; the MoE / FFN layers stay over all the replica's GPUs. N divides "
                    "--rollout-tp (for vLLM, the EP size); SGLang and vLLM engines "
                    "(rlmcost.perf.dp_attention). "
                    + framework_default("1 (off)"),
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "context_length": (
            Annotated[
                int | None,
                typer.Option(
                    help="SGLang's --context-length, which sizes its request pool and so its "
                    "default running cap (rlmcost.deployment.sglang_limits; AReaL v0.3: "
                    "32768). Default: the checkpoint's context.",
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "schedule_policy": (
            Annotated[
                SchedulePolicy | None,
                typer.Option(
                    help="SGLang's --schedule-policy: fcfs (its default) or lpm (longest "
                    "cached prefix first while at most 128 requests wait, one request of a "
                    "prompt group ahead of its uncached siblings; AReaL v0.3's setting; "
                    "rlmcost.placement.sglang_admit).",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "env_workers": (
            Annotated[
                int | None,
                typer.Option(
                    help="Actors of the environment that scores every response after "
                    "generation (NeMo RL env.math.num_workers; rlmcost.perf.nemo_rl_env). "
                    "Default: the framework's (NeMo RL: 8, grpo_math_1B.yaml); a framework "
                    "that prices no environment step takes none.",
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "max_num_batched_tokens": (
            Annotated[
                int | None,
                typer.Option(
                    help="vLLM's token budget per step (max_num_batched_tokens): prefill "
                    "chunks and the forward its start-up memory profile runs, whose peak comes "
                    "out of the KV pool (rlmcost.deployment.vllm_profile); NeMo RL's async engine "
                    "runs 2048, set by `rlmcost import nemo-rl`. " + framework_default(
                        "vLLM's offline one, 16384 on GPUs of >= 70 GiB other than A100, "
                        "else 8192"),
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "sequences_per_call": (
            Annotated[
                int | None,
                typer.Option(
                    help="Sequences per generate() call handed to an engine replica, each "
                    "call finished before the next (OpenRLHF before Nov 2024: "
                    "micro_rollout_batch_size per call; verl DAPO dynamic sampling: "
                    "gen_batch_size x n / replicas per round); default: the replica's whole "
                    "share.",
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "tp_gather_layers": (
            Annotated[
                int | None,
                typer.Option(
                    help="--engine ds-hybrid at --rollout-tp > 1: decoder layers the Hybrid "
                    "Engine gathers whole at once to slice their TP shards (DeepSpeed-Chat "
                    "--tp_gather_partition_size; default 8).",
                    min=1,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "speculative_tokens": (
            Annotated[
                int | None,
                typer.Option(
                    help="Speculative decoding: draft tokens per decode step, verified by the "
                    "model in one forward over N+1 positions; a step emits 1 + P + ... + P^N "
                    "tokens per sequence (vLLM speculative_config num_speculative_tokens). "
                    "Default 0: none.",
                    min=0,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "speculative_draft": (
            Annotated[
                str | None,
                typer.Option(
                    help="What drafts: 'mtp' (the checkpoint's multi-token-prediction layer, "
                    "vLLM method deepseek_mtp; one decoder layer per draft token) or a "
                    "built-in model name (a draft model). Default mtp, which needs a checkpoint "
                    "with an MTP module (config num_nextn_predict_layers: DeepSeek-V3/R1, "
                    "GLM-4.5/4.6, Qwen3-Next; `rlmcost models --json` mtp_layers); else an "
                    "error.",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "speculative_acceptance": (
            Annotated[
                float | None,
                typer.Option(
                    help="Probability each draft token is accepted, in [0, 1] (default for "
                    "mtp 0.85: DeepSeek-V3 report §5.4.3, 85-90 % for the second token; a "
                    "draft model needs it).",
                    min=0.0,
                    max=1.0,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "refit": (
            Annotated[
                EngineRefit | None,
                typer.Option(
                    help="How engines on GPUs of their own take the trained weights: 'disk' "
                    "(AReaL's update_weights_from_disk: the trainer saves the full model in "
                    "the weight dtype to shared storage and every engine server reloads it, "
                    "both sides waiting) takes model bytes / DISK_REFIT_BYTES_PER_S, 1.02 "
                    "GB/s (2.03 GB/s with a multi-threaded load at the range's low end; AReaL "
                    "PR 324, rlmcost/perf/disk_refit.py); AReaL's manager also sends each "
                    "prompt's samples to one server (round robin over prompts) and, without "
                    "--partial-rollout, adds its synchronous loop's polls "
                    "(rlmcost/perf/areal_sync.py). Default: the framework's refit (NCCL "
                    "broadcast, per-tensor export), else a copy over the links. An engine "
                    "sharing the trainer's GPUs keeps the framework's refit.",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "kv_buffer_gib": (
            Annotated[
                float | None,
                typer.Option(
                    help="--engine megatron: its KV pool per GPU in GiB (Megatron-core "
                    "buffer_size_gb; default NeMo RL's 10), allocated whatever else the "
                    "device holds; kept beside the trainer under --no-sleep "
                    "(kv_cache_management_mode persist, NeMo RL's default).",
                    min=0.0,
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "vllm_version": (
            Annotated[
                str | None,
                typer.Option(
                    help="The vLLM release the engine runs, X.Y[.Z] in 0.9.0-0.20.x: the "
                    "start-up profile's sampler peak (vLLM < 0.17 sorts the vocabulary, 38 B a "
                    "logit; 0.17+ masks in place with Triton, 14 B) that comes out of the KV "
                    "pool, and the offline batch defaults (rlmcost.deployment.vllm_release). "
                    "Default: the framework's pin (NeMo RL v0.7 0.20.0, verl <=0.12.0); "
                    "`rlmcost import verl --verl-version` sets it from verl's setup.py then, "
                    "`rlmcost import nemo-rl --nemo-rl-version` from NeMo RL's pyproject.toml.",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
        "no_sleep": (
            Annotated[
                bool | None,
                typer.Option(
                    "--no-sleep/--sleep",
                    help="The engine keeps its reservation while the trainer runs (default: "
                    "it sleeps, freeing KV cache and weights, unless --framework says not).",
                    rich_help_panel=p,
                ),
            ],
            None,
        ),
    }
