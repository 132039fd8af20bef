"""NeMo RL's math environment as its config sets it: ``env.math.num_workers``, the
``HFVerifyWorker`` actors that score a step's responses after generation
(:mod:`rlmcost.perf.nemo_rl_env` prices that step).

NVIDIA-NeMo/RL ``nemo_rl/environments/math_environment.py`` (v0.3.0 to v0.7.0):
``MathEnvironment.__init__`` starts ``cfg["num_workers"]`` verify actors and ``step`` cuts the
responses into that many chunks (``chunk_list_to_workers``). ``examples/configs/
grpo_math_1B.yaml`` sets ``env.math.num_workers: 8`` at v0.3.0, v0.5.0 and v0.7.0 (the
preset's ``Behaviour.env_workers``); DAPO recipes set 16 (``examples/configs/recipes/llm/
dapo-qwen2.5-7b.v2.yaml`` at v0.7.0, whose ``math_verify_impl: dapo_math_verify`` is another
verifier, priced here at hf_math_verify's measured rate).
"""

from __future__ import annotations

from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

MATH_ENV_WORKERS = 8
"""``env.math.num_workers`` of ``examples/configs/grpo_math_1B.yaml`` (v0.3.0-v0.7.0), the
NeMo RL preset's ``Behaviour.env_workers``."""


def environment_workers(r: Reader, q: ImportedQuery) -> None:
    """``--env-workers`` from ``env.math.num_workers`` where the config gives it (a value other
    than the preset's 8 is set; 8 is recorded as the conversion); absent: the preset's."""
    key = "env.math.num_workers"
    if not r.has(key):
        return
    workers = r.integer(key, MATH_ENV_WORKERS)
    q.convert(f"{key}: {workers}", "--env-workers", workers,
              "verify actors of the math environment (math_environment.py "
              "MathEnvironment.step: the responses in that many chunks)",
              default=MATH_ENV_WORKERS)  # fmt: skip
