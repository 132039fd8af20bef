"""The CLI line that reproduces a :class:`~rlmcost.run.Run` (``Run.to_command``).

Each field different from what the command would take by itself becomes its flag, in the
flag table's spelling (:mod:`rlmcost.cli._flags`); a device group's own engine and trainer
fields become keys of its ``--groups`` brackets (:mod:`rlmcost.deployment.group_brackets`);
what no flag says (a group's forward layout or fields without a key, overheads, dtypes other
than the defaults, a full model spec) goes into a ``--deployment`` file or cannot be said on
the command line, and is named in the error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import MODEL_KEYS
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

_ROLE_FLAGS = {role.value: f"--{key}" for role, key in MODEL_KEYS.items()}
_ALGO_FLAGS = {"epochs": "--epochs", "mini_batches": "--mini-batches",
               "global_batch": "--global-batch",
               "oversample": "--oversample", "prm_steps": "--prm-steps",
               "judge_len": "--judge-len"}  # fmt: skip
_WORKLOAD_FLAGS = {"prompts": "-B", "samples_per_prompt": "-K", "prompt_len": "-S",
                   "response_len": "-T", "length_dist": "--length-dist",
                   "image_tokens": "--image-tokens", "turns": "--turns",
                   "observation_tokens": "--observation-tokens",
                   "tool_latency_s": "--tool-latency",
                   "turn_schedule": "--turn-schedule"}  # fmt: skip
_TRAIN_FLAGS = {"tp": "--tp", "pp": "--pp", "cp": "--cp", "ep": "--ep", "etp": "--etp",
                "zero": "--zero",
                "ckpt": "--ckpt", "micro_batch": "--micro-batch",
                "max_tokens_per_gpu": "--max-tokens-per-gpu",
                "param_dtype": "--param-dtype",
                "grad_reduce_dtype": "--grad-reduce-dtype"}  # fmt: skip
_ENGINE_FLAGS = {"tp": "--rollout-tp", "pp": "--rollout-pp", "ep": "--rollout-ep",
                 "dtype": "--rollout-dtype", "kv_cache_dtype": "--kv-cache-dtype",
                 "gpu_memory_utilization": "--gpu-memory-utilization",
                 "max_num_seqs": "--max-num-seqs",
                 "max_num_batched_tokens": "--max-num-batched-tokens",
                 "context_length": "--context-length",
                 "dp_attention": "--dp-attention",
                 "schedule_policy": "--schedule-policy",
                 "sequences_per_call": "--sequences-per-call",
                 "gather_layers": "--tp-gather-layers",
                 "speculative_tokens": "--speculative-tokens",
                 "speculative_draft": "--speculative-draft",
                 "speculative_acceptance": "--speculative-acceptance",
                 "refit": "--refit", "kv_buffer_gib": "--kv-buffer-gib",
                 "vllm_version": "--vllm-version"}  # fmt: skip
_CLUSTER_FLAGS = {"hardware": "-H", "gpus": "--gpus", "dp": "--dp",
                  "host_bandwidth_gb_per_s": "--host-bandwidth",
                  "host_memory_gib": "--host-memory-gib",
                  "calibration": "--calibration", "rank_order": "--rank-order"}  # fmt: skip

_DEPLOYMENT_FLAGS = {"lora.rank": "--lora-rank", "lora.targets": "--lora-targets",
                     "lora.gather": "--lora-gather",
                     "rollout_in_flight": "--in-flight-batches", "train.offload": "--offload",
                     "env_workers": "--env-workers",
                     "logits": "--logits", "init_load": "--init-load",
                     "logits_chunk_tokens": "--logits-chunk-tokens",
                     "staleness": "--staleness", "placement": "--placement",
                     "train.router_dtype": "--router-dtype",
                     "train.ep_dispatcher": "--ep-dispatcher",
                     "train.moe_permute_fusion": "--moe-permute-fusion",
                     "train.pp_overlap_p2p": "--pp-overlap-p2p",
                     "train.recompute_early_stop": "--recompute-early-stop",
                     "train.module_ckpt": "--module-ckpt",
                     "train.swiglu_fusion": "--swiglu-fusion",
                     "train.moe_capacity_factor": "--moe-capacity-factor",
                     "train.moe_pad_to_capacity": "--moe-pad-to-capacity",
                     "train.kernels": "--trainer-kernels", "train.fp8": "--train-fp8",
                     "train.fp8_param": "--train-fp8-param"}  # fmt: skip


def field_flags(prefix: str = "") -> dict[str, str]:
    """Each field a flag sets -> that flag, by dotted path from a Run (``prefix`` ""), or
    from its deployment (``prefix`` "deployment"), so that a bad value is reported under the
    flag the user typed (:func:`rlmcost.specs.validation.build`)."""
    dep = {**{f"train.{k}": v for k, v in _TRAIN_FLAGS.items()},
           **{f"engine.{k}": v for k, v in _ENGINE_FLAGS.items()}, **_DEPLOYMENT_FLAGS,
           "engine.weight_format": "--rollout-weights",
           "engine.weight_parts": "--rollout-weights"}  # FORMAT[:PARTS], one flag
    if prefix == "deployment":
        return dep
    out = {**{f"algorithm.{k}": v for k, v in _ALGO_FLAGS.items()},
           **{f"workload.{k}": v for k, v in _WORKLOAD_FLAGS.items()},
           **{f"cluster.{k}": v for k, v in _CLUSTER_FLAGS.items()},
           **{f"deployment.{k}": v for k, v in dep.items()}}  # fmt: skip
    return {k: _LONG.get(v, v) for k, v in out.items()}


_LONG = {"-B": "--batch", "-K": "--group", "-S": "--prompt-len", "-T": "--response-len",
         "-H": "--hardware"}
"""The long spelling of each short flag, as an error names it."""


def to_command(run: Run, command: str | None = None) -> str:
    """``rlmcost <command> --model ... <flags>`` for ``run`` (``command``: default the
    algorithm's name; ``placements`` adds ``--algorithm``). SpecError naming a field no flag
    can say."""
    from rlmcost.run.spec import Run

    cmd = command or run.algorithm.name
    if cmd not in (run.algorithm.name, "placements", "compare"):
        raise SpecError(f"command={cmd!r:.40}: a Run's command line is its algorithm's "
                        f"({run.algorithm.name!r}), 'compare' or 'placements'")  # fmt: skip
    base = Run()
    words: list[str] = ["rlmcost", cmd]
    if cmd in ("placements",):
        words += ["--algorithm", run.algorithm.name]
    elif cmd == "compare":
        words.append(run.algorithm.name)
    m = run.models
    if not isinstance(m.actor, str):
        raise SpecError("the actor is a full model spec; save its config.json and pass its path")
    words += ["--model", m.actor]
    for role, flag in _ROLE_FLAGS.items():
        value = getattr(m, role)
        if value is not None:
            words += [flag, _text(value, role)]
    if m.others:
        raise SpecError(f"no flag names the models of {', '.join(m.others)}; use a run file")
    a = run.algorithm
    for field, flag in _ALGO_FLAGS.items():
        if getattr(a, field) is not None:
            words += [flag, str(getattr(a, field))]
    if not _compare_implied(run, cmd, "recompute_logprobs"):
        words += ["--recompute-logprobs"] if a.recompute_logprobs else ["--no-recompute-logprobs"]
    words += ["--no-kl"] if not a.kl else ["--kl"] if _preset_drops_kl(run) else []
    words += ["--ref-precomputed"] if a.ref_precomputed else []
    if a.kv_scales is not None:  # None: the framework's (run.defaults.kv_scales_implied)
        words += ["--kv-scale-calibration" if a.kv_scales else "--no-kv-scale-calibration"]
    words += ["--reward", "rule"] if a.rule_reward and not _compare_implied(run, cmd) else []
    w = run.workload
    for field, flag in _WORKLOAD_FLAGS.items():
        if getattr(w, field) is not None and getattr(w, field) != getattr(base.workload, field):
            words += [flag, str(getattr(w, field))]
    if w.dtypes() != base.workload.dtypes():
        raise SpecError("no flag sets the dtypes; use `rlmcost run FILE`")
    words += _deployment_flags(run)
    c = run.cluster
    for field, flag in _CLUSTER_FLAGS.items():
        value = getattr(c, field)
        if value is not None and value != getattr(base.cluster, field):
            words += [flag, _number(value) if isinstance(value, float) else str(value)]
    if c.prices:
        words += ["--price", ",".join(f"{hw}={_number(p)}" for hw, p in c.prices.items())]
    if run.attention != base.attention:
        words += ["--attention", str(run.attention)]
    import shlex  # to_command only: the flag table's readers (field_flags) need no quoting

    return shlex.join(words)


def _number(value: float) -> str:
    """``value`` in as few digits as read back the same float (``2``, ``1.2345678``; ``:g``
    alone keeps 6 significant digits, so a price of 1.2345678 came back as 1.23457)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def _text(value: Any, role: str) -> str:
    if not isinstance(value, str):
        raise SpecError(f"the {role} is a full model spec; save its config.json and pass its path")
    return value


def _deployment_flags(run: Run) -> list[str]:
    """The flags of the deployment's fields (every trainer field, so that a framework's or a
    file's values are stated, not inherited)."""
    from rlmcost.deployment.spec import Deployment, EngineSpec, Overhead

    d = run.deployment
    words = ["--framework", d.framework or "none"]
    if _leaves_tier(run):  # the flags below state the fields against the preset's own
        words.append("--no-sized-defaults")
    fwd = d.forward
    if fwd is not None and fwd.packing == d.train.packing and fwd == d.train.model_copy(
        update={"offload": (), "max_tokens_per_gpu": fwd.max_tokens_per_gpu,
                "micro_batch": fwd.micro_batch}
    ):  # the trainer's layout with its own batching  # fmt: skip
        words += ["--forward-micro-batch", str(fwd.micro_batch)]
        if fwd.max_tokens_per_gpu is not None:
            words += ["--forward-max-tokens-per-gpu", str(fwd.max_tokens_per_gpu)]
        fwd = None
    expandable = d.overhead.expandable_segments
    if fwd is not None or d.overhead.model_copy(update={"expandable_segments": False}) != \
            Overhead():
        raise SpecError("forward layouts and overheads have no flags; use `rlmcost run FILE`")
    t = d.train
    for field, flag in _TRAIN_FLAGS.items():
        value = getattr(t, field)
        if value is not None and not (run.tp_per_model and field == "tp"):
            words += [flag, str(value)]
    if t.sp or _preset_sets(d.framework, "train.sp"):
        words.append("--sp" if t.sp else "--no-sp")
    if t.freeze_vision_tower:
        words.append("--freeze-vision-tower")
    if t.mtp_layers:
        words += ["--mtp-layers", str(t.mtp_layers)] + ["--mtp-repeated"] * t.mtp_repeated \
            + ["--mtp-detach-heads"] * t.mtp_detach_heads  # fmt: skip
    if t.fp8 is not None:  # Transformer Engine's FP8 (perf.fp8_train)
        words += ["--train-fp8", str(t.fp8)] + ["--train-fp8-param"] * t.fp8_param
    if t.disable_dropout:
        words.append("--disable-dropout")
    words.append("--packing" if t.packing else "--no-packing")
    if t.fused_loss:
        words.append("--fused-loss")
    if t.padded:
        words.append("--padded")
    if t.prefix_grouper:
        words.append("--prefix-grouper")
    if t.activation_offload:
        words.append("--activation-offload")
    if t.router_dtype != "fp32" or _preset_sets(d.framework, "train.router_dtype"):
        words += ["--router-dtype", str(t.router_dtype)]
    if t.ep_dispatcher != "alltoall":
        words += ["--ep-dispatcher", str(t.ep_dispatcher)]
    if not t.moe_permute_fusion:
        words.append("--no-moe-permute-fusion")
    if t.pp_overlap_p2p is not None:
        words.append("--pp-overlap-p2p" if t.pp_overlap_p2p else "--no-pp-overlap-p2p")
    if t.recompute_early_stop is not None:
        words.append(f"--{'' if t.recompute_early_stop else 'no-'}recompute-early-stop")
    if t.module_ckpt is not None:
        words.append(f"--{'' if t.module_ckpt else 'no-'}module-ckpt")
    if t.swiglu_fusion is not None:
        words.append(f"--{'' if t.swiglu_fusion else 'no-'}swiglu-fusion")
    if t.moe_capacity_factor is not None:
        words += ["--moe-capacity-factor", repr(t.moe_capacity_factor)]
    if t.moe_pad_to_capacity:
        words.append("--moe-pad-to-capacity")
    if t.kernels != "fused":
        words += ["--trainer-kernels", str(t.kernels)]
    if t.offload or _preset_sets(d.framework, "train.offload"):  # '' states "none"
        words += ["--offload", ",".join(str(o) for o in t.offload)]
    if expandable or _preset_sets(d.framework, "overhead.expandable_segments"):
        words.append("--expandable-segments" if expandable else "--no-expandable-segments")
    words += t.pp_split.flags() if t.pp_split is not None else []
    if _layout_sets_schedule(t):
        pass
    elif t.schedule == "interleaved" and t.virtual_stages > 1:
        words += ["--virtual-stages", str(t.virtual_stages)]  # sets the schedule too
    elif (t.schedule, t.virtual_stages) != (Deployment().train.schedule, 1):
        raise SpecError("no flag sets the pipeline schedule; use `rlmcost run FILE`")
    e, e0 = d.engine, EngineSpec()
    for field, flag in _ENGINE_FLAGS.items():
        value = getattr(e, field)
        if value is not None and value != getattr(e0, field):
            words += [flag, _number(value) if isinstance(value, float) else str(value)]
    if e.max_num_seqs is None and _preset_caps(d.framework, str(e.kind)):
        words += ["--max-num-seqs", "0"]  # the engine's own default over the preset's cap
    if e.block_size != e0.block_size:  # EP: --rollout-ep (_ENGINE_FLAGS)
        raise SpecError("no flag sets the engine's block size; use `rlmcost run FILE`")
    if e.weight_format is not None:  # FORMAT[:PARTS]
        parts = "" if e.weight_parts == "linear" else f":{e.weight_parts}"
        words += ["--rollout-weights", f"{e.weight_format}{parts}"]
    words.append("--sleep" if e.sleep else "--no-sleep")
    words += ["--enforce-eager"] if e.eager else []
    if e.prefix_caching is not None:
        words.append("--prefix-caching" if e.prefix_caching else "--no-prefix-caching")
    if e.kind != e0.kind:
        words += ["--engine", str(e.kind)]
    if d.lora is not None:
        words += ["--lora-rank", str(d.lora.rank), "--lora-targets", ",".join(d.lora.targets)]
        if d.lora.gather is not None:
            words += ["--lora-gather", str(d.lora.gather)]
    if d.offload_idle or _preset_sets(d.framework, "offload_idle"):  # NeMo RL's reference
        words.append("--offload-idle" if d.offload_idle else "--no-offload-idle")
    if d.init_load != "sharded" or _preset_sets(d.framework, "init_load"):
        words += ["--init-load", str(d.init_load)]
    words += ["--logits", str(d.logits)]
    words += ["--logits-chunk-tokens", str(d.logits_chunk_tokens)] \
        if d.logits_chunk_tokens != 1024 else []  # Deployment's default  # fmt: skip
    words += ["--routing-replay"] if d.routing_replay else []
    words += ["--partial-rollout"] if d.partial_rollout else []
    words += ["--in-flight-batches", str(d.rollout_in_flight)] if d.rollout_in_flight > 1 else []
    words += ["--ideal"] if d.ideal else []
    words += ["--env-workers", str(d.env_workers)] if d.env_workers is not None else []
    if d.placement is not None:
        words += ["--placement", d.placement]
    if d.staleness is not None:
        words += ["--staleness", str(d.staleness)]
    if d.groups:  # a group's own engine and trainer fields in its brackets
        from rlmcost.deployment.group_brackets import bracket_text

        own = [bracket_text(g, t, d.forward_layout()) for g in d.groups]
        words += ["--groups", ",".join(
            f"{g.members}={g.gpus}" + (f"@{g.hardware}" if g.hardware else "")
            + (f"[{b}]" if b else "") for g, b in zip(d.groups, own, strict=True)
        )]  # fmt: skip
    return words


def _preset_sets(framework: str | None, field: str) -> bool:
    """The framework's preset sets ``field`` (a dotted Deployment field) to a true value, so a
    Run that differs from it states its own value."""
    from rlmcost.frameworks.presets import get_preset

    if framework is None:
        return False
    return any(d.field == field and d.value for d in get_preset(framework).defaults)


def _leaves_tier(run: Run) -> bool:
    """The run's actor reaches a size tier of its framework's preset
    (:meth:`~rlmcost.frameworks.preset_model.Preset.tier`) whose values the run does not all
    have, so its command says ``--no-sized-defaults``: the flags are written against the
    preset's own defaults (:func:`_preset_sets`), and a tier's field the run leaves at the
    preset's value (verl's 72 B offloads dropped by ``--offload ''``; an imported config's
    fields) would otherwise come back as the tier's. A run with every value of its tier
    re-runs the same without it."""
    from rlmcost.frameworks.presets import get_preset
    from rlmcost.run.defaults import actor_layers, actor_tier

    framework = run.deployment.framework
    if framework is None or not get_preset(framework).sized:
        return False
    actor = run.models.actor
    tier = actor_tier(framework, actor)
    return tier is not None and not tier.followed_by(run.deployment, actor_layers(actor))


def _compare_implied(run: Run, command: str, field: str = "rule_reward") -> bool:
    """Whether `compare`'s first algorithm holds ``field`` (an option a framework implies) at
    its framework's value (:func:`rlmcost.reports.estimate.own_options`): the line leaves
    its flag out, so each compared algorithm takes its own, as the comparison ran."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.frameworks.presets import preset_options
    from rlmcost.run.defaults import actor_moe, actor_params, actor_spec

    if command != "compare" or run.deployment.framework is None:
        return False
    actor = run.models.actor
    implied = preset_options(run.deployment.framework, get_algorithm(run.algorithm.name),
                             actor_params(actor), actor_moe(actor), actor_spec(actor))  # fmt: skip
    return bool(getattr(run.algorithm, field) == implied[field])


def _preset_drops_kl(run: Run) -> bool:
    """The framework's preset runs the algorithm without its reference (verl's, slime's and
    TRL's KL coefficient 0: :func:`~rlmcost.frameworks.presets.preset_options`; of the size
    tier the command keeps), so a Run that keeps the KL says ``--kl``."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.frameworks.presets import preset_options
    from rlmcost.run.defaults import actor_moe, actor_params, actor_spec

    framework = run.deployment.framework
    if framework is None:
        return False
    actor = run.models.actor  # the tier's options, unless the command leaves the tier
    params = None if _leaves_tier(run) else actor_params(actor)
    return not preset_options(framework, get_algorithm(run.algorithm.name), params,
                              actor_moe(actor), actor_spec(actor))["kl"]  # fmt: skip


def _preset_caps(framework: str | None, kind: str) -> bool:
    """The framework's preset sets the running cap of an engine of ``kind``
    (``Default.engines``), so a Run with the engine's own default says ``--max-num-seqs 0``."""
    from rlmcost.frameworks.presets import get_preset

    if framework is None:
        return False
    return "max_num_seqs" in get_preset(framework).deployment_data(kind).get("engine", {})


def _layout_sets_schedule(t: Any) -> bool:
    """``--pp-layout`` states the trainer's interleaved schedule: its v = stages / pp."""
    text = t.pp_split.layout if t.pp_split is not None else None
    return text is not None and t.schedule == "interleaved" and \
        _implied_v(text, t.pp) == t.virtual_stages  # fmt: skip


def _implied_v(text: str, pp: int) -> int | None:
    """The virtual stages a layout string implies (imported here: start-up stays light)."""
    from rlmcost.parallel.pp_layout import implied_virtual_stages

    return implied_virtual_stages(text, pp)
