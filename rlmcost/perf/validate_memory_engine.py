"""``engine`` rows of ``rlmcost validate --memory``: an inference engine's KV-cache pool as
vLLM and SGLang log it at start-up, against the pool rlmcost's RL evaluation gives the engine.

A row's ``command`` is an RL query (``rlmcost grpo ...``) whose ``--groups`` puts the logged
engine alone on a group named ``rollout`` (its GPUs = one replica's TP, the bracket's ``gmu``,
``max-num-seqs``, ``max-num-batched-tokens``, ``engine``, ``rollout-dtype``) beside a trainer
group that does not touch it. The query is built as ``validate --rl`` builds a Run and
evaluated; the prediction is the generation job's KV pool per device, ``memory.kv_cache`` of
that group's job (:meth:`~rlmcost.placement.group_memory.GroupMemory.engine_memory`, from
:func:`~rlmcost.placement.engine_budget.engine_budget`: the same functions every RL query
sizes its engines with; none of its own here).

What is compared is what the engine logged (``measured``):

* ``kv_gib``: vLLM's available KV-cache memory per GPU ("Available KV cache memory: X GiB";
  V0's ``kv_cache_size`` / "the rest of the memory reserved for KV Cache is X GiB"), GiB =
  2^30 bytes (``vllm/utils`` ``GiB_bytes``);
* ``kv_tokens``: the pool in tokens, vLLM's "GPU KV cache size: N tokens" or "# GPU blocks: B"
  x 16 (V0's ``block_size``), SGLang's "KV Cache is allocated. #tokens: N"
  (``max_total_num_tokens``): the pool bytes over one token's KV bytes per GPU in the engine's
  layout (:func:`~rlmcost.compiled.memory.memory_per_rank`'s ``kv_cache``, KV in the model's
  dtype), in whole blocks of 16 tokens (vLLM: ``num_gpu_blocks = available // page size``,
  vllm/v1/core/kv_cache_utils.py; V0 ``Worker.determine_num_available_blocks``) or of 1 token
  (SGLang's page size 1, ``profile_max_num_token``: ``rest_memory // cell_size``): rlmcost's
  :func:`~rlmcost.deployment.terms.pool_tokens`.

The interval: rlmcost prices the memory outside PyTorch that vLLM's profile counts
(``non_torch_increase``) at a point (:func:`~rlmcost.deployment.vllm_profile.non_torch_bytes`:
0 on one GPU, the communicators' 512 MiB on several); the row's engine version counts a
stated range of it (:data:`NON_TORCH_RANGE`); the pool moves by the difference, byte for
byte. SGLang has no profile run: its pool is ``mem_fraction_static`` x the memory free once its
process group is set up, less the weights (python/sglang/srt/model_executor/model_runner.py
``profile_max_num_token``: ``available_gpu_memory - total_gpu_memory * (1 -
mem_fraction_static)``; :mod:`rlmcost.deployment.sglang_pool`), so its range is the CUDA
context and that set-up's, times the fraction. The interval is that range's pools, widened
to hold rlmcost's point.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

from rlmcost.errors import SpecError

Build = Callable[[str, list[str]], Any]
"""The Run of ``rlmcost ALGORITHM ARGV`` (``rlmcost.perf.validate_memory.Build``)."""

GIB = 2**30
MIB = 2**20

VLLM_BLOCK_TOKENS = 16
"""vLLM's default ``block_size`` on CUDA (``CacheConfig.block_size`` 16, vllm/config)."""

PROFILES = ("vllm-v0-torch-peak", "vllm-v0-free-memory", "vllm-v0.6.5", "vllm-v0.7+", "sglang")
"""How the row's engine version sizes its pool (:data:`NON_TORCH_RANGE`)."""

