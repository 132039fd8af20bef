"""TRL import: a GRPO config (``trl/trainer/grpo_config.py`` GRPOConfig, transformers
TrainingArguments, TRL's ModelConfig and ScriptArguments keys, as `trl grpo --config` and open-r1's
recipes take them) plus the accelerate config of the launch, as an rlmcost query.

Units (GRPOConfig's docstring): ``per_device_train_batch_size`` counts completions per device per
step (``--micro-batch``); one generation batch is per_device_train_batch_size x num_processes x
steps_per_generation completions (``generation_batch_size``), which ``num_generations`` must divide:
it holds generation_batch / num_generations prompts (``--batch``) of num_generations completions
each (``--group``); the optimizer steps once per gradient_accumulation_steps micro-steps, so
steps_per_generation / gradient_accumulation_steps times per generation batch (``--mini-batches``);
``num_iterations`` (mu) passes (``--epochs``).

These are the current TRL's meanings; ``version`` (``--trl-version``: a release or the day of the
TRL code) applies the older ones of :mod:`rlmcost.frameworks.trl_versions`, each applied rule stated
in the notes with its PR (and returned by :func:`import_trl_rules`).
"""

from __future__ import annotations

from pathlib import Path

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader, apply_overrides, flatten, load_mapping
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.trl_launch import launch
from rlmcost.frameworks.trl_versions import (
    BETA_ZERO,
    CHECKPOINTING,
    COLOCATE_DEFAULT,
    GENERATE_PER_BATCH,
    NON_REENTRANT,
    PEFT_ZERO3_REENTRANT,
    PROMPTS_PER_DEVICE,
    VLLM_IS_CORRECTION,
    VLLM_MODE,
    VLLM_SERVER,
    TrlVersion,
    parse_trl_version,
)
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
    "mask_truncated_completions", "shuffle_dataset",
    "remove_unused_columns", "ds3_gather_for_generation", "sync_ref_model",
    "ref_model_mixup_alpha", "ref_model_sync_steps", "run_name",
    "model_init_kwargs", "trust_remote_code", "lora_alpha", "lora_dropout", "wandb_entity",
    "wandb_project", "callbacks", "benchmarks", "code_language", "dataset_prompt_column",
    "num_generations_eval", "generation_kwargs", "top_entropy_quantile",
    "importance_sampling_level", "log_unique_prompts", "cast_lm_head_to_fp32",
)  # fmt: skip
"""Keys that change no cost (paths, logging, optimizer, sampling): ignored silently."""

def import_trl(
    path: str | Path,
    overrides: list[str] | None = None,
    accelerate: str | Path | None = None,
    version: str | TrlVersion | None = None,
) -> ImportedQuery:
    """The rlmcost query of a TRL GRPO config (and the launch's accelerate config), with the
    semantics of TRL ``version`` (None: the current TRL)."""
    return import_trl_rules(path, overrides, accelerate, version)[0]


