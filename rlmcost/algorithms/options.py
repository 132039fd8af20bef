"""Options that real frameworks expose, applied to an algorithm as invocation changes.

Knobs set the values of the workload names an algorithm uses (epochs ``E_ppo``, mini-batches
``N_mini``, oversampling ``rho``, PRM steps ``N_step``, judge tokens ``T_j``); a knob for a name
the algorithm does not use is an error, not a silent no-op. Switches add or remove
invocations (:func:`configure`), so the configured algorithm is again plain data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from fractions import Fraction

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation, derive
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

DEFAULT_BATCH = 64  # B prompts (or preference pairs) per iteration
DEFAULT_PROMPT_LEN = 1024  # S tokens
DEFAULT_RESPONSE_LEN = 1024  # T tokens
DEFAULT_HARDWARE = "h100-sxm"
"""Workload and hardware defaults of a numeric query (K defaults per algorithm)."""


@dataclass(frozen=True)
class Knob:
    """A workload name an option sets: its option field, CLI flag, default and source."""

    name: str
    field: str
    flag: str
    default: int | Fraction
    source: str


KNOBS: tuple[Knob, ...] = (
    Knob("E_ppo", "epochs", "--epochs", 1, "one pass over each rollout batch"),
    Knob("N_mini", "mini_batches", "--mini-batches", 1, "one optimizer step per epoch"),
    Knob(
        "rho",
        "oversample",
        "--oversample",
        3,
        "verl DAPO recipe: gen_prompt_bsz = 3 x train_prompt_bsz",
    ),
    Knob("N_step", "prm_steps", "--prm-steps", 8, "assumption: 8 reasoning steps"),
    Knob("T_j", "judge_len", "--judge-len", 256, "assumption: short rationale + score"),
)
"""Every knob, by the workload name it sets."""


@dataclass(frozen=True)
class Options:
    """Per-iteration options; ``None`` means the knob's default (see :data:`KNOBS`).

    ``recompute_logprobs``: recompute the old-policy log-probs with an extra actor forward in
    Assessment (verl, OpenRLHF) instead of taking them from generation (the default).
    ``kv_scales``: after each update the actor runs a forward over the step's training batch to
    calibrate an FP8 KV cache's Q/K/V scales for the engines (NeMo RL with ``vllm_cfg.
    kv_cache_dtype: fp8``: nemo_rl/algorithms/grpo.py ``grpo_train``, the ``recompute_kv_scales``
    timer, ``calibrate_qkv_fp8_scales(train_data)``, which runs ``get_logprobs`` with hooks).
    ``kl``: False drops the reference model (KL coefficient 0, as DAPO and verl's
    ``use_kl_loss=False``). ``ref_precomputed``: offline methods only, reference log-probs
    computed once before training (TRL's ``precompute_ref_log_probs``), so the loop has no
    reference forward. ``teacher``: an on-policy distillation teacher's forward over the
    training samples joins an online algorithm that has none (slime's ``--use-opd``: OPD as a
    KL term beside any advantage estimator, examples/on_policy_distillation/README.md).
    """

    epochs: int | None = None
    mini_batches: int | None = None
    oversample: Fraction | int | None = None
    prm_steps: int | None = None
    judge_len: int | None = None
    recompute_logprobs: bool = False
    kl: bool = True
    ref_precomputed: bool = False
    rule_reward: bool = False
    kv_scales: bool = False
    teacher: bool = False

    def given(self) -> dict[str, object]:
        """The options set to something other than their default."""
        defaults = Options()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(defaults, f.name)
        }


MAX_OVERSAMPLE = 1000
"""Largest generated / kept ratio accepted (DAPO reports ~3; beyond this it is a typo)."""


def knob_values(alg: Algorithm, options: Options) -> dict[str, int | Fraction]:
    """Values of the knobs ``alg`` uses: given or default; SpecError for a knob it lacks."""
    values: dict[str, int | Fraction] = {}
    for knob in KNOBS:
        value = getattr(options, knob.field)
        if knob.name not in alg.names:
            if value is not None:
                from rlmcost.algorithms.catalog import algorithms

                users = [a.name for a in algorithms().values() if knob.name in a.names]
                raise SpecError(
                    f"{alg.name} has no {knob.name}: {knob.flag} applies to "
                    f"{', '.join(users)}; drop {knob.flag}"
                )
            continue
        value = knob.default if value is None else value
        if knob.name == "rho":
            value = Fraction(value)
            if not 1 <= value <= MAX_OVERSAMPLE:
                raise SpecError(
                    f"{knob.flag} {float(value):g} must be in 1..{MAX_OVERSAMPLE} "
                    "(generated / kept)"
                )
        elif not (isinstance(value, int) and value >= 1):
            raise SpecError(f"{knob.flag} {value} must be a positive integer")
        values[knob.name] = value
    return values


KV_SCALES_NOTE = "FP8 KV-cache scales calibrated after the update (NeMo RL)"
"""The note of the actor forward that ``Options.kv_scales`` adds (its phase name keys on it:
:func:`rlmcost.placement.jobs.phase_of`)."""


def configure(alg: Algorithm, options: Options) -> Algorithm:
    """``alg`` with the switches of ``options`` applied as invocation changes.

    Knob values are checked by :func:`knob_values`; they do not change the invocations.
    """
    knob_values(alg, options)
    add: list[Invocation] = []
    remove: list[Invocation] = []
    refs = [i for i in alg.invocations if i.role is Role.REFERENCE]
    if options.recompute_logprobs:
        if alg.offline or not any(i.kind is Kind.GENERATE for i in alg.invocations):
            raise SpecError(
                f"{alg.name} samples nothing in its loop, so it has no old log-probs to "
                "recompute; drop --recompute-logprobs"
            )
        actor_train = alg.find(Role.ACTOR, Stage.TRAINING, Kind.TRAIN)
        add.append(
            Invocation(
                Role.ACTOR,
                Stage.ASSESSMENT,
                Kind.FORWARD,
                actor_train.sequences,
                note="old log-probs recomputed (verl, OpenRLHF)",
            )
        )
    if options.kv_scales:
        if alg.offline or not any(i.kind is Kind.GENERATE for i in alg.invocations):
            raise SpecError(f"{alg.name} samples nothing in its loop, so no engine's KV cache "
                            "needs its scales; drop --kv-scale-calibration")  # fmt: skip
        actor_train = alg.find(Role.ACTOR, Stage.TRAINING, Kind.TRAIN)
        add.append(Invocation(Role.ACTOR, Stage.TRAINING, Kind.FORWARD, actor_train.sequences,
                              note=KV_SCALES_NOTE))  # fmt: skip
    if options.teacher and all(i.role is not Role.TEACHER for i in alg.invocations):
        if alg.offline or not any(i.kind is Kind.GENERATE for i in alg.invocations):
            raise SpecError(f"{alg.name} samples nothing in its loop, so no teacher scores its "
                            "samples; drop --teacher")  # fmt: skip
        actor_train = alg.find(Role.ACTOR, Stage.TRAINING, Kind.TRAIN)
        add.append(Invocation(Role.TEACHER, Stage.ASSESSMENT, Kind.FORWARD, actor_train.sequences,
                              note="on-policy distillation teacher (slime --use-opd)"))  # fmt: skip
    if not options.kl or options.ref_precomputed:
        flag = "--no-kl" if not options.kl else "--ref-precomputed"
        if not refs:
            raise SpecError(f"{alg.name} has no reference model; drop {flag}")
        if options.ref_precomputed and not alg.offline:
            raise SpecError(
                f"{alg.name} is online: its reference scores fresh rollouts every iteration, "
                "so its log-probs cannot be precomputed; drop --ref-precomputed "
                "(or use --no-kl)"
            )
        remove += refs
    if options.rule_reward:
        scorers = [i for i in alg.invocations if i.role is Role.REWARD and i.kind is Kind.FORWARD]
        if not scorers:
            verifier = any(i.kind is Kind.VERIFY for i in alg.invocations)
            raise SpecError(
                f"{alg.name} has no reward model to replace (it scores with "
                f"{'a verifier' if verifier else 'no reward'}); drop --reward rule"
            )
        remove += scorers
        add += [
            Invocation(Role.VERIFIER, i.stage, Kind.VERIFY, i.sequences,
                       note="rule-based reward (--reward rule)")
            for i in scorers
        ]  # fmt: skip
    if not add and not remove:
        return alg
    return derive(alg, alg.name, alg.summary, alg.citation, add=add, remove=remove)


def resolve_values(
    alg: Algorithm, workload: Mapping[str, object] | None = None, options: Options | None = None
) -> dict[str, object]:
    """Values for every name ``alg`` uses: ``workload`` (B, K, S, T), then the knobs.

    Names without a value stay symbolic; knobs not given take their defaults only when
    ``workload`` is numeric (given), else stay symbolic so tables show E_ppo, rho, ...
    """
    values: dict[str, object] = dict(workload or {})
    if workload is not None:
        values.update(knob_values(alg, options or Options()))
    elif options is not None:
        given = {k: v for k, v in knob_values(alg, options).items() if _given(k, options)}
        values.update(given)
    return values


def _given(name: str, options: Options) -> bool:
    return any(k.name == name and getattr(options, k.field) is not None for k in KNOBS)
