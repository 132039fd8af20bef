"""Framework presets: each framework's defaults and conventions, every one with its source.

``--framework verl|openrlhf|trl|nemo-rl|slime`` on an algorithm command starts the deployment
from the framework's defaults instead of rlmcost's; every flag the user gives overrides them.
A :class:`Default` names the rlmcost setting (a Deployment field such as ``engine.sleep``, or
an algorithm option such as ``recompute_logprobs``), its value, the flag that sets it by hand,
and where the framework sets it (the file of its repository or its documentation). What a
preset cannot set for every run (where the reference and reward models run, the units of the
batch knobs) is in its ``conventions``, printed as notes.

The module is the presets' data table (:data:`PRESETS`) and the lookups over it; their shape
is in :mod:`rlmcost.frameworks.preset_model`. Light to import (dataclasses and enums only): the
CLI reads presets at start-up.

Sources (files of the frameworks' repositories as stored at these versions):
verl ``verl/trainer/config/ppo_trainer.yaml`` (volcengine/verl, 2025); OpenRLHF
``openrlhf/cli/train_ppo_ray.py`` (argparse defaults); TRL ``trl/trainer/grpo_config.py`` and
transformers ``TrainingArguments``; NeMo RL ``examples/configs/grpo_math_1B.yaml``; slime
``slime/utils/arguments.py`` (THUDM/slime).
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.preset_model import (
    DEFAULT_FRAMEWORK,
    OPTION_FIELDS,
    Behaviour,
    Default,
    Framework,
    FrameworkChoice,
    Preset,
    Sized,
    framework_name,
)

__all__ = [
    "DEFAULT_FRAMEWORK", "OPTION_FIELDS", "PRESETS", "Behaviour", "Default", "Framework",
    "FrameworkChoice", "NEMO_RL_8B_EXAMPLE_FROM", "Preset", "Sized", "behaviour",
    "framework_name", "get_preset", "preset_options",
]  # fmt: skip

_VERL_YAML = "verl/trainer/config/ppo_trainer.yaml"
_ORLHF_ARGS = "openrlhf/cli/train_ppo_ray.py"
_TRL_CFG = "trl/trainer/grpo_config.py"
_NEMO_YAML = "NeMo RL examples/configs/grpo_math_1B.yaml"
_NEMO_DTENSOR = "nemo_rl/models/policy/workers/dtensor_policy_worker.py"
_NEMO_8B_YAML = "NeMo RL examples/configs/grpo_math_8B.yaml (v0.3.0-v0.7.0)"

NEMO_RL_8B_EXAMPLE_FROM = 3_500_000_000
"""Actors from which NeMo RL's defaults take the micro-batches of its 8B example
(grpo_math_8B.yaml: train 1, log-prob 2) instead of its 1B example's (grpo_math_1B.yaml, which
trains Qwen2.5-1.5B: 4 and 4): the geometric mean of the two examples' sizes, Qwen2.5-1.5B's
1.54 B and Llama-3.1-8B's 8.03 B parameters (3.52 B), rounded; an actor takes the example
nearer it on a log scale."""
_SLIME_ARGS = "slime/utils/arguments.py"

PRESETS: dict[Framework, Preset] = {
    Framework.VERL: Preset(
        Framework.VERL,
        "verl: FSDP trainer, vLLM engine colocated with it (hybrid engine) that frees its "
        "memory while the trainer runs",
        (
            Default(
                "train.zero",
                "3",
                "--zero 3",
                f"{_VERL_YAML}: actor.strategy: fsdp, fsdp_config.fsdp_size: -1 (full "
                "shard over all GPUs)",
            ),
            Default(
                "train.ckpt",
                "full",
                "--ckpt full",
                f"{_VERL_YAML}: model.enable_gradient_checkpointing: True",
            ),
            Default(
                "train.offload",
                (),
                "--offload ''",
                f"{_VERL_YAML}: actor.fsdp_config.param_offload: False, optimizer_offload: False",
            ),
            Default(
                "overhead.expandable_segments",
                True,
                "--expandable-segments",
                "verl/workers/fsdp_workers.py: set_expandable_segments(True) when the trainer "
                "takes the GPUs back from the rollout (False while the engine runs; "
                "verl/utils/device.py)",
            ),
            Default(
                "train.param_dtype",
                "fp32",
                "--param-dtype fp32",
                "verl/workers/fsdp_workers.py: fsdp_config.model_dtype None loads the actor "
                "in torch.float32 (the critic: model_dtype 'fp32'); MixedPrecision("
                "param_dtype=bf16, reduce_dtype=fp32, buffer_dtype=fp32)",
            ),
            Default(
                "init_load",
                "host-rank0",
                "--init-load host-rank0",
                "verl/workers/fsdp_workers.py _build_model_optimizer: "
                "get_init_weight_context_manager (verl/utils/fsdp_utils.py): the model on CPU "
                "on rank 0, init_empty_weights elsewhere; FSDP(sync_module_states=True, "
                "param_init_fn=init_fn) broadcasts rank 0's weights",
            ),
            Default(
                "engine.tp",
                2,
                "--rollout-tp 2",
                f"{_VERL_YAML}: rollout.tensor_model_parallel_size: 2",
            ),
            Default(
                "engine.gpu_memory_utilization",
                0.5,
                "--gpu-memory-utilization 0.5",
                f"{_VERL_YAML}: rollout.gpu_memory_utilization: 0.5",
            ),
            Default(
                "engine.max_num_seqs",
                1024,
                "--max-num-seqs 1024",
                f"{_VERL_YAML}: rollout.max_num_seqs: 1024",
            ),
            Default(
                "engine.max_num_batched_tokens",
                8192,
                "--max-num-batched-tokens 8192",
                f"{_VERL_YAML}: rollout.max_num_batched_tokens: 8192, passed to vllm.LLM "
                "(verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py @14227201e)",
            ),
            Default(
                "engine.sleep", True, "--sleep", f"{_VERL_YAML}: rollout.free_cache_engine: True"
            ),
            Default(
                "offload_idle",
                False,
                "(no --offload-idle)",
                f"{_VERL_YAML}: ref.fsdp_config.param_offload: False",
            ),
            Default(
                "logits",
                "low-memory",
                "--logits low-memory",
                "verl/utils/torch_functional.py logprobs_from_logits: flash-attn's triton "
                "cross_entropy when installed, else logprobs_from_logits_v2 (row by row for "
                "bf16); no fp32 copy of the logits",
            ),
            Default(
                "recompute_logprobs",
                True,
                "--recompute-logprobs",
                "verl/trainer/ppo/ray_trainer.py fit(): old_log_prob = "
                "actor_rollout_wg.compute_log_prob(batch), an actor forward every step",
            ),
            Default(
                "kl",
                False,
                "--no-kl",
                f"{_VERL_YAML}: actor.use_kl_loss: False, algorithm.use_kl_in_reward: "
                "False (no reference worker; GRPO examples set use_kl_loss=True)",
            ),
            Default(
                "rule_reward",
                True,
                "--reward rule",
                f"{_VERL_YAML}: reward_model.enable: False (a reward function, "
                "verl/utils/reward_score/, e.g. gsm8k and math verifiers)",
            ),
        ),
        (
            "verl batch units: data.train_batch_size and actor.ppo_mini_batch_size count "
            "prompts (rollout.n multiplies both); ppo_micro_batch_size_per_gpu and "
            "ppo_max_token_len_per_gpu are per GPU",
            "verl places actor, rollout and reference in one worker group on all GPUs "
            "(actor_rollout_ref, hybrid engine): rlmcost's co-located baseline; its default "
            "reward is a function (reward_model.enable: False): use rlvr (GRPO) or vapo (PPO)",
        ),
        Behaviour("in-process", "nccl", True, "verl/workers/sharding_manager/fsdp_vllm.py "
                  "(the hybrid engine loads FSDP's gathered parameters into vLLM in the same "
                  "process); verl/single_controller/ray (one driver); the batch padded to "
                  "rollout.prompt_length + response_length (verl/experimental/agent_loop/"
                  "agent_loop.py _postprocess) through the driver (verl/protocol.py); "
                  "Megatron backend (verl's FSDP has no TP/PP/EP): megatron_workers.py "
                  "rollout_mode exports weights per tensor; verl/third_party/vllm/"
                  "__init__.py VLLM_SLEEP_LEVEL 2 for vLLM >= 0.8.5; between phases "
                  "(verl/utils/{fsdp,megatron}_utils.py @85d5b2ee2, alike at b25bb7d4f and "
                  "b178a3cd5) the parameters go through pageable host memory both ways under "
                  "FSDP2 (offload_fsdp2_model_to_cpu: model.cpu(); load_fsdp2_model_to_gpu: "
                  "model.to(device), blocking copies) and on the way out under Megatron "
                  "(offload_megatron_model_to_cpu: param_data.cpu().pin_memory(); back by "
                  "copy_ from that pinned copy), the Megatron gradient buffers are freed, not "
                  "copied (grad_data.storage().resize_(0)); the optimizer states move with "
                  "to('cpu', non_blocking=True), which PyTorch allocates pinned (_to_copy "
                  "pin_out): the link's rate",
                  grads_offload_frees=True,
                  param_offload_pageable=2, megatron_param_offload_pageable=1,
                  padded_batch=True, megatron_colocated="per-tensor", engine_sleep_level=2,
                  hf_trainer="fsdp", hf_eager=True,
                  hf_source="verl/workers/fsdp_workers.py @b178a3cd: attn_implementation = "
                  "override_model_config.get('attn_implementation', 'flash_attention_2'); "
                  "Liger only with model.use_liger (verl/trainer/config/model/hf_model.yaml: "
                  "use_liger False, use_fused_kernels False; the importer reads neither as "
                  "layer fusion); actor.use_torch_compile compiles the entropy only "
                  "(verl/workers/actor/dp_actor.py); MixedPrecisionPolicy without output_dtype"),
    ),
    Framework.OPENRLHF: Preset(
        Framework.OPENRLHF,
        "OpenRLHF: DeepSpeed ZeRO-2 trainers and vLLM engines on GPUs of their own (Ray)",
        (
            Default(
                "logits",
                "low-memory",
                "--logits low-memory",
                "openrlhf/models/utils.py log_probs_from_logits: flash-attn's triton "
                "cross_entropy on bf16 logits (row-wise log-softmax otherwise); no fp32 copy",
            ),
            Default("train.zero", "2", "--zero 2", f"{_ORLHF_ARGS}: --zero_stage default 2"),
            Default(
                "init_load",
                "host-each",
                "--init-load host-each",
                "openrlhf/models/actor.py Actor: from_pretrained(..., device_map=None) in each "
                "Ray actor (one per GPU), in host memory, before deepspeed.initialize; "
                "HfDeepSpeedConfig (zero.Init) only under --zero_stage 3. "
                f"{_ORLHF_ARGS}'s --actor_init_on_gpu is parsed and never read",
            ),
            Default(
                "train.ckpt",
                "none",
                "--ckpt none",
                f"{_ORLHF_ARGS}: --gradient_checkpointing default False",
            ),
            Default(
                "train.micro_batch",
                4,
                "--micro-batch 4",
                f"{_ORLHF_ARGS}: --micro_train_batch_size default 4 (per GPU)",
            ),
            Default(
                "train.offload", (), "--offload ''", f"{_ORLHF_ARGS}: --adam_offload default False"
            ),
            Default(
                "engine.tp",
                1,
                "--rollout-tp 1",
                f"{_ORLHF_ARGS}: --vllm_tensor_parallel_size default 1",
            ),
            Default(
                "engine.gpu_memory_utilization",
                0.95,
                "--gpu-memory-utilization 0.95",
                f"{_ORLHF_ARGS}: --vllm_gpu_memory_utilization default 0.95",
            ),
            Default(
                "engine.sleep",
                False,
                "--no-sleep",
                f"{_ORLHF_ARGS}: --vllm_enable_sleep default False",
            ),
            Default(
                "offload_idle",
                False,
                "(no --offload-idle)",
                f"{_ORLHF_ARGS}: --ref_reward_offload default False",
            ),
            Default(
                "recompute_logprobs",
                True,
                "--recompute-logprobs",
                "openrlhf/trainer/ppo_utils/experience_maker.py: the actor recomputes "
                "action_log_probs of every sample after generation",
            ),
            Default(
                "kl",
                True,
                "--kl",
                f"{_ORLHF_ARGS}: --init_kl_coef default 0.01 "
                "(a reference model is created when it is > 0)",
            ),
        ),
        (
            "OpenRLHF batch units: --rollout_batch_size counts prompts (--n_samples_per_prompt "
            "multiplies it); --train_batch_size counts samples; --micro_train_batch_size and "
            "--micro_rollout_batch_size are per GPU",
            "OpenRLHF runs actor, reference, critic, reward and the vLLM engines on GPUs of "
            "their own unless --colocate_all_models (or --colocate_actor_ref, "
            "--colocate_critic_reward): give --groups to match, e.g. "
            "rollout=4[tp=2],actor+reference=2,critic+reward=2",
            "OpenRLHF trains Hugging Face models under DeepSpeed ZeRO (openrlhf/models/actor.py, "
            "openrlhf/utils/deepspeed.py), DeepSpeed-Chat's trainer stack: its training steps "
            "run no faster than that stack's measured rate, DSCHAT_TRAIN_PEAK_FRACTION of the "
            "peak (DeepSpeed-Chat blog Figure 6; rlmcost/perf/deepspeed_chat.py)",
        ),
        Behaviour("ipc", "nccl", True, "openrlhf/trainer/ray/ppo_actor.py "
                  "_broadcast_to_vllm (NCCL broadcast to the engines; CUDA IPC handles with "
                  "--colocate_all_models); Ray actors driven by one trainer; "
                  "openrlhf/models/actor.py and utils/deepspeed (HF models under DeepSpeed)",
                  deepspeed_hf_trainer=True, hf_trainer="always", hf_eager=True,
                  liger_logits=True,
                  hf_source="openrlhf/models/actor.py @dbdd43b0: attn_implementation "
                  "'flash_attention_2' with --flash_attn (else 'eager': not priced); "
                  "openrlhf/cli/train_ppo_ray.py @3c3be623: --ds.attn_implementation default "
                  "flash_attention_2, --ds.use_liger_kernel default False "
                  "(AutoLigerKernelForCausalLM when on: --logits fused); the model in bf16 "
                  "under DeepSpeed's bf16 engine, no casts"),
    ),
    Framework.TRL: Preset(
        Framework.TRL,
        "TRL: one accelerate process per GPU (DDP unless a DeepSpeed/FSDP accelerate config), "
        "vLLM in the training process (colocate) or as a server",
        (
            Default(
                "logits",
                "low-memory",
                "--logits low-memory",
                "trl/trainer/utils.py selective_log_softmax: log-softmax row by row for "
                "bf16/fp16 logits; no fp32 copy",
            ),
            Default(
                "init_load",
                "host-each",
                "--init-load host-each",
                "trl/trainer/grpo_trainer.py: AutoModelForCausalLM.from_pretrained(model_id, "
                "**model_init_kwargs) in every process, before accelerator.prepare; "
                "accelerate FullyShardedDataParallelPlugin cpu_ram_efficient_loading "
                "(FSDP_CPU_RAM_EFFICIENT_LOADING) defaults to False",
            ),
            Default(
                "train.zero",
                "0",
                "--zero 0",
                "accelerate launch default: DDP (ZeRO or FSDP only through an accelerate config)",
            ),
            Default(
                "train.ckpt",
                "full",
                "--ckpt full",
                f"{_TRL_CFG}: gradient_checkpointing defaults to True",
            ),
            Default(
                "train.micro_batch",
                8,
                "--micro-batch 8",
                "transformers TrainingArguments: per_device_train_batch_size default 8",
            ),
            Default(
                "engine.tp", 1, "--rollout-tp 1", f"{_TRL_CFG}: vllm_tensor_parallel_size default 1"
            ),
            Default(
                "engine.gpu_memory_utilization",
                0.3,
                "--gpu-memory-utilization 0.3",
                f"{_TRL_CFG}: vllm_gpu_memory_utilization default 0.3 (colocate mode)",
            ),
            Default(
                "engine.sleep",
                False,
                "--no-sleep",
                f"{_TRL_CFG}: vllm_enable_sleep_mode default False",
            ),
            Default(
                "recompute_logprobs",
                False,
                "--no-recompute-logprobs",
                f"{_TRL_CFG}: num_iterations 1 and steps_per_generation = "
                "gradient_accumulation_steps: the old log-probs are the current policy's, "
                "detached (trl/trainer/grpo_trainer.py), no extra forward",
            ),
            Default(
                "kl",
                False,
                "--no-kl",
                f"{_TRL_CFG}: beta default 0.0 (the reference model is not loaded)",
            ),
            Default(
                "rule_reward",
                True,
                "--reward rule",
                "trl/trainer/grpo_trainer.py: reward_funcs (the GRPO examples pass Python "
                "functions such as accuracy_reward)",
            ),
        ),
        (
            "TRL batch units: per_device_train_batch_size counts completions per device; the "
            "generation batch is per_device_train_batch_size x processes x "
            "steps_per_generation completions, which num_generations must divide",
            "TRL keeps the reference model (beta > 0) in the training process; rewards are "
            "functions or models given in code",
        ),
        Behaviour("in-process", "nccl", False, "trl/trainer/grpo_trainer.py "
                  "_move_model_to_vllm: llm.load_weights in the trainer's process "
                  "(vllm_mode=colocate), trl/extras/vllm_client.py update_named_param (NCCL "
                  "to the server); accelerate processes, no controller",
                  hf_trainer="always", hf_eager=True, liger_logits=True,
                  hf_source="trl/trainer/grpo_trainer.py @000bb3db: AutoModelForCausalLM."
                  "from_pretrained(model, **model_init_kwargs), no attn_implementation: "
                  "transformers' default sdpa (PyTorch's flash backend is FlashAttention-2); "
                  "use_liger_kernel default False (transformers TrainingArguments; on: "
                  "--logits fused); autocast's casts of an fp32-loaded model not priced"),
    ),
    Framework.NEMO_RL: Preset(
        Framework.NEMO_RL,
        "NeMo RL: DTensor (FSDP2) policy and vLLM colocated on the same GPUs, the reference "
        "kept in host memory",
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
            ),
            Default(
                "engine.gpu_memory_utilization",
                0.6,
                "--gpu-memory-utilization 0.6",
                f"{_NEMO_YAML}: generation.vllm_cfg.gpu_memory_utilization: 0.6",
            ),
            Default(
                "engine.max_num_seqs",
                1024,
                "--max-num-seqs 1024",
                "nemo_rl/models/generation/vllm/vllm_worker.py: vllm.LLM(**llm_kwargs) without "
                "max_num_seqs, so vLLM's UsageContext.LLM_CLASS default applies: 1024 on GPUs of "
                ">= 70 GiB other than A100 (vllm/engine/arg_utils.py, vLLM 0.9.0-0.20.0 as NeMo RL "
                "v0.3-v0.7 pin it; rlmcost.deployment.vllm_profile), 256 on A100 and smaller "
                "(give --max-num-seqs 256 there); the async engine's 128 comes from the importer",
            ),
            Default(
                "engine.sleep",
                True,
                "--sleep",
                f"{_NEMO_YAML}: generation.colocated.enabled: true (vLLM sleeps while "
                "the policy trains)",
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
                  "MultiWorkerFuture.get_results at v0.3.0)",
                  optimizer_offload_pageable=True, grads_offload_frees=True,
                  param_round_trips=1, stream_group_gate=True, stream_keeps_kv=True,
                  sharded_per_rank=True, stream_version_gate=True,
                  logprob_head="nemo-rl-distributed-logprob",
                  reference_swap=True, fsdp2_reduce_bytes=4, hf_trainer="zero3", hf_eager=True,
                  hf_output_cast=True, packed_loss_per_sequence=True, pp_pads_packed_bins=True,
                  hf_source="nemo_rl/models/policy/dtensor_policy_worker.py v0.3.0 "
                  "(policy/workers/ at v0.7.0): attn_implementation 'flash_attention_2' with "
                  "sequence packing, else None (transformers' sdpa); no Liger, no "
                  "torch.compile; FSDP2 MixedPrecisionPolicy(output_dtype=float32) "
                  "(nemo_rl/models/dtensor/parallelize.py)"),
        sized=Sized(
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
        ),  # fmt: skip
    ),
    Framework.SLIME: Preset(
        Framework.SLIME,
        "slime: Megatron trainer and SGLang engines on GPUs of their own unless --colocate",
        (
            Default(
                "train.zero",
                "0",
                "--zero 0",
                "Megatron-LM: --use-distributed-optimizer default False (slime's "
                "scripts/run-qwen3-4B.sh does not set it)",
            ),
            Default(
                "init_load",
                "sharded",
                "--init-load sharded",
                "Megatron-LM megatron/training/training.py get_model: each rank builds its "
                "TP/PP part of the model on its GPU and loads its part of the checkpoint "
                "(megatron/core/dist_checkpointing)",
            ),
            Default(
                "train.ckpt",
                "none",
                "--ckpt none",
                "Megatron-LM: no --recompute-granularity by default",
            ),
            Default(
                "train.micro_batch",
                1,
                "--micro-batch 1",
                f"{_SLIME_ARGS}: --micro-batch-size default 1",
            ),
            Default(
                "engine.tp",
                1,
                "--rollout-tp 1",
                f"{_SLIME_ARGS}: --rollout-num-gpus-per-engine default 1",
            ),
            Default(
                "engine.sleep",
                False,
                "--no-sleep",
                f"{_SLIME_ARGS}: --colocate default False (engines on their own GPUs; "
                "--colocate turns --offload on)",
            ),
            Default(
                "recompute_logprobs",
                True,
                "--recompute-logprobs",
                f"{_SLIME_ARGS}: --use-rollout-logprobs default False (the actor "
                "recomputes the log-probs)",
            ),
            Default(
                "kl",
                False,
                "--no-kl",
                f"{_SLIME_ARGS}: --kl-coef default 0.0, --use-kl-loss default False (no "
                "reference model)",
            ),
            Default(
                "rule_reward",
                True,
                "--reward rule",
                f"{_SLIME_ARGS}: --rm-type (rule-based: deepscaler, math, dapo; "
                "slime/rollout/rm_hub/)",
            ),
        ),
        (
            "slime batch units: --rollout-batch-size counts prompts (--n-samples-per-prompt "
            "multiplies it); --global-batch-size counts samples; --micro-batch-size and "
            "--max-tokens-per-gpu are per GPU",
            "slime puts the SGLang engines on --rollout-num-gpus GPUs of their own unless "
            "--colocate: give --groups to match (e.g. rollout=4,actor=4); SGLang picks "
            "mem_fraction_static itself unless --sglang-mem-fraction-static",
        ),
        Behaviour("ipc", "nccl", True, "slime/backends/megatron_utils/update_weight_utils.py"
                  " (CUDA IPC to SGLang when --colocate, NCCL broadcast otherwise); a Ray "
                  "driver (slime/ray/)"),
    ),
}


def preset_options(framework: str | Framework | None, alg: Any = None) -> dict[str, Any]:
    """The algorithm options ``recompute_logprobs``, ``kl``, ``rule_reward`` and
    ``global_batch`` (samples per optimizer step; None: one mini-batch) a framework implies
    for ``alg`` (an :class:`~rlmcost.algorithms.model.Algorithm`; None: for any
    algorithm, as `compare`
    runs several): a preset's option applies only where the algorithm has what it changes
    (old log-probs to recompute: an online algorithm that generates; a reference to drop: an
    online algorithm with one), so ``dpo --framework verl`` keeps DPO's reference. The
    reward kind (a verifier instead of a reward model) applies to the critic-free online
    algorithms (GRPO and its family), whose framework examples train on math with a rule
    verifier; PPO keeps its reward model (RLHF) unless ``--reward rule``.
    """
    out: dict[str, Any] = {"recompute_logprobs": False, "kl": True, "rule_reward": False,
                           "global_batch": None}  # fmt: skip
    if framework is None or str(framework).lower() == "none":
        return out
    preset = get_preset(framework)
    if alg is None:
        out["recompute_logprobs"] = bool(preset.option("recompute_logprobs"))
        return out
    from rlmcost.algorithms.kinds import Kind, Role

    online = not alg.offline and any(i.kind is Kind.GENERATE for i in alg.invocations)
    if online:
        out["recompute_logprobs"] = bool(preset.option("recompute_logprobs"))
        out["global_batch"] = preset.option("global_batch")
        has_ref = any(i.role is Role.REFERENCE for i in alg.invocations)
        if has_ref and preset.option("kl") is False:
            out["kl"] = False
        roles = {i.role for i in alg.invocations}
        if Role.REWARD in roles and Role.CRITIC not in roles and preset.option("rule_reward"):
            out["rule_reward"] = True  # critic-free (GRPO family): the examples' verifiers
    return out


def behaviour(framework: str | None) -> Behaviour | None:
    """The :class:`Behaviour` of ``framework`` (None for none or an unknown name)."""
    try:
        return PRESETS[Framework(str(framework).lower())].behaviour
    except ValueError:
        return None


def get_preset(name: str | Framework) -> Preset:
    """The preset of ``name``; SpecError naming the choices otherwise."""
    try:
        return PRESETS[Framework(str(name).lower())]
    except ValueError:
        raise SpecError(
            f"unknown framework '{name}'; use one of {', '.join(f.value for f in Framework)}"
        ) from None
