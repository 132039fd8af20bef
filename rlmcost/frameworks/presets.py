"""Framework presets: each framework's defaults and conventions, every one with its source.

``--framework verl|openrlhf|trl|nemo-rl|slime`` on an algorithm command starts the deployment
from the framework's defaults instead of rlmcost's; every flag the user gives overrides them.
A :class:`Default` names the rlmcost setting (a Deployment field such as ``engine.sleep``, or
an algorithm option such as ``recompute_logprobs``), its value, the flag that sets it by hand,
and where the framework sets it (the file of its repository or its documentation). What a
preset cannot set for every run (where the reference and reward models run, the units of the
batch knobs) is in its ``conventions``, printed as notes.

The module is the presets' table (:data:`PRESETS`) and the lookups over it; each framework's
preset is data in a module of its own under :mod:`rlmcost.frameworks.preset_data` (``verl``,
``openrlhf``, ``trl``, ``nemo_rl``, ``slime``), their shape is in
:mod:`rlmcost.frameworks.preset_model`. Light to import (dataclasses and enums only): the CLI
reads presets at start-up.

Sources (files of the frameworks' repositories as stored at these versions):
verl ``verl/trainer/config/ppo_trainer.yaml`` (volcengine/verl, 2025); OpenRLHF
``openrlhf/cli/train_ppo_ray.py`` (argparse defaults); TRL ``trl/trainer/grpo_config.py`` and
transformers ``TrainingArguments``; NeMo RL ``examples/configs/grpo_math_1B.yaml``; slime
``slime/utils/arguments.py`` (THUDM/slime).
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.preset_data import nemo_rl, openrlhf, slime, trl, verl
from rlmcost.frameworks.preset_data.nemo_rl import (
    NEMO_RL_8B_EXAMPLE_FROM,
    NEMO_RL_32B_EXAMPLE_FROM,
)
from rlmcost.frameworks.preset_model import (
    DEFAULT_FRAMEWORK,
    OPTION_FIELDS,
    Behaviour,
    Default,
    Framework,
    FrameworkChoice,
    Preset,
    Sized,
    framework_name,
)

__all__ = [
    "DEFAULT_FRAMEWORK", "OPTION_FIELDS", "PRESETS", "Behaviour", "Default", "Framework",
    "FrameworkChoice", "NEMO_RL_8B_EXAMPLE_FROM", "NEMO_RL_32B_EXAMPLE_FROM", "Preset",
    "Sized", "behaviour", "framework_name", "get_preset", "group_of_one", "preset_options",
]  # fmt: skip

PRESETS: dict[Framework, Preset] = {
    Framework.VERL: verl.PRESET,
    Framework.OPENRLHF: openrlhf.PRESET,
    Framework.TRL: trl.PRESET,
    Framework.NEMO_RL: nemo_rl.PRESET,
    Framework.SLIME: slime.PRESET,
}


def preset_options(framework: str | Framework | None, alg: Any = None,
                   params: int | None = None, moe: bool = False,
                   actor: Any = None) -> dict[str, Any]:  # fmt: skip
    """The algorithm options ``recompute_logprobs``, ``kl``, ``rule_reward`` and
    ``global_batch`` (samples per optimizer step; None: one mini-batch) a framework implies
    for ``alg`` (an :class:`~rlmcost.algorithms.model.Algorithm`; None: for any
    algorithm, as `compare`
    runs several): a preset's option applies only where the algorithm has what it changes
    (old log-probs to recompute: an online algorithm that generates; a reference to drop: an
    online algorithm with one), so ``dpo --framework verl`` keeps DPO's reference. The
    reward kind (a verifier instead of a reward model) applies to the critic-free online
    algorithms (GRPO and its family), whose framework examples train on math with a rule
    verifier; PPO keeps its reward model (RLHF) unless ``--reward rule``. ``params`` /
    ``moe``: the actor's size and kind, whose size tier's options replace the preset's
    (:meth:`~rlmcost.frameworks.preset_model.Preset.for_params`: verl's 72 B example keeps a
    KL loss; None: the preset's own, as under ``--no-sized-defaults``); ``actor``: its
    ModelSpec, whose model may have an example of its own (``Sized.models``).
    """
    out: dict[str, Any] = {"recompute_logprobs": False, "kl": True, "rule_reward": False,
                           "global_batch": None}  # fmt: skip
    if framework is None or str(framework).lower() == "none":
        return out
    preset = get_preset(framework).for_params(params, moe, actor=actor)
    if alg is None:
        out["recompute_logprobs"] = bool(preset.option("recompute_logprobs"))
        return out
    from rlmcost.algorithms.kinds import Kind, Role

    online = not alg.offline and any(i.kind is Kind.GENERATE for i in alg.invocations)
    if online:  # a ratio of new to old log-probs only where a score gives an advantage
        out["recompute_logprobs"] = alg.scored and bool(preset.option("recompute_logprobs"))
        out["global_batch"] = preset.option("global_batch")
        has_ref = any(i.role is Role.REFERENCE for i in alg.invocations)
        if has_ref and preset.option("kl") is False:
            out["kl"] = False
        roles = {i.role for i in alg.invocations}
        if Role.REWARD in roles and Role.CRITIC not in roles and preset.option("rule_reward"):
            out["rule_reward"] = True  # critic-free (GRPO family): the examples' verifiers
    return out


_BEHAVIOURS: dict[str | None, Behaviour | None] = {}
""":func:`behaviour` by the name asked (an evaluation asks it about 20 times per group)."""


def behaviour(framework: str | None) -> Behaviour | None:
    """The :class:`Behaviour` of ``framework`` (None for none or an unknown name)."""
    try:
        return _BEHAVIOURS[framework]
    except (KeyError, TypeError):  # TypeError: an unhashable name, looked up each time
        pass
    try:
        found: Behaviour | None = PRESETS[Framework(str(framework).lower())].behaviour
    except ValueError:
        found = None
    if isinstance(framework, str | None):
        _BEHAVIOURS[framework] = found
    return found


GROUP_OF_ONE: dict[Framework, str] = {
    Framework.VERL: (
        "K = 1 under verl: its group estimators take a group of one as mean 0 (GRPO's: and "
        "std 1), so each response's advantage is its own score, REINFORCE without a baseline "
        "(verl/trainer/ppo/core_algos.py compute_grpo_outcome_advantage, "
        "compute_rloo_outcome_advantage @b178a3cd); priced as this method's invocations at "
        "K = 1"),
}
"""Frameworks that run a group method (GRPO and its family, whose baseline rlmcost takes over
K >= 2 responses: ``Algorithm.min_group``) with one response per prompt, and the note that
says what they compute: verl's estimators give a group of one mean 0 (and std 1), at volcengine/
verl b178a3cd verl/trainer/ppo/core_algos.py lines 314-316 (GRPO), 511 (RLOO), 461
(REINFORCE++ with baseline), 567 (OPO), 704 (GPG); its pass@k estimator refuses it (line 405).
The step's invocations do not depend on the baseline, so ``--group 1`` prices it."""


def group_of_one(framework: str | None, alg: Any) -> str | None:
    """The note under which ``framework`` runs ``alg`` (an
    :class:`~rlmcost.algorithms.model.Algorithm`) with one response per prompt
    (:data:`GROUP_OF_ONE`); None where it does not. DAPO's dynamic sampling (the ``rho`` knob)
    keeps only groups whose rewards differ, which a group of one never has (Yu et al. 2025,
    arXiv:2503.14476 section 3.2), so it is never run with one."""
    try:
        note = GROUP_OF_ONE.get(Framework(str(framework).lower()))
    except ValueError:
        return None
    return note if note is not None and "rho" not in alg.names else None


NOT_PRESETS = {
    "miles": "miles (radixark/miles) is a fork of slime whose train.py takes slime's arguments: "
             "--framework slime gives their defaults, `rlmcost import miles SCRIPT` reads a "
             "miles launch script",
}
"""Frameworks a user may name that have no preset, with what to give instead: miles, whose
launch lines `rlmcost import miles` reads as slime's (:mod:`rlmcost.cli.frameworks`)."""


def framework_hint(name: str) -> str:
    """What to give for ``name``, not a framework preset: :data:`NOT_PRESETS`' words, else
    the nearest preset name (difflib) as ``did you mean 'verl'?``, else ''."""
    from difflib import get_close_matches

    key = str(name).strip().lower()
    if key in NOT_PRESETS:
        return NOT_PRESETS[key]
    near = get_close_matches(key, [f.value for f in Framework] + ["none"], n=1, cutoff=0.6)
    return f"did you mean '{near[0]}'?" if near else ""


def get_preset(name: str | Framework) -> Preset:
    """The preset of ``name``; SpecError naming the choices otherwise."""
    try:
        return PRESETS[Framework(str(name).lower())]
    except ValueError:
        hint = framework_hint(str(name))
        raise SpecError(
            f"unknown framework '{name}'; use one of {', '.join(f.value for f in Framework)}"
            + (f"; {hint}" if hint else "")
        ) from None
