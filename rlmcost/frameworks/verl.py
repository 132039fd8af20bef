"""verl config import: ``verl.trainer.main_ppo``'s Hydra config (a YAML file of keys from
``verl/trainer/config/ppo_trainer.yaml`` plus dotted ``key=value`` overrides) as a query.

Units (verl/trainer/config/ppo_trainer.yaml; verl/workers/fsdp_workers.py normalizes them):

* ``data.train_batch_size`` counts prompts; ``actor_rollout_ref.rollout.n`` responses are
  sampled for each: a step trains train_batch_size x n sequences (``--batch``, ``--group``);
* ``actor.ppo_mini_batch_size`` counts prompts too (the worker multiplies it by n): the
  optimizer steps per epoch are train_batch_size / ppo_mini_batch_size (``--mini-batches``);
* ``actor.ppo_micro_batch_size_per_gpu`` is sequences per GPU per forward/backward
  (``--micro-batch``); the deprecated ``ppo_micro_batch_size`` is global and divided by the
  data-parallel size; with ``use_dynamic_bsz`` the per-GPU token budget
  ``ppo_max_token_len_per_gpu`` replaces it (``--max-tokens-per-gpu``).

Keys absent from the file take ppo_trainer.yaml's defaults (the verl preset's values).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader, apply_overrides, flatten, load_mapping
from rlmcost.frameworks.cpu_optimizer import optimizer_config_cpu_offload
from rlmcost.frameworks.fp8_train import import_fp8
from rlmcost.frameworks.megatron_split import set_split, transformer_config_keys
from rlmcost.frameworks.model_overrides import overridden_model
from rlmcost.frameworks.model_path import model_of_path
from rlmcost.frameworks.moe_capacity import import_capacity
from rlmcost.frameworks.moe_dispatcher import VERL_DEFAULT, import_dispatcher
from rlmcost.frameworks.p2p_overlap import import_overlap
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.units import whole_steps
from rlmcost.frameworks.verl_batches import (
    dynamic_sampling,
    forward_batching,
    group_of_one,
    passes,
)
from rlmcost.frameworks.verl_engine import engine
from rlmcost.frameworks.verl_glu import import_glu_fusion, import_liger
from rlmcost.frameworks.verl_lora import verl_lora
from rlmcost.frameworks.verl_recompute import critic_notes, verl_recompute
from rlmcost.frameworks.verl_reward import reward_loop
from rlmcost.frameworks.verl_versions import NON_REENTRANT, parse_verl_version
from rlmcost.frameworks.virtual_pipeline import verl_virtual_stages

ARR = "actor_rollout_ref"
ACTOR = f"{ARR}.actor"
ROLLOUT = f"{ARR}.rollout"
MODEL = f"{ARR}.model"

IGNORED = (
    "data.train_files", "data.val_files", "data.tokenizer", "data.prompt_key",
    "data.reward_fn_key", "data.val_batch_size", "data.return_raw_input_ids",
    "data.return_raw_chat", "data.shuffle", "data.filter_overlong_prompts",
    "data.filter_overlong_prompts_workers", "data.truncation", "data.image_key",
    "data.video_key", "data.custom_cls", "data.return_full_prompt", "data.seed",
    f"{ACTOR}.optim", f"{ACTOR}.clip_ratio", f"{ACTOR}.clip_ratio_low",
    f"{ACTOR}.clip_ratio_high", f"{ACTOR}.clip_ratio_c", f"{ACTOR}.loss_agg_mode",
    f"{ACTOR}.entropy_coeff", f"{ACTOR}.kl_loss_coef", f"{ACTOR}.kl_loss_type",
    f"{ACTOR}.grad_clip", f"{ACTOR}.use_torch_compile", f"{ACTOR}.shuffle",
    f"{ACTOR}.checkpoint", f"{ACTOR}.megatron.dist_checkpointing_path",
    "critic.megatron.dist_checkpointing_path", f"{ACTOR}.fsdp_config.wrap_policy",
    f"{ACTOR}.fsdp_config.reshard_after_forward",
    f"{ARR}.hybrid_engine", f"{MODEL}.external_lib", f"{MODEL}.override_config",
    f"{MODEL}.return_last_hidden_state", f"{MODEL}.lora_alpha",
    f"{MODEL}.trust_remote_code", f"{ARR}.ref", f"{ROLLOUT}.temperature",
    f"{ROLLOUT}.top_k", f"{ROLLOUT}.top_p", f"{ROLLOUT}.use_fire_sampling",
    f"{ROLLOUT}.prompt_length", f"{ROLLOUT}.response_length", f"{ROLLOUT}.dtype",
    f"{ROLLOUT}.ignore_eos", f"{ROLLOUT}.load_format", f"{ROLLOUT}.max_model_len",
    f"{ROLLOUT}.log_prob_micro_batch_size", f"{ROLLOUT}.disable_log_stats",
    f"{ROLLOUT}.enable_chunked_prefill", f"{ROLLOUT}.do_sample",
    f"{ROLLOUT}.engine_kwargs", f"{ROLLOUT}.val_kwargs", f"{ROLLOUT}.chat_scheduler",
    f"{ROLLOUT}.seed", "critic.optim", "critic.rollout_n", "critic.checkpoint",
    "critic.grad_clip", "critic.cliprange_value", "critic.shuffle", "critic.model.external_lib",
    "critic.model.override_config", "critic.model.tokenizer_path", "critic.model.fsdp_config",
    "critic.model.use_remove_padding",
    "critic.forward_micro_batch_size", "critic.forward_micro_batch_size_per_gpu",
    "critic.forward_max_token_len_per_gpu", "critic.ppo_max_token_len_per_gpu",
    "critic.ppo_micro_batch_size", "critic.ppo_micro_batch_size_per_gpu",
    "critic.ppo_mini_batch_size", "critic.ppo_epochs", "critic.use_dynamic_bsz",
    "critic.ulysses_sequence_parallel_size", "reward_model.strategy",
    "reward_model.model.input_tokenizer", "reward_model.model.external_lib",
    "reward_model.model.use_remove_padding", "reward_model.model.fsdp_config",
    "reward_model.micro_batch_size", "reward_model.micro_batch_size_per_gpu",
    "reward_model.max_length", "reward_model.ulysses_sequence_parallel_size",
    "reward_model.use_dynamic_bsz", "reward_model.forward_max_token_len_per_gpu",
    "reward_model.reward_manager", "reward_model.launch_reward_fn_async",
    "custom_reward_function", "algorithm.gamma", "algorithm.lam", "algorithm.kl_penalty",
    "algorithm.kl_ctrl", "algorithm.norm_adv_by_std_in_grpo", "trainer.balance_batch",
    "trainer.total_epochs", "trainer.total_training_steps", "trainer.project_name",
    "trainer.experiment_name", "trainer.logger", "trainer.log_val_generations",
    "trainer.rollout_data_dir", "trainer.validation_data_dir", "trainer.save_freq",
    "trainer.resume_mode", "trainer.resume_from_path", "trainer.val_before_train",
    "trainer.test_freq", "trainer.critic_warmup", "trainer.default_hdfs_dir",
    "trainer.del_local_ckpt_after_load", "trainer.default_local_dir",
    "trainer.max_actor_ckpt_to_keep", "trainer.max_critic_ckpt_to_keep",
    "trainer.ray_wait_register_center_timeout", "ray_init", "ray_kwargs", "global_profiler",
    f"{ACTOR}.profiler", f"{ROLLOUT}.profiler", "critic.profiler", "reward_model.profiler",
    f"{ROLLOUT}.prometheus", f"{ROLLOUT}.trace", f"{ROLLOUT}.skip_dump_dir",
    "trainer.esi_redundant_time", f"{ACTOR}.data_loader_seed", "critic.data_loader_seed",
    f"{ACTOR}.fsdp_config.seed", f"{MODEL}.tokenizer_path", f"{MODEL}.custom_chat_template",
    "data.dataloader_num_workers", "data.trust_remote_code", "data.validation_shuffle",
    "data.train_max_samples", "data.val_max_samples", "data.sampler", "data.tool_config_path",
    f"{ROLLOUT}.multi_turn.tool_config_path", f"{ROLLOUT}.multi_turn.interaction_config_path",
)  # fmt: skip
"""Keys that change no step's cost (optimizer, sampling, logging and metrics, profiling,
checkpoint and validation frequencies, seeds, paths, the data loader; checked against
ppo_trainer.yaml @b178a3cd: ``global_profiler``, the workers' ``profiler``, the rollout's
``prometheus``/``trace``, its multi-turn config files): not listed as ignored."""

_ESTIMATORS = {
    "gae": "ppo", "grpo": "grpo", "rloo": "rloo", "remax": "remax",
    "reinforce_plus_plus": "grpo", "reinforce_plus_plus_baseline": "grpo", "opo": "grpo",
    "grpo_passk": "grpo", "gpg": "grpo", "grpo_vectorized": "grpo", "rloo_vectorized": "rloo",
    "optimal_token_baseline": "grpo", "tir_optimal_token_baseline": "grpo",
}  # fmt: skip
"""verl's ``AdvantageEstimator`` (verl/trainer/ppo/core_algos.py @b178a3cd) -> the rlmcost
method of the same invocations; the optimal token baseline: docs/algo/otb.md, dp_actor.py."""


def import_verl(path: str | Path, overrides: list[str] | None = None,
                verl_version: str | None = None, hardware: str | None = None) -> ImportedQuery:
    """The query of a verl config file and ``key=value`` overrides under verl ``verl_version``
    on ``hardware`` (a built-in accelerator; None: not given, where an engine default that
    depends on the GPU is stated for large GPUs, :mod:`rlmcost.frameworks.verl_engine`)."""
    where = f"verl config {Path(path).name}"
    return import_verl_mapping(load_mapping(path, "verl config"), where, str(path),
                               overrides or [], verl_version, hardware)  # fmt: skip


def import_verl_mapping(config: dict[str, Any], where: str, source: str, overrides: list[str],
                        verl_version: str | None, hardware: str | None) -> ImportedQuery:
    """:func:`import_verl` of a config already read (``where``: its name in errors;
    ``source``: what the query names; a launch script's base config)."""
    from rlmcost.specs import get_hardware

    device = get_hardware(hardware) if hardware is not None else None
    flat = apply_overrides(flatten(config, where), overrides, where)
    r = Reader(flat, where)
    q, day = ImportedQuery("verl", source), parse_verl_version(verl_version)
    _algorithm(r, q, day)
    _workload(r, q)
    _layout(r, q, day)
    engine(r, q, day, device)
    fsdp_full = all(f in q.flags for f in (("--ckpt", "full"), ("--zero", "3")))  # FSDP workers
    if day is not None and day < NON_REENTRANT and fsdp_full:
        q.convert(f"--verl-version {verl_version}", "--no-recompute-early-stop", None,
                  "verl before PR 114 checkpoints its FSDP workers' layers with transformers' "
                  "reentrant default: no early stop (rlmcost.perf.ckpt_early_stop)", False)
    q.ignored, q.near = r.unread(IGNORED), r.near_misses(IGNORED)
    return q


def _algorithm(r: Reader, q: ImportedQuery, day: str | None) -> None:
    est = r.text("algorithm.adv_estimator", "gae")
    if est not in _ESTIMATORS:
        raise SpecError(
            f"{r.where}: algorithm.adv_estimator={est!r} is unknown; use one of "
            f"{', '.join(_ESTIMATORS)}"
        )
    alg = _ESTIMATORS[est]
    if "optimal_token_baseline" in est:
        q.note(f"adv_estimator {est}: no critic, a per-token group baseline; rlmcost counts it "
               "as grpo (the same invocations); the log-prob forward's sum of squared "
               "probabilities (actor.calculate_sum_pi_squared: one pass over the vocabulary "
               "per response token) is not counted")  # fmt: skip
        r.raw(f"{ACTOR}.calculate_sum_pi_squared", None)
        r.raw(f"{ACTOR}.sum_pi_squared_checkpointing", None)
    elif est.removesuffix("_vectorized") not in ("gae", "grpo", "rloo", "remax"):
        q.note(f"adv_estimator {est}: no critic, group baseline; rlmcost counts it as grpo "
               "(the same invocations)")  # fmt: skip
    reward_model = r.flag("reward_model.enable", False)
    actor_path = r.text(f"{MODEL}.path", None)
    if not actor_path:
        raise SpecError(f"{r.where}: set {MODEL}.path (the actor model)")
    actor = model_of_path(q, f"{MODEL}.path", actor_path)  # with its config.json overrides:
    q.set("--model", overridden_model(r, q, actor, f"{MODEL}.override_config"))  # fsdp_workers
    if reward_model:  # --reward, or a GenRM's --judge (d-rlaif): verl_reward
        alg = reward_loop(r, q, actor_path, alg, day)
    elif alg == "grpo":
        alg = "rlvr"
        q.note("reward_model.enable false: a reward function scores responses; rlmcost's rlvr "
               "is GRPO with a programmatic verifier")  # fmt: skip
    elif alg == "ppo":
        alg = "vapo"
        q.note("reward_model.enable false: a reward function scores responses; rlmcost's vapo "
               "is PPO (critic kept) with a verifier instead of a reward model")  # fmt: skip
    else:
        q.note(f"reward_model.enable false: rlmcost's {alg} scores with a reward model "
               "(nearest: its forward is counted)")  # fmt: skip
    if alg in ("ppo", "vapo"):
        critic = r.text("critic.model.path", actor_path)
        if critic != actor_path:
            q.set("--critic", model_of_path(q, "critic.model.path", critic))
    q.algorithm = alg
    kl_loss = r.flag(f"{ACTOR}.use_kl_loss", False)
    kl_reward = r.flag("algorithm.use_kl_in_reward", False)
    if dynamic_sampling(r, q, kl_loss or kl_reward):
        return
    q.set("--kl" if kl_loss or kl_reward else "--no-kl")


def _workload(r: Reader, q: ImportedQuery) -> None:
    batch = r.integer("data.train_batch_size", 1024)
    gen = r.integer("data.gen_batch_size", batch)
    key = "data.train_batch_size"
    if gen != batch and q.algorithm != "dapo":  # ray_trainer.py _create_dataloader
        q.note(f"data.gen_batch_size {gen} without filter_groups: each step generates and "
               f"trains {gen} prompts (the dataloader's batch), not train_batch_size {batch}")
        batch, key = gen, "data.gen_batch_size"
    n = r.integer(f"{ROLLOUT}.n", 1)
    if n == 1 and q.algorithm not in ("ppo", "vapo", "remax"):
        group_of_one(r, q)
    mini = r.integer(f"{ACTOR}.ppo_mini_batch_size", 256)
    q.convert(f"{key}={batch}", "--batch", batch,
              "prompts per step (verl counts prompts)")  # fmt: skip
    per_step = f"{batch:,} x {n} = {batch * n:,} sequences per step"
    q.convert(f"{ROLLOUT}.n={n}", "--group", n, f"responses per prompt: {per_step}")
    steps = whole_steps(batch, mini, "data.train_batch_size", f"{ACTOR}.ppo_mini_batch_size",
                        r.where)  # fmt: skip
    q.convert(f"{ACTOR}.ppo_mini_batch_size={mini}", "--mini-batches", steps,
              f"mini-batch in prompts too: {batch:,} / {mini:,} = {steps} optimizer steps per "
              f"epoch ({mini * n:,} sequences each)", default=1)  # fmt: skip
    epochs = r.integer(f"{ACTOR}.ppo_epochs", 1)
    q.convert(f"{ACTOR}.ppo_epochs={epochs}", "--epochs", epochs,
              "passes over each step's batch", default=1)  # fmt: skip
    s = r.integer("data.max_prompt_length", 512)
    t = r.integer("data.max_response_length", 512)
    q.convert(f"data.max_prompt_length={s}", "--prompt-len", s, "tokens (the maximum; rlmcost "
              "takes every prompt at this length)")  # fmt: skip
    q.convert(f"data.max_response_length={t}", "--response-len", t, "tokens (the maximum)")


def _cpu_optimizer(r: Reader, q: ImportedQuery, offload: list[str]) -> None:
    """Megatron's hybrid CPU optimizer (``optim.override_optimizer_config.optimizer_cpu_offload``
    with ``optimizer_offload_fraction``; verl passes it to megatron-core's OptimizerConfig,
    examples/grpo_trainer/run_deepseek671b_math_megatron_96gb.sh):
    :func:`rlmcost.frameworks.cpu_optimizer.optimizer_config_cpu_offload`. Unlike
    ``megatron.optimizer_offload`` (``offload_megatron_optimizer``: the states to the host
    between phases, back for ``update_actor``, the step on the GPU)."""
    optimizer_config_cpu_offload(r, q, f"{ACTOR}.optim.override_optimizer_config", offload)


def _grad_buffer(r: Reader, q: ImportedQuery, m: str, degrees: tuple[int, ...]) -> None:
    """The Megatron workers' gradient buffer (rlmcost.placement.grad_buffer): fp32 from verl's
    own ``get_model`` and mbridge's (``use_mbridge`` with ``vanilla_mbridge``, the default),
    Megatron-core's param dtype from Megatron-Bridge's provider (``vanilla_mbridge: false``),
    ``megatron.override_ddp_config.grad_reduce_in_fp32`` over either (verl/utils/
    megatron_utils.py @b178a3cd; ISEEKYAN/mbridge mbridge/core/util.py @10cb17f5). Not set
    where ``degrees`` (TP, PP, EP) are all 1: rlmcost's verl preset prices that layout as its
    FSDP worker (``Behaviour.hf_trainer``), which holds no such buffer (a note says so)."""
    bridge = r.flag(f"{m}.use_mbridge", True) and not r.flag(f"{m}.vanilla_mbridge", True)
    key = f"{m}.override_ddp_config.grad_reduce_in_fp32"
    fp32 = r.flag(key, not bridge)
    if max(degrees) == 1:
        q.note(f"{ACTOR}.strategy megatron with tensor, pipeline and expert parallel sizes 1: "
               "rlmcost's verl preset runs its FSDP worker at that layout (Behaviour."
               f"hf_trainer), so Megatron-core's gradient buffer ({'fp32' if fp32 else 'bf16'} "
               "here) is not priced")  # fmt: skip
        return
    q.convert(key if r.raw(key) is not None else f"(verl's default, {m}.vanilla_mbridge "
              f"{str(not bridge).lower()})", "--grad-reduce-dtype", "fp32" if fp32 else "param",
              "Megatron-core's gradient buffer (DistributedDataParallelConfig.grad_reduce_in_fp32)")


def _layout(r: Reader, q: ImportedQuery, day: str | None) -> None:
    gpus = r.integer("trainer.n_gpus_per_node", 8) * r.integer("trainer.nnodes", 1)
    q.convert("trainer.n_gpus_per_node x trainer.nnodes", "--gpus", gpus, "GPUs in all")
    strategy = r.text(f"{ACTOR}.strategy", "fsdp", ("fsdp", "fsdp2", "megatron"))
    if strategy == "megatron":
        m = f"{ACTOR}.megatron"
        tp = r.integer(f"{m}.tensor_model_parallel_size", 1)
        pp = r.integer(f"{m}.pipeline_model_parallel_size", 1)
        cp = r.integer(f"{m}.context_parallel_size", 1)
        ep = r.integer(f"{m}.expert_model_parallel_size", 1)
        etp = r.integer(f"{m}.expert_tensor_parallel_size", None)  # None: TP (Megatron-core)
        for flag, v in (("--tp", tp), ("--pp", pp), ("--cp", cp), ("--ep", ep)):
            if v > 1:
                q.set(flag, v)
        if ep > 1 and etp is not None and etp != tp:  # the expert grid only
            q.set("--etp", etp)
        if r.flag(f"{m}.sequence_parallel", True) and tp > 1:
            q.set("--sp")
        o = f"{m}.override_transformer_config."
        how = import_dispatcher(r, q, o, VERL_DEFAULT, ep)
        import_capacity(r, q, f"{o}moe_expert_capacity_factor",
                        f"{o}moe_pad_expert_input_to_capacity", how)  # fmt: skip
        import_overlap(r, q, f"{m}.override_transformer_config.overlap_p2p_comm")
        import_fp8(r, q, (f"{o}fp8", f"{o}fp8_recipe", f"{o}fp8_param"), "delayed")  # TE's
        import_glu_fusion(r, q, f"{o}bias_activation_fusion", (tp, pp, ep))  # verl_glu
        if not r.flag(f"{o}moe_permute_fusion", True):  # absent: the bridge's (Megatron-Bridge
            q.set("--no-moe-permute-fusion")  # providers True; examples/ set it: perf.moe_permute)
        set_split(r, q, pp, transformer_config_keys(f"{m}.override_transformer_config."))
        verl_virtual_stages(r, q, ACTOR, pp)
        q.set("--zero", "1" if r.flag(f"{m}.use_distributed_optimizer", True) else "0")
        # between phases: verl/workers/megatron_workers.py offloads and reloads around each
        offload = [name for key, name in (("param_offload", "params-idle"),
                                          ("grad_offload", "grads-idle"),
                                          ("optimizer_offload", "optimizer-idle"))
                   if r.flag(f"{m}.{key}", False)]  # fmt: skip
        _cpu_optimizer(r, q, offload)
        sp_size, dp = 1, gpus // (tp * pp * cp)
        q.set("--param-dtype", "bf16")  # Megatron: bf16 model, fp32 main params in Adam
        _grad_buffer(r, q, m, (tp, pp, ep))
    else:
        q.set("--zero", "3")
        fsdp = f"{ACTOR}.fsdp_config"
        # verl/workers/fsdp_workers.py: model_dtype None loads fp32; bf16 MixedPrecision compute
        stored = r.text(f"{fsdp}.model_dtype", "fp32")
        dtype = {"fp32": "fp32", "float32": "fp32", "bf16": "bf16", "bfloat16": "bf16",
                 "fp16": "fp16", "float16": "fp16"}.get(str(stored).lower())  # fmt: skip
        if dtype is None:
            raise SpecError(f"{r.where}: {fsdp}.model_dtype {stored!r}: use fp32, bf16 or fp16")
        q.set("--param-dtype", dtype)
        # between phases, back on the GPU for update_actor (verl/workers/fsdp_workers.py:
        # offload_fsdp_model_to_cpu / offload_fsdp_optimizer), not CPU Adam
        offload = [name for key, name in (("param_offload", "params-idle"),
                                          ("optimizer_offload", "optimizer-idle"))
                   if r.flag(f"{fsdp}.{key}", False)]  # fmt: skip
        if r.flag(f"{fsdp}.offload_policy", False):  # FSDP2 CPUOffloadPolicy: kept there
            offload = ["params", "grads", "optimizer"]
        sp_size = r.integer(f"{ACTOR}.ulysses_sequence_parallel_size", 1)
        if sp_size > 1:
            q.convert(f"{ACTOR}.ulysses_sequence_parallel_size={sp_size}", "--cp", sp_size,
                      "Ulysses sequence parallelism splits each sequence over GPUs as "
                      "context parallelism does (activations / cp)")  # fmt: skip
            q.note("Ulysses (all-to-all over heads) mapped to context parallelism: the same "
                   "activation split, different communication")  # fmt: skip
        dp = gpus // sp_size
        _fsdp_size(r, q, gpus)
    if offload:
        q.set("--offload", ",".join(offload))
    passes(r, q, strategy, day)
    q.set("--ckpt", verl_recompute(r, q, strategy))
    critic_notes(r, q, strategy, q.algorithm in ("ppo", "vapo"))  # the actor's layout (ibid.)
    fused = r.flag(f"{MODEL}.use_fused_kernels", False) or r.flag(f"{MODEL}.use_fused_loss",
                                                                   False)  # fmt: skip
    q.set("--logits", "fused" if fused else "low-memory")  # logprobs_from_logits: no fp32 copy
    import_liger(r, q, MODEL, strategy, q.algorithm in ("ppo", "vapo"))  # verl_glu
    _micro_batch(r, q, dp, sp_size)
    forward_batching(r, q)
    verl_lora(r, q, MODEL, strategy == "megatron", day)
    if r.flag(f"{ARR}.ref.{'megatron' if strategy == 'megatron' else 'fsdp_config'}.param_offload",
              False):  # fmt: skip (megatron_workers.py _ref_is_offload_param)
        q.set("--offload-idle")
    if r.flag(f"{ACTOR}.freeze_vision_tower", False):  # verl/workers/config/actor.py
        q.set("--freeze-vision-tower")


def _fsdp_size(r: Reader, q: ImportedQuery, world: int) -> None:
    """``actor.fsdp_config.fsdp_size`` as ``--zero-shard`` (verl/workers/fsdp_workers.py
    ``create_device_mesh`` @b25bb7d4f: (world,) for -1 or >= world, else the HSDP mesh
    (world / fsdp_size, fsdp_size); the worker's one mesh wraps its reference too)."""
    size = r.integer(f"{ACTOR}.fsdp_config.fsdp_size", -1, lo=-1)
    if size == 0:
        raise SpecError(f"{r.where}: {ACTOR}.fsdp_config.fsdp_size=0: use -1 or a group size")
    if 0 < size < world:
        q.convert(f"{ACTOR}.fsdp_config.fsdp_size={size}", "--zero-shard", size,
                  f"FSDP shards over {size} of the {world} GPUs, replicated (HSDP)")


def _micro_batch(r: Reader, q: ImportedQuery, dp: int, sp_size: int) -> None:
    """--micro-batch (per GPU) or --max-tokens-per-gpu, checked as verl's workers check."""
    if r.flag(f"{ACTOR}.use_dynamic_bsz", False):
        budget = r.integer(f"{ACTOR}.ppo_max_token_len_per_gpu", 16384)
        q.convert(f"{ACTOR}.ppo_max_token_len_per_gpu={budget}", "--max-tokens-per-gpu", budget,
                  "tokens per micro-batch per GPU (use_dynamic_bsz)")  # fmt: skip
        return
    per_gpu = r.integer(f"{ACTOR}.ppo_micro_batch_size_per_gpu", None)
    total = r.integer(f"{ACTOR}.ppo_micro_batch_size", None)
    if per_gpu is not None and total is not None:
        raise SpecError(
            f"{r.where}: both {ACTOR}.ppo_micro_batch_size and ppo_micro_batch_size_per_gpu "
            "are set (verl refuses this); keep ppo_micro_batch_size_per_gpu"
        )
    if per_gpu is None and total is None:
        raise SpecError(
            f"{r.where}: set {ACTOR}.ppo_micro_batch_size_per_gpu (or use_dynamic_bsz=True); "
            "verl needs one"
        )
    if per_gpu is None:
        per_gpu = max(1, total // dp)
        q.convert(f"{ACTOR}.ppo_micro_batch_size={total}", "--micro-batch", per_gpu,
                  f"global (deprecated): {total} / {dp} data-parallel ranks = {per_gpu} per "
                  "GPU")  # fmt: skip
    else:
        q.convert(f"{ACTOR}.ppo_micro_batch_size_per_gpu={per_gpu}", "--micro-batch", per_gpu,
                  "sequences per GPU per forward/backward (already per GPU)")  # fmt: skip
    flags = dict(q.flags)  # --mini-batches 1 is the command's default, left out of the query
    samples = flags["--batch"] * flags["--group"] // flags.get("--mini-batches", 1)
    if samples % dp or (samples // dp) % per_gpu:
        raise SpecError(
            f"{r.where}: a mini-batch of {samples:,} sequences (x rollout.n "
            f"{flags['--group']}) over {dp} data-parallel ranks ({samples / dp:g} each) does "
            f"not split into micro-batches of {per_gpu} per GPU (verl's workers assert it: "
            "fsdp_workers.py); change ppo_micro_batch_size_per_gpu or the GPU count"
        )