NON_TORCH_RANGE: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "vllm-v0-torch-peak": ((0, 0), (0, 0)),
    "vllm-v0-free-memory": ((300 * MIB, 600 * MIB), (812 * MIB, 1112 * MIB)),
    "vllm-v0.6.5": ((50 * MIB, 350 * MIB), (512 * MIB, 952 * MIB)),
    "vllm-v0.7+": ((50 * MIB, 350 * MIB), (512 * MIB, 952 * MIB)),
    "sglang": ((300 * MIB, 600 * MIB), (300 * MIB + int(1.77 * GIB), 600 * MIB + int(2.01 * GIB))),
}
"""Per profile, the memory outside the weights and PyTorch's profile peak that the engine
takes out of its pool, ``(low, high)`` on one GPU and on a TP replica of several, bytes:

* ``vllm-v0-torch-peak`` (vLLM before PR 2031, 2023-12): the profile's peak was
  ``torch.cuda.max_memory_allocated()``, nothing outside PyTorch counted (PR 2031's
  description: "some memory (probably related to NCCL?) is allocated/freed not through the
  PyTorch memory allocator");
* ``vllm-v0-free-memory`` (PR 2031 to v0.6.4, ``peak_memory = total_gpu_memory -
  free_gpu_memory`` after the profile; PR 9352, v0.6.4, the same with the torch peak added):
  the CUDA context (rlmcost/deployment/overhead.py ``CUDA_CONTEXT_BYTES``' stated 300-600
  MiB) and, on several GPUs, the communicators (``COMMUNICATOR_BYTES``, 512 MiB) besides;
* ``vllm-v0.6.5`` (PR 10511 of 2024-12 to PR 11809 of 2025-01, V0): ``memory_profiling``
  with a baseline taken after the CUDA context, the ``vllm-v0.7+`` range; this version also
  counted as non-torch the caching allocator's reserved but unallocated bytes (PR 11809's
  description: ``allocated_bytes.all.current`` "does not include the memory allocated from
  ``cudaMalloc`` but cannot be released"), which rlmcost does not price. Its profile peak is
  V0's sampler with top-k/top-p (:func:`~rlmcost.deployment.vllm_profile.
  v0_profile_peak_bytes`) where the RL evaluation prices V1's: the pool moves by the
  difference (:func:`v0_pool_bytes`);
* ``vllm-v0.7+`` (PR 12126 of 2025-01, ``memory_profiling``'s ``non_torch_increase`` from a
  baseline taken after the CUDA context; V1's ``determine_available_memory``): 0.05-0.35 GiB
  on one GPU (rlmcost/deployment/vllm_profile.py: PR 12126's 0.16 GiB on H100), 512 MiB to
  0.93 GiB on a TP replica (the DeepSeek-V2.5 Ray log there);
* ``sglang``: what the device holds before the weights load, the CUDA context and, on several
  GPUs, what SGLang's ``init_torch_distributed`` takes (:data:`~rlmcost.deployment.
  sglang_pool.SGLANG_DIST_INIT_RANGE`, PR 11716's eight ranks); the pool moves by
  ``mem_fraction_static`` x the difference (:mod:`rlmcost.deployment.sglang_pool`).
"""


def check_engine_row(row: dict[str, Any]) -> None:
    """A SpecError naming what an ``engine`` row lacks (its command, profile, published
    figure in the unit its ``measured`` names)."""
    rid = row["id"]
    if row["measured"] not in ("kv_gib", "kv_tokens"):
        raise SpecError(f"memory row {rid}: an engine row measures 'kv_gib' or 'kv_tokens'")
    need = "published_tokens" if row["measured"] == "kv_tokens" else "published_gib"
    if not float(row.get(need) or 0) > 0:
        raise SpecError(f"memory row {rid}: a {row['measured']} row needs a positive {need!r}")
    if row.get("not_predicted"):
        return
    if row.get("profile") not in PROFILES:
        raise SpecError(f"memory row {rid}: profile {row.get('profile')!r} is not one of "
                        f"{PROFILES}")  # fmt: skip
    if not row.get("command"):
        raise SpecError(f"memory row {rid}: an engine row needs 'command' (or a "
                        "'not_predicted' reason)")  # fmt: skip
    if row["profile"] == "sglang":
        _sglang_fraction(row)
    if row["profile"] == "vllm-v0.6.5" and not all(f"{k}=" in row["command"] for k in _V0_KEYS):
        raise SpecError(f"memory row {rid}: a vllm-v0.6.5 row's command gives "
                        f"{' and '.join(_V0_KEYS)}")  # fmt: skip


