"""OpenRLHF's later command-line layouts, read by :mod:`rlmcost.frameworks.openrlhf`.

* Lengths (OpenRLHF d0e088b6, 2026-03-24, v0.10.0 on): ``--prompt_max_len`` and
  ``--generate_max_len`` gave way to ``--max_len``, the whole sequence (prompt + response,
  default 2048; the vLLM engines' ``max_model_len`` and the samples' truncation,
  ``openrlhf/trainer/ppo_utils/samples_generator.py``), and ``--max_new_tokens``, the response
  cap (default None: vLLM generates up to ``max_len`` less the prompt):
  :func:`lengths`.
* Dotted names (OpenRLHF ed62d0e2, 2026-04-19, "dotted config hierarchy", v0.10.2 on):
  ``--actor.model_name_or_path``, ``--rollout.batch_size``, ``--vllm.num_engines``,
  ``--ds.zero_stage``, ... replace the flat names one for one (``openrlhf/cli/
  train_ppo_ray.py`` @3c3be623): :func:`undot` renames them to the flat names the importer
  reads, so either layout gives the same query. A dotted name with no flat counterpart (new
  settings: ``--actor.optim muon``, ``--train.enable_ema``, ``--ds.load_in_4bit``, ...) keeps
  its name and is listed among the ignored keys.
* Later keys (:data:`LATER_ARGS`, :func:`later_options`): the forwards' own batching
  (``--rollout_max_tokens_per_gpu``, f9a1676b 2025-07-14, ``--rollout.max_tokens_per_gpu`` from
  ed62d0e2; ``--micro_rollout_batch_size``), ``--freeze_visual_encoder`` and the keys rlmcost
  does not price, each said in a note (EMA copy, partial rollout, DeepCompile, the MoE experts'
  implementation) or refused (4-bit base weights).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.argv import SWITCH

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

_ROLES = ("actor", "critic", "ref", "reward")
DOTTED: dict[str, str] = {
    **{f"{m}.num_nodes": f"{m}_num_nodes" for m in _ROLES},
    **{f"{m}.num_gpus_per_node": f"{m}_num_gpus_per_node" for m in _ROLES},
    "train.colocate_actor_ref": "colocate_actor_ref",
    "train.colocate_critic_reward": "colocate_critic_reward",
    "train.colocate_all": "colocate_all_models",
    "vllm.num_engines": "vllm_num_engines", "vllm.tensor_parallel_size":
    "vllm_tensor_parallel_size", "vllm.gpu_memory_utilization": "vllm_gpu_memory_utilization",
    "vllm.enable_sleep": "vllm_enable_sleep", "vllm.enforce_eager": "enforce_eager",
    "vllm.enable_prefix_caching": "enable_prefix_caching", "vllm.sync_backend":
    "vllm_sync_backend", "vllm.sync_with_ray": "vllm_sync_with_ray",
    "train.async_enable": "async_train", "train.async_queue_size": "async_queue_size",
    "ds.zero_stage": "zero_stage", "ds.adam_offload": "adam_offload", "ds.zpg": "zpg",
    "ds.use_liger_kernel": "use_liger_kernel", "ds.grad_accum_dtype": "grad_accum_dtype",
    "ds.overlap_comm": "overlap_comm", "ds.tensor_parallel_size": "ds_tensor_parallel_size",
    "ds.packing_samples": "packing_samples", "ds.ring_attn_size": "ring_attn_size",
    "ds.ring_attn_head_stride": "ring_head_stride", "ds.enable_sleep": "deepspeed_enable_sleep",
    "ds.value_head_prefix": "value_head_prefix", "ds.attn_implementation": "attn_implementation",
    "ds.lora.rank": "lora_rank", "ds.lora.alpha": "lora_alpha", "ds.lora.dropout":
    "lora_dropout", "ds.lora.target_modules": "target_modules",
    "actor.gradient_checkpointing_enable": "gradient_checkpointing",
    "actor.gradient_checkpointing_reentrant": "gradient_checkpointing_use_reentrant",
    "train.dynamic_batch_enable": "use_dynamic_batch",
    "train.max_tokens_per_gpu": "train_max_tokens_per_gpu",
    "rollout.batch_size": "rollout_batch_size", "rollout.micro_batch_size":
    "micro_rollout_batch_size", "rollout.n_samples_per_prompt": "n_samples_per_prompt",
    "rollout.max_new_tokens": "max_new_tokens", "rollout.vllm_generate_batch_size":
    "vllm_generate_batch_size", "rollout.temperature": "temperature", "rollout.top_p": "top_p",
    "train.batch_size": "train_batch_size", "train.micro_batch_size": "micro_train_batch_size",
    "train.max_epochs": "max_epochs", "train.num_episodes": "num_episodes",
    "train.seed": "seed", "train.full_determinism_enable": "full_determinism",
    "train.agent_func_path": "agent_func_path", "data.max_len": "max_len",
    "actor.model_name_or_path": "pretrain", "critic.model_name_or_path": "critic_pretrain",
    "reward.model_name_or_path": "reward_pretrain", "reward.remote_url": "remote_rm_url",
    "ref.offload": "ref_reward_offload", "reward.offload": "ref_reward_offload",
    "algo.advantage.estimator": "advantage_estimator", "algo.kl.init_coef": "init_kl_coef",
    "algo.kl.use_loss": "use_kl_loss", "algo.kl.estimator": "kl_estimator",
    "algo.kl.target": "kl_target", "algo.kl.horizon": "kl_horizon",
    "algo.advantage.lambd": "lambd", "algo.advantage.gamma": "gamma",
    "algo.advantage.no_std_norm": "no_advantage_std_norm",
    "algo.dynamic_filtering_enable": "dynamic_filtering",
    "algo.dynamic_filtering_range": "dynamic_filtering_reward_range",
    "actor.eps_clip": "eps_clip", "actor.eps_clip_low_high": "eps_clip_low_high",
    "actor.dual_clip": "dual_clip", "critic.value_clip": "value_clip",
    "actor.policy_loss_type": "policy_loss_type", "actor.aux_loss_coef": "aux_loss_coef",
    "actor.entropy_coef": "entropy_loss_coef", "critic.freezing_steps": "freezing_actor_steps",
    "critic.save_value_network": "save_value_network",
    "reward.clip_range": "reward_clip_range", "reward.normalize_enable": "normalize_reward",
    "reward.overlong_buffer_len": "overlong_buffer_len",
    "reward.overlong_penalty_factor": "overlong_penalty_factor",
    "actor.adam.lr": "actor_learning_rate", "critic.adam.lr": "critic_learning_rate",
    **{f"{m}.adam.betas": "adam_betas" for m in ("actor", "critic")},
    **{f"{m}.adam.weight_decay": "l2" for m in ("actor", "critic")},
    **{f"{m}.lr_scheduler": "lr_scheduler" for m in ("actor", "critic")},
    **{f"{m}.lr_warmup_ratio": "lr_warmup_ratio" for m in ("actor", "critic")},
    **{f"{m}.max_norm": "max_norm" for m in ("actor", "critic")},
    "ckpt.output_dir": "save_path", "ckpt.path": "ckpt_path", "ckpt.save_steps": "save_steps",
    "ckpt.save_hf": "save_hf_ckpt", "ckpt.disable_ds": "disable_ds_ckpt",
    "ckpt.max_num": "max_ckpt_num", "ckpt.max_mem": "max_ckpt_mem",
    "ckpt.load_enable": "load_checkpoint", "eval.steps": "eval_steps",
    "logger.logging_steps": "logging_steps", "logger.tensorboard_dir": "use_tensorboard",
    "logger.wandb.key": "use_wandb", "logger.wandb.org": "wandb_org",
    "logger.wandb.group": "wandb_group", "logger.wandb.project": "wandb_project",
    "logger.wandb.run_name": "wandb_run_name", "data.prompt_dataset": "prompt_data",
    "data.prompt_probs": "prompt_data_probs", "data.prompt_split": "prompt_split",
    "data.max_samples": "max_samples", "data.input_key": "input_key",
    "data.label_key": "label_key", "data.input_template": "input_template",
    "data.apply_chat_template": "apply_chat_template",
    "data.disable_fast_tokenizer": "disable_fast_tokenizer", "eval.dataset": "eval_dataset",
    "eval.split": "eval_split", "eval.temperature": "eval_temperature",
    "eval.n_samples_per_prompt": "eval_n_samples_per_prompt",
    "rollout.max_tokens_per_gpu": "rollout_max_tokens_per_gpu",
    "actor.freeze_visual_encoder": "freeze_visual_encoder", "train.enable_ema": "enable_ema",
    "train.ema_beta": "ema_beta", "train.partial_rollout_enable": "partial_rollout",
    "ds.deepcompile": "deepcompile", "ds.load_in_4bit": "load_in_4bit",
    "algo.advantage.is_correction_enable": "enable_vllm_is_correction",
    "algo.advantage.is_correction_threshold": "vllm_is_truncated_threshold",
    "algo.advantage.is_correction_type": "vllm_is_correction_type",
}  # fmt: skip
"""Each dotted argument of ``train_ppo_ray.py`` @3c3be623 (OpenRLHF ed62d0e2 on) that has a
flat one before it, and that flat name (``--ref.offload`` and ``--reward.offload`` both the
earlier ``--ref_reward_offload``, rlmcost's ``--offload-idle``)."""

DOTTED_COST_FREE = frozenset({
    "actor.adam.eps", "critic.adam.eps", "actor.min_lr_ratio", "critic.min_lr_ratio",
    "ckpt.best_metric_key", "ds.use_universal_ckpt", "data.dataloader_num_workers",
    "data.image_key", "data.max_images_per_prompt", "reward.stop_properly_penalty_coef",
})  # fmt: skip
"""Dotted arguments with no flat counterpart that change no cost (optimizer constants,
checkpoint and data-loading settings): ignored silently, as the flat layout's."""

LATER_COST_FREE = frozenset({
    "vllm_is_correction_type", "use_icepop", "ema_beta", "use_ds_universal_ckpt",
    "stop_properly_penalty_coef", "best_metric_key", "dataloader_num_workers", "image_key",
    "max_images_per_prompt",
})  # fmt: skip
"""Flat arguments of train_ppo_ray.py between 2025-07 and ed62d0e2 (@c1ba971c) that change no
cost, ignored silently: the vLLM importance-sampling correction's kind (``--use_icepop``, then
``--vllm_is_correction_type``: a clamp or mask on the loss's ratio over the log-probs the
engine returns, openrlhf/models/loss.py ``PolicyLoss``), the EMA's coefficient (its copy is
said under ``--enable_ema``), checkpoint, reward-shaping and data-loading settings."""

LATER_ARGS: dict[str, Any] = {
    "rollout_max_tokens_per_gpu": int, "freeze_visual_encoder": SWITCH, "enable_ema": SWITCH,
    "partial_rollout": SWITCH, "deepcompile": SWITCH, "load_in_4bit": SWITCH,
    "ds.experts_implementation": str, "param_dtype": str,
}  # fmt: skip
"""The later arguments :func:`later_options` reads (flat names; ``--ds.experts_implementation``
has none; ``--param_dtype`` is :func:`undot`'s name for ``--ds.param_dtype fp16``), with their
argparse types (train_ppo_ray.py @c1ba971c and @3c3be623)."""


def micro_defaults(dotted: bool) -> tuple[int, int]:
    """train_ppo_ray.py's defaults of ``--micro_train_batch_size`` and
    ``--micro_rollout_batch_size``: 4 and 8 until a2978694 (2026-04-11), 1 and 1 from it. The
    dotted names came after (ed62d0e2, 2026-04-19), so a dotted command line has 1 and 1; a flat
    one is read with 4 and 8 (the flat scripts of the eight days between cannot be told apart)."""
    return (1, 1) if dotted else (4, 8)


def later_options(r: Reader, q: ImportedQuery, dynamic: bool, dotted: bool = False) -> None:
    """The forwards' batching and the later keys (module docstring). ``dynamic``: under
    ``--use_dynamic_batch`` the experience maker splits a rank's samples by
    ``--rollout_max_tokens_per_gpu`` (default: the training budget, train_ppo_ray.py
    ``if args.rollout.max_tokens_per_gpu is None``), else into ``--micro_rollout_batch_size``
    chunks, one forward each on a data-parallel rank (openrlhf/trainer/ppo_utils/
    experience_maker.py ``split_rollout_samples`` @3c3be623); the DeepSpeed micro-batch is then
    1 and ``--micro_train_batch_size`` unused (openrlhf/utils/deepspeed/deepspeed.py)."""
    train = r.integer("train_max_tokens_per_gpu", 16192)
    budget = r.integer("rollout_max_tokens_per_gpu", None)
    train_mb, rollout_mb = micro_defaults(dotted)
    given = r.integer("micro_rollout_batch_size", rollout_mb)
    if dynamic:
        r.raw("micro_train_batch_size")
        if budget is not None and budget != train:
            q.convert(f"--rollout_max_tokens_per_gpu {budget}", "--forward-max-tokens-per-gpu",
                      budget, "tokens per micro-batch per GPU of the log-prob, reference, "
                      "reward and value forwards (--use_dynamic_batch)")  # fmt: skip
    elif r.raw("micro_rollout_batch_size") is not None and \
            given != r.integer("micro_train_batch_size", train_mb):  # fmt: skip
        q.convert(f"--micro_rollout_batch_size {given}", "--forward-micro-batch", given,
                  "samples per forward per GPU of the log-prob, reference, reward and value "
                  "passes (one chunk per data-parallel rank)")  # fmt: skip
    if r.flag("freeze_visual_encoder", False):
        q.convert("--freeze_visual_encoder", "--freeze-vision-tower", None, "every parameter "
                  "outside language_model and lm_head frozen (openrlhf/models/actor.py): the "
                  "vision tower and its projector, no backward through them", default=False)
    if r.flag("load_in_4bit", False):
        raise SpecError(f"{r.where}: --load_in_4bit (QLoRA's 4-bit base weights) is not "
                        "priced by rlmcost; drop it for the bf16 estimate")  # fmt: skip
    for key, what in (("enable_ema", "--enable_ema: the actor's EMA copy (a second Actor, "
                       "offloaded, updated after each step: trainer/ray/ppo_actor.py) is not "
                       "priced"), ("partial_rollout", "--partial_rollout (with --async_train): "
                       "vLLM pauses for the weight sync and the samples in flight resume under "
                       "the new weights (trainer/ppo_trainer_async.py); rlmcost's "
                       "--partial-rollout, with --placement async, prices that, not this "
                       "synchronous query"),
                      ("deepcompile", "--deepcompile: DeepSpeed's compiled ZeRO passes are "
                       "not modelled; priced as eager DeepSpeed")):  # fmt: skip
        if r.flag(key, False):
            q.note(what)
    if (dtype := r.text("param_dtype", "bf16", ("bf16", "fp16"))) != "bf16":
        q.convert(f"--ds.param_dtype {dtype}", "--param-dtype", dtype, "the DeepSpeed "
                  "engine's 16-bit type (train_ppo_ray.py: choices bf16, the default, and "
                  "fp16; openrlhf/utils/deepspeed/deepspeed_utils.py)")  # fmt: skip
    if (impl := r.text("ds.experts_implementation", None)) is not None:
        q.note(f"--ds.experts_implementation {impl}: transformers' MoE expert kernels "
               "(eager, batched_mm, grouped_mm, deepgemm) are not told apart; rlmcost prices "
               "grouped expert GEMMs")  # fmt: skip



def undot(tokens: list[str]) -> tuple[list[str], bool]:
    """``tokens`` with each dotted ``--name`` of :data:`DOTTED` renamed to its flat name
    (``--name=value`` kept inline; ``--ds.param_dtype bf16``, the default, as ``--bf16``), and
    whether any was dotted."""
    out: list[str] = []
    dotted = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name, eq, inline = tok[2:].partition("=") if tok.startswith("--") else ("", "", "")
        if "." in name:
            dotted = True
        if name == "ds.param_dtype":
            value = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
            if value == "bf16":  # train_ppo_ray.py: choices bf16 (default) and fp16
                out.append("--bf16")
                i += 1 if eq else 2
                continue
            out.append(f"--param_dtype{eq}" + (inline if eq else ""))  # fp16: read
            i += 1
            continue
        out.append(f"--{DOTTED[name]}{eq}{inline}" if name in DOTTED else tok)
        i += 1
    return out, dotted


def lengths(r: Reader, q: ImportedQuery) -> None:
    """``--prompt-len`` and ``--response-len``: ``--prompt_max_len`` / ``--generate_max_len``
    (defaults 1024 each) where either is given (OpenRLHF before d0e088b6), else ``--max_len``
    L (default 2048) and ``--max_new_tokens`` N: a response of N tokens after a prompt of
    L - N; without N the response takes what the prompt leaves, and rlmcost takes half of L
    for each (a choice, in a note)."""
    if r.raw("prompt_max_len") is not None or r.raw("generate_max_len") is not None:
        s, t = r.integer("prompt_max_len", 1024), r.integer("generate_max_len", 1024)
        q.convert(f"--prompt_max_len {s}", "--prompt-len", s, "tokens (the maximum)")
        q.convert(f"--generate_max_len {t}", "--response-len", t, "tokens (the maximum)")
        return
    total = r.integer("max_len", 2048)
    new = r.integer("max_new_tokens", None)
    if new is None:
        t = total // 2
        s = total - t
        q.note(f"--max_len {total} bounds prompt + response and no --max_new_tokens bounds the "
               f"response: rlmcost takes a {s}-token prompt and a {t}-token response")
    elif new >= total:
        raise SpecError(f"{r.where}: --max_new_tokens {new} leaves no prompt within --max_len "
                        f"{total} (prompt + response); give a larger --max_len")
    else:
        t, s = new, total - new
    q.convert(f"--max_len {total}", "--prompt-len", s,
              f"tokens: prompt + response {total} less the response's {t}")  # fmt: skip
    q.convert(f"--max_new_tokens {new}" if new is not None else f"--max_len {total}",
              "--response-len", t, "tokens (the maximum)")  # fmt: skip


def kl_keys(r: Reader, q: ImportedQuery, has_ref: bool) -> None:
    """``--use_kl_loss`` (where the KL term goes: rlmcost's ``--kl`` prices the reference's
    forward either way) and, without a reference model, the reference's GPU keys:
    ``train_ppo_ray.py`` builds the reference (``RayActorGroup(ref.num_nodes,
    ref.num_gpus_per_node, ...)``) only when ``init_kl_coef > 0``, else ``ref_model = None``
    (openrlhf/cli/train_ppo_ray.py @3c3be623), so those keys then place nothing: read and said
    so rather than listed as keys rlmcost does not read."""
    r.flag("use_kl_loss", False)
    given = [k for k in ("ref_num_nodes", "ref_num_gpus_per_node") if r.has(k)]
    if has_ref or not given:
        return
    for k in given:
        r.raw(k)
    q.note(f"{', '.join(f'--{k}' for k in given)} unused: with --init_kl_coef 0 OpenRLHF "
           "builds no reference model (train_ppo_ray.py: ref_model = None)")  # fmt: skip
