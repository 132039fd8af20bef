"""The framework defaults under a Run's data: what a Run does not say, its framework does.

A Run's ``deployment.framework`` names the framework whose defaults and semantics it follows
(:mod:`rlmcost.frameworks.presets`). Without the key, a Run takes the default deployment
(:data:`~rlmcost.frameworks.presets.DEFAULT_FRAMEWORK`), as the CLI does without
``--framework``; ``framework: none`` (or null) is rlmcost's bare layout, and ``ideal: true``
the paper's iteration. The preset's fields lie under the given ones (every field a Run's JSON
has stays as it is, so ``to_json -> from_data`` is the identity), with two rules that keep a
partial Run consistent:

* a trainer micro-batch given without a token budget drops the preset's budget (a
  micro-batch given by hand is what runs), and a layout degree given (``train.tp/pp/cp/ep``
  or ``cluster.dp``, or a ZeRO stage other than the preset's: another trainer, e.g. NeMo RL's
  DTensor policy under ``zero: 3`` beside a size tier's Megatron layout) the preset's whole
  layout (a size tier's PP, EP, SP and split:
  :data:`~rlmcost.frameworks.preset_model.LAYOUT_FIELDS`);
* a forward layout the preset gives only by its budget follows the given trainer layout
  (:func:`~rlmcost.deployment.batching.forwards_follow_trainer`);
* a Run that names neither ``groups`` (the key absent) nor a placement takes the device
  groups of its preset's size tier where the tier has them (OpenRLHF's and TRL's examples
  for 70 B actors run the engines apart), scaled to its GPUs
  (:func:`~rlmcost.run.tier_groups.data_groups`; empty where the split does not hold).

The algorithm options a framework implies (log-prob recomputation, KL, the reward kind;
:func:`~rlmcost.frameworks.presets.preset_options`) fill the ones the data leaves out, and so
does its global batch (samples per optimizer step) where the data gives neither it nor the
mini-batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import framework_name, get_preset, preset_options
from rlmcost.run.spec import ModelsSpec, merge

DEFAULT_ACTOR = ModelsSpec.model_fields["actor"].default
"""The actor of a Run that names none."""

_IMPLIED = ("recompute_logprobs", "kl", "rule_reward")


def with_framework_defaults(data: dict[str, Any], where: str = "run") -> dict[str, Any]:
    """``data`` (a Run's, possibly partial) over its framework's defaults (module docstring);
    SpecError naming ``where`` when a part it reads has the wrong shape (:func:`_check_shape`)."""
    from rlmcost.deployment.batching import BATCHING, forwards_follow_trainer
    from rlmcost.deployment.spec import TrainLayout
    from rlmcost.frameworks.preset_model import LAYOUT_DEGREES, LAYOUT_FIELDS

    _check_shape(data, where)
    dep = dict(data.get("deployment") or {})
    name = framework_name(dep["framework"] if "framework" in dep else None,
                          bool(dep.get("ideal")))  # fmt: skip
    if "framework" in dep and dep["framework"] is None:
        name = None
    actor = (data.get("models") or {}).get("actor", DEFAULT_ACTOR)
    size = (actor_params(actor), actor_moe(actor)) if name is not None else (None, False)
    layers = actor_layers(actor) if name is not None else None
    spec = actor_spec(actor) if name is not None else None  # its own example, the fit
    if name is None:
        out = {**dep, "framework": None}
    else:
        kind = (dep.get("engine") or {}).get("kind")
        preset = _preset_data(name, *size, str(kind) if kind else None, layers, spec)
        preset_zero = (preset.get("train") or {}).get("zero")
        out = {**merge(preset, dep), "framework": name}  # the preset's name, in lower case
        train = dep.get("train") or {}
        if "micro_batch" in train and "max_tokens_per_gpu" not in train:
            out["train"] = {**out["train"], "max_tokens_per_gpu": None}  # a new mapping
        if any(k in train for k in LAYOUT_DEGREES) or \
                (data.get("cluster") or {}).get("dp") is not None or \
                ("zero" in train and str(train["zero"]) != str(preset_zero)):  # fmt: skip
            bare = TrainLayout()  # the Run's own layout, whole
            out["train"] = {**out["train"], **{k: getattr(bare, k) for k in LAYOUT_FIELDS
                                               if k not in train}}  # fmt: skip
    if "forward" not in dep or set(dep["forward"] or {}) <= set(BATCHING):
        forwards_follow_trainer(out)
    elif name is not None:  # a forward layout of the Run's own over the preset's
        if isinstance(out.get("forward"), dict):
            out["forward"] = dict(out["forward"])  # changed in place below: a new mapping
        forward_follows(out.get("forward"), out.get("train"), dep["forward"], reset=True)
    if name is None:
        return {**data, "deployment": out}
    algo = dict(data.get("algorithm") or {})
    implied = _implied(name, algo.get("name") or "ppo", *size, spec)  # its tier's
    algo.update({k: implied[k] for k in _IMPLIED if k not in algo})
    batch = implied["global_batch"]
    if batch is not None and algo.get("mini_batches") is None and algo.get("global_batch") is None:
        wl = data.get("workload") or {}
        n = samples(algo.get("name") or "ppo", wl.get("prompts"), wl.get("samples_per_prompt"))
        if n <= batch or n % batch == 0:  # else NeMo RL drops samples: one step, all of them
            algo["global_batch"] = batch
    tier = _tier(name, *size, spec)
    if tier is not None and tier.placement is not None and "groups" not in dep and \
            not dep.get("placement") and not dep.get("ideal"):  # fmt: skip
        from rlmcost.run.tier_groups import colocate, data_groups

        out["groups"] = data_groups(tier, {**data, "algorithm": algo}, out)
        if not out["groups"]:  # co-located: as the framework co-locates (slime's --colocate)
            colocate(tier.placement, out, dep, algo)
    return {**data, "deployment": out, "algorithm": algo}


# The framework's look-ups, kept per what they read (the framework, the actor's size and
# kind, the engine kind, the algorithm's name): every Run built reads them, the candidates
# of a plan thousands of times with the same inputs.
# ``spec``: the actor's ModelSpec (hashable; None: the size tiers alone), whose model picks
# a framework's example for it and to which the tier's layout is fitted (Preset.tier).
@lru_cache(maxsize=256)
def _sized(name: str, params: int | None, moe: bool, layers: int | None = None,
           spec: Any = None) -> Any:  # fmt: skip
    """``get_preset(name).for_params(params, moe, layers, spec)``."""
    return get_preset(name).sized_by(_tier(name, params, moe, spec), layers)


@lru_cache(maxsize=256)
def _tier(name: str, params: int | None, moe: bool, spec: Any = None) -> Any:
    """``get_preset(name).tier(params, moe, spec)``."""
    return get_preset(name).tier(params, moe, spec)


def actor_tier(name: str, actor: object) -> Any:
    """The tier of framework ``name`` for a Run's actor (a name, a spec or its data): its
    own example or its size's, fitted to it (:meth:`~rlmcost.frameworks.preset_model.
    Preset.tier`); None where none."""
    return _tier(name, actor_params(actor), actor_moe(actor), actor_spec(actor))


def actor_preset(name: str, actor: object, sized: bool = True) -> Any:
    """The preset of framework ``name`` for a Run's actor under its :func:`actor_tier`
    (``sized`` False: the preset at any size, ``--no-sized-defaults``)."""
    if not sized:
        return get_preset(name)
    return _sized(name, actor_params(actor), actor_moe(actor), actor_layers(actor),
                  actor_spec(actor))  # fmt: skip


@lru_cache(maxsize=256)
def _kept_data(name: str, params: int | None, moe: bool, kind: str | None,
               layers: int | None, spec: Any = None) -> Any:  # fmt: skip
    """The sized preset's ``deployment_data(kind)``, kept (read through :func:`_preset_data`)."""
    return _sized(name, params, moe, layers, spec).deployment_data(kind)


def _preset_data(name: str, params: int | None, moe: bool, kind: str | None,
                 layers: int | None = None, spec: Any = None) -> dict[str, Any]:  # fmt: skip
    """:func:`_kept_data`, read only: the merge over it makes new mappings where the Run's
    data gives a section, and the rules after it replace a mapping they change
    (:func:`with_framework_defaults`), so what the Run does not give is the kept preset's
    own mappings and lists, shared by every Run built over it (pydantic's validation, the
    one reader of the result, copies them into the Run's models)."""
    return _kept_data(name, params, moe, kind, layers, spec)


@lru_cache(maxsize=256)
def _implied(name: str, algorithm: str, params: int | None, moe: bool,
             spec: Any = None) -> dict[str, Any]:  # fmt: skip
    """``preset_options`` of the sized preset for ``algorithm`` (read, never changed)."""
    from rlmcost.algorithms.catalog import get_algorithm

    return preset_options(name, get_algorithm(algorithm), params, moe, spec)


_SECTIONS = ("algorithm", "models", "workload", "deployment", "cluster",
             "deployment.train", "deployment.forward", "deployment.engine")  # fmt: skip


def _check_shape(data: dict[str, Any], where: str) -> None:
    """SpecError unless each of :data:`_SECTIONS` is absent, null or a mapping, the algorithm's
    name a string and the workload's counts whole numbers (as a Run's fields take them: 64,
    64.0 or "64"): the defaults read them before the Run's own validation does."""
    for path in _SECTIONS:
        head, _, tail = path.partition(".")
        v = data.get(head)
        if tail and isinstance(v, Mapping):
            v = v.get(tail)
        if v is not None and not isinstance(v, Mapping):
            raise SpecError(f"{where}: '{path}' must be a mapping of its fields, got "
                            f"{type(v).__name__} {v!r:.40}")  # fmt: skip
    name = (data.get("algorithm") or {}).get("name")
    if name is not None and not isinstance(name, str):
        raise SpecError(f"{where}: 'algorithm.name' must be an algorithm's name (see "
                        f"`rlmcost algorithms`), got {name!r:.40}")  # fmt: skip
    workload = data.get("workload") or {}
    for key in ("prompts", "samples_per_prompt"):
        v = workload.get(key)
        if v is None or (isinstance(v, int) and not isinstance(v, bool)):
            continue
        whole = str(v).strip().isdigit() if isinstance(v, str) else (
            isinstance(v, float) and v.is_integer())  # fmt: skip
        if not whole:
            raise SpecError(f"{where}: 'workload.{key}' must be a whole number, got {v!r:.40}")
        workload = {**workload, key: int(v)}
    if workload:
        data["workload"] = workload


def actor_params(actor: object) -> int | None:
    """The parameters of a Run's actor (a name, a spec or its data) that a preset's sized
    defaults read (:meth:`~rlmcost.frameworks.preset_model.Preset.for_params`); None where it
    does not resolve (the Run's validation then names the problem)."""
    from rlmcost.specs import ModelSpec

    if isinstance(actor, str) and not (("/" in actor or actor.endswith(".json"))
                                       and Path(actor).exists()):  # a name: its size is fixed
        return _named_params(actor)
    try:
        if isinstance(actor, dict):
            actor = ModelSpec.model_validate(actor)
        return _spec_params(actor if isinstance(actor, ModelSpec) else str(actor))
    except (SpecError, ValueError):
        return None


def actor_moe(actor: object) -> bool:
    """Whether a Run's actor (a name, a spec or its data) is a mixture of experts, which a
    preset's tier from a dense example passes by (``Sized.dense_only``); False where it does
    not resolve."""
    spec = actor_spec(actor)
    return spec is not None and spec.n_experts > 0


def actor_layers(actor: object) -> int | None:
    """The decoder layers of a Run's actor, which a tier's default for its example's model
    alone reads (``Default.layers``); None where it does not resolve."""
    spec = actor_spec(actor)
    return None if spec is None else spec.n_layers


def actor_spec(actor: object) -> Any:
    """The ModelSpec of a Run's actor (a name, a spec or its data); None where it does not
    resolve."""
    from rlmcost.specs import ModelSpec, get_model

    try:
        if isinstance(actor, dict):
            actor = ModelSpec.model_validate(actor)
        if isinstance(actor, ModelSpec):
            return actor
        if isinstance(actor, str) and not (("/" in actor or actor.endswith(".json"))
                                           and Path(actor).exists()):  # as actor_params reads it
            return _named_spec(actor)
        return get_model(str(actor))
    except (SpecError, ValueError):
        return None


@lru_cache(maxsize=256)
def _named_spec(name: str) -> Any:
    from rlmcost.specs import get_model

    return get_model(name)


@lru_cache(maxsize=256)
def _named_params(name: str) -> int | None:
    """:func:`actor_params` of a built-in name, alias or Hugging Face id, kept (every planner
    candidate's Run reads it; a config.json path is read afresh)."""
    try:
        return _spec_params(name)
    except (SpecError, ValueError):
        return None


def _spec_params(actor: Any) -> int:
    from rlmcost.compiled.blocks import params
    from rlmcost.specs import ModelSpec, get_model

    spec = actor if isinstance(actor, ModelSpec) else get_model(str(actor))
    return int(params(spec.arch()))


def global_steps(global_batch: int, samples: int) -> int:
    """The optimizer steps of a global batch over a step's ``samples`` (B x K): their quotient,
    one under it; SpecError where it does not divide them (NeMo RL would drop the rest)."""
    if samples > global_batch and samples % global_batch:
        raise SpecError(
            f"--global-batch {global_batch} does not divide the B x K = {samples:,} samples of a "
            f"step (NeMo RL would drop {samples % global_batch:,} of them); give a divisor of "
            f"{samples:,} or --mini-batches"
        )
    return max(1, samples // global_batch)


def run_samples(run: Any) -> int | None:
    """B x K of a Run whose algorithm has mini-batches (None otherwise: a framework's global
    batch leaves DPO as it is), which its global batch divides."""
    from rlmcost.algorithms.catalog import get_algorithm

    a, w = run.algorithm, run.workload
    if "N_mini" not in get_algorithm(a.name).names:
        return None
    return samples(a.name, w.prompts, w.samples_per_prompt)


def samples(algorithm: str, prompts: int | None, group: int | None) -> int:
    """B x K of a workload: its prompts (default B = 64) times its responses per prompt
    (default: the algorithm's group), the samples a global batch divides."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import DEFAULT_BATCH

    b = DEFAULT_BATCH if prompts is None else prompts
    return b * (get_algorithm(algorithm).default_group if group is None else group)


def forward_follows(forward: Any, train: Any, given: Any, *, reset: bool = False) -> None:
    """The ``forward`` layout (a dict, changed in place) takes each trainer-only field
    (:data:`~rlmcost.deployment.trainer_only.TRAINER_ONLY`: the forwards run with the
    trainer's) that ``train`` sets and ``given`` (the forward fields the caller gave itself)
    does not, so a Run that sets ``train.router_dtype`` under a preset that sets another keeps
    one value for both; ``reset``: a field ``train`` leaves out goes back to its default (a new
    Run over a preset's copy of its own trainer layout) instead of staying
    (:meth:`Run.replace <rlmcost.run.spec.Run.replace>`, whose ``train`` is the change only)."""
    from rlmcost.deployment.trainer_only import TRAINER_ONLY

    if not isinstance(forward, dict):
        return
    train, given = train or {}, given or {}
    for key in (k for k in TRAINER_ONLY if k not in given):
        if key in train:
            forward[key] = train[key]
        elif reset:
            forward.pop(key, None)


def kv_scales_implied(run: Any) -> bool:
    """``AlgorithmSpec.kv_scales`` left unset (None): on where the run follows NeMo RL and an
    engine keeps an FP8 KV cache (NeMo RL calibrates its scales after every update: nemo_rl/
    algorithms/grpo.py ``recompute_kv_scales`` at 7ea279abf), else off; read per Run, so each of
    a plan's families takes its own framework's."""
    from rlmcost.choices import Dtype

    d = run.deployment
    if framework_name(d.framework, d.ideal) != "nemo-rl":
        return False
    engines = [d.engine, *(g.engine for g in d.groups if g.engine is not None)]
    return any(e.kv_cache_dtype is Dtype.FP8 for e in engines)


def turn_schedule(run: Any) -> Any:
    """A multi-turn rollout's :class:`~rlmcost.choices.TurnSchedule`: the Run's, else its
    framework's: NeMo RL's ``run_multi_turn_rollout`` (turn-synchronous) unless its vLLM
    engine is asynchronous (``should_use_async_rollouts``: ``vllm_cfg.async_engine``, which
    async GRPO, ``--partial-rollout``, requires), as its examples leave it
    (``grpo_math_1B.yaml`` ``vllm_cfg.async_engine: false``; nemo_rl/algorithms/grpo.py,
    nemo_rl/models/generation/interfaces.py at 7ea279abf); every other framework, and the
    bare layout, runs a task per sample (verl's agent loop, slime's ``generate``)."""
    from rlmcost.choices import TurnSchedule

    given = run.workload.turn_schedule
    if given is not None:
        return given
    d = run.deployment
    if framework_name(d.framework, d.ideal) == "nemo-rl" and not d.partial_rollout:
        return TurnSchedule.TURN_SYNC
    return TurnSchedule.PER_SAMPLE
