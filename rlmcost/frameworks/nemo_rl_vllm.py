"""NeMo RL's vLLM engine batch limits: what ``max_num_seqs`` an engine runs with when the config
leaves it unset, which depends on how NeMo RL builds the engine.

* ``vllm_cfg.async_engine: false``: ``vllm.LLM`` (``nemo_rl/models/generation/vllm/
  vllm_worker.py``), whose usage context ``LLM_CLASS`` gets vLLM's large defaults (1024
  sequences on GPUs of >= 70 GiB that are not A100; rlmcost.perf.rl_constants
  ``VLLM_LARGE_GPU_MAX_NUM_SEQS``): the nemo-rl preset's 1024, and vLLM's device default
  token budget (:func:`rlmcost.deployment.vllm_profile.llm_class_defaults`).
* ``vllm_cfg.async_engine: true``: ``AsyncLLM.from_engine_args(engine_args, stat_loggers=...)``
  (``nemo_rl/models/generation/vllm/vllm_worker_async.py`` ``_create_engine`` at v0.6.0 and
  v0.7.0), no usage context given, so vLLM's default ``UsageContext.ENGINE_CONTEXT`` applies
  (``vllm/v1/engine/async_llm.py`` ``from_engine_args``). ``EngineArgs.get_batch_defaults``
  (``vllm/engine/arg_utils.py``) lists defaults for ``LLM_CLASS`` and ``OPENAI_API_SERVER``
  only, so an unset ``max_num_seqs`` falls through to ``SchedulerConfig.DEFAULT_MAX_NUM_SEQS``,
  128 (:data:`ASYNC_ENGINE_MAX_NUM_SEQS`), and the prefill budget to 2048 tokens
  (:data:`ASYNC_ENGINE_MAX_NUM_BATCHED_TOKENS`). vLLM PR
  37393 (2026-03-18, closed: "silently fell through to ``SchedulerConfig.
  DEFAULT_MAX_NUM_SEQS=128``") and NeMo RL PR 4221 (2026-09-21, open, vLLM v0.26: the async
  generation worker "takes the ENGINE_CONTEXT path", 128 sequences against ``LLM_CLASS``'s
  1024) state it for the vLLM releases NeMo RL v0.5-v0.7 pin (0.11-0.20). No NeMo RL
  performance recipe of Qwen3 or Llama sets ``max_num_seqs`` (``vllm_kwargs``); the
  DeepSeek-V3 FP8 one sets 32, read here when a row carries it.

Also the ``vllm_cfg`` switches the importer reads (:func:`engine_switches`).
"""

from __future__ import annotations

import re

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

ASYNC_ENGINE_MAX_NUM_SEQS = 128
"""vLLM ``SchedulerConfig.DEFAULT_MAX_NUM_SEQS``: an ``AsyncLLM`` built without a usage context
runs at most this many sequences at once (module doc; a framework default, not a measurement)."""

ASYNC_ENGINE_MAX_NUM_BATCHED_TOKENS = 2048
"""vLLM ``SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS``: the same engine's token budget per
step, so its prefill chunks and the forward of its start-up memory profile
(:mod:`rlmcost.deployment.vllm_profile`) are 2048 tokens (module doc)."""


