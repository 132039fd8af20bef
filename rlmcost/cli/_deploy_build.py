"""The Deployment the deployment options describe (:mod:`rlmcost.cli._deploy` declares the
options): rlmcost's defaults, then the ``--framework`` preset's, then the ``--deployment``
file's fields, then every flag given. Light to import: the pydantic spec loads when a command
runs, no sympy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.cli._deploy_pipeline import apply_split
from rlmcost.cli._fp8 import fp8_fields
from rlmcost.cli._moe_capacity import capacity_fields
from rlmcost.cli._mtp import mtp_fields

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment


def base_deployment(opts: dict[str, Any]) -> Deployment:
    """What the flags start from: rlmcost's defaults, then the ``--framework`` preset's (for
    the ``--model``'s size: :meth:`~rlmcost.frameworks.preset_model.Preset.for_params`;
    at any size under ``--no-sized-defaults``), then
    the ``--deployment`` file's fields (each overrides the one before). A ``--framework``
    flag names the deployment's framework over a file's own ``framework`` (the preset and
    implied options are the flag's, so the Run and its command say the same)."""
    from rlmcost.deployment.batching import forwards_follow_trainer
    from rlmcost.deployment.spec import Deployment, load_deployment
    from rlmcost.specs.validation import build

    if opts.get("deployment_file") is not None and not str(opts["deployment_file"]).strip():
        from rlmcost.errors import SpecError

        raise SpecError("--deployment '': give the path of a deployment file (YAML or JSON, "
                        "e.g. the deployment of `rlmcost ppo ... --json`), or drop --deployment")
    framework = query_framework(opts)
    flagged = opts.get("framework") is not None and not opts.get("ideal")  # the flag wins
    if framework is None:
        if not opts.get("deployment_file"):
            return Deployment()
        dep = load_deployment(opts["deployment_file"])
        return dep.model_copy(update={"framework": None}) if flagged and dep.framework else dep
    from rlmcost.run.defaults import DEFAULT_ACTOR, actor_preset
    from rlmcost.run.spec import merge

    # its tier's (the actor's own example or its size's, fitted to it; a tier's
    # first/last-stage layers for its depth alone: Default.layers)
    preset = actor_preset(framework, opts.get("model") or DEFAULT_ACTOR,
                          opts.get("sized_defaults", True))  # fmt: skip
    engine = str(opts["engine"]) if opts.get("engine") is not None else None
    data = merge(Deployment().to_json(), preset.deployment_data(engine))
    if data.get("forward") is not None:
        forwards_follow_trainer(data)
    if opts.get("deployment_file"):
        data = merge(data, _file_fields(opts["deployment_file"]))
        data["framework"] = framework  # the preset's name (the flag's over a file's other)
    return build(Deployment, data, f"deployment (--framework {framework})")


def query_actor_size(opts: dict[str, Any]) -> tuple[int | None, bool, Any]:
    """The query's actor's parameters, whether it is a mixture of experts and its ModelSpec,
    as a preset's tiers read them (:meth:`~rlmcost.frameworks.preset_model.Preset.tier`); no
    size under ``--no-sized-defaults`` (the preset at any size)."""
    from rlmcost.run.defaults import DEFAULT_ACTOR, actor_moe, actor_params, actor_spec

    actor = opts.get("model") or DEFAULT_ACTOR
    sized = opts.get("sized_defaults", True)
    return (actor_params(actor) if sized else None), actor_moe(actor), actor_spec(actor)


def query_framework(opts: dict[str, Any]) -> str | None:
    """The framework a query follows: ``--framework``, else the ``--deployment`` file's
    ``framework`` field when it has one (``null``: rlmcost's bare layout, as ``none``), else
    rlmcost's named default (:func:`~rlmcost.frameworks.preset_model.framework_name`); None
    under ``--ideal``. The API's Run reads a file's framework the same way."""
    from rlmcost.frameworks.presets import framework_name

    given = opts.get("framework")
    if given is None and opts.get("deployment_file") and str(opts["deployment_file"]).strip():
        fields = _file_fields(opts["deployment_file"])
        if "framework" in fields:
            given = fields["framework"] if fields["framework"] is not None else "none"
    return framework_name(given, bool(opts.get("ideal")))


_READ: dict[tuple[str, str], dict[str, Any]] = {}
"""Deployment files checked and parsed, by path and text: a query reads its file for its
framework (:func:`query_framework`, from the deployment and from the algorithm options) and
for its fields; the text keys it, so a file rewritten in the same process is read anew."""


def _file_fields(path: str) -> dict[str, Any]:
    """The fields a deployment file sets (checked by loading it), as written (a fresh copy)."""
    import copy
    from pathlib import Path

    from rlmcost.deployment.files import parse_document
    from rlmcost.deployment.spec import load_deployment

    try:
        key = (str(path), Path(path).read_text())
    except (OSError, UnicodeDecodeError):
        load_deployment(path)  # its one-line error for an unreadable file
        raise
    if key not in _READ:
        load_deployment(path)  # one-line errors for a malformed file or a bad field
        _READ[key] = parse_document(key[1], str(path))
    return copy.deepcopy(_READ[key])


def build_deployment(opts: dict[str, Any], tp: int, pp: int, zero: Any) -> Deployment:
    """The Deployment the options describe (SpecError for bad values or combinations)."""
    from rlmcost.deployment.batching import following_batching, forwards_follow_trainer
    from rlmcost.deployment.spec import Deployment
    from rlmcost.frameworks.preset_model import LAYOUT_DEGREES, LAYOUT_FIELDS
    from rlmcost.specs.validation import build

    data = base_deployment(opts).to_json()
    train = data["train"]
    other_zero = opts.get("zero") is not None and str(opts["zero"]) != str(train.get("zero"))
    if any(opts.get(k) is not None for k in (*LAYOUT_DEGREES, "dp")) or other_zero:
        # the user's layout, whole (LAYOUT_FIELDS); a ZeRO stage other than the preset's is
        # another trainer (NeMo RL's DTensor policy under --zero 3, verl's FSDP workers)
        bare = Deployment().train
        train.update({k: getattr(bare, k) for k in LAYOUT_FIELDS})
        tp, pp = opts.get("tp") or bare.tp, opts.get("pp") or bare.pp
    train.update(tp=tp, pp=pp, zero=str(zero))
    for key in ("micro_batch", "max_tokens_per_gpu", "cp", "ep", "etp", "zero_shard"):
        if opts.get(key) is not None:
            train[key] = opts[key]
    apply_split(opts, train)  # Megatron-core's uneven pipeline split
    if opts.get("micro_batch") is not None and opts.get("max_tokens_per_gpu") is None:
        train["max_tokens_per_gpu"] = None  # a micro-batch given by hand: no token budget
    if opts.get("packing") is not None:
        train["packing"] = opts["packing"]
        if isinstance(data.get("forward"), dict):
            data["forward"]["packing"] = opts["packing"]
    if opts.get("fused_loss") is not None:
        train["fused_loss"] = opts["fused_loss"]
    for key in ("padded", "prefix_grouper", "activation_offload"):
        if opts.get(key) is not None:
            train[key] = opts[key]
    if opts.get("router_dtype") is not None:
        train["router_dtype"] = str(opts["router_dtype"])
    if opts.get("ep_dispatcher") is not None:
        train["ep_dispatcher"] = str(opts["ep_dispatcher"])
    if opts.get("moe_permute_fusion") is not None:
        train["moe_permute_fusion"] = opts["moe_permute_fusion"]
    train.update(capacity_fields(opts))  # forwards that follow the trainer take it too
    train.update(mtp_fields(opts))
    train.update(fp8_fields(opts))  # Transformer Engine's FP8 (perf.fp8_train)
    for key in ("pp_overlap_p2p", "recompute_early_stop", "module_ckpt", "swiglu_fusion"):
        if opts.get(key) is not None:
            train[key] = opts[key]
    if opts.get("trainer_kernels") is not None:
        train["kernels"] = str(opts["trainer_kernels"])
    if opts.get("ckpt") is not None:
        train["ckpt"] = str(opts["ckpt"])
    if opts.get("sp") is not None:
        train["sp"] = bool(opts["sp"])
    if opts.get("freeze_vision_tower"):
        train["freeze_vision_tower"] = True
    if opts.get("disable_dropout"):
        train["disable_dropout"] = True
    if opts.get("offload") is not None:
        train["offload"] = opts["offload"]
    if opts.get("param_dtype") is not None:
        train["param_dtype"] = str(opts["param_dtype"])
    if opts.get("grad_reduce_dtype") is not None:
        train["grad_reduce_dtype"] = str(opts["grad_reduce_dtype"])
    if opts.get("expandable_segments") is not None:
        data["overhead"]["expandable_segments"] = opts["expandable_segments"]
    batching = following_batching(data.get("forward"), base_deployment(opts).to_json()["train"])
    if batching is not None:  # the forwards ran on the trainer's layout: they follow it
        data["forward"] = batching
    forwards_follow_trainer(data, {"micro_batch": opts.get("forward_micro_batch"),
                                   "max_tokens_per_gpu": opts.get("forward_max_tokens_per_gpu")})
    engine = data["engine"]
    if opts.get("engine") is not None:
        engine["kind"] = str(opts["engine"])
    if opts.get("gpu_memory_utilization") is not None:
        engine["gpu_memory_utilization"] = opts["gpu_memory_utilization"]
    if opts.get("rollout_tp") is not None:
        engine["tp"] = opts["rollout_tp"]
    if opts.get("rollout_pp") is not None:
        engine["pp"] = opts["rollout_pp"]
    if opts.get("rollout_ep") is not None:
        engine["ep"] = opts["rollout_ep"]
    if opts.get("enforce_eager") is not None:
        engine["eager"] = bool(opts["enforce_eager"])
    if opts.get("prefix_caching") is not None:
        engine["prefix_caching"] = bool(opts["prefix_caching"])
    if opts.get("rollout_dtype") is not None:
        engine["dtype"] = str(opts["rollout_dtype"]).strip().lower()
    if opts.get("rollout_weights") is not None:  # FORMAT[:PARTS] (parallel.packed_weights)
        fmt, _, parts = str(opts["rollout_weights"]).strip().lower().partition(":")
        engine["weight_format"] = fmt
        if parts:
            engine["weight_parts"] = parts
    if opts.get("kv_cache_dtype") is not None:
        engine["kv_cache_dtype"] = str(opts["kv_cache_dtype"]).strip().lower()
    if opts.get("max_num_seqs") is not None:  # 0: the engine's own, over a preset's
        engine["max_num_seqs"] = opts["max_num_seqs"] or None
    if opts.get("context_length") is not None:
        engine["context_length"] = opts["context_length"]
    if opts.get("dp_attention") is not None:
        engine["dp_attention"] = opts["dp_attention"]
    if opts.get("schedule_policy") is not None:
        engine["schedule_policy"] = str(opts["schedule_policy"])
    if opts.get("max_num_batched_tokens") is not None:
        engine["max_num_batched_tokens"] = opts["max_num_batched_tokens"]
    if opts.get("sequences_per_call") is not None:
        engine["sequences_per_call"] = opts["sequences_per_call"]
    if opts.get("tp_gather_layers") is not None:
        engine["gather_layers"] = opts["tp_gather_layers"]
    for key in ("speculative_tokens", "speculative_draft", "speculative_acceptance"):
        if opts.get(key) is not None:
            engine[key] = opts[key]
    if opts.get("refit") is not None:
        engine["refit"] = str(opts["refit"])
    if opts.get("kv_buffer_gib") is not None:
        engine["kv_buffer_gib"] = opts["kv_buffer_gib"]
    if opts.get("vllm_version") is not None:
        engine["vllm_version"] = opts["vllm_version"]
    if opts.get("no_sleep") is not None:
        engine["sleep"] = not opts["no_sleep"]
    if opts.get("lora_rank") is not None:
        data["lora"] = {"rank": opts["lora_rank"], "targets": opts.get("lora_targets") or
                        "all-linear"}  # fmt: skip
        if opts.get("lora_gather") is not None:
            data["lora"]["gather"] = str(opts["lora_gather"])
    elif opts.get("lora_targets") is not None or opts.get("lora_gather") is not None:
        from rlmcost.errors import SpecError

        given = "--lora-targets" if opts.get("lora_targets") is not None else "--lora-gather"
        raise SpecError(f"{given} needs --lora-rank R (the adapters' rank)")
    if opts.get("offload_idle") is not None:
        data["offload_idle"] = bool(opts["offload_idle"])
    if opts.get("init_on_gpu") and opts.get("init_load") not in (None, "gpu"):
        from rlmcost.errors import SpecError

        raise SpecError(f"--init-on-gpu is --init-load gpu; drop one of it and --init-load "
                        f"{opts['init_load']}")  # fmt: skip
    if opts.get("init_on_gpu") or opts.get("init_load") is not None:
        data["init_load"] = "gpu" if opts.get("init_on_gpu") else str(opts["init_load"])
    if opts.get("logits") is not None:
        data["logits"] = str(opts["logits"])
    if opts.get("logits_chunk_tokens") is not None:
        data["logits_chunk_tokens"] = int(opts["logits_chunk_tokens"])
    if opts.get("routing_replay"):
        data["routing_replay"] = True
    if opts.get("partial_rollout"):
        data["partial_rollout"] = True
    if opts.get("env_workers") is not None:
        _check_environment(data.get("framework"), int(opts["env_workers"]))
        data["env_workers"] = int(opts["env_workers"])
    if opts.get("in_flight_batches") is not None:
        data["rollout_in_flight"] = int(opts["in_flight_batches"])
    if opts.get("ideal"):
        data["ideal"] = True
    _check_engine_flags(opts, engine)
    from rlmcost.run.command import field_flags

    return build(Deployment, data, "deployment", field_flags("deployment"))


GENERATION_FLAGS = {
    "engine": "--engine", "gpu_memory_utilization": "--gpu-memory-utilization",
    "rollout_tp": "--rollout-tp", "rollout_pp": "--rollout-pp", "rollout_ep": "--rollout-ep",
    "rollout_dtype": "--rollout-dtype", "kv_cache_dtype": "--kv-cache-dtype",
    "rollout_weights": "--rollout-weights", "enforce_eager": "--enforce-eager/--cuda-graphs",
    "prefix_caching": "--prefix-caching/--no-prefix-caching",
    "max_num_seqs": "--max-num-seqs", "sequences_per_call": "--sequences-per-call",
    "context_length": "--context-length", "schedule_policy": "--schedule-policy",
    "dp_attention": "--dp-attention",
    "tp_gather_layers": "--tp-gather-layers", "speculative_tokens": "--speculative-tokens",
    "speculative_draft": "--speculative-draft",
    "speculative_acceptance": "--speculative-acceptance", "refit": "--refit",
    "kv_buffer_gib": "--kv-buffer-gib", "vllm_version": "--vllm-version",
}  # fmt: skip
"""The options that set the generation engine, which an offline algorithm (DPO and its kin)
does not run (:func:`unused_generation_flags`). ``--sleep/--no-sleep`` is left out: every
Run's command line states it (:func:`rlmcost.run.command.to_command`)."""


def unused_generation_flags(opts: dict[str, Any], algorithm: str, offline: bool) -> str | None:
    """A note when engine options are given to an offline algorithm, which generates nothing
    (Table IV †), so they change no number (a note, not an error: a Run's command line
    states the engine fields a framework preset set)."""
    given = [flag for key, flag in GENERATION_FLAGS.items() if opts.get(key) is not None]
    if not offline or not given:
        return None
    return (f"{algorithm} is offline: it generates nothing, so {', '.join(given)} "
            f"{'has' if len(given) == 1 else 'have'} no effect")  # fmt: skip


def _check_engine_flags(opts: dict[str, Any], engine: dict[str, Any]) -> None:
    """SpecError for an engine option given where it would be ignored without a word: a
    draft or an acceptance without draft tokens, Hybrid Engine layer gathering on another
    engine, or any engine option or framework under ``--ideal``, the paper's iteration,
    which has no engine to set (``engine``: the engine's fields as the flags left them)."""
    from rlmcost.deployment.kinds import EngineKind
    from rlmcost.errors import SpecError

    if opts.get("ideal"):
        given = [flag for key, flag in GENERATION_FLAGS.items() if opts.get(key) is not None]
        if str(opts.get("framework") or "none").lower() != "none":
            given.append(f"--framework {opts['framework']}")
        if given:
            raise SpecError(f"--ideal is the paper's iteration, with no engine or framework to "
                            f"set: {', '.join(given)} would change nothing; drop "
                            f"{'it' if len(given) == 1 else 'them'} or --ideal")  # fmt: skip

    if not engine.get("speculative_tokens"):
        for key in ("speculative_draft", "speculative_acceptance"):
            if opts.get(key) is not None:
                flag = GENERATION_FLAGS[key]
                raise SpecError(f"{flag} {opts[key]} has no effect without speculative "
                                f"decoding: add --speculative-tokens N (draft tokens per "
                                f"step) or drop {flag}")  # fmt: skip
    kind = EngineKind(engine.get("kind") or EngineKind.VLLM)
    if opts.get("tp_gather_layers") is not None and not kind.hybrid_engine:
        raise SpecError(f"--tp-gather-layers sets DeepSpeed-Chat's Hybrid Engine; the engine "
                        f"here is {kind}: add --engine ds-hybrid or drop --tp-gather-layers")


def _check_environment(framework: str | None, workers: int) -> None:
    """SpecError for ``--env-workers`` where no environment step is priced (a framework whose
    ``Behaviour.env_workers`` is 0: only NeMo RL's math environment is)."""
    from rlmcost.errors import SpecError
    from rlmcost.frameworks.presets import behaviour

    beh = behaviour(framework)
    if beh is None or not beh.env_workers:
        raise SpecError(f"--env-workers {workers}: --framework {framework or 'none'} prices no "
                        "environment step (NeMo RL's math environment does); add --framework "
                        "nemo-rl or drop --env-workers")  # fmt: skip
