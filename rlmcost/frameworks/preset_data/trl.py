"""TRL's preset: its defaults, conventions and behaviour, each with its source.

Sources: TRL ``trl/trainer/grpo_config.py`` and ``trl/trainer/grpo_trainer.py``, transformers
``TrainingArguments`` and accelerate's launch defaults; for larger actors (``sized``, from
:data:`TRL_72B_EXAMPLE_FROM`) its documentation's Qwen2.5-72B example. Data only; the lookups
are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset, Sized
from rlmcost.frameworks.tier_placement import TierPlacement

_TRL_CFG = "trl/trainer/grpo_config.py"
_TRL_72B = ("TRL docs/source/grpo_trainer.md 'GRPO at scale: train a 70B+ Model on multiple "
            "nodes' (@f2cd5771, since f713f614e; Qwen2.5-72B, training on 4 nodes x 8 GPUs, "
            "trl vllm-serve on a fifth)")

TRL_72B_EXAMPLE_FROM = 23_500_000_000
"""Actors from which TRL's preset takes its documentation's Qwen2.5-72B example ("GRPO at
scale": accelerate with examples/accelerate_configs/deepspeed_zero3.yaml,
per_device_train_batch_size 4, ``trl vllm-serve --tensor_parallel_size 8``) instead of its
defaults: the geometric mean of the Qwen2.5-7B of docs/source/vllm_integration.md's server
examples (7.62 B) and Qwen2.5-72B's 72.71 B parameters (23.53 B), rounded down; an actor
takes the example nearer it on a log scale."""

PRESET = Preset(
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
              hf_trainer="always", hf_eager=True, liger_logits=True, hf_ckpt_early_stop=True,
              peft_zero3_reentrant=True,
              hf_source="trl/trainer/grpo_trainer.py @000bb3db: AutoModelForCausalLM."
              "from_pretrained(model, **model_init_kwargs), no attn_implementation: "
              "transformers' default sdpa (PyTorch's flash backend is FlashAttention-2); "
              "use_liger_kernel default False (transformers TrainingArguments; on: "
              "--logits fused); autocast's casts of an fp32-loaded model not priced"),
    sized=(
        Sized(
            TRL_72B_EXAMPLE_FROM,
            (
                Default("train.zero", "3", "--zero 3",
                        f"{_TRL_72B}: --config_file examples/accelerate_configs/"
                        "deepspeed_zero3.yaml (zero_stage: 3, offload_optimizer_device and "
                        "offload_param_device: none)"),
                Default("init_load", "sharded", "--init-load sharded",
                        "examples/accelerate_configs/deepspeed_zero3.yaml: zero3_init_flag: "
                        "true, from_pretrained builds the model inside deepspeed.zero.Init"),
                Default("train.micro_batch", 4, "--micro-batch 4",
                        f"{_TRL_72B}: GRPOConfig(per_device_train_batch_size=4)"),
                Default("engine.tp", 8, "--rollout-tp 8",
                        f"{_TRL_72B}: trl vllm-serve --tensor_parallel_size 8"),
            ),
            "docs/source/grpo_trainer.md's 'GRPO at scale' example, TRL's for Qwen2.5-72B, for "
            "an actor of >= 23.5 B parameters: DeepSpeed ZeRO-3, micro-batch 4, vLLM TP 8 "
            "served on GPUs of its own",
            dense_only=True,
            placement=TierPlacement(
                (("rollout", 8, "gmu=0.9"), ("actor", 32, "")),
                f"{_TRL_72B}: srun --nodes=4 accelerate launch --num_processes 32 (training), "
                "srun --nodes=1 trl vllm-serve --tensor_parallel_size 8 (vllm_mode='server'); "
                "trl/scripts/vllm_serve.py ScriptArguments.gpu_memory_utilization default 0.9; "
                "a reference (beta > 0) stays in the training processes",
                rest_with_actor=True),
        ),
    ),  # fmt: skip
)
