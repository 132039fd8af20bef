"""slime's preset: its defaults, conventions and behaviour, each with its source.

Sources: slime ``slime/utils/arguments.py`` (THUDM/slime), Megatron-LM's argument defaults and
the files each entry names. Data only; the lookups are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset

_SLIME_ARGS = "slime/utils/arguments.py"

PRESET = Preset(
    Framework.SLIME,
    "slime: Megatron trainer and SGLang engines on GPUs of their own unless --colocate",
    (
        Default(
            "train.zero",
            "1",
            "--zero 1",
            "slime/backends/megatron_utils/arguments.py _set_default_megatron_args: "
            "args.use_distributed_optimizer = True ('always use zero optimizer'; THUDM/slime "
            "e0be9a075 to 624b824a)",
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
            "engine.kind",
            "sglang",
            "--engine sglang",
            "slime's rollout engines are SGLang servers (slime/backends/sglang_utils/"
            "sglang_engine.py at THUDM/slime 624b824a)",
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
              "driver (slime/ray/); Qwen3.5's Gated DeltaNet as nn.Linear layers inside "
              "HuggingfaceAttention, gathered over TP and run whole on each rank "
              "(slime_plugins/models/qwen3_5.py, hf_attention.py @624b824a; radixark/miles "
              "miles_plugins/models/ @bb6f7dbd); --optimizer-cpu-offload is Megatron-core's "
              "HybridDeviceOptimizer with torch.optim.AdamW(fused=True) as its CPU optimizer "
              "(megatron/core/optimizer/__init__.py @1dcf0daf, slime's docker/Dockerfile pin: "
              "'from torch.optim import AdamW as CPUAdam', fused=True in its defaults), on "
              "one thread a rank: the training actors take num_cpus=num_gpus_per_actor=0.4 "
              "(slime/ray/placement_group.py allocate_train_group, slime/ray/actor_group.py "
              "@624b824a; miles/ray/placement_group.py, miles/ray/train/actor_factory.py "
              "@31f1ca96), so Ray sets OMP_NUM_THREADS=1; neither sets it itself; "
              "--offload-train sets disable_grad_buffers_cpu_backup, so the gradient buffers "
              "are allocated in a torch_memory_saver region with enable_cpu_backup=False and "
              "released, not copied, between phases (slime/utils/arguments.py "
              "slime_validate_args and docker/patch/latest/megatron.patch since 1c8107312, "
              "2026-05-19; miles/utils/arguments.py since 4a7025605, 2026-03-10)",
              linear_mixer_tp_replicated=True, host_adam_threads=1, grads_offload_frees=True,
              megatron_grad_reduce="fp32"),  # Megatron-LM's validate_args (grad_buffer)
)
