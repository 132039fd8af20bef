"""slime's published runs through :func:`~rlmcost.frameworks.slime.import_slime`, as a slime
user launches them: the run's ``train.py`` / ``train_async.py`` arguments
(``framework_settings.argv``, the launch line as published, its open settings filled from the
example script it follows, each stated in the run's assumptions); one of the mappings of
:mod:`rlmcost.reports.rl_runs_frameworks`.

The importer reads slime at :data:`~rlmcost.frameworks.slime_args.SLIME_COMMIT`. What slime
did differently at the run's code (``framework_settings.code_date``, the day of the slime image
or commit the run used) is one rule here, applied and stated as a choice:

* :data:`SLIME_REUSE_LOGPROBS_DATE`: before it, the actor always recomputed the old log-probs
  in a forward of its own, one optimizer step per rollout or not.

miles (radixark/miles, RadixArk's fork of slime) keeps slime's ``train.py`` arguments, so its
runs go through the same importer, with the one difference :data:`MILES_RECOMPUTES_LOGPROBS`
states. A model the data gives by its config (``model_config``, a qwen3_5 family model too:
:func:`rlmcost.reports.rl_runs.model_spec`) is the importer's spec and the Run's overlay.

A rollout slime does not run itself (``--custom-generate-function-path`` with a multi-turn
agent, ``framework_settings.agent_max_turns`` > 1) leaves the run unexpressible where the source
does not publish what a multi-turn query needs (``--turns``, ``--observation-tokens``,
``--tool-latency``: :mod:`rlmcost.placement.turns`): the agents' turn counts, trajectory
lengths and tool time; guessing them would fit the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.reports.rl_runs import model_name, model_spec

Record = Mapping[str, Any]
Mapped = tuple[Any, dict[str, Any], list[str], str]

SLIME_REUSE_LOGPROBS_DATE = "2026-05-09"
"""The day slime began reusing the training forward's log-probs as the old ones when a rollout
makes one optimizer step (THUDM/slime commit bf9b1a3b, 2026-05-09, "Migrate internal feature
(#1897)": ``can_reuse_log_probs_in_loss`` in slime/backends/megatron_utils/actor.py). Before it
``train_actor`` always ran ``compute_log_prob("actor", ...)`` ahead of the update
(slime/backends/megatron_utils/actor.py at d862870c, 2025-09-27)."""


MILES_RECOMPUTES_LOGPROBS = "radixark/miles 31f1ca96 (2026-08-21)"
"""miles has no ``can_reuse_log_probs_in_loss``: its actor runs the old log-prob forward every
step (miles/backends/megatron_utils/actor.py at that commit; the Qwen3.8 page measures it,
'actor log-probs 33 s', at one optimizer step per rollout)."""


def slime(record: Record) -> Mapped:
    """The launch line through :func:`~rlmcost.frameworks.slime.import_slime` (its model the
    run's, its prompt length the run's); the code-date rule becomes a choice."""
    from rlmcost.frameworks.slime import import_slime

    s = record["framework_settings"]
    argv = [str(a) for a in s["argv"]]
    turns = int(s.get("agent_max_turns", 1))
    if "--custom-generate-function-path" in argv and turns > 1:
        raise SpecError(
            f"a custom generate function runs an agent of up to {turns} turns whose tool calls "
            "execute in sandboxes between the turns (--custom-generate-function-path); the "
            "source publishes neither its turn counts and trajectory lengths nor the tool "
            "time, which a multi-turn query needs (--turns, --observation-tokens, "
            "--tool-latency)"
        )
    from rlmcost.specs import ModelSpec

    overlay: dict[str, Any] = {}
    model: str | ModelSpec = model_name(record)
    if not record["model_builtin"]:
        data = model_spec(str(record["model"]), record["model_config"], model_name(record))
        overlay = {"models": {"actor": data}}
        model = ModelSpec.model_validate(data)
    q = import_slime(argv, model=model, prompt_len=int(record["prompt_len"]))
    if overlay:  # the command names the model as the data does; the overlay gives its shape
        q.set("--model", model_name(record))
    q.source = "rl_runs.json framework_settings (argv)"
    choices: list[str] = []
    code_date = str(s["code_date"])
    reused = "--no-recompute-logprobs" in [f for f, _ in q.flags]
    if reused and "--use-rollout-logprobs" not in argv:
        why = ""
        if record["framework"] == "miles":
            why = (f"miles runs it every step (no can_reuse_log_probs_in_loss in "
                   f"{MILES_RECOMPUTES_LOGPROBS})")  # fmt: skip
        elif code_date < SLIME_REUSE_LOGPROBS_DATE:
            why = (f"slime of {code_date} runs it every step; the reuse of the training "
                   f"forward's log-probs came with slime bf9b1a3b ({SLIME_REUSE_LOGPROBS_DATE}), "
                   "after this run")  # fmt: skip
        if why:
            q.set("--recompute-logprobs")
            q.notes = [n for n in q.notes if "can_reuse_log_probs_in_loss" not in n]
            choices.append(f"the actor recomputes the old log-probs in a forward of its own "
                           f"(--recompute-logprobs): {why}")  # fmt: skip
    return q, overlay, choices, "rlmcost import slime (framework_settings.argv as the launch line)"
