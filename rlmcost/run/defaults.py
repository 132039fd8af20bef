"""The framework defaults under a Run's data: what a Run does not say, its framework does.

A Run's ``deployment.framework`` names the framework whose defaults and semantics it follows
(:mod:`rlmcost.frameworks.presets`). Without the key, a Run takes the default deployment
(:data:`~rlmcost.frameworks.presets.DEFAULT_FRAMEWORK`), as the CLI does without
``--framework``; ``framework: none`` (or null) is rlmcost's bare layout, and ``ideal: true``
the paper's iteration. The preset's fields lie under the given ones (every field a Run's JSON
has stays as it is, so ``to_json -> from_data`` is the identity), with two rules that keep a
partial Run consistent:

* a trainer micro-batch given without a token budget drops the preset's budget (a
  micro-batch given by hand is what runs);
* a forward layout the preset gives only by its budget follows the given trainer layout
  (:func:`~rlmcost.deployment.spec.forwards_follow_trainer`).

The algorithm options a framework implies (log-prob recomputation, KL, the reward kind;
:func:`~rlmcost.frameworks.presets.preset_options`) fill the ones the data leaves out.
"""

from __future__ import annotations

from typing import Any

from rlmcost.frameworks.presets import framework_name, get_preset, preset_options
from rlmcost.run.spec import merge

_IMPLIED = ("recompute_logprobs", "kl", "rule_reward")


def with_framework_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a Run's, possibly partial) over its framework's defaults (module docstring)."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.deployment.spec import BATCHING, forwards_follow_trainer

    dep = dict(data.get("deployment") or {})
    name = framework_name(dep["framework"] if "framework" in dep else None,
                          bool(dep.get("ideal")))  # fmt: skip
    if "framework" in dep and dep["framework"] is None:
        name = None
    if name is None:
        out = {**dep, "framework": None}
    else:
        out = merge(get_preset(name).deployment_data(), dep)
        train = dep.get("train") or {}
        if "micro_batch" in train and "max_tokens_per_gpu" not in train:
            out["train"]["max_tokens_per_gpu"] = None
    if "forward" not in dep or set(dep["forward"] or {}) <= set(BATCHING):
        forwards_follow_trainer(out)
    if name is None:
        return {**data, "deployment": out}
    algo = dict(data.get("algorithm") or {})
    implied = preset_options(name, get_algorithm(algo.get("name") or "ppo"))
    algo.update({k: implied[k] for k in _IMPLIED if k not in algo})
    return {**data, "deployment": out, "algorithm": algo}
