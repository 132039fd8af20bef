"""OpenRLHF import: the arguments of ``openrlhf.cli.train_ppo_ray`` (argparse, defaults from
``openrlhf/cli/train_ppo_ray.py``) as an rlmcost query.

Units (train_ppo_ray.py's help texts and ``openrlhf/trainer/ppo_trainer.py``):

* ``--rollout_batch_size`` counts prompts; ``--n_samples_per_prompt`` samples each, so one
  step makes rollout_batch_size x n_samples_per_prompt samples (``--batch``, ``--group``);
* ``--train_batch_size`` counts samples (the global optimizer batch): the optimizer steps per
  epoch are rollout_batch_size x n_samples_per_prompt / train_batch_size
  (``--mini-batches``);
* ``--micro_train_batch_size`` is samples per GPU (``--micro-batch``); with
  ``--use_dynamic_batch``, ``--train_max_tokens_per_gpu`` (``--max-tokens-per-gpu``).

Placement: each model on GPUs of its own (``--groups``) unless ``--colocate_all_models``;
``--colocate_actor_ref`` / ``--colocate_critic_reward`` share a group.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.argv import SWITCH as _SWITCH
from rlmcost.frameworks.argv import parse_argv, word_list
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.openrlhf_layouts import (
    DOTTED,
    DOTTED_COST_FREE,
    LATER_ARGS,
    LATER_COST_FREE,
    kl_keys,
    later_options,
    lengths,
    micro_defaults,
    undot,
)
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.units import whole_steps

DEEPSPEED_ADAM_OFFLOAD = "optimizer,grads"
"""DeepSpeed's ``offload_optimizer`` (ZeRO-Offload) as rlmcost's ``--offload``: the fp32
Adam states and the step on the CPU, and the gradient partition in host memory as well
(ZeRO-3: ``self.device`` is the CPU under ``offload_optimizer`` and
``grad_partitions_flat_buffer``, every parameter's gradient partition, is allocated on it,
deepspeed/runtime/zero/stage3.py lines 226 and 500 at v0.13.2; ZeRO-1/2: ``self.device =
'cpu'`` under ``cpu_offload``, stage_1_and_2.py line 185, the averaged gradients copied to
the fp32 partition's ``.grad`` on the host). The device keeps only the reduce bucket, in
flight. Ren et al. 2021 (arXiv:2101.06840) §4: gradients and optimizer states offloaded."""
ARGS: dict[str, Any] = {
    # name: int | float | str | _SWITCH | ("list", n)
    "ref_num_nodes": int, "ref_num_gpus_per_node": int, "reward_num_nodes": int,
    "reward_num_gpus_per_node": int, "actor_num_nodes": int, "actor_num_gpus_per_node": int,
    "critic_num_nodes": int, "critic_num_gpus_per_node": int,
    "colocate_actor_ref": _SWITCH, "colocate_critic_reward": _SWITCH,
    "colocate_all_models": _SWITCH, "vllm_num_engines": int, "vllm_tensor_parallel_size": int,
    "vllm_gpu_memory_utilization": float, "vllm_enable_sleep": _SWITCH, "async_train": _SWITCH,
    "zero_stage": int, "gradient_checkpointing": _SWITCH, "adam_offload": _SWITCH,
    "gradient_checkpointing_use_reentrant": _SWITCH,
    "ds_tensor_parallel_size": int, "ring_attn_size": int, "packing_samples": _SWITCH,
    "use_dynamic_batch": _SWITCH, "train_max_tokens_per_gpu": int, "lora_rank": int,
    "target_modules": ("list", None), "rollout_batch_size": int, "micro_rollout_batch_size": int,
    "micro_train_batch_size": int, "train_batch_size": int, "n_samples_per_prompt": int,
    "max_epochs": int, "prompt_max_len": int, "generate_max_len": int, "pretrain": str,
    "reward_pretrain": str, "critic_pretrain": str, "remote_rm_url": str,
    "advantage_estimator": str, "init_kl_coef": float, "use_kl_loss": _SWITCH,
    "ref_reward_offload": _SWITCH, "use_liger_kernel": _SWITCH, "bf16": _SWITCH,
    "deepspeed_enable_sleep": _SWITCH, "dynamic_filtering": _SWITCH, "actor_init_on_gpu": _SWITCH,
    "enforce_eager": _SWITCH, "enable_prefix_caching": _SWITCH, "max_len": int,
    "max_new_tokens": int, "agent_func_path": str, **LATER_ARGS,
}  # fmt: skip
"""The arguments the importer reads, with their argparse types."""

IGNORED = {
    "save_path", "ckpt_path", "save_steps", "eval_steps", "logging_steps", "save_hf_ckpt",
    "disable_ds_ckpt", "max_ckpt_num", "max_ckpt_mem", "load_checkpoint", "max_samples",
    "actor_learning_rate", "critic_learning_rate", "lr_warmup_ratio", "lr_scheduler",
    "prompt_data", "prompt_data_probs", "prompt_split", "eval_dataset", "eval_split",
    "input_key", "label_key", "input_template", "apply_chat_template", "normalize_reward",
    "use_wandb", "wandb_org", "wandb_group", "wandb_project", "wandb_run_name",
    "use_tensorboard", "flash_attn", "attn_implementation", "seed", "full_determinism",
    "vllm_sync_backend", "vllm_sync_with_ray",
    "temperature", "top_p", "eps_clip", "eps_clip_low_high", "value_clip", "lambd", "gamma",
    "kl_estimator", "kl_target", "kl_horizon", "max_norm", "l2", "ptx_coef", "adam_betas",
    "reward_clip_range", "dynamic_filtering_reward_range", "overlong_buffer_len",
    "overlong_penalty_factor", "no_advantage_std_norm", "entropy_loss_coef", "lora_alpha",
    "lora_dropout", "overlap_comm", "grad_accum_dtype",
    "disable_fast_tokenizer", "zpg", "value_head_prefix", "save_value_network", "num_episodes",
    "local_rank", "freezing_actor_steps", "aux_loss_coef", "vllm_generate_batch_size",
    "rollout_tasks_per_gpu", "async_queue_size", "eval_temperature", "eval_n_samples_per_prompt",
    "policy_loss_type", "dual_clip", "ring_head_stride", "enable_vllm_is_correction",
    "vllm_is_truncated_threshold", "perf", "use_ms", "runtime-env-json",
} | DOTTED_COST_FREE | LATER_COST_FREE  # fmt: skip
"""Arguments that change no cost (paths, logging, optimizer, sampling): ignored silently."""

_ESTIMATORS = {
    "gae": "ppo", "group_norm": "grpo", "dr_grpo": "grpo", "rloo": "rloo",
    "reinforce": "grpo", "reinforce_baseline": "grpo",
}  # fmt: skip

_PREFIX = ("python", "python3", "-m", "-u", "openrlhf.cli.train_ppo_ray",
           "openrlhf.cli.train_grpo_ray", "--")  # fmt: skip


SELECTIVE_LOG_SOFTMAX_DATE = "2025-02-06"
"""The day OpenRLHF stopped materialising the log-softmax of the whole logits (PR 718, commit
d0739072, "Use selective log-softmax to reduce peak vram consumption"). Before it,
openrlhf/models/utils.py ``log_probs_from_logits`` ran ``F.log_softmax(logits, dim=-1)`` over
every position and the vocabulary, then gathered the labels (at commit dbdd43b0,
2024-03-26), on the model's whole logits (openrlhf/models/actor.py ``forward``)."""


def logits_mode(code_date: str) -> str:
    """rlmcost's ``--logits`` for OpenRLHF code of ``code_date`` (ISO date): ``materialized``
    before :data:`SELECTIVE_LOG_SOFTMAX_DATE`, else the importer's ``low-memory`` (row by row;
    ``fused`` with ``--use_liger_kernel``)."""
    return "materialized" if code_date < SELECTIVE_LOG_SOFTMAX_DATE else "low-memory"


ENGINE_UTILIZATION_ARG_DATE = "2025-02-07"
"""The day OpenRLHF began passing ``gpu_memory_utilization`` to its vLLM engines (PR 677,
commit c10f02bd, "Support hybrid engine and vllm rlhf API": ``--vllm_gpu_memory_utilization``,
default 0.9 then, 0.95 now). Before it ``create_vllm_engines`` (openrlhf/trainer/ray/
vllm_engine.py at dbdd43b0, 2024-03-26, and 391e1de4, 2024-05-18) built ``vllm.LLM(pretrain,
trust_remote_code, tensor_parallel_size, dtype, seed)`` with no utilization, so the engines ran
at vLLM's own default, :data:`VLLM_LLM_DEFAULT_UTILIZATION`."""

VLLM_LLM_DEFAULT_UTILIZATION = 0.9
"""``gpu_memory_utilization`` of ``vllm.LLM`` when the caller gives none (vllm/entrypoints/
llm.py ``LLM.__init__``, ``gpu_memory_utilization: float = 0.9``)."""


def engine_utilization(code_date: str) -> float | None:
    """The engines' ``gpu_memory_utilization`` that OpenRLHF code of ``code_date`` (ISO date)
    ran without the argument: vLLM's default before :data:`ENGINE_UTILIZATION_ARG_DATE`, else
    None (the importer reads ``--vllm_gpu_memory_utilization``)."""
    return VLLM_LLM_DEFAULT_UTILIZATION if code_date < ENGINE_UTILIZATION_ARG_DATE else None


def parse_args(argv: list[str]) -> dict[str, Any]:
    """``--key value`` / ``--switch`` tokens into a mapping of raw values (strings, True,
    lists); unknown ``--keys`` keep their following value, if any. No code runs."""
    tokens = list(argv)
    while tokens and tokens[0] in _PREFIX:
        tokens.pop(0)
    return parse_argv(tokens, ARGS, "OpenRLHF arguments")


def import_openrlhf(argv: list[str]) -> ImportedQuery:
    """The rlmcost query of an OpenRLHF ``train_ppo_ray`` command line (flat names, or the
    dotted ones of OpenRLHF v0.10.2 on: :mod:`rlmcost.frameworks.openrlhf_layouts`)."""
    tokens, dotted = undot(word_list(argv, "OpenRLHF arguments"))
    args = parse_args(tokens)
    r = Reader(args, "OpenRLHF arguments")
    q = ImportedQuery("openrlhf", "train_ppo_ray arguments")
    if dotted:
        q.note("OpenRLHF's dotted arguments (v0.10.2 on, e.g. --actor.model_name_or_path) read "
               "as their earlier flat names (--pretrain), which the conversions name")
    has_ref = _models(r, q)
    _workload(r, q, dotted)
    _layout(r, q, dotted)
    _placement(r, q, has_ref, dotted)
    named = {flat: f"--{d}" for d, flat in DOTTED.items()} if dotted else {}  # as given
    q.ignored = [named.get(k, f"--{k}") for k in r.unread(tuple(IGNORED))]
    q.near = {f"--{k}": f"--{v}" for k, v in r.near_misses(tuple(IGNORED)).items()}
    return q


def _models(r: Reader, q: ImportedQuery) -> bool:
    est = r.text("advantage_estimator", "gae", tuple(_ESTIMATORS))
    alg = _ESTIMATORS[est]
    if est in ("reinforce", "reinforce_baseline"):
        q.note(f"--advantage_estimator {est}: no critic; rlmcost counts it as grpo (the same "
               "invocations)")  # fmt: skip
    pretrain = r.text("pretrain", None)
    if not pretrain:
        raise SpecError("OpenRLHF arguments: give --pretrain MODEL (the actor)")
    q.set("--model", pretrain)
    remote = r.text("remote_rm_url", None)
    rm = r.text("reward_pretrain", None)
    if r.text("agent_func_path", None):  # train_ppo_ray.py (v0.8.0 on): remote_rm_url = "agent"
        q.note("--agent_func_path: the agent scores, no reward model, and runs each sample's "
               "turns (utils/agent.py): give --turns, --observation-tokens, --tool-latency")
        remote, rm = "agent", None
    if remote:
        if rm:
            raise SpecError("OpenRLHF arguments: --remote_rm_url and --reward_pretrain both "
                            "given; keep one reward")  # fmt: skip
        if alg in ("ppo", "grpo"):
            alg = {"ppo": "vapo", "grpo": "rlvr"}[alg]
            q.note(f"--remote_rm_url: rewards from a function or server; rlmcost's {alg} "
                   "scores with a verifier, no reward model")  # fmt: skip
        else:
            q.note(f"--remote_rm_url: rlmcost's {alg} scores with a reward model (nearest)")
    elif not rm:
        raise SpecError("OpenRLHF arguments: give --reward_pretrain MODEL or --remote_rm_url")
    elif rm != pretrain:
        q.set("--reward", rm.split(",")[0])
    if alg in ("ppo", "vapo"):
        critic = r.text("critic_pretrain", None) or (rm.split(",")[0] if rm else pretrain)
        if critic != pretrain:
            q.set("--critic", critic)
    q.algorithm = alg
    has_ref = r.number("init_kl_coef", 0.01) > 0
    kl_keys(r, q, has_ref)  # --use_kl_loss; the ref's GPU keys without a reference
    q.set("--kl" if has_ref else "--no-kl")
    if r.flag("dynamic_filtering", False):
        q.note("--dynamic_filtering: rlmcost's dapo models the oversampling (--oversample); "
               "this query keeps one rollout per kept sample")  # fmt: skip
    return has_ref


def _workload(r: Reader, q: ImportedQuery, dotted: bool) -> None:
    prompts = r.integer("rollout_batch_size", 1024)
    n = r.integer("n_samples_per_prompt", 1)
    train = r.integer("train_batch_size", 128)
    q.convert(f"--rollout_batch_size {prompts}", "--batch", prompts,
              "prompts per step (OpenRLHF counts prompts)")  # fmt: skip
    q.convert(
        f"--n_samples_per_prompt {n}",
        "--group",
        n,
        f"samples per prompt: {prompts:,} x {n} = {prompts * n:,} samples per step",
    )
    steps = whole_steps(prompts * n, train, "rollout_batch_size x n_samples_per_prompt",
                        "--train_batch_size", r.where)  # fmt: skip
    q.convert(f"--train_batch_size {train}", "--mini-batches", steps,
              f"counts samples: {prompts * n:,} / {train:,} = {steps} optimizer steps per "
              "epoch", default=1)  # fmt: skip
    epochs = r.integer("max_epochs", 1)
    q.convert(
        f"--max_epochs {epochs}", "--epochs", epochs, "passes over each step's samples", default=1
    )
    lengths(r, q)  # --prompt_max_len / --generate_max_len, or --max_len / --max_new_tokens
    r.integer("micro_rollout_batch_size", micro_defaults(dotted)[1])  # the per-GPU forwards
    if r.flag("packing_samples", False):
        q.note("--packing_samples: sequences packed without padding; rlmcost's sequences are "
               "S + T tokens without padding already")  # fmt: skip


def _layout(r: Reader, q: ImportedQuery, dotted: bool) -> None:
    zero = r.integer("zero_stage", 2, lo=0, hi=3)
    q.set("--zero", str(zero))
    tp = r.integer("ds_tensor_parallel_size", 1)
    if tp > 1:
        q.set("--tp", tp)
    cp = r.integer("ring_attn_size", 1)
    if cp > 1:
        q.convert(f"--ring_attn_size {cp}", "--cp", cp, "ring attention: context parallelism")
    ckpt = r.flag("gradient_checkpointing", False)
    q.set("--ckpt", "full" if ckpt else "none")
    if r.flag("gradient_checkpointing_use_reentrant", False) and ckpt:  # (perf.ckpt_early_stop)
        q.convert("--gradient_checkpointing_use_reentrant", "--no-recompute-early-stop", None,
                  "torch's reentrant checkpoint: the whole layer rerun, no early stop",
                  default=False)
    if r.flag("adam_offload", False):
        q.set("--offload", DEEPSPEED_ADAM_OFFLOAD)
        q.note(f"--adam_offload: DeepSpeed offload_optimizer (openrlhf/utils/deepspeed_utils.py "
               f"get_train_ds_config), CPU Adam with the gradient partition on the host too "
               f"(--offload {DEEPSPEED_ADAM_OFFLOAD})")  # fmt: skip
    if dynamic := r.flag("use_dynamic_batch", False):
        budget = r.integer("train_max_tokens_per_gpu", 16192)
        q.convert(f"--train_max_tokens_per_gpu {budget}", "--max-tokens-per-gpu", budget,
                  "tokens per micro-batch per GPU (--use_dynamic_batch)")  # fmt: skip
    else:
        micro = r.integer("micro_train_batch_size", micro_defaults(dotted)[0])
        q.convert(f"--micro_train_batch_size {micro}", "--micro-batch", micro,
                  "samples per GPU per forward/backward (already per GPU)")  # fmt: skip
    rank = r.integer("lora_rank", 0, lo=0, hi=65536)
    if rank:
        q.set("--lora-rank", rank)
        q.set("--lora-targets", ",".join(r.words("target_modules", "all-linear")))
    if r.flag("ref_reward_offload", False):
        q.set("--offload-idle")
    q.set("--logits", "fused" if r.flag("use_liger_kernel", False) else "low-memory")
    later_options(r, q, dynamic, dotted)  # the forwards' batching, later keys
    r.flag("bf16", False)
    _init_load(r, q)


def _init_load(r: Reader, q: ImportedQuery) -> None:
    """Where the Ray actors build their models: ``from_pretrained(..., device_map=None)`` in
    host memory, one copy per actor (``openrlhf/models/actor.py``), sharded as built under
    ZeRO-3 (``HfDeepSpeedConfig``: ``deepspeed.zero.Init``). ``--actor_init_on_gpu`` is parsed
    by ``openrlhf/cli/train_ppo_ray.py`` and read nowhere on the Ray path; only the
    DeepSpeed-launched ``openrlhf/cli/train_ppo.py`` (removed in March 2025) moved the actor
    to the GPU whole before ``deepspeed.initialize`` (``--init-load gpu``)."""
    if dict(q.flags).get("--zero") == "3":  # the preset's host-each otherwise
        q.set("--init-load", "sharded")
    if r.flag("actor_init_on_gpu", False):
        q.note("--actor_init_on_gpu: train_ppo_ray.py parses it and never reads it (only "
               "openrlhf/cli/train_ppo.py moved the actor whole onto the GPU, --init-on-gpu); "
               "the Ray actors load on the host (--init-load host-each, sharded under ZeRO-3)")


DEEPSPEED_SLEEP_OFFLOAD = "optimizer-idle,grads-idle"
"""``--deepspeed_enable_sleep`` as rlmcost's ``--offload``: the actor's and critic's ZeRO-3
optimizer states (fp32 master weights, m, v) and gradient buffers go to pinned host memory
after each training phase and come back before the next (``offload_deepspeed_states``:
optim_states, contiguous_grad_buffer, hp_params, lp_grads; the bf16 parameter shards stay;
openrlhf/utils/deepspeed/deepspeed_utils.py, trainer/ray/ppo_actor.py and ppo_critic.py,
trainer/ppo_trainer.py ``ppo_train`` @c250c21a)."""


def _deepspeed_sleep(r: Reader, q: ImportedQuery) -> None:
    """``--deepspeed_enable_sleep``: nothing under ``--adam_offload`` (the states are on the
    host already: ``offload_deepspeed_states`` returns), ZeRO-3 only (it raises
    NotImplementedError under another stage), else :data:`DEEPSPEED_SLEEP_OFFLOAD`."""
    if not r.flag("deepspeed_enable_sleep", False) or "--offload" in dict(q.flags):
        return
    if dict(q.flags).get("--zero") != "3":
        raise SpecError("OpenRLHF arguments: --deepspeed_enable_sleep needs --zero_stage 3 "
                        "(openrlhf/utils/deepspeed/deepspeed_utils.py offload_deepspeed_states "
                        "raises NotImplementedError under another stage)")  # fmt: skip
    q.set("--offload", DEEPSPEED_SLEEP_OFFLOAD)
    q.note("--deepspeed_enable_sleep: the trainers' ZeRO-3 optimizer states and gradients wait "
           "in host memory while the other models and the engines run (DeepSpeed "
           f"offload_states; --offload {DEEPSPEED_SLEEP_OFFLOAD})")  # fmt: skip


def _gpus(r: Reader, role: str) -> int:
    return r.integer(f"{role}_num_nodes", 1) * r.integer(f"{role}_num_gpus_per_node", 8)


def _placement(r: Reader, q: ImportedQuery, has_ref: bool, dotted: bool) -> None:
    """GPUs and groups as train_ppo_ray places them: each model on its own
    ``*_num_nodes x *_num_gpus_per_node`` GPUs (a Ray actor group), ``vllm_num_engines x
    vllm_tensor_parallel_size`` engine GPUs beside them; without engines (unset or 0) the actor
    generates on its own GPUs and every other model keeps its GPUs."""
    engines = r.integer("vllm_num_engines", None, lo=0) or 0
    vtp = r.integer("vllm_tensor_parallel_size", 1)
    util = r.fraction("vllm_gpu_memory_utilization", 0.95)
    colocate_all = r.flag("colocate_all_models", False)
    sleep = r.flag("vllm_enable_sleep", False) and colocate_all
    _deepspeed_sleep(r, q)
    if r.flag("async_train", False):
        q.note("--async_train: generation overlaps training one step behind; rlmcost's "
               "groups model the synchronous iteration (see --placement async)")  # fmt: skip
    actor = _gpus(r, "actor")
    if engines:
        q.set("--rollout-tp", vtp)
        q.set("--gpu-memory-utilization", util)
        q.set("--sleep" if sleep else "--no-sleep")
        if r.flag("enforce_eager", False):  # cli/train_ppo_ray.py: store_true
            q.set("--enforce-eager")
        if r.flag("enable_prefix_caching", False):  # cli/train_ppo_ray.py: store_true
            q.set("--prefix-caching")  # (off: the preset's default)
    else:
        q.note("no vLLM engines (--vllm_num_engines unset or 0): the actor generates with "
               "transformers generate() on its own weights (--engine hf: static batches of "
               "--micro_rollout_batch_size, no reservation; openrlhf/models/actor.py "
               "Actor.generate)")  # fmt: skip
        q.set("--engine", "hf")
        q.set("--max-num-seqs", r.integer("micro_rollout_batch_size", micro_defaults(dotted)[1],
                                          lo=1))
    if colocate_all:
        if has_ref and _gpus(r, "ref") != actor:  # train_ppo_ray.py asserts it (init_coef > 0)
            raise SpecError("OpenRLHF arguments: --colocate_all_models needs the same GPUs for "
                            "ref and actor (ref_num_nodes x ref_num_gpus_per_node)")  # fmt: skip
        if engines and engines * vtp != actor:
            raise SpecError(
                f"OpenRLHF arguments: --colocate_all_models needs vllm_num_engines x "
                f"vllm_tensor_parallel_size = actor GPUs, got {engines} x {vtp} != {actor}"
            )
        q.convert(
            "actor_num_nodes x actor_num_gpus_per_node",
            "--gpus",
            actor,
            "every model and the engines on the actor's GPUs (--colocate_all_models)",
        )
        return
    groups = [f"rollout={engines * vtp}[tp={vtp}]"] if engines else []
    critic = q.algorithm in ("ppo", "vapo")
    reward = q.algorithm in ("ppo", "grpo", "rloo")  # vapo, rlvr: a verifier, no model
    colocate_ar = r.flag("colocate_actor_ref", False)
    if has_ref and colocate_ar:
        if _gpus(r, "ref") != actor:
            raise SpecError("OpenRLHF arguments: --colocate_actor_ref needs the same GPUs for "
                            "ref and actor (ref_num_nodes x ref_num_gpus_per_node)")  # fmt: skip
        groups.append(f"actor+reference={actor}")
    else:
        groups.append(f"actor={actor}")
        if has_ref:
            groups.append(f"reference={_gpus(r, 'ref')}")
    colocate_cr = r.flag("colocate_critic_reward", False)
    if critic and reward and colocate_cr:
        if _gpus(r, "critic") != _gpus(r, "reward"):
            raise SpecError("OpenRLHF arguments: --colocate_critic_reward needs the same GPUs "
                            "for critic and reward")  # fmt: skip
        groups.append(f"critic+reward={_gpus(r, 'critic')}")
    else:
        if critic:
            groups.append(f"critic={_gpus(r, 'critic')}")
        if reward:
            groups.append(f"reward={_gpus(r, 'reward')}")
    total = sum(int(g.split("=")[1].split("[")[0]) for g in groups)
    given = "the *_num_nodes x *_num_gpus_per_node of each model" + (
        " and vllm_num_engines x vllm_tensor_parallel_size" if engines else "")  # fmt: skip
    q.convert(given, "--groups", ",".join(groups),
              "each model on GPUs of its own (OpenRLHF's Ray placement)")  # fmt: skip
    q.set("--gpus", total)
