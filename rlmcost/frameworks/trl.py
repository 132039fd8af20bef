"""TRL import: a GRPO config (``trl/trainer/grpo_config.py`` GRPOConfig, transformers
TrainingArguments, TRL's ModelConfig and ScriptArguments keys, as `trl grpo --config` and
open-r1's recipes take them) plus the accelerate config of the launch, as an rlmcost query.

Units (GRPOConfig's docstring): ``per_device_train_batch_size`` counts completions per device
per step (``--micro-batch``); one generation batch is per_device_train_batch_size x
num_processes x steps_per_generation completions (``generation_batch_size``), which
``num_generations`` must divide: it holds generation_batch / num_generations prompts
(``--batch``) of num_generations completions each (``--group``); the optimizer steps once per
gradient_accumulation_steps micro-steps, so steps_per_generation / gradient_accumulation_steps
times per generation batch (``--mini-batches``); ``num_iterations`` (mu) passes
(``--epochs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader, apply_overrides, flatten, load_mapping
from rlmcost.frameworks.openrlhf import DEEPSPEED_ADAM_OFFLOAD
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.units import whole_steps

IGNORED = (
    "model_revision", "torch_dtype", "dtype", "attn_implementation", "dataset_name",
    "dataset_config", "dataset_configs", "dataset_train_split", "dataset_test_split",
    "output_dir", "overwrite_output_dir", "bf16", "fp16", "tf32", "do_eval", "eval_strategy",
    "eval_steps", "hub_model_id", "hub_strategy", "push_to_hub", "learning_rate",
    "log_completions", "log_level", "logging_first_step", "logging_steps", "logging_strategy",
    "lr_scheduler_type", "max_steps", "num_train_epochs", "per_device_eval_batch_size",
    "report_to", "save_strategy", "save_steps", "save_total_limit", "seed", "warmup_ratio",
    "warmup_steps", "weight_decay", "max_grad_norm", "gradient_checkpointing_kwargs",
    "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "epsilon", "epsilon_high",
    "delta", "loss_type", "scale_rewards", "reward_funcs", "reward_weights", "system_prompt",
    "chat_template", "vllm_server_host", "vllm_server_port", "vllm_server_base_url",
    "vllm_server_timeout", "vllm_group_port", "vllm_max_model_length", "vllm_dtype",
    "vllm_enable_prefix_caching", "mask_truncated_completions", "shuffle_dataset",
    "remove_unused_columns", "ds3_gather_for_generation", "sync_ref_model",
    "ref_model_mixup_alpha", "ref_model_sync_steps", "disable_dropout", "run_name",
    "model_init_kwargs", "trust_remote_code", "lora_alpha", "lora_dropout", "wandb_entity",
    "wandb_project", "callbacks", "benchmarks", "code_language", "dataset_prompt_column",
    "num_generations_eval", "generation_kwargs", "top_entropy_quantile",
    "importance_sampling_level", "log_unique_prompts", "cast_lm_head_to_fp32",
)  # fmt: skip
"""Keys that change no cost (paths, logging, optimizer, sampling): ignored silently."""

ACCELERATE_READ = (
    "num_processes", "distributed_type", "deepspeed_config.zero_stage",
    "deepspeed_config.offload_optimizer_device", "deepspeed_config.offload_param_device",
    "fsdp_config.fsdp_offload_params", "deepspeed_config.zero3_init_flag",
    "fsdp_config.fsdp_cpu_ram_efficient_loading",
)  # fmt: skip


def import_trl(
    path: str | Path, overrides: list[str] | None = None, accelerate: str | Path | None = None
) -> ImportedQuery:
    """The rlmcost query of a TRL GRPO config (and the launch's accelerate config)."""
    where = f"TRL config {Path(path).name}"
    flat = apply_overrides(flatten(load_mapping(path, "TRL config"), where), overrides or [],
                           where)  # fmt: skip
    r = Reader(flat, where)
    q = ImportedQuery("trl", str(path))
    q.algorithm = "rlvr"
    q.note("TRL reward functions are given in code: rlmcost's rlvr scores with a verifier "
           "(for a reward model, run `rlmcost grpo --reward MODEL` with these flags)")  # fmt: skip
    model = r.text("model_name_or_path", None)
    if not model:
        raise SpecError(f"{where}: set model_name_or_path (the policy model)")
    q.set("--model", model)
    procs, zero, offload = _launch(r, q, accelerate)
    _batches(r, q, procs)
    q.set("--zero", zero)
    if offload:
        q.set("--offload", ",".join(offload))
    q.set("--ckpt", "full" if r.flag("gradient_checkpointing", True) else "none")
    liger = r.flag("use_liger_loss", False) or r.flag("use_liger_kernel", False)
    q.set("--logits", "fused" if liger else "low-memory")  # selective_log_softmax, row by row
    if r.flag("use_peft", False):
        q.set("--lora-rank", r.integer("lora_r", 16))
        targets = r.words("lora_target_modules", None)
        if targets:
            q.set("--lora-targets", ",".join(targets))
    if not r.has("beta"):
        q.note("no beta: TRL's default 0.0 (no reference model); TRL before 0.18 defaulted to "
               "0.04 (give beta=0.04 for those)")  # fmt: skip
    q.set("--kl" if r.number("beta", 0.0) > 0 else "--no-kl")
    _engine(r, q, procs)
    q.ignored = r.unread(IGNORED)
    return q


def _launch(r: Reader, q: ImportedQuery, accelerate: Any) -> tuple[int, str, list[str]]:
    """Processes (= GPUs of the trainer), ZeRO stage and offload from the accelerate config;
    ``num_processes`` in the recipe itself (open-r1 puts it there) must agree."""
    procs = r.integer("num_processes", None)
    zero, offload = "0", []
    if accelerate is not None:
        aw = f"accelerate config {Path(accelerate).name}"
        a = Reader(flatten(load_mapping(accelerate, "accelerate config"), aw), aw)
        launch = a.integer("num_processes", 1)
        if procs is not None and procs != launch:
            raise SpecError(f"{r.where}: num_processes={procs} but {aw} launches {launch}; "
                            "make them agree")  # fmt: skip
        procs = launch
        kind = a.text("distributed_type", "NO")
        if kind == "DEEPSPEED":
            zero = str(a.integer("deepspeed_config.zero_stage", 0, lo=0, hi=3))
            if a.text("deepspeed_config.offload_optimizer_device", "none") == "cpu":
                # ZeRO-Offload keeps the gradient partition on the host as well
                # (frameworks.openrlhf.DEEPSPEED_ADAM_OFFLOAD, DeepSpeed stage3.py)
                offload += DEEPSPEED_ADAM_OFFLOAD.split(",")
            if a.text("deepspeed_config.offload_param_device", "none") == "cpu":
                offload.append("params")
            # accelerate DeepSpeedPlugin: zero3_init_flag defaults to is_zero3(); on,
            # from_pretrained builds the model inside deepspeed.zero.Init
            if zero == "3" and a.flag("deepspeed_config.zero3_init_flag", True):
                q.set("--init-load", "sharded")
        elif kind == "FSDP":
            zero = "3"
            if a.flag("fsdp_config.fsdp_offload_params", False):
                offload += ["params", "grads", "optimizer"]
            # accelerate FullyShardedDataParallelPlugin: rank 0 loads, the rest on meta
            if a.flag("fsdp_config.fsdp_cpu_ram_efficient_loading", False):
                q.set("--init-load", "host-rank0")
        q.convert(f"{aw}: distributed_type={kind}", "--zero", zero, "sharding of the model "
                  "states (DeepSpeed stage, FSDP = 3, DDP = 0)")  # fmt: skip
    if procs is None:
        procs = 1
        q.note("no num_processes (give --accelerate FILE): one training process")
    return procs, zero, offload


def _batches(r: Reader, q: ImportedQuery, procs: int) -> None:
    per_device = r.integer("per_device_train_batch_size", 8)
    accum = r.integer("gradient_accumulation_steps", 1)
    k = r.integer("num_generations", 8)
    spg = r.integer("steps_per_generation", None)
    gen = r.integer("generation_batch_size", None)
    if spg is not None and gen is not None:
        raise SpecError(f"{r.where}: steps_per_generation and generation_batch_size are both "
                        "set (TRL: mutually exclusive); keep one")  # fmt: skip
    global_batch = per_device * procs
    if gen is not None:
        spg = whole_steps(gen, global_batch, "generation_batch_size",
                          "per_device_train_batch_size x num_processes", r.where)  # fmt: skip
    spg = spg or accum
    gen = global_batch * spg
    if gen % k:
        raise SpecError(
            f"{r.where}: num_generations={k} does not divide the generation batch "
            f"{per_device} x {procs} processes x {spg} steps = {gen} completions (TRL refuses "
            "this); pick a divisor"
        )
    prompts = gen // k
    q.convert(f"per_device_train_batch_size={per_device} x num_processes={procs} x "
              f"steps_per_generation={spg}", "--batch", prompts,
              f"{gen:,} completions per generation batch / num_generations {k} = {prompts:,} "
              "prompts")  # fmt: skip
    q.convert(f"num_generations={k}", "--group", k, "completions per prompt")
    steps = whole_steps(spg, accum, "steps_per_generation", "gradient_accumulation_steps",
                        r.where)  # fmt: skip
    q.convert(f"steps_per_generation={spg} / gradient_accumulation_steps={accum}",
              "--mini-batches", steps, "optimizer steps per generation batch",
              default=1)  # fmt: skip
    mu = r.integer("num_iterations", 1)
    q.convert(
        f"num_iterations={mu}", "--epochs", mu, "passes (mu) over each generation batch", default=1
    )
    q.convert(f"per_device_train_batch_size={per_device}", "--micro-batch", per_device,
              "completions per device per forward/backward")  # fmt: skip
    s = r.integer("max_prompt_length", 512)
    t = r.integer("max_completion_length", 256)
    if not r.has("max_prompt_length"):
        q.note("no max_prompt_length: 512 (GRPOConfig's default before TRL dropped the key)")
    q.convert(f"max_prompt_length={s}", "--prompt-len", s, "tokens (the maximum)")
    q.convert(f"max_completion_length={t}", "--response-len", t, "tokens (the maximum)")
    recompute = mu > 1 or spg > accum
    q.set("--recompute-logprobs" if recompute else "--no-recompute-logprobs")
    if recompute:
        q.note("num_iterations > 1 or steps_per_generation > gradient_accumulation_steps: TRL "
               "computes old log-probs with an extra forward (--recompute-logprobs)")  # fmt: skip


def _engine(r: Reader, q: ImportedQuery, procs: int) -> None:
    if not r.flag("use_vllm", False):
        q.note("use_vllm false: transformers generate() on the training model in the "
               "training processes (--engine hf: static batches, no reservation; "
               "trl/trainer/grpo_trainer.py unwrap_model_for_generation)")  # fmt: skip
        q.set("--engine", "hf")
        q.set("--gpus", procs)
        for key in (
            "vllm_mode",
            "vllm_gpu_memory_utilization",
            "vllm_tensor_parallel_size",
            "vllm_enable_sleep_mode",
            "vllm_device",
        ):
            r.raw(key)
        return
    tp = r.integer("vllm_tensor_parallel_size", 1)
    q.set("--rollout-tp", tp)
    legacy = r.has("vllm_device")
    r.raw("vllm_device")
    mode = "server" if legacy else r.text("vllm_mode", "server", ("server", "colocate"))
    frac = r.fraction("vllm_gpu_memory_utilization", 0.3)
    sleep = r.flag("vllm_enable_sleep_mode", False)
    if mode == "colocate":
        q.set("--gpu-memory-utilization", frac)
        q.set("--sleep" if sleep else "--no-sleep")
        q.set("--gpus", procs)
        return
    if legacy:
        q.note("vllm_device (TRL < 0.17): vLLM on a GPU of its own beside the training "
               "processes, with vllm_gpu_memory_utilization of it")  # fmt: skip
    else:
        frac = 0.9
        q.note("vllm_mode server: `trl vllm-serve` on GPUs of its own; its "
               "--gpu_memory_utilization default 0.9 (trl/scripts/vllm_serve.py) and "
               "vllm_tensor_parallel_size GPUs assumed")  # fmt: skip
    q.set("--gpu-memory-utilization", frac)
    q.set("--no-sleep")
    roles = "actor+reference" if "--kl" in dict(q.flags) else "actor"
    groups = f"rollout={tp}[tp={tp}],{roles}={procs}"
    q.convert(
        "vLLM server GPUs + num_processes",
        "--groups",
        groups,
        "generation on its own GPUs, training on the accelerate processes' GPUs",
    )
    q.set("--gpus", tp + procs)
