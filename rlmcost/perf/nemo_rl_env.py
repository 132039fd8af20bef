"""Seconds of NeMo RL's environment step: the math verifier scoring every generated response.

Code path (NVIDIA-NeMo/RL v0.3.0, v0.5.0, v0.6.0, v0.7.0): ``nemo_rl/algorithms/grpo.py``
``grpo_train`` calls ``run_multi_turn_rollout`` (``nemo_rl/experience/rollouts.py``) under
``timer.time("generation")``; after ``generate_responses`` it calls ``calculate_rewards``,
which sends the batch's responses to the ``MathEnvironment`` actor (``step.remote``) and waits
(``ray.get``). ``MathEnvironment.step`` (``nemo_rl/environments/math_environment.py``) cuts the
N responses into ``env.math.num_workers`` ordered chunks (``chunk_list_to_workers``: ceil(N / W)
each) and waits for every ``HFVerifyWorker`` actor's ``verify`` of its chunk, one response after
another: ``math_metric(...)`` on ``["\\boxed{" + ground_truth + "}"]`` and ``[response]``. So
the step is serial on the driver's critical path after the last response and before the
log-probs, and it lies inside the ``generation`` timer (the v0.3 blog's "Generation" line and
the performance pages' total step time include it; ``reward_calculation`` only turns the
rewards into advantages). ``env.math.num_workers`` is 8 in ``examples/configs/
grpo_math_1B.yaml`` at all four tags, which every GRPO performance recipe inherits (the DAPO
one sets 64); the Ray actors are plain CPU actors, one process each.

Time (:func:`math_env_s`): ``2 x RAY_ACTOR_CALL_S`` (the driver's call of the environment and
the environment's calls of its workers, which run at once) plus ``ceil(N / W) x
(MATH_VERIFY_S_PER_RESPONSE + MATH_VERIFY_S_PER_TOKEN x mean response tokens)``: the largest
chunk, at the mean length. Left out: pickling the response strings (N x mean tokens x ~4 bytes,
7 MB for 2048 responses of 800 tokens) and math_verify's 5 s parse/compare timeouts
(``math_metric`` defaults), whose frequency on these datasets is not published.

Async GRPO (``grpo.async_grpo``, which requires ``vllm_cfg.async_engine``: grpo.py v0.5.0)
scores in its trajectory collector (``run_async_multi_turn_rollout`` per prompt group,
``nemo_rl/algorithms/async_utils.py`` at v0.5.0, ``async_utils/trajectory_collector.py`` at
v0.7.0): each response as it finishes, while the others generate, so rlmcost charges one
response's call under a streaming rollout (``--partial-rollout``, what the importer sets for
``in_flight_weight_updates``, as every async row of the performance pages has); without it,
the batch's step (the first deviation below).

Known deviations, with their size:

* On-policy with ``vllm_cfg.async_engine`` (``run_async_multi_turn_rollout``), and async GRPO
  without in-flight weight updates, each response is scored as it finishes too, so only the
  last one's call is exposed; rlmcost, which does not carry the engine mode, charges the
  batch's step after generation: at most ceil(N / W) responses too many (0.7 s for 2048
  responses of 800 tokens).
* Before v0.7.0 those per-response calls (the async engine's and the async collector's) ran
  one at a time (a blocking ``ray.get`` on the rollout's event loop, the environment actor's
  default ``max_concurrency`` of 1, every single-response chunk on ``workers[0]``:
  NVIDIA-NeMo/RL PR 2335, commit 03cff371e, "fix the blocking env issue", measured at 16K
  output tokens: ``env_calculate_rewards`` p90 132 s -> 5 s). That chain, N x (two calls and
  a response), overlaps the generation and is not modelled; at the recipes' lengths (2048 x
  ~4 ms, ~8 s) it stays under their steps' and generations' tens of seconds.

The per-response constants are measured (``benchmarks/bench_math_verify.py``). Outside
figure, not used: verl-project/verl PR 1206 (2025-04-22) reports its naive reward manager, one
process, taking "200+ seconds" for 2048 math-verify responses (0.1 s each, response lengths not
stated); on NeMo RL's batch (2048 responses, 8 workers) that would add 26 s to the v0.3 blog's
Generation line, where Qwen3-32B's published 96 s sits 0.4 s above rlmcost's generation alone.
"""

from __future__ import annotations

from math import ceil

from rlmcost.perf.rl_constants import RAY_ACTOR_CALL_S, Constant

MATH_VERIFY_S_PER_RESPONSE = Constant(2.2e-3, 0.41e-3, 3.4e-3,
                                      "measured: benchmarks/bench_math_verify.py")  # fmt: skip
"""Seconds of one ``HFVerifyWorker`` response beside its length (hf_math_verify, math-verify
0.9.0, latex2sympy2-extended 1.11.0, sympy 1.14.0 as NVIDIA-NeMo/RL v0.7.0's uv.lock pins).

Measured by ``benchmarks/bench_math_verify.py --per-length 300 --repeats 3`` (one process, a
shared 2-vCPU Intel Xeon; synthetic chains of thought of 200-12800 tokens, half the answers
wrong): the intercept of the least squares line through each length's mean seconds, the least
of three runs of the same responses (value, 2.23 ms), the most of them (high, 3.36 ms); low: the
line through the medians (0.41 ms), a batch without the slow tail (wrong answers that sympy
compares to the end). The clusters' own CPUs are not measured.
"""

MATH_VERIFY_S_PER_TOKEN = Constant(0.89e-6, 0.89e-6, 1.15e-6,
                                   "measured: benchmarks/bench_math_verify.py")  # fmt: skip
"""Seconds per response token of one ``HFVerifyWorker`` response (math_verify's regex
extraction runs over the whole text). The slope of the same lines as
:data:`MATH_VERIFY_S_PER_RESPONSE`: value 0.889 us (least of the runs' means), high 1.152 us
(the medians' line, the steepest); low = value.
"""


def math_env_s(responses: int, mean_tokens: float, workers: int, end: str = "value") -> float:
    """Seconds of one environment step over ``responses`` responses of ``mean_tokens`` mean
    length on ``workers`` verify actors (module docstring); 0 without responses or workers.

    >>> round(math_env_s(2048, 795, 8), 3)
    0.745
    """
    if responses <= 0 or workers <= 0:
        return 0.0
    per_response = (MATH_VERIFY_S_PER_RESPONSE.at(end)
                    + MATH_VERIFY_S_PER_TOKEN.at(end) * mean_tokens)  # fmt: skip
    return 2 * RAY_ACTOR_CALL_S.at(end) + ceil(responses / workers) * per_response