def import_trl_rules(
    path: str | Path,
    overrides: list[str] | None = None,
    accelerate: str | Path | None = None,
    version: str | TrlVersion | None = None,
) -> tuple[ImportedQuery, list[str]]:
    """:func:`import_trl` and the statements of the version rules it applied (also notes)."""
    where = f"TRL config {Path(path).name}"
    v = version if isinstance(version, TrlVersion) else parse_trl_version(version)
    flat = apply_overrides(flatten(load_mapping(path, "TRL config"), where), overrides or [],
                           where)  # fmt: skip
    q = ImportedQuery("trl", str(path))
    rules: list[str] = []
    q.algorithm = "rlvr"
    q.note("TRL reward functions are given in code: rlmcost's rlvr scores with a verifier "
           "(for a reward model, run `rlmcost grpo --reward MODEL` with these flags)")  # fmt: skip
    for key, why in v.absent_keys(set(flat)).items():
        flat.pop(key)
        q.note(f"{key} dropped: not a GRPOConfig key in {v.label} ({why}); TRL's parser drops "
               "config keys it does not know, so its default holds")  # fmt: skip
    r = Reader(flat, where)
    model = r.text("model_name_or_path", None)
    if not model:
        raise SpecError(f"{where}: set model_name_or_path (the policy model)")
    q.set("--model", model)
    procs, zero, offload, deepspeed, accel_ignored = launch(r, q, accelerate)
    per_device, accum = _batches(r, q, procs, v, rules)
    q.set("--zero", zero)
    if offload:
        q.set("--offload", ",".join(offload))
    ckpt = r.flag("gradient_checkpointing", not v.before(CHECKPOINTING))
    if not r.has("gradient_checkpointing") and v.before(CHECKPOINTING):
        _rule(q, rules, f"gradient_checkpointing off (transformers' default): GRPOConfig's "
              f"default in {v.label}, before {v.pr(CHECKPOINTING)} made it True")  # fmt: skip
    q.set("--ckpt", "full" if ckpt else "none")
    if ckpt:
        _reentrant(r, q, v, rules, deepspeed, zero == "3" and r.flag("use_peft", False))
    if r.flag("disable_dropout", False):  # grpo_trainer.py disable_dropout_in_model (PR 3234)
        q.set("--disable-dropout")
    liger = r.flag("use_liger_loss", False) or r.flag("use_liger_kernel", False)
    q.set("--logits", "fused" if liger else "low-memory")  # selective_log_softmax, row by row
    if r.flag("use_peft", False):
        q.set("--lora-rank", r.integer("lora_r", 16))
        targets = r.words("lora_target_modules", None)
        if targets:
            q.set("--lora-targets", ",".join(targets))
        if zero == "3":  # trl/generation/vllm_generation.py sync_weights (placement.lora_gather)
            q.set("--lora-gather", "model" if deepspeed else "layers")
            q.note("PEFT under ZeRO-3: TRL gathers " + ("the whole model at once (DeepSpeed)"
                   if deepspeed else "module by module (FSDP1)") + " to merge the adapters "
                   "before each refit (vllm_generation.py sync_weights; --lora-gather)")
    beta = r.number("beta", 0.04 if v.before(BETA_ZERO) else 0.0)
    if not r.has("beta") and v.before(BETA_ZERO):
        _rule(q, rules, f"beta 0.04 (a reference model): GRPOConfig's default in {v.label}, "
              f"before {v.pr(BETA_ZERO)} made it 0.0")  # fmt: skip
    elif not r.has("beta"):
        q.note("no beta: TRL's default 0.0 (no reference model); TRL before 0.19 (PR 3516) "
               "defaulted to 0.04 (give beta=0.04 or --trl-version for those)")  # fmt: skip
    q.set("--kl" if beta > 0 else "--no-kl")
    engine = _engine(r, q, procs, v, rules)
    if v.before(GENERATE_PER_BATCH):
        _per_micro_step(q, rules, v, engine, per_device * (1 if engine == "hf" else procs), accum)
    q.ignored, q.near = r.unread(IGNORED) + accel_ignored, r.near_misses(IGNORED)
    return q, rules


def _reentrant(r: Reader, q: ImportedQuery, v: TrlVersion, rules: list[str],
               deepspeed: bool, sharded_peft: bool) -> None:  # fmt: skip
    """``--no-recompute-early-stop`` where GRPOTrainer's checkpoint is reentrant (the
    preset's, the current TRL's, is not: :mod:`rlmcost.perf.ckpt_early_stop`): the given
    ``gradient_checkpointing_kwargs.use_reentrant``, else transformers' True before
    :data:`~rlmcost.frameworks.trl_versions.NON_REENTRANT` (GRPOConfig ``__post_init__`` at
    40d8759d: ``setdefault("use_reentrant", False)`` under transformers < 5), and from
    :data:`~rlmcost.frameworks.trl_versions.PEFT_ZERO3_REENTRANT` on True whatever is given
    with PEFT (``sharded_peft``: ZeRO-3) under ``deepspeed`` (``grpo_trainer.py`` @f2cd5771);
    else ``--recompute-early-stop`` for such adapters, over the preset's DeepSpeed rule."""
    key = "gradient_checkpointing_kwargs.use_reentrant"
    if deepspeed and sharded_peft and not v.before(PEFT_ZERO3_REENTRANT):
        q.note(f"PEFT under ZeRO-3: GRPOTrainer forces use_reentrant=True ({v.label}, "
               f"{v.pr(PEFT_ZERO3_REENTRANT)}): no checkpoint early stop")  # fmt: skip
        reentrant = True
    elif r.has(key):
        reentrant = r.flag(key, True)
    else:
        reentrant = v.before(NON_REENTRANT)
        if reentrant:
            _rule(q, rules, f"reentrant activation checkpointing (transformers' use_reentrant="
                  f"True, no early stop): {v.label}, before {v.pr(NON_REENTRANT)} made "
                  "use_reentrant=False GRPOConfig's default")  # fmt: skip
    if reentrant:
        q.set("--no-recompute-early-stop")
    elif sharded_peft:  # not the preset's PEFT-under-ZeRO-3 rule
        q.set("--recompute-early-stop")
        q.note(f"PEFT under ZeRO-3, early stop kept: GRPOTrainer forces use_reentrant=True only "
               f"under DeepSpeed ZeRO-3 from {v.pr(PEFT_ZERO3_REENTRANT)}")  # fmt: skip