def engine_job(row: dict[str, Any], build: Build) -> tuple[Any, Any, Any]:
    """``(estimate, group, job)``: the row's RL query evaluated, its ``rollout`` group and that
    group's generation job."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.evaluation.query import evaluate

    words = shlex.split(row["command"])
    if len(words) < 3 or words[0] != "rlmcost":
        raise SpecError(f"memory row {row['id']}: command must start 'rlmcost ALGORITHM'")
    estimate = evaluate(build(words[1], words[2:]))
    if estimate.evaluation is None:
        raise SpecError("the query has no deployed evaluation (an ideal run has no engine)")
    for g in estimate.evaluation.groups:
        if g.name != "rollout":
            continue
        if g.problems:
            raise SpecError("; ".join(g.problems))
        for j in g.jobs:
            if j.task.kind is Kind.GENERATE:
                return estimate, g, j
    raise SpecError("the query has no generation job on a group named 'rollout'")


def kv_bytes_per_token(estimate: Any, job: Any, tokens: int) -> int:
    """One sequence's KV bytes per device at ``tokens`` in the job's layout, as the
    evaluation sizes it (``memory_per_rank`` of the generation layout at PP 1, keys and values
    in the engine's KV-cache dtype, ``EngineSpec.kv_cache_dtype``)."""
    from rlmcost.algorithms.kinds import Role
    from rlmcost.compiled.memory import memory_per_rank
    from rlmcost.deployment.group_engine import group_engine
    from rlmcost.parallel.breakdown import Mode

    arch = estimate.evaluation.specs[Role.ACTOR].arch()
    layout = job.layout.one_stage()
    wl = estimate.workload
    kv = group_engine(estimate.run.deployment, job.task.group).kv_cache_dtype
    if kv is not None and kv != wl.kv_dtype:
        wl = wl.model_copy(update={"kv_dtype": kv, "conv_dtype": wl.kv_dtype})
    return int(memory_per_rank(arch, layout, Mode.GENERATE, layout.dp, tokens, wl).kv_cache)


def v0_pool_bytes(row: dict[str, Any], estimate: Any, pool: int, m: Any) -> int:
    """The pool of a V0 engine: ``pool`` (the RL evaluation's, V1's profile peak
    ``m.activations + m.logits`` taken out of it) with V0's profile peak taken out instead
    (:func:`~rlmcost.deployment.vllm_profile.v0_profile_peak_bytes`: the same forward, V0's
    sampler over the command's ``max-num-seqs`` rows beside ``max-num-batched-tokens``
    hidden states)."""
    from rlmcost.algorithms.kinds import Role
    from rlmcost.deployment.vllm_profile import v0_profile_peak_bytes

    rows, tokens = (re.search(rf"{k}=(\d+)", row["command"]) for k in _V0_KEYS)
    if rows is None or tokens is None:
        raise SpecError(f"memory row {row['id']}: a V0 row's command gives "
                        f"{' and '.join(_V0_KEYS)}")  # fmt: skip
    arch = estimate.evaluation.specs[Role.ACTOR].arch()
    act = estimate.workload.activation_dtype.bytes
    peak = v0_profile_peak_bytes(int(m.activations), int(rows[1]), int(arch.vocab),
                                 int(tokens[1]), int(arch.d_model), act)  # fmt: skip
    return pool + int(m.activations + m.logits) - peak


_V0_KEYS = ("max-num-seqs", "max-num-batched-tokens")


def _sglang_fraction(row: dict[str, Any]) -> float:
    """The ``mem_fraction_static`` an ``sglang`` row's command gives its engine (``gmu=``)."""
    found = re.search(r"gmu=([0-9.]+)", row["command"])
    if found is None:
        raise SpecError(f"memory row {row['id']}: an sglang row's command gives gmu= "
                        "(the logged --mem-fraction-static)")  # fmt: skip
    return float(found[1])


def predict_engine(row: dict[str, Any], build: Build) -> dict[str, Any]:
    """An ``engine`` row's prediction (module docstring), as the fields of its
    :class:`~rlmcost.perf.validate_memory.MemoryRow`: ``status``, the pool bytes
    (``allocated_bytes`` = ``predicted_bytes``), their ``interval_bytes`` and, for a
    ``kv_tokens`` row, ``predicted_tokens`` and ``interval_tokens``."""
    from rlmcost.deployment.overhead import CUDA_CONTEXT_BYTES
    from rlmcost.deployment.terms import pool_tokens
    from rlmcost.deployment.vllm_profile import non_torch_bytes

    if row.get("not_predicted"):
        return {"status": f"not predicted: {row['not_predicted']}"}
    try:
        estimate, _g, job = engine_job(row, build)
    except SpecError as exc:
        return {"status": f"not predicted: {exc}"}
    m, layout = job.memory, job.layout
    pool = int(m.kv_cache)
    if row["profile"] == "vllm-v0.6.5":
        pool = v0_pool_bytes(row, estimate, pool, m)
    gpus = layout.tp * layout.pp
    one, many = NON_TORCH_RANGE[row["profile"]]
    low_extra, high_extra = one if gpus == 1 else many
    scale = 1.0
    if row["profile"] == "sglang":  # mem_fraction_static x (context + process group set-up)
        from rlmcost.deployment.sglang_pool import dist_init_bytes

        scale = _sglang_fraction(row)
        point = CUDA_CONTEXT_BYTES + dist_init_bytes(gpus)
    else:
        point = non_torch_bytes(gpus)
    pools = (pool + int(scale * (point - high_extra)), pool + int(scale * (point - low_extra)))
    interval = (min(pools[0], pool), max(pools[1], pool))
    out = {"status": "ok", "allocated_bytes": pool, "predicted_bytes": pool,
           "interval_bytes": interval}
    if row["measured"] == "kv_gib":
        return out
    seq = 4096
    kv = kv_bytes_per_token(estimate, job, seq)
    block = 1 if row["profile"] == "sglang" else VLLM_BLOCK_TOKENS
    tokens = [pool_tokens(p, kv, seq, block) * layout.cp for p in (pools[0], pool, pools[1])]
    return {**out, "predicted_tokens": tokens[1], "interval_tokens": (min(tokens), max(tokens))}
