"""NeMo RL's preset: its defaults, conventions and behaviour, each with its source.

Sources: NeMo RL ``examples/configs/grpo_math_1B.yaml`` (``grpo_math_8B.yaml`` for the
larger-model micro-batches, :data:`NEMO_RL_8B_EXAMPLE_FROM`, and the DTensor recipe for
Qwen2.5-32B from :data:`NEMO_RL_32B_EXAMPLE_FROM`),
``nemo_rl/models/policy/workers/dtensor_policy_worker.py`` and the files each entry names.
Data only; the lookups are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_data.model_examples import NEMO_RL_SUPER
from rlmcost.frameworks.preset_data.moe_tiers import NEMO_RL_MOE
from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset, Sized

_NEMO_YAML = "NeMo RL examples/configs/grpo_math_1B.yaml"
_VLLM_CFG = ("vllm", "sglang")
"""The engines a ``generation.vllm_cfg`` default sizes (not Megatron-core's, which takes the
policy's layout and its own ``buffer_size_gb``)."""
_NEMO_DTENSOR = "nemo_rl/models/policy/workers/dtensor_policy_worker.py"
_NEMO_8B_YAML = "NeMo RL examples/configs/grpo_math_8B.yaml (v0.3.0-v0.7.0)"

NEMO_RL_8B_EXAMPLE_FROM = 3_500_000_000
"""Actors from which NeMo RL's defaults take the micro-batches of its 8B example
(grpo_math_8B.yaml: train 1, log-prob 2) instead of its 1B example's (grpo_math_1B.yaml, which
trains Qwen2.5-1.5B: 4 and 4): the geometric mean of the two examples' sizes, Qwen2.5-1.5B's
1.54 B and Llama-3.1-8B's 8.03 B parameters (3.52 B), rounded; an actor takes the example
nearer it on a log scale."""

_NEMO_MCORE_YAML = "NeMo RL examples/configs/grpo_math_1B_megatron.yaml (v0.4.0-v0.7.0)"
_NEMO_32B_YAML = ("NeMo RL examples/configs/recipes/llm/grpo-qwen2.5-32b-32n8g-fsdp2tp8-"
                  "actckpt.v3.yaml (v0.6.0-v0.7.0, 7ea279abf; defaults: grpo_math_1B.yaml)")

NEMO_RL_32B_EXAMPLE_FROM = 16_200_000_000
"""Actors from which NeMo RL's defaults take its DTensor recipe for Qwen2.5-32B
(grpo-qwen2.5-32b-32n8g-fsdp2tp8-actckpt.v3.yaml: activation checkpointing, vLLM TP 4,
micro-batches of 1) instead of grpo_math_8B.yaml's: the geometric mean of Llama-3.1-8B's
8.03 B and Qwen2.5-32B's 32.76 B parameters (16.22 B), rounded down. NeMo RL has no GRPO
example with the DTensor policy above 32 B (its 70B example, grpo_math_70B_megatron.yaml, trains
with Megatron-core: a different preset), so a 70 B actor takes the 32 B recipe's: vLLM at TP
4 holds 35 GB of a Llama-3.1-70B's bf16 weights per GPU, where the 8 B example's TP 1 cannot
hold them at all."""

PRESET = Preset(
    Framework.NEMO_RL,
    "NeMo RL: DTensor (FSDP2) policy, its v2 worker (dtensor_cfg._v2 true, as the examples "
    "set it), and vLLM colocated on the same GPUs, the reference kept in host memory",
    (
        Default(
            "train.zero",
            "3",
            "--zero 3",
            f"{_NEMO_YAML}: policy.dtensor_cfg.enabled: true (FSDP2)",
        ),
        Default(
            "train.param_dtype",
            "fp32",
            "--param-dtype fp32",
            f"{_NEMO_DTENSOR}: the model is loaded in torch.float32 ('Always load the "
            "model in float32 to keep master weights in float32') and sharded with "
            "MixedPrecisionPolicy(param_dtype=policy.precision bfloat16, reduce_dtype="
            "float32)",
        ),
        Default(
            "init_load",
            "host-rank0",
            "--init-load host-rank0",
            f"{_NEMO_DTENSOR}: 'if self.rank == 0' from_pretrained(..., device_map='cpu') "
            "in float32, every rank builds the model on the meta device, "
            "set_model_state_dict(..., broadcast_from_rank0=True)",
        ),
        Default(
            "overhead.expandable_segments",
            False,
            "--no-expandable-segments",
            f"{_NEMO_YAML}: policy.dtensor_cfg.env_vars: null (PyTorch's default "
            "allocator; recipes set PYTORCH_CUDA_ALLOC_CONF there)",
        ),
        Default(
            "train.offload",
            ("optimizer-idle", "params-idle"),
            "--offload optimizer-idle,params-idle",
            f"{_NEMO_DTENSOR}: offload_before_refit moves the optimizer states to the "
            "CPU, offload_after_refit the model; prepare_for_lp_inference / "
            "prepare_for_training bring them back (nemo_rl/algorithms/grpo.py "
            "refit_policy_generation, when colocated_inference)",
        ),
        Default(
            "train.ckpt",
            "none",
            "--ckpt none",
            f"{_NEMO_YAML}: dtensor_cfg.activation_checkpointing: false",
        ),
        Default(
            "train.micro_batch",
            4,
            "--micro-batch 4",
            f"{_NEMO_YAML}: policy.train_micro_batch_size: 4",
        ),
        Default(
            "global_batch",
            512,
            "--global-batch 512",
            f"{_NEMO_YAML} (and grpo_math_8B.yaml): policy.train_global_batch_size: 512 "
            "samples per optimizer step; a step trains num_prompts_per_step x "
            "num_generations_per_prompt // 512 global batches "
            f"({_NEMO_DTENSOR} train: num_global_batches = total // gbs): B x K / 512 "
            "mini-batches where 512 divides B x K, one under 512 samples, not applied "
            "where NeMo RL would drop samples",
        ),
        Default(
            "train.packing",
            True,
            "--packing",
            f"{_NEMO_YAML}: policy.sequence_packing.enabled: True, train_mb_tokens = "
            "max_total_sequence_length x train_micro_batch_size",
        ),
        Default(
            "train.router_dtype",
            "fp64",
            "--router-dtype fp64",
            f"{_NEMO_YAML}: policy.megatron_cfg.moe_router_dtype: fp64 (v0.4.0-v0.7.0; "
            "grpo_math_1B_megatron.yaml from v0.3.0); a Megatron trainer's MoE router only",
        ),
        Default(
            "forward.micro_batch",
            4,
            "--forward-micro-batch 4",
            f"{_NEMO_YAML}: policy.logprob_batch_size: 4 (packed: logprob_mb_tokens = "
            "max_total_sequence_length x logprob_batch_size)",
        ),
        Default(
            "forward.packing",
            True,
            "--packing",
            f"{_NEMO_YAML}: sequence_packing applies to the log-prob forwards too",
        ),
        Default(
            "engine.tp",
            1,
            "--rollout-tp 1",
            f"{_NEMO_YAML}: generation.vllm_cfg.tensor_parallel_size: 1",
            engines=_VLLM_CFG,
        ),
        Default(
            "engine.gpu_memory_utilization",
            0.6,
            "--gpu-memory-utilization 0.6",
            f"{_NEMO_YAML}: generation.vllm_cfg.gpu_memory_utilization: 0.6",
            engines=_VLLM_CFG,
        ),
        Default(
            "engine.max_num_seqs",
            1024,
            "--max-num-seqs 1024",
            "nemo_rl/models/generation/vllm/vllm_worker.py: vllm.LLM(**llm_kwargs) without "
            "max_num_seqs, so vLLM's UsageContext.LLM_CLASS default applies: 1024 on GPUs of "
            ">= 70 GiB other than A100 (vllm/engine/arg_utils.py, vLLM 0.9.0-0.20.0 as NeMo RL "
            "v0.3-v0.7 pin it; rlmcost.deployment.vllm_profile), 256 on A100 and smaller "
            "(give --max-num-seqs 256 there); the async engine's 128 comes from the importer; "
            "an SGLang engine keeps SGLang's own (examples/configs/grpo_math_1B_sglang.yaml at "
            "7ea279abf: max_running_requests null)",
            engines=("vllm",),
        ),
        Default(
            "engine.sleep",
            True,
            "--sleep",
            f"{_NEMO_YAML}: generation.colocated.enabled: true (vLLM sleeps while "
            "the policy trains)",
        ),
        Default(
            "engine.sleep",
            False,
            "--no-sleep",
            f"{_NEMO_YAML}: generation.mcore_generation_config.kv_cache_management_mode: "
            "persist (Megatron-core keeps its KV pool on the GPU while the policy trains; "
            "rlmcost.deployment.megatron_engine)",
            engines=("megatron",),
        ),
        Default(
            "train.zero",
            "1",
            "--zero 1",
            f"{_NEMO_MCORE_YAML}: megatron_cfg.enabled: true, optimizer."
            "use_distributed_optimizer: true (generation.backend megatron decodes on the "
            "Megatron policy: megatron_generation.py effective_megatron_cfg @7ea279abf)",
            engines=("megatron",),
        ),
        Default(
            "train.offload",
            ("optimizer-idle", "grads-idle"),
            "--offload optimizer-idle,grads-idle",
            "nemo_rl/models/policy/workers/megatron_policy_worker.py offload_before_refit "
            "(the optimizer states to the CPU, the gradient buffers freed) under "
            "grpo.py refit_policy_generation's colocated_inference @7ea279abf; the "
            "parameters stay, since the Megatron engine decodes with them "
            "(rlmcost.frameworks.nemo_rl_engine.import_engine: --rollout-tp, a dedicated "
            "inference layout, adds params-idle)",
            engines=("megatron",),
        ),
        Default(
            "train.param_dtype",
            "bf16",
            "--param-dtype bf16",
            f"{_NEMO_MCORE_YAML}: megatron_cfg.optimizer.bf16: true, params_dtype float32 "
            "(the model in bf16, fp32 main parameters in the distributed optimizer)",
            engines=("megatron",),
        ),
        Default(
            "offload_idle",
            True,
            "--offload-idle",
            "nemo_rl/models/policy/dtensor_policy_worker.py: the reference model's "
            "state dict is kept in CPU memory and swapped in for its forward",
        ),
        Default(
            "recompute_logprobs",
            True,
            "--recompute-logprobs",
            "nemo_rl/algorithms/grpo.py: policy.get_logprobs() recomputes "
            "prev_logprobs after generation",
        ),
        Default("kl", True, "--kl", f"{_NEMO_YAML}: loss_fn.reference_policy_kl_penalty: 0.01"),
        Default(
            "rule_reward",
            True,
            "--reward rule",
            f"{_NEMO_YAML}: env.math (math_verify_impl: hf_math_verify), a verifier",
        ),
    ),
    (
        "NeMo RL batch units: grpo.num_prompts_per_step counts prompts "
        "(num_generations_per_prompt multiplies it); policy.train_global_batch_size counts "
        "samples; train_micro_batch_size is per GPU; max_total_sequence_length is prompt "
        "plus response",
        "NeMo RL runs generation on the training GPUs (colocated) unless "
        "generation.colocated.enabled is false; rewards come from environments "
        "(verifiers): use rlvr",
        "NeMo RL moves the policy's optimizer states and weights to the host only when "
        "generation is colocated (grpo.py refit_policy_generation): with generation on "
        "GPUs of its own give --offload ''",
    ),
    Behaviour("ipc", "packed-nccl", True, "nemo_rl/weight_sync/ipc_weight_synchronizer.py "
              "(colocated: ZMQ + CUDA IPC), collective refit when generation.colocated is "
              "false (nemo_rl/utils/packed_tensor.py packed_broadcast_producer: packed, "
              "double-buffered buckets over one NCCL group of trainer and engine ranks); "
              "nemo_rl/algorithms/grpo.py drives Ray workers; the policy's "
              "weights leave the GPU once per step, offload_after_refit, and come back "
              "once, prepare_for_lp_inference; log-probs and the loss through "
              "nemo_rl/distributed/model_utils.py DistributedLogprob (Megatron backend); "
              "the reference's weights swapped in through host memory "
              "(use_reference_model); FSDP2 with MixedPrecisionPolicy(reduce_dtype="
              "float32) (nemo_rl/models/dtensor/parallelize.py) around the Hugging Face "
              "model run eagerly (dtensor_policy_worker.py AutoModelForCausalLM); "
              "under sequence packing the loss once per packed sequence "
              "(nemo_rl/algorithms/loss_functions.py SequencePackingLossWrapper, "
              "loss/wrapper.py at v0.6.0-v0.7.0) unless sequence_packing.fuse_loss; "
              "under packing with PP > 1 every packed micro-batch padded to the rank's "
              "largest (nemo_rl/models/megatron/data.py "
              "_get_pack_sequence_parameters_for_megatron at v0.7.0); the optimizer "
              "states moved tensor by tensor into pageable host memory and back "
              "(megatron_policy_worker.py move_optimizer, v.to('cpu')) and the Megatron "
              "gradient buffers freed, not copied (param_and_grad_buffer.py offload_to_cpu); "
              "async GRPO admits whole prompt groups and frees a group's place when its last "
              "sample returns (nemo_rl/algorithms/async_utils.py _inflight_sema at "
              "v0.6.0, async_utils/trajectory_collector.py at v0.7.0) and keeps the "
              "stale KV caches across in-flight weight updates (resume_after_refit; "
              "recompute_kv_cache_after_weight_updates false in grpo_math_1B.yaml); a "
              "batch's groups start at the weight version max_trajectory_age_steps allows "
              "(trajectory_collector.py _calculate_target_weights at v0.7.0); "
              "each call's data-parallel shard pickled once per tensor, pipeline and "
              "context rank and every rank's log-probs fetched back "
              "(nemo_rl/distributed/worker_groups.py run_all_workers_sharded_data, "
              "MultiWorkerFuture.get_results at v0.3.0); after generation, inside the "
              "generation timer, the math environment scores every response on "
              "env.math.num_workers HFVerifyWorker actors, 8 in grpo_math_1B.yaml at "
              "v0.3.0-v0.7.0 (nemo_rl/experience/rollouts.py calculate_rewards, "
              "nemo_rl/environments/math_environment.py MathEnvironment.step); its "
              "ConfigContainer has no comm_overlap (nemo_rl/models/megatron/setup.py "
              "@7ea279abf; no comm_overlap, overlap_p2p_comm nor VP key at v0.3.0-v0.7.0: "
              "rlmcost.frameworks.p2p_overlap), so Megatron-core's overlap_p2p_comm False: "
              "the interleaved schedule's pipeline sends exposed; the DTensor worker's "
              "cpu_offload steps the host shards with policy.optimizer, torch.optim.AdamW "
              "without foreach or fused in examples/configs/grpo_math_1B.yaml @7ea279abf "
              "(both False in distillation_math.yaml): the for-loop, on 16 threads a rank: "
              "ray.sub @7ea279abf exports OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} before "
              "ray start, which Ray keeps (at v0.3.0-v0.6.0 ray.sub sets none and the "
              "workers, given num_gpus and no num_cpus, got Ray's 1); with dtensor_cfg."
              "activation_checkpointing the DTensor v2 worker (dtensor_cfg._v2: true in "
              "examples/configs/grpo_math_1B.yaml from v0.4.0, which every example and recipe "
              "inherits; lm_policy.py's v1 only where it is absent) builds the model with NeMo "
              "Automodel, whose parallelizer checkpoints a transformers class's layers whole "
              "with torch's reentrant checkpoint (gradient_checkpointing_enable(use_reentrant="
              "True), Automodel parallelizer.py @24b47e85, NeMo RL v0.6.0-v0.7.0's pins; Llama "
              "and Qwen2 run as transformers classes, NeMo RL's _maybe_set_force_hf): no early "
              "stop, no per-module wrap (--module-ckpt prices the v1 worker's, nemo_rl/models/"
              "dtensor/parallelize.py; Automodel's own MoE classes wrap each block "
              "non-reentrantly, whose dense layers' early stop is not taken here: "
              "frameworks.nemo_rl_worker, which rlmcost import nemo-rl applies per model)",
              host_adam="torch", host_adam_threads=16, env_workers=8, megatron_overlap_p2p=False,
              optimizer_offload_pageable=True, grads_offload_frees=True,
              # the DTensor workers set the gradients to None at each global batch and after
              # the update, "release gradient memory before rollouts" (dtensor_policy_worker
              # .py and _v2.py train(): optimizer.zero_grad(), NVIDIA-NeMo/RL PR 1147, from
              # v0.4.0; policy/workers/dtensor_policy_worker_v2.py @7ea279abf); the Megatron
              # worker keeps its buffer (head_peak.hf_trainer: ZeRO-3 only)
              grads_freed_after_update=True,
              param_round_trips=1, stream_group_gate=True, stream_keeps_kv=True,
              phase_offload_colocated=True,
              # distillation.py setup: teacher_policy = Policy(..., init_optimizer=False), the
              # same worker class as the student's (@7ea279abf)
              teacher_policy_stored=True,
              sharded_per_rank=True, stream_version_gate=True,
              logprob_head="nemo-rl-distributed-logprob",
              reference_swap=True, fsdp2_reduce_bytes=4, hf_trainer="zero3", hf_eager=True,
              hf_output_cast=True, packed_loss_per_sequence=True, pp_pads_packed_bins=True,
              hf_ckpt_early_stop=False, hf_module_ckpt=False,  # v2: reentrant, whole layers
              hf_source="nemo_rl/models/policy/dtensor_policy_worker.py v0.3.0 "
              "(policy/workers/ at v0.7.0): attn_implementation 'flash_attention_2' with "
              "sequence packing, else None (transformers' sdpa); no Liger, no "
              "torch.compile; FSDP2 MixedPrecisionPolicy(output_dtype=float32) "
              "(nemo_rl/models/dtensor/parallelize.py)"),
    sized=(
        Sized(
            NEMO_RL_8B_EXAMPLE_FROM,
            (
                Default("train.micro_batch", 1, "--micro-batch 1",
                        f"{_NEMO_8B_YAML}: policy.train_micro_batch_size: 1"),
                Default("forward.micro_batch", 2, "--forward-micro-batch 2",
                        f"{_NEMO_8B_YAML}: policy.logprob_batch_size: 2 (packed: "
                        "logprob_mb_tokens = max_total_sequence_length x 2)"),
            ),
            "micro-batches of grpo_math_8B.yaml, NeMo RL's example for Llama-3.1-8B-Instruct, "
            "for an actor of >= 3.5 B parameters",
        ),
        Sized(
            NEMO_RL_32B_EXAMPLE_FROM,
            (
                Default("train.micro_batch", 1, "--micro-batch 1",
                        f"{_NEMO_32B_YAML}: policy.train_micro_batch_size: 1"),
                Default("forward.micro_batch", 1, "--forward-micro-batch 1",
                        f"{_NEMO_32B_YAML}: policy.logprob_batch_size unset, grpo_math_1B.yaml's "
                        "${policy.train_micro_batch_size} (2 at v0.3.1-v0.5.0)"),
                Default("train.ckpt", "full", "--ckpt full",
                        f"{_NEMO_32B_YAML}: dtensor_cfg.activation_checkpointing: true"),
                Default("engine.tp", 4, "--rollout-tp 4",
                        f"{_NEMO_32B_YAML}: generation.vllm_cfg.tensor_parallel_size: 4",
                        engines=_VLLM_CFG),
            ),
            "grpo-qwen2.5-32b-32n8g-fsdp2tp8-actckpt.v3.yaml, NeMo RL's DTensor recipe for "
            "Qwen2.5-32B, for an actor of >= 16.2 B parameters: activation checkpointing, "
            "vLLM TP 4, micro-batches of 1; its trainer TP 8 is the query's --tp, its dynamic "
            "batching taken as grpo_math_1B.yaml's sequence packing at the same token budget "
            "(max_total_sequence_length per micro-batch)",
        ),
        *NEMO_RL_MOE,
        NEMO_RL_SUPER,
    ),  # fmt: skip
)
