"""Resolving a query's inputs: the workload, the model of every role, the layout for the GPUs.

Defaults (stated in every output): B = 64 prompts, K = the algorithm's default group, S = T =
1024 tokens; every role's model falls back along its chain to the actor's (critic -> actor,
cost critic -> critic, cost/PRM -> reward -> actor, ...); data parallelism fills the GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping

from rlmcost.algorithms.kinds import MODEL_KEYS, Role
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import DEFAULT_BATCH, DEFAULT_PROMPT_LEN, DEFAULT_RESPONSE_LEN
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout
from rlmcost.specs import ModelSpec, Workload, get_model
from rlmcost.specs.limits import MAX_SEQUENCES, check_count
from rlmcost.specs.validation import build


def resolve_workload(
    alg: Algorithm,
    workload: Workload | None = None,
    batch: int | None = None,
    group: int | None = None,
    prompt_len: int | None = None,
    response_len: int | None = None,
    group_of_one: bool = False,
) -> Workload:
    """The workload: ``workload`` (or the defaults: B = 64, K = the algorithm's default group,
    S = T = 1024) with the given fields replaced. SpecError for a group on an algorithm that
    samples none (the offline family), for non-positive counts and for a group smaller than
    the method's baseline needs (``Algorithm.min_group``) unless ``group_of_one``: the
    framework runs the method with K = 1 (:func:`rlmcost.frameworks.presets.group_of_one`)."""
    samples_group = "K" in alg.names
    if group is not None and not samples_group:
        raise SpecError(
            f"{alg.name} samples no groups of responses (its data are fixed "
            f"{'pairs' if '2*B' in {i.sequences for i in alg.invocations} else 'examples'}); "
            "drop --group"
        )
    for name, v in (
        ("batch", batch),
        ("group", group),
        ("prompt_len", prompt_len),
        ("response_len", response_len),
    ):
        if v is not None and (not isinstance(v, int) or v < 1):
            raise SpecError(f"{name}={v} must be a positive integer")
    base = workload or Workload(
        prompts=DEFAULT_BATCH,
        samples_per_prompt=alg.default_group,
        prompt_len=DEFAULT_PROMPT_LEN,
        response_len=DEFAULT_RESPONSE_LEN,
    )
    changes = {
        k: v
        for k, v in (
            ("prompts", batch),
            ("samples_per_prompt", group),
            ("prompt_len", prompt_len),
            ("response_len", response_len),
        )
        if v is not None
    }
    resolved = build(Workload, {**base.model_dump(), **changes}, "workload")
    check_count("sequences per iteration B x K", resolved.sequences, MAX_SEQUENCES,
                "lower --batch or --group")
    if not samples_group and resolved.samples_per_prompt != 1:
        raise SpecError(f"{alg.name} samples no groups; use a workload with samples_per_prompt=1")
    if resolved.samples_per_prompt < alg.min_group and not (
            group_of_one and resolved.samples_per_prompt == 1):
        raise SpecError(
            f"{alg.name} needs --group >= {alg.min_group} (its baseline compares the responses "
            f"to one prompt); got {resolved.samples_per_prompt}"
        )
    return resolved


def models_given(
    models: Mapping[Role | str, str | ModelSpec] | None,
    critic: str | ModelSpec | None = None,
    reward: str | ModelSpec | None = None,
    ref: str | ModelSpec | None = None,
    judge: str | ModelSpec | None = None,
    teacher: str | ModelSpec | None = None,
) -> dict[Role, str | ModelSpec]:
    """The models the user named per role: ``models`` plus the shorthand keyword arguments."""
    given: dict[Role, str | ModelSpec] = {Role(r): m for r, m in (models or {}).items()}
    named = (
        (Role.CRITIC, critic),
        (Role.REWARD, reward),
        (Role.REFERENCE, ref),
        (Role.JUDGE, judge),
        (Role.TEACHER, teacher),
    )
    for role, m in named:
        if m is not None:
            given[role] = m
    return given


def uses_model(alg: Algorithm, role: Role) -> bool:
    """True when some model role of ``alg`` is ``role`` or falls back to its model."""
    return any(role in r.chain for r in alg.model_roles)


def resolve_models(
    alg: Algorithm, actor: str | ModelSpec, given: Mapping[Role, str | ModelSpec]
) -> dict[Role, ModelSpec]:
    """A model for every model role of ``alg``: given, else its fallback's (critic -> actor,
    cost critic -> critic, cost/PRM -> reward -> actor, ...). SpecError for a model given
    for a role the algorithm lacks (nor any role falling back to it)."""
    specs: dict[Role, ModelSpec] = {Role.ACTOR: get_model(actor)}
    explicit = {Role(r): _model_of(Role(r), m) for r, m in given.items() if m is not None}

    for role in explicit:
        if role is Role.ACTOR:
            raise SpecError("give the actor as `model`, not among the other roles")
        if not uses_model(alg, role):
            have = ", ".join(str(r) for r in alg.model_roles)
            raise SpecError(
                f"{alg.name} has no {role} model (its models: {have}); drop --"
                f"{'ref' if role is Role.REFERENCE else role}"
            )
    for role in alg.model_roles:
        spec = next((explicit[r] for r in role.chain if r in explicit), specs[Role.ACTOR])
        specs[role] = spec
    return specs


_ROLE_FLAGS = {role: f"--{key}" for role, key in MODEL_KEYS.items()}


def _model_of(role: Role, model: str | ModelSpec) -> ModelSpec:
    """:func:`get_model` of the model given for ``role``; its SpecError names the role's flag
    and the value, so the message says which model to mend."""
    try:
        return get_model(model)
    except SpecError as exc:
        flag = _ROLE_FLAGS.get(role, f"the {role} model")
        if role is Role.REWARD and isinstance(model, str) and _near_rule(model):
            raise SpecError(f"{flag} {model!r}: neither a model nor 'rule'; did you mean "
                            "--reward rule (a rule-based verifier)?") from None  # fmt: skip
        raise SpecError(f"{flag} {model!r}: {exc}") from None


def _near_rule(text: str) -> bool:
    """``text`` a misspelling of ``rule``, the --reward keyword of a verifier (difflib)."""
    from difflib import get_close_matches

    return bool(get_close_matches(text.strip().lower(), ["rule"], n=1, cutoff=0.6))


def resolve_layout(layout: Layout | None, gpus: int | None, widths: tuple[int, ...] = ()
                   ) -> tuple[Layout, list[str]]:  # fmt: skip
    """The layout for ``gpus`` devices: when ``gpus`` is given and the layout's degrees
    multiply to fewer, data parallelism fills the rest (dp = gpus / (tp pp cp), stated). EP
    is folded inside dp*tp*cp (Megatron-core; :mod:`rlmcost.parallel.layout`): it adds no
    GPUs, and the GPU count must be a multiple of tp*pp*cp times ``Layout.dp_unit``. The
    error's TP degrees are those ``widths`` take (:func:`divide_fix`)."""
    layout = layout or Layout()
    notes: list[str] = []
    if gpus is None or gpus == layout.n_gpus:
        return layout, notes
    if gpus < 1:
        raise SpecError(f"gpus={gpus} must be a positive integer")
    rest = layout.tp * layout.pp * layout.cp
    unit = rest * layout.dp_unit
    if layout.dp == 1 and gpus % unit == 0:
        notes.append(f"dp = gpus / (tp*pp*cp) = {gpus} / {rest} = {gpus // rest}")
        return layout.with_(dp=gpus // rest), notes
    product = f"dp*tp*pp*cp = {layout.dp}*{layout.tp}*{layout.pp}*{layout.cp}"
    if layout.dp == 1 and gpus % rest == 0:  # the expert grid does not fit
        raise SpecError(
            f"gpus = {gpus} gives dp = {gpus // rest}, but etp*ep = "
            f"{layout.expert_tp}*{layout.ep} must divide tp*cp*dp (Megatron folds EP inside "
            f"DP x TP x CP; etp defaults to tp): use a multiple of {unit} GPUs"
            + ("" if layout.expert_tp == 1 else " or --etp 1")
        )
    degrees = (f"tp*pp*cp = {layout.tp}*{layout.pp}*{layout.cp} (the degrees in effect: "
               "given, or the framework's defaults)")  # fmt: skip
    if layout.dp == 1:  # dp not given: derived as gpus / (tp*pp*cp), not a whole number
        raise SpecError(f"--gpus {gpus}: dp is derived as gpus / (tp*pp*cp) when --dp is not "
                        f"given, and {degrees} does not divide {gpus}; "
                        + divide_fix(gpus, layout.tp, layout.pp, layout.cp, widths))
    fix = (f"use --dp {gpus // rest}, or leave --dp out (derived: gpus / (tp*pp*cp))"
           if gpus % rest == 0 else "leave --dp out (derived: gpus / (tp*pp*cp)) and "
           + divide_fix(gpus, layout.tp, layout.pp, layout.cp, widths))  # fmt: skip
    raise SpecError(f"{product} = {layout.n_gpus} (dp given by --dp; tp, pp, cp given or the "
                    f"framework's defaults) but --gpus {gpus}; {fix}")


def divide_fix(gpus: int, tp: int, pp: int, cp: int, widths: tuple[int, ...] = ()) -> str:
    """How to mend model-parallel degrees whose product does not divide the GPUs: a GPU count
    that it divides, or the TP degrees that divide the GPUs at the same PP and CP and, where
    ``widths`` are given (the model's heads, KV heads and FFN widths:
    :func:`~rlmcost.parallel.validate.tp_widths`), each of them too (Llama-3.1-8B's 8 KV heads
    take no TP 7 on 7 GPUs)."""
    rest, others = tp * pp * cp, pp * cp
    fix = f"tp*pp*cp={rest} must divide the {gpus} GPUs: give a multiple of {rest} GPUs"
    if gpus % others == 0:
        tps = [t for t in range(1, gpus // others + 1) if gpus // others % t == 0
               and t != tp and all(w % t == 0 for w in widths)][:8]  # fmt: skip
        if tps:
            fix += f" or --tp {' or '.join(map(str, tps))}" if len(tps) < 3 else \
                f" or --tp {', '.join(map(str, tps[:-1]))} or {tps[-1]}"  # fmt: skip
    return fix


def with_image_tokens(
    workload: Workload, image_tokens: int | None, specs: Mapping[Role, ModelSpec]
) -> Workload:
    """``workload`` with one image of ``image_tokens`` tokens in each prompt. SpecError when
    they exceed the prompt (they are part of S) or when no model has a vision tower to encode
    them (a Qwen2-VL / Qwen2.5-VL config.json)."""
    if not image_tokens:
        return workload
    if image_tokens > workload.prompt_len:
        raise SpecError(
            f"--image-tokens {image_tokens} exceeds the prompt ({workload.prompt_len} tokens, "
            "which include the image's); raise --prompt-len or lower --image-tokens"
        )
    if not any(s.encoder_flops_per_patch for s in specs.values()):
        raise SpecError(
            f"--image-tokens {image_tokens} needs a vision-language model (a Qwen2-VL or "
            f"Qwen2.5-VL config.json); {specs[Role.ACTOR].name} has no vision tower"
        )
    return workload.model_copy(update={"image_tokens": image_tokens})

