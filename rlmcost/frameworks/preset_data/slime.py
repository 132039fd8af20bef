"""slime's preset: its defaults, conventions and behaviour, each with its source.

Sources: slime ``slime/utils/arguments.py`` (THUDM/slime), Megatron-LM's argument defaults and
the files each entry names. An actor of any size runs as one of slime's examples (``sized``;
``--no-sized-defaults``: the argument defaults, as `rlmcost import` reads a command line): under
:data:`SLIME_32B_EXAMPLE_FROM` its Qwen3-4B example (scripts/run-qwen3-4B.sh, the engines and
the trainer on the same GPUs under --colocate), from it its Qwen3-32B example; mixtures of
experts take its MoE examples (:mod:`rlmcost.frameworks.preset_data.moe_tiers`). Data only; the
lookups are in :mod:`rlmcost.frameworks.presets`.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_data.model_examples import SLIME_GLM_FLASH
from rlmcost.frameworks.preset_data.moe_tiers import SLIME_MOE
from rlmcost.frameworks.preset_model import Behaviour, Default, Framework, Preset, Sized

_SLIME_ARGS = "slime/utils/arguments.py"
_SLIME_32B = "slime scripts/run-qwen3-32B.sh (THUDM/slime @624b824a; 8 GPUs, --colocate)"
_COLOCATED = ("slime: Megatron trainer and SGLang engines on the same GPUs, each offloaded "
              "while the other runs (--colocate)")
_SLIME_4B = "slime scripts/run-qwen3-4B.sh (THUDM/slime @624b824a; 8 GPUs, --colocate)"

SLIME_32B_EXAMPLE_FROM = 11_500_000_000
"""Actors from which slime's preset takes its Qwen3-32B example (scripts/run-qwen3-32B.sh:
Megatron TP 8 with sequence parallelism, full recomputation, a token budget of 20,480 per GPU,
the CPU optimizer, SGLang engines of TP 8 at mem_fraction_static 0.7 colocated with the
trainer, which --colocate offloads between phases) instead of its argument defaults: the
geometric mean of its quick-start example's Qwen3-4B (scripts/run-qwen3-4B.sh: 4.02 B) and
Qwen3-32B's 32.76 B parameters (11.48 B), rounded; an actor takes the example nearer it on a
log scale. slime has no dense example above 32 B: a 70 B actor takes the 32 B one's.

slime's GLM-Z1-9B example (scripts/run-glm4-9B.sh @624b824a) is not a tier: its Megatron TP 2
with SP and full recomputation (uniform, 1 layer) are the Qwen3-4B example's, and its 4,608
tokens per GPU under CP 2 bin the same 9,216 tokens a micro-batch as the 4B example's 9,216 at
CP 1 (slime/utils/dp_schedule.py: ``max_per_bin = max_tokens_per_gpu * cp_size``); the rest is
its device split (SGLang TP 2 on --rollout-num-gpus 4 beside the trainer's 4, no --colocate),
under which an 8 B actor on 4 GPUs, or with a critic, would fall back to co-located engines
that never sleep (tests/test_preset_small_tiers.py checks the first two against the script)."""


def _colocated_example(src: str, *, tp: int, tokens: int, offload: tuple[str, ...],
                       offload_why: str) -> tuple[Default, ...]:
    """The defaults of one of slime's dense --colocate examples (``src``: the script): Megatron
    TP ``tp`` with SP and full recomputation (uniform, 1 layer), a dynamic batch of ``tokens``
    per GPU, the trainer's ``offload`` (``offload_why``), SGLang engines of TP ``tp`` at
    mem_fraction_static 0.7 that sleep while the trainer runs, and the reference loaded."""
    return (
        Default("train.tp", tp, f"--tp {tp}", f"{src}: --tensor-model-parallel-size {tp}"),
        Default("train.sp", True, "--sp", f"{src}: --sequence-parallel"),
        Default("train.ckpt", "full", "--ckpt full", f"{src}: --recompute-granularity full, "
                "--recompute-method uniform, --recompute-num-layers 1"),
        Default("train.max_tokens_per_gpu", tokens, f"--max-tokens-per-gpu {tokens}",
                f"{src}: --use-dynamic-batch-size, --max-tokens-per-gpu {tokens}"),
        Default("train.offload", offload, f"--offload {','.join(offload)}",
                f"{src}: {offload_why}"),
        Default("engine.tp", tp, f"--rollout-tp {tp}", f"{src}: --rollout-num-gpus-per-engine "
                f"{tp}"),
        Default("engine.gpu_memory_utilization", 0.7, "--gpu-memory-utilization 0.7",
                f"{src}: --sglang-mem-fraction-static 0.7", engines=("sglang",)),
        Default("engine.sleep", True, "--sleep", f"{src}: --colocate (offload_rollout: the "
                "engines release their memory while the trainer runs)"),
        Default("kl", True, "--kl", f"{src}: --use-kl-loss --kl-loss-coef 0.00 (slime still "
                "loads the reference, --ref-load, and runs its forward: "
                "slime/ray/placement_group.py with_ref)"),
        Default("offload_idle", True, "--offload-idle", f"{src}: the reference's weights wait "
                "in host memory and are copied into the actor's model for its forward "
                "(weights_backuper 'ref' tag, slime/backends/megatron_utils/actor.py)"),
    )


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
    sized=(
        Sized(0, _colocated_example(
            _SLIME_4B, tp=2, tokens=9216, offload=("optimizer-idle", "params-idle", "grads-idle"),
            offload_why="--colocate (offload_train: the trainer's parameters, gradients and "
            "optimizer states leave the GPUs while the engines run; slime/utils/arguments.py)"),
            "scripts/run-qwen3-4B.sh, slime's example for Qwen3-4B, for an actor of < 11.5 B "
            "parameters (a mixture of experts of < 22 B): Megatron TP 2 with SP, full "
            "recomputation, 9,216 tokens per GPU, SGLang TP 2 at 0.7 on the same GPUs "
            "(--colocate: each side's memory released while the other runs), the reference "
            "loaded (--use-kl-loss)",
            summary=_COLOCATED,
        ),
        Sized(SLIME_32B_EXAMPLE_FROM, _colocated_example(
            _SLIME_32B, tp=8, tokens=20480, offload=("params-idle", "grads-idle", "optimizer"),
            offload_why="--colocate (offload_train: the trainer's states between phases, "
            "slime/utils/arguments.py) and --optimizer-cpu-offload (Megatron-core's "
            "HybridDeviceOptimizer at fraction 1)"),
            "scripts/run-qwen3-32B.sh, slime's example for Qwen3-32B, for an actor of >= 11.5 "
            "B parameters: Megatron TP 8 with SP, full recomputation, 20,480 tokens per GPU, "
            "CPU optimizer, SGLang TP 8 at 0.7 colocated (--colocate), the reference loaded "
            "(--use-kl-loss)",
            dense_only=True,
            summary=_COLOCATED,
        ),
        *SLIME_MOE,
        SLIME_GLM_FLASH,
    ),  # fmt: skip
)