def _rule(q: ImportedQuery, rules: list[str], text: str) -> None:
    """State an applied version rule (a note, and one of the rules returned)."""
    q.note(text)
    rules.append(text)


def _per_micro_step(q: ImportedQuery, rules: list[str], v: TrlVersion, engine: str,
                    per_call: int, accum: int) -> None:  # fmt: skip
    """Before :data:`~rlmcost.frameworks.trl_versions.GENERATE_PER_BATCH` ``_prepare_inputs``
    generates at every micro-step (``grpo_trainer.py`` at 724acb97: ``gather_object`` of every
    process's prompts, one ``self.llm.generate`` on the main process, ``broadcast_object_list``;
    without vLLM each process's ``unwrapped_model.generate`` of its own), so a step's
    completions come in gradient_accumulation_steps calls, one after another."""
    q.set("--sequences-per-call", per_call)
    calls = "generate() calls per step of per_device_train_batch_size" if engine == "hf" else \
        "vLLM calls per step of per_device_train_batch_size x num_processes"  # fmt: skip
    each = "on each process" if engine == "hf" else "each"
    _rule(q, rules, f"generation once per micro-step, {accum} {calls} = {per_call} completions "
          f"{each}, one after another (--sequences-per-call {per_call}): {v.label}, before "
          f"{v.pr(GENERATE_PER_BATCH)} generated once per gradient-accumulation batch")  # fmt: skip


