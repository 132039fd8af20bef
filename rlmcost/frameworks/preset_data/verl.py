"""verl's preset: its defaults, conventions and behaviour, each with its source.

Sources: verl ``verl/trainer/config/ppo_trainer.yaml`` (volcengine/verl, 2025) and the files
each entry names (``verl/workers/fsdp_workers.py``, ``verl/utils/fsdp_utils.py``,
``verl/workers/sharding_manager/fsdp_vllm.py``, ...). Data only; the lookups are in
:mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset

_VERL_YAML = "verl/trainer/config/ppo_trainer.yaml"

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
              "use_liger False, use_fused_kernels False; the importer reads neither as "
              "layer fusion); actor.use_torch_compile compiles the entropy only "
              "(verl/workers/actor/dp_actor.py); MixedPrecisionPolicy without output_dtype"),
)
