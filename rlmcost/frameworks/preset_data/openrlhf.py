"""OpenRLHF's preset: its defaults, conventions and behaviour, each with its source.

Sources: OpenRLHF ``openrlhf/cli/train_ppo_ray.py`` (argparse defaults) and the files each
entry names (``openrlhf/models/actor.py``, ``openrlhf/trainer/ray/ppo_actor.py``, ...). Data
only; the lookups are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset

_ORLHF_ARGS = "openrlhf/cli/train_ppo_ray.py"

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
)
