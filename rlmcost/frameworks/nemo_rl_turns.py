"""NeMo RL's multi-turn rollouts as its config sets them: ``grpo.max_rollout_turns`` and the
schedule its generation backend picks.

``nemo_rl/algorithms/grpo.py`` @7ea279abf calls ``run_async_multi_turn_rollout`` (a task per
sample: ``--turn-schedule per-sample``) where ``should_use_async_rollouts`` holds
(``nemo_rl/models/generation/interfaces.py``: vLLM with ``vllm_cfg.async_engine``, SGLang with
``use_async_rollouts``), else ``run_multi_turn_rollout`` (every active sample's turn one
generation batch, then one environment step: ``turn-synchronous``). ``max_rollout_turns`` is an
upper bound (a sample ends when its environment says so): every sample is taken to run all of
them, as many as the response budget holds. The observation size and the environment's latency
are the environment's, not the config's (notes)."""

from __future__ import annotations

from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

_GEN = "policy.generation"


def rollout_turns(r: Reader, q: ImportedQuery, response_len: int) -> None:
    """``--turns`` and ``--turn-schedule`` from ``grpo.max_rollout_turns`` (module
    docstring); one turn (the examples' ``max_rollout_turns: 1``) sets nothing."""
    n = r.integer("grpo.max_rollout_turns", 1)
    if n <= 1:
        return
    fit = min(n, response_len)  # N turns of at least one token each (placement.turns)
    q.convert(f"grpo.max_rollout_turns={n}", "--turns", fit,
              "turns a sample, the upper bound taken" + (
                  f" ({fit}: one token each in {response_len})" if fit < n else ""))  # fmt: skip
    backend = r.text(f"{_GEN}.backend", "vllm")
    if backend == "sglang":
        asynchronous = r.flag(f"{_GEN}.use_async_rollouts", False)
    else:
        asynchronous = backend == "vllm" and r.flag(f"{_GEN}.vllm_cfg.async_engine", False)
    q.set("--turn-schedule", "per-sample" if asynchronous else "turn-synchronous")
    q.note("multi-turn rollouts: the environment's observation tokens and latency are not in "
           "the config (give --observation-tokens and --tool-latency; 0 taken)")  # fmt: skip