def _batches(r: Reader, q: ImportedQuery, procs: int, v: TrlVersion,
             rules: list[str]) -> tuple[int, int]:  # fmt: skip
    """Batch knobs (module docstring); (completions per device per micro-step, accumulation)."""
    prompts_per_device = v.before(PROMPTS_PER_DEVICE)
    given = r.integer("per_device_train_batch_size", 1 if prompts_per_device else 8)
    accum = r.integer("gradient_accumulation_steps", 1)
    k = r.integer("num_generations", 8)
    per_device, per_device_given = given, f"per_device_train_batch_size={given}"
    if prompts_per_device:
        # grpo_trainer.py at 724acb97 (PR 2776's parent): each prompt repeated num_generations
        # times (torch.repeat_interleave; vLLM SamplingParams(n=num_generations))
        per_device, per_device_given = given * k, f"{per_device_given} prompts x {k}"
        default = "" if r.has("per_device_train_batch_size") else " (GRPOConfig's default)"
        _rule(q, rules, f"per_device_train_batch_size {given} prompts{default} x "
              f"num_generations {k} = {per_device} completions per device: {v.label}, before "
              f"{v.pr(PROMPTS_PER_DEVICE)} made the key count completions")  # fmt: skip
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
    q.convert(f"{per_device_given} x num_processes={procs} x "
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
    q.convert(per_device_given, "--micro-batch", per_device,
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
    return per_device, accum


def _engine(r: Reader, q: ImportedQuery, procs: int, v: TrlVersion, rules: list[str]) -> str:
    """The generation engine and its GPUs: ``hf``, ``legacy`` (vLLM inside the main process on
    a GPU of its own, TRL before PR 3094), ``server`` or ``colocate``."""
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
            "vllm_enable_prefix_caching",
            "vllm_device",
            "vllm_importance_sampling_correction",
        ):
            r.raw(key)
        return "hf"
    tp = r.integer("vllm_tensor_parallel_size", 1)
    q.set("--rollout-tp", tp)
    legacy = v.before(VLLM_SERVER) or (v.current and r.has("vllm_device"))
    device = r.raw("vllm_device")
    if not legacy and device is not None:
        q.note(f"vllm_device {device}: deprecated and ignored in {v.label} (PR 3094 moved "
               "generation to `trl vllm-serve`)")  # fmt: skip
    default_mode = "server" if v.before(COLOCATE_DEFAULT) else "colocate"
    mode = "legacy" if legacy else r.text("vllm_mode", default_mode, ("server", "colocate"))
    frac = r.fraction("vllm_gpu_memory_utilization", 0.9 if v.before(VLLM_SERVER) else 0.3)
    sleep = r.flag("vllm_enable_sleep_mode", False)
    if not r.flag("vllm_enable_prefix_caching", True):  # GRPOConfig: True (colocate mode;
        q.set("--no-prefix-caching")  # `trl vllm-serve` takes vLLM's default, also on)
    correction = r.flag("vllm_importance_sampling_correction", True)
    if mode == "legacy":
        _legacy_engine(r, q, v, rules, procs, frac)
    elif v.before(VLLM_MODE):
        _rule(q, rules, f"vLLM server (`trl vllm-serve` on GPUs of its own), the only vLLM mode "
              f"of {v.label}: before {v.pr(VLLM_MODE)} added colocate")  # fmt: skip
    elif not r.has("vllm_mode") and v.before(COLOCATE_DEFAULT):
        _rule(q, rules, f"vllm_mode server (`trl vllm-serve` on GPUs of its own): "
              f"GRPOConfig's default in {v.label}, before {v.pr(COLOCATE_DEFAULT)} made it "
              "colocate")  # fmt: skip
    elif not r.has("vllm_mode"):
        q.note("no vllm_mode: colocate, TRL's default since 1.0.0 (PR 5255; server before: give "
               "vllm_mode=server or --trl-version for those)")  # fmt: skip
    if mode != "legacy" and not v.before(VLLM_IS_CORRECTION) and correction:
        q.set("--recompute-logprobs")
        q.note("vllm_importance_sampling_correction (default true, TRL >= 0.23, PR 3867): a "
               "forward of the policy over each generation batch for the old log-probs, to "
               "weight by the vLLM sampler's (--recompute-logprobs)")  # fmt: skip
    elif mode != "legacy" and "--no-recompute-logprobs" in dict(q.flags) and correction:
        _rule(q, rules, f"no old-log-prob forward: {v.label}, before {v.pr(VLLM_IS_CORRECTION)} "
              "made vLLM runs compute them for importance sampling")  # fmt: skip
    if mode == "colocate":
        q.set("--gpu-memory-utilization", frac)
        q.set("--sleep" if sleep else "--no-sleep")
        q.set("--gpus", procs)
        return mode
    if mode == "server":
        frac = 0.9
        q.note("vllm_mode server: `trl vllm-serve` on GPUs of its own; its "
               "--gpu_memory_utilization default 0.9 (trl/scripts/vllm_serve.py) and "
               "vllm_tensor_parallel_size GPUs assumed")  # fmt: skip
    q.set("--gpu-memory-utilization", frac)
    q.engines_apart("vLLM server GPUs + num_processes", f"rollout={tp}[tp={tp}]", procs,
                    "generation on its own GPUs, training on the accelerate processes' GPUs")
    q.set("--gpus", tp + procs)
    return mode


def _legacy_engine(r: Reader, q: ImportedQuery, v: TrlVersion, rules: list[str], procs: int,
                   frac: float) -> None:  # fmt: skip
    """TRL before PR 3094 (``grpo_trainer.py`` at v0.15.2): ``LLM(device=vllm_device,
    gpu_memory_utilization=vllm_gpu_memory_utilization)`` in the main process, ``auto`` being
    ``cuda:{num_processes}``, the GPU after the training processes'."""
    if r.has("vllm_device"):
        q.note("vllm_device (TRL < 0.16, PR 3094 moved generation to `trl vllm-serve`): vLLM on "
               "a GPU of its own beside the training processes at vllm_gpu_memory_utilization")
    else:
        _rule(q, rules, f"use_vllm: vLLM in the main process on a GPU of its own (vllm_device's "
              f"default auto: cuda:{procs}) at vllm_gpu_memory_utilization {frac}: {v.label}, "
              f"before {v.pr(VLLM_SERVER)} moved generation to `trl vllm-serve`")  # fmt: skip
