"""NeMo RL import: a PPO config (``ppo`` and ``value`` sections, examples/configs/ppo_math_1B.yaml
and the recipes over it, which examples/run_ppo.py runs) as an ``rlmcost ppo`` query.

What NeMo RL's PPO does per step (nemo_rl/algorithms/ppo.py ``ppo_train`` at 7ea279abf): the
policy generates in vLLM as GRPO does; the value model's forward (``value_inference``), the
policy's log-prob forward and, unless ``skip_reference_policy_logprobs_calculation``, the
reference's; GAE advantages (``adv_estimator.name: gae``); then ``ppo_epochs`` times the value
model's update and the policy's, each over the step's samples in ``train_global_batch_size``
steps. The ``ppo`` section's keys are the ``grpo`` section's (batch, generations per prompt,
dynamic sampling, ``async_ppo`` for ``async_grpo``), so the GRPO importer reads them under
their GRPO names (:func:`ppo_aliases`); the rewards come from the environments (a verifier:
``--reward rule``) and the value model is rlmcost's critic (``value.model_name``), trained in the
policy's layout on the same GPUs (the value worker's own parallelism is said in a note)."""

from __future__ import annotations

from typing import Any

from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery


def is_ppo(flat: dict[str, Any]) -> bool:
    """A PPO config: a ``ppo`` section and no ``grpo`` one."""
    keys = {k.split(".", 1)[0] for k in flat}
    return "ppo" in keys and "grpo" not in keys


def ppo_aliases(flat: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``flat`` with each ``ppo.X`` also under ``grpo.X`` (``ppo.async_ppo.Y`` under
    ``grpo.async_grpo.Y``), and the alias -> original map (the ignored keys are reported under
    the config's own names: :func:`own_names`)."""
    out, alias = dict(flat), {}
    for key, value in flat.items():
        if key.startswith("ppo."):
            name = "grpo." + key[4:].replace("async_ppo", "async_grpo", 1)
            out[name], alias[name] = value, key
    return out, alias


def own_names(keys: list[str], alias: dict[str, str]) -> list[str]:
    """The unread ``keys`` under the config's own names: an unread alias as its original; an
    original ``ppo.X`` by its alias alone (read, or cost-free under its GRPO name)."""
    originals = set(alias.values())
    return sorted({alias.get(k, k) for k in keys if k in alias or k not in originals})


def ppo_query(r: Reader, q: ImportedQuery) -> None:
    """The PPO-only flags: ``ppo``, ``--reward rule``, ``--epochs``, the critic and the KL
    (module docstring)."""
    q.algorithm = "ppo"
    q.note("a PPO config (ppo section; examples/run_ppo.py): rlmcost ppo, the value model as its "
           "critic, rewards from the environments (--reward rule)")  # fmt: skip
    q.set("--reward", "rule")
    epochs = r.integer("grpo.ppo_epochs", 4, lo=1)
    q.convert(f"ppo.ppo_epochs={epochs}", "--epochs", epochs, "value and policy updates per step")
    policy = r.text("policy.model_name", "")
    value = r.text("value.model_name", policy)
    if value and value != policy:
        q.set("--critic", value)
    if r.flag("grpo.skip_reference_policy_logprobs_calculation", False):
        q.set("--no-kl")
    estimator = r.text("grpo.adv_estimator.name", "gae")
    if estimator != "gae":
        q.note(f"ppo.adv_estimator.name {estimator}: rlmcost's ppo computes GAE on the host (no "
               "cost either way)")
    if r.integer("grpo.policy_training_start_step", 0, lo=0):
        q.note("ppo.policy_training_start_step: critic-only warm-up steps first; rlmcost prices a "
               "step that trains both")
    tp = r.integer("value.dtensor_cfg.tensor_parallel_size", 1) if r.flag(
        "value.dtensor_cfg.enabled", True) else r.integer(
        "value.megatron_cfg.tensor_model_parallel_size", 1)  # fmt: skip
    q.note(f"the value model's own worker (value.*, TP {tp}) is priced in the policy's layout on "
           "the same GPUs; ppo.py offloads the policy to the host between PPO epochs "
           "(policy.offload_to_cpu), not priced")
