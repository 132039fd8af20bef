"""verl's preset: its defaults, conventions and behaviour, each with its source.

Sources: verl ``verl/trainer/config/ppo_trainer.yaml`` (volcengine/verl, 2025) and the files
each entry names (``verl/workers/fsdp_workers.py``, ``verl/utils/fsdp_utils.py``,
``verl/workers/sharding_manager/fsdp_vllm.py``, ...); for larger actors (``sized``) its example
scripts for Qwen2.5-32B (from :data:`VERL_32B_EXAMPLE_FROM`) and Qwen2-72B (from
:data:`VERL_72B_EXAMPLE_FROM`). Data only; the lookups are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_data.moe_tiers import VERL_MOE
from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset, Sized

_VERL_YAML = "verl/trainer/config/ppo_trainer.yaml"
_VERL_32B = "verl examples/ppo_trainer/run_qwen2.5-32b.sh (@b178a3cd5; 4 nodes x 8 GPUs)"
_VERL_72B = ("verl examples/tuning/70b/qwen2-70b_grpo_32_h800_fsdp_vllm.sh (@b178a3cd5, "
             "since c62e7ac7b; 4 nodes x 8 H800)")

VERL_32B_EXAMPLE_FROM = 15_800_000_000
"""Actors from which verl's preset takes its Qwen2.5-32B example (examples/ppo_trainer/
run_qwen2.5-32b.sh: vLLM TP 4, micro-batches of 8 and 16) instead of its defaults, which its
7B examples keep (examples/grpo_trainer/run_qwen2-7b.sh: rollout TP 2, as ppo_trainer.yaml):
the geometric mean of Qwen2-7B's 7.62 B and Qwen2.5-32B's 32.76 B parameters (15.80 B); an
actor takes the example nearer it on a log scale."""

VERL_72B_EXAMPLE_FROM = 48_800_000_000
"""Actors from which verl's preset takes its Qwen2-72B GRPO example (examples/tuning/70b/
qwen2-70b_grpo_32_h800_fsdp_vllm.sh: vLLM TP 16, the actor's and reference's parameters and
the optimizer in host memory between phases, a token budget of 24,000 per GPU) instead of the
32 B one: the geometric mean of Qwen2.5-32B's 32.76 B and Qwen2-72B's 72.71 B parameters
(48.81 B), rounded down. A Llama-3.1-70B (70.55 B) takes it: the 32 B example's vLLM TP 4
holds 35 GB of its bf16 weights per GPU under verl's 0.5 reservation (40 GB of an 80 GB
GPU), which leaves its KV cache 5 GB."""

PRESET = Preset(
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
            256,
            "--max-num-seqs 256",
            "verl/trainer/config/rollout/rollout.yaml @b178a3cd5: max_num_seqs: 256 (1024 at "
            "every release v0.1-v0.7.0; 256 from PR 4280, e9405d70b, 2026-01-23), passed to "
            "vLLM (vllm_async_server.py engine args, since PR 2960) and to SGLang "
            "(async_sglang_server.py max_running_requests, since PR 3134), so any engine; "
            "older verl: `rlmcost import verl --verl-version` (rlmcost.frameworks."
            "verl_versions)",
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
              "pin_out): the link's rate; the FSDP actor's and critic's updates end with "
              "optimizer.zero_grad() (verl/workers/actor/dp_actor.py update_policy, "
              "verl/workers/critic/dp_critic.py update_critic @b25bb7d4f; set_to_none, "
              "FSDP2 frees the gradient shards): no gradients between updates; "
              "_forward_micro_batch divides the logits in place on a view (div_(temperature)) "
              "before flash-attn's in-place cross_entropy: 4 logits buffers at the head's "
              "backward (CopySlices), none kept past it (rlmcost.placement.head_peak); "
              "dynamic batching splits a rank's batch by its unpadded lengths "
              "(verl/utils/seqlen_balancing.py rearrange_micro_batches; "
              "rlmcost.placement.packed_lengths); under FSDP2's offload_policy the "
              "optimizer steps the host shards with torch.optim.AdamW(params, lr, "
              "weight_decay, betas), neither foreach nor fused: the for-loop "
              "(verl/workers/config/optimizer.py build_optimizer @b178a3cd) on one thread a "
              "rank: RayClassWithInitArgs gives the workers num_gpus and no num_cpus "
              "(verl/single_controller/ray/base.py @b178a3cd), so Ray sets OMP_NUM_THREADS=1 "
              "(PPO_RAY_RUNTIME_ENV, verl/trainer/constants_ppo.py, sets none)",
              host_adam="torch", host_adam_threads=1, grads_offload_frees=True,
              grads_freed_after_update=True,
              low_memory_train_copies=4, logits_freed_before_layers=True,
              budget_packs_lengths=True,
              param_offload_pageable=2, megatron_param_offload_pageable=1,
              padded_batch=True, megatron_colocated="per-tensor", engine_sleep_level=2,
              hf_trainer="fsdp", hf_eager=True, hf_ckpt_early_stop=True,
              megatron_grad_reduce="fp32",  # megatron_utils.get_model, mbridge (grad_buffer)
              hf_source="verl/workers/fsdp_workers.py @b178a3cd: attn_implementation = "
              "override_model_config.get('attn_implementation', 'flash_attention_2'); "
              "Liger only with model.use_liger (verl/trainer/config/model/hf_model.yaml: "
              "use_liger False, use_fused_kernels False; the importer reads use_liger as "
              "--trainer-kernels liger); actor.use_torch_compile compiles the entropy only "
              "(verl/workers/actor/dp_actor.py); MixedPrecisionPolicy without output_dtype"),
    sized=(
        Sized(
            VERL_32B_EXAMPLE_FROM,
            (
                Default("train.micro_batch", 8, "--micro-batch 8",
                        f"{_VERL_32B}: actor.ppo_micro_batch_size_per_gpu=8"),
                Default("forward.micro_batch", 16, "--forward-micro-batch 16",
                        f"{_VERL_32B}: rollout.log_prob_micro_batch_size_per_gpu=16"),
                Default("engine.tp", 4, "--rollout-tp 4",
                        f"{_VERL_32B}: rollout.tensor_model_parallel_size=4"),
            ),
            "examples/ppo_trainer/run_qwen2.5-32b.sh, verl's example for Qwen2.5-32B, for an "
            "actor of >= 15.8 B parameters: vLLM TP 4, micro-batches of 8 (training) and 16 "
            "(log-probs)",
            dense_only=True,
        ),
        Sized(
            VERL_72B_EXAMPLE_FROM,
            (
                Default("train.offload", ("params-idle", "optimizer-idle"),
                        "--offload params-idle,optimizer-idle",
                        f"{_VERL_72B}: actor.fsdp_config.param_offload=True, "
                        "optimizer_offload=True"),
                Default("offload_idle", True, "--offload-idle",
                        f"{_VERL_72B}: ref.fsdp_config.param_offload=True"),
                Default("train.max_tokens_per_gpu", 24000, "--max-tokens-per-gpu 24000",
                        f"{_VERL_72B}: actor.use_dynamic_bsz=True, "
                        "ppo_max_token_len_per_gpu=24000 (the log-prob forwards' budget "
                        "follows it: rollout.log_prob_max_token_len_per_gpu, ppo_trainer.yaml)"),
                Default("engine.tp", 16, "--rollout-tp 16",
                        f"{_VERL_72B}: rollout.tensor_model_parallel_size=16"),
                Default("engine.gpu_memory_utilization", 0.6, "--gpu-memory-utilization 0.6",
                        f"{_VERL_72B}: rollout.gpu_memory_utilization=0.6"),
                Default("kl", True, "--kl",
                        f"{_VERL_72B}: actor.use_kl_loss=True, kl_loss_coef=0.001 "
                        "(low_var_kl): a reference forward every step"),
            ),
            "examples/tuning/70b/qwen2-70b_grpo_32_h800_fsdp_vllm.sh, verl's GRPO example for "
            "Qwen2-72B on 32 GPUs, for an actor of >= 48.8 B parameters: vLLM TP 16 at 0.6, "
            "parameters and optimizer in host memory between phases, 24,000 tokens per GPU, "
            "a KL loss against the reference",
            dense_only=True,
        ),
        *VERL_MOE,
    ),  # fmt: skip
)
