"""OpenRLHF's preset: its defaults, conventions and behaviour, each with its source.

Sources: OpenRLHF ``openrlhf/cli/train_ppo_ray.py`` (argparse defaults) and the files each
entry names (``openrlhf/models/actor.py``, ``openrlhf/trainer/ray/ppo_actor.py``, ...). An
actor of any size runs as one of OpenRLHF's examples (``sized``; ``--no-sized-defaults``: the
argument defaults, as `rlmcost import` reads a command line): under
:data:`OPENRLHF_70B_EXAMPLE_FROM` its README's Hybrid Engine example for Llama-3-8B (every model
and the engines on the same GPUs, both asleep while the other runs), from it its Llama-3-70B
example (each model on GPUs of its own). OpenRLHF's README says why two: "Using hybrid engine
... rather than distributed RLHF when there are enough GPU memory ... For a large base model, if
an OOM occurs, do not use any --colocate_xxxx options" (README.md 'Performance Tuning Guide'
@c250c21a). Data only; the lookups are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset, Sized
from rlmcost.frameworks.tier_placement import TierPlacement

_ORLHF_ARGS = "openrlhf/cli/train_ppo_ray.py"
_ORLHF_70B = ("OpenRLHF examples/scripts/train_ppo_llama_ray_70b.sh (@c250c21a, 2025-08-15; "
              "removed with other examples in 34ba2900, 2026-01-05; 32 GPUs: vLLM 4 x TP 2, "
              "actor 8, critic 8, reference 4, reward 4)")

_ORLHF_8B = ("OpenRLHF examples/scripts/train_ppo_llama_ray_hybrid_engine.sh (@c250c21a, "
             "2025-08-15: README.md's 'PPO/REINFORCE++ with Ray and vLLM' quick start, 8 GPUs, "
             "--colocate_all_models; its successor train_ppo_ray_hybrid_engine.sh @3c3be623 "
             "the same with --train.colocate_all)")

OPENRLHF_70B_EXAMPLE_FROM = 23_800_000_000
"""Actors from which OpenRLHF's preset takes its Llama-3-70B example
(examples/scripts/train_ppo_llama_ray_70b.sh: ZeRO-3, Adam offload, gradient checkpointing,
micro-batch 1, vLLM TP 2) instead of its argument defaults: the geometric mean of the 8 B
model of its main PPO example (examples/scripts/train_ppo_llama_ray.sh, Llama-3-8B: 8.03 B)
and Llama-3-70B's 70.55 B parameters (23.80 B); an actor takes the example nearer it on a log
scale. OpenRLHF has no example between the two."""


def _zero3_checkpointed(src: str) -> tuple[Default, ...]:
    """What OpenRLHF's examples ``src`` share: ZeRO-3 (each rank builds its shard under
    ``deepspeed.zero.Init``) and gradient checkpointing."""
    return (
        Default("train.zero", "3", "--zero 3", f"{src}: --zero_stage 3"),
        Default("init_load", "sharded", "--init-load sharded",
                "openrlhf/models/actor.py: under --zero_stage 3 HfDeepSpeedConfig builds the "
                "model inside deepspeed.zero.Init, each rank its shard"),
        Default("train.ckpt", "full", "--ckpt full", f"{src}: --gradient_checkpointing"),
    )


PRESET = Preset(
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
            "engine.prefix_caching",
            False,
            "--no-prefix-caching",
            f"{_ORLHF_ARGS}: --enable_prefix_caching store_true, default False (397d6a1c; "
            "--vllm.enable_prefix_caching since ed62d0e2)",
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
              "--colocate_all_models); Ray actors driven by one trainer, each with "
              "num_cpus=num_gpus_per_actor (1, or 0.75/0.25 colocated: openrlhf/trainer/ray/"
              "launcher.py @dbdd43b0; 0.2-1 at 3c3be623), so Ray's OMP_NUM_THREADS is 1 and "
              "--adam_offload's DeepSpeedCPUAdam runs on one thread a rank; "
              "openrlhf/models/actor.py and utils/deepspeed (HF models under DeepSpeed)",
              deepspeed_hf_trainer=True, hf_trainer="always", hf_eager=True,
              liger_logits=True, host_adam_threads=1, hf_ckpt_early_stop=True,
              hf_source="openrlhf/models/actor.py @dbdd43b0: attn_implementation "
              "'flash_attention_2' with --flash_attn (else 'eager': not priced); "
              "openrlhf/cli/train_ppo_ray.py @3c3be623: --ds.attn_implementation default "
              "flash_attention_2, --ds.use_liger_kernel default False "
              "(AutoLigerKernelForCausalLM when on: --logits fused); the model in bf16 "
              "under DeepSpeed's bf16 engine, no casts"),
    sized=(
        Sized(
            0,
            (
                *_zero3_checkpointed(_ORLHF_8B),
                Default("train.micro_batch", 4, "--micro-batch 4",
                        f"{_ORLHF_8B}: --micro_train_batch_size 4"),
                Default("engine.tp", 2, "--rollout-tp 2",
                        f"{_ORLHF_8B}: --vllm_num_engines 4 --vllm_tensor_parallel_size 2"),
                Default("engine.gpu_memory_utilization", 0.5, "--gpu-memory-utilization 0.5",
                        f"{_ORLHF_8B}: --vllm_gpu_memory_utilization 0.5"),
                Default("engine.sleep", True, "--sleep",
                        f"{_ORLHF_8B}: --colocate_all_models --vllm_enable_sleep (the engines "
                        "release their memory while the models train)"),
                Default("train.offload", ("optimizer-idle", "grads-idle"),
                        "--offload optimizer-idle,grads-idle",
                        f"{_ORLHF_8B}: --deepspeed_enable_sleep (offload_deepspeed_states: the "
                        "actor's and critic's ZeRO-3 optimizer states and gradients in host "
                        "memory between their training phases, openrlhf/utils/deepspeed/"
                        "deepspeed_utils.py)"),
                Default("engine.eager", True, "--enforce-eager",
                        f"{_ORLHF_8B}: --enforce_eager"),
            ),
            "examples/scripts/train_ppo_llama_ray_hybrid_engine.sh, OpenRLHF's Hybrid Engine "
            "example for Llama-3-8B (its README's quick start), for a dense actor of < 23.8 B "
            "parameters and any mixture of experts: every model and the vLLM engines on the same "
            "GPUs (--colocate_all_models), ZeRO-3, gradient checkpointing, micro-batch 4, vLLM "
            "TP 2 at 0.5 with sleep, the trainers' optimizer states and gradients in host memory "
            "between phases (--deepspeed_enable_sleep)",
            summary="OpenRLHF: DeepSpeed ZeRO-3 trainers and vLLM engines on the same GPUs, "
            "each asleep while the other runs (Ray Hybrid Engine)",
        ),
        Sized(
            OPENRLHF_70B_EXAMPLE_FROM,
            (
                *_zero3_checkpointed(_ORLHF_70B),
                Default("train.micro_batch", 1, "--micro-batch 1",
                        f"{_ORLHF_70B}: --micro_train_batch_size 1"),
                Default("train.offload", ("optimizer", "grads"), "--offload optimizer,grads",
                        f"{_ORLHF_70B}: --adam_offload (DeepSpeed offload_optimizer, "
                        "openrlhf/utils/deepspeed_utils.py get_train_ds_config: CPU Adam, "
                        "the gradient partition on the host too)"),
                Default("engine.tp", 2, "--rollout-tp 2",
                        f"{_ORLHF_70B}: --vllm_tensor_parallel_size 2"),
            ),
            "examples/scripts/train_ppo_llama_ray_70b.sh, OpenRLHF's example for "
            "Llama-3-70B, for an actor of >= 23.8 B parameters: ZeRO-3 with Adam offload, "
            "gradient checkpointing, micro-batch 1, vLLM TP 2",
            dense_only=True,
            summary="OpenRLHF: DeepSpeed ZeRO-3 trainers and vLLM engines on GPUs of their own "
            "(Ray)",
            placement=TierPlacement(
                (("rollout", 8, ""), ("actor", 8, ""), ("critic", 8, ""), ("reference", 4, ""),
                 ("reward", 4, "")),
                f"{_ORLHF_70B}: --vllm_num_engines 4 x --vllm_tensor_parallel_size 2, "
                "--actor_num_gpus_per_node 8, --critic_num_gpus_per_node 8, "
                "--ref_num_gpus_per_node 4, --reward_num_gpus_per_node 4 (1 node each), "
                "no --colocate_* flag: each model on GPUs of its own"),
        ),
    ),  # fmt: skip
)