def engine_max_num_seqs(r: Reader, q: ImportedQuery, g: str) -> None:
    """``--max-num-seqs`` and ``--max-num-batched-tokens`` from ``{g}.vllm_kwargs``, else, for
    NeMo RL's async engine, vLLM's ``ENGINE_CONTEXT`` defaults (module doc); ``g`` is
    ``policy.generation``."""
    limits = (
        ("max_num_batched_tokens", "--max-num-batched-tokens", "vLLM's token budget per step",
         ASYNC_ENGINE_MAX_NUM_BATCHED_TOKENS, "token budget of 2048 per step (SchedulerConfig."
         "DEFAULT_MAX_NUM_BATCHED_TOKENS), not LLM_CLASS's 16384"),
        ("max_num_seqs", "--max-num-seqs", "vLLM's concurrent sequences per engine",
         ASYNC_ENGINE_MAX_NUM_SEQS, "default of 128 sequences per engine (SchedulerConfig."
         "DEFAULT_MAX_NUM_SEQS; vLLM PR 37393, NeMo RL PR 4221), not LLM_CLASS's 1024"),
    )  # fmt: skip
    for key, flag, what, default, why in limits:
        given = r.integer(f"{g}.vllm_kwargs.{key}", None)
        if given is not None:
            q.convert(f"{g}.vllm_kwargs.{key}={given}", flag, given, what)
        elif r.flag(f"{g}.vllm_cfg.async_engine", False):
            q.convert(f"{g}.vllm_cfg.async_engine=true", flag, default,
                      "AsyncLLM.from_engine_args without a usage context: vLLM's "
                      f"ENGINE_CONTEXT {why}")  # fmt: skip


def engine_switches(r: Reader, q: ImportedQuery, v: str) -> None:
    """``vllm_cfg`` (``v``) switches: ``enforce_eager`` (examples/configs/grpo_math_1B.yaml:
    False) and ``enable_prefix_caching`` (None: on where the compute capability is >= 8,
    nemo_rl/models/generation/vllm/vllm_worker.py ``_resolve_enable_prefix_caching`` at
    v0.7.0, inline at v0.3.0-v0.4.0: the engine's default on the GPUs rlmcost prices)."""
    if r.flag(f"{v}.enforce_eager", False):
        q.set("--enforce-eager")
    if r.raw(f"{v}.enable_prefix_caching") is not None:
        caching = r.flag(f"{v}.enable_prefix_caching", True)
        q.set("--prefix-caching" if caching else "--no-prefix-caching")


def nemo_rl_release(text: str) -> str:
    """``--nemo-rl-version``: the NeMo RL release ``X.Y[.Z]`` (a leading ``v`` dropped), one
    whose vLLM pin rlmcost knows (:data:`~rlmcost.deployment.vllm_release.NEMO_RL_VLLM`);
    another, or another form, is an error that lists them."""
    from rlmcost.deployment.vllm_release import NEMO_RL_VLLM

    known = ", ".join(f"{a}.{b} (vLLM {pin})" for (a, b), pin in sorted(NEMO_RL_VLLM.items()))
    m = re.fullmatch(r"v?((\d+)\.(\d+)(?:\.\d+)?)", str(text).strip())
    if m is None or (int(m[2]), int(m[3])) not in NEMO_RL_VLLM:
        what = "is not a release rlmcost knows" if m else "is not X.Y or X.Y.Z (e.g. 0.5)"
        raise SpecError(f"NeMo RL release {text!r} {what}: give one of {known}, or leave "
                        "--nemo-rl-version out (NeMo RL v0.7's vLLM 0.20.0)")
    return m[1]


def release_vllm(q: ImportedQuery, release: str) -> None:
    """``--vllm-version`` from the NeMo RL ``release`` a config ran on (``0.5``: the vLLM its
    ``pyproject.toml`` pins, :data:`~rlmcost.deployment.vllm_release.NEMO_RL_VLLM`), where
    rlmcost models that vLLM; a note otherwise."""
    from rlmcost.deployment.vllm_release import nemo_rl_vllm

    pin = nemo_rl_vllm(release)
    if pin is None:
        q.note(f"NeMo RL {release}: its vLLM pin is not known to rlmcost; the engine runs "
               "NeMo RL v0.7's vLLM 0.20.0")  # fmt: skip
    else:
        q.vllm_pin(f"NeMo RL v{release}: pyproject.toml vllm=={pin}", pin,
                   "the vLLM release its engine runs",
                   f"NeMo RL v{release} pins vLLM {pin}, before the releases rlmcost models "
                   "(0.9.0-0.20.x): the engine runs NeMo RL v0.7's vLLM 0.20.0")
