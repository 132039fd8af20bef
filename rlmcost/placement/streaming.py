"""Streaming rollout (partial rollouts): the steady state of engines that never drain a batch.

A batch decoded on its own ends with its longest sample: in the last steps few sequences are
in flight and the replica's compute and bandwidth go mostly unused (the long tail, seed paper
§IV-C; :mod:`rlmcost.placement.rollout`). Asynchronous systems with partial rollouts never
drain: a finished sample's slot is refilled at once from the next batch, and at a weight update
the samples in flight stop and later resume under the new weights.

* AReaL (Fu et al. 2025, arXiv:2505.24298, §4.1 "interruptible rollout worker": on new
  parameters the engines discard the KV caches computed with the old weights, recompute them
  and continue decoding; inclusionAI/AReaL at 4aef98d: areal/infra/workflow_executor.py and
  staleness_manager.py submit rollouts continuously up to ``max_concurrent_rollouts``,
  areal/engine/sglang_remote.py pauses and continues SGLang (``/pause_generation``,
  ``/continue_generation``) around the weight update);
* verl's fully-async trainer with ``async_training.partial_rollout=True`` (volcengine/verl at
  b178a3c: verl/experimental/fully_async_policy/fully_async_rollouter.py pauses and resumes its
  servers at a parameter sync; agent_loop/partial_single_turn_agent_loop.py resubmits a
  cancelled sample as ``prompt_ids + response_ids``, so the engine prefills it again;
  docs/advance/fully_async.md mode (d), "async stream pipeline with partial rollout");
* slime (THUDM/slime at 624b824): slime/rollout/fully_async_rollout.py keeps a fixed pool of
  generations in flight across rollout boundaries (examples/fully_async/README.md), and
  ``--partial-rollout`` (slime/utils/arguments.py) recycles the samples aborted at a rollout's
  end into the data buffer to continue later (slime/rollout/sglang_rollout.py).

* NeMo RL's async GRPO with ``in_flight_weight_updates`` (NVIDIA-NeMo/RL v0.5.0
  nemo_rl/algorithms/async_utils.py ``AsyncTrajectoryCollector``: ``prepare_for_refit`` does
  not wait for the generations in flight, which continue under the new weights, and new prompt
  groups start as old ones finish, up to ``num_prompts_per_step x max_trajectory_age_steps``
  of them, the ``_inflight_sema``, admitted a whole prompt group at a time; its
  ``recompute_kv_cache_after_weight_updates`` false by default keeps the old KV caches, so no
  re-prefill there: :mod:`rlmcost.placement.group_gate`; a batch's groups start only at the
  weight version its step allows: :mod:`rlmcost.placement.version_gate`, applied in the
  iteration's schedule, where the trainer's time is known).

Without partial rollouts (verl's one-step-off policy, fully-async mode (c), NeMo RL's async
GRPO without in-flight weight updates) each batch still waits for its longest sample: the plain
timeline of :mod:`rlmcost.placement.rollout`.

How many batches the engines hold at once is the deployment's ``rollout_in_flight`` (``d``,
``--in-flight-batches``): one by default (the drained batch's slots), NeMo RL's
``max_trajectory_age_steps`` (its semaphore); a replica's slots are then at most ``d`` shares,
within its KV cache, each sequence held at its full length (the paged admission and preemption
of :mod:`rlmcost.placement.paged` are not applied to a stream).

Per iteration one replica then spends (:func:`stream`):

* decode and admission prefills: the marginal time of one more batch in an endless stream,
  (T(d + m - 1) - T(d)) / (m - 1) with T(n) the rollout timeline of ``n`` batches back to back
  under the same in-flight limit (``d`` batches' slots) and ``m`` = :data:`STREAM_BATCHES`:
  the ramp at the start and the tail at the end occur once in both and cancel, what is left
  is one batch at the stream's occupancy;
* re-prefill at the weight update: every in-flight sequence recomputes its KV cache at its
  context so far. A slot holds a sequence of length L for L steps at contexts prompt + 1 ..
  prompt + L, so the in-flight context averaged over the stream is
  c = prompt + sum_i L_i (L_i + 1) / 2 / sum_i L_i (exact integer division, rounded down);
  ``slots`` prefills of c tokens, roofline-bounded (FLOPs ``blocks.work_prefill``, weights read
  once and the KV cache written once) and predicted by the engine's chunked prefill.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting
from rlmcost.compiled.blocks import work_prefill
from rlmcost.frozen import dataclass
from rlmcost.placement.group_gate import StreamRules
from rlmcost.placement.rollout import DecodeCost, timeline
from rlmcost.placement.version_gate import GateStream
from rlmcost.timing import PREFILL, PhaseTime

if TYPE_CHECKING:
    from rlmcost.perf.generation import Engine
    from rlmcost.timing import Roofline

STREAM_BATCHES = 4
"""Batches back to back in the stream whose marginal batch is the steady state: a resolution
of the simulation, not a fitted constant (the ramp and the tail cancel for any m >= 2; a
larger m averages the admission shuffle over more batches)."""


@dataclass(frozen=True)
class Stream:
    """One replica's generation per iteration in the streaming steady state."""

    time: PhaseTime  # roofline bound: decode + admission prefills + re-prefill
    predicted_s: float  # predicted: the same three, each never below its bound
    decode_s: float  # predicted decode steps of one batch in the stream
    prefill_s: float  # predicted admission prefills of one batch
    reprefill_s: float  # predicted KV recomputation of the in-flight samples at the update
    in_flight: int  # sequences in flight (the slots of one batch)
    context: int  # their mean context at the interruption (prompt + tokens so far)
    version_gate: GateStream | None = None  # the stream behind NeMo RL's version gate


def mean_context(prompt: int, lengths: tuple[int, ...]) -> int:
    """The stream's in-flight context averaged over slot-steps (module docstring).

    >>> mean_context(10, (1, 3))  # (1 + 6) / 4 generated positions on average
    11
    """
    total = sum(lengths)
    return prompt + sum(n * (n + 1) // 2 for n in lengths) // total


def stream(
    arch: Arch,
    prompt: int,
    lengths: tuple[int, ...],
    slots: int,
    cost: DecodeCost,
    roofline: Roofline,
    engine: Engine | None,
    counting: AttnCounting,
    depth: int = 1,
    rules: StreamRules = StreamRules(),  # noqa: B008 - frozen
) -> Stream:
    """One replica's share ``lengths`` in the streaming steady state (module docstring);
    ``slots``: its in-flight limit (at most ``depth`` shares: the batches the framework lets
    into flight at once, :func:`in_flight_batches`); ``rules``: the framework's own (a
    prompt-group gate, no re-prefill: :mod:`rlmcost.placement.group_gate`)."""
    gate = rules.gate
    active = max(1, min(slots, depth * len(lengths)))
    m = STREAM_BATCHES
    share = rules.share  # a group's prompt prefilled once (prefix_share)
    one = timeline(arch, prompt, lengths * depth, active, cost, roofline, engine, gate=gate,
                   paged=share)  # fmt: skip
    many = timeline(arch, prompt, lengths * (depth + m - 1), active, cost, roofline, engine,
                    gate=gate, paged=share)  # fmt: skip
    k = 1.0 / (m - 1)
    decode = PhaseTime(
        (many.time.compute_s - one.time.compute_s) * k,
        (many.time.memory_s - one.time.memory_s) * k,
        (many.time.bound_s - one.time.bound_s) * k,
        (many.time.compute_bound_s - one.time.compute_bound_s) * k,
    )
    pred_decode = (many.predicted_decode_s - one.predicted_decode_s) * k
    pred_prefill = (many.predicted_prefill_s - one.predicted_prefill_s) * k
    ctx = mean_context(prompt, lengths)
    flops = float(int(work_prefill(arch, ctx, active, counting)))
    written = cost.weight_bytes + cost.kv_bytes_per_token * ctx * active
    (c,), (mem,) = roofline.seconds([flops], [written], PREFILL)
    bound = max(c, mem, cost.gather_s)
    again = PhaseTime(c, mem, bound, bound if c >= bound else 0.0)
    pred_again = bound if engine is None else max(engine.prefill_s(active * ctx, ctx), bound)
    if not rules.reprefill:  # the framework keeps the stale KV caches
        again, pred_again = PhaseTime(0.0, 0.0, 0.0, 0.0), 0.0
    time = decode + again
    predicted = max(pred_decode + pred_prefill, decode.bound_s) + pred_again
    vg = (GateStream(arch, prompt, lengths, active, cost, roofline, engine, gate, depth, share)
          if rules.version_gate else None)  # fmt: skip
    return Stream(time, predicted, pred_decode, pred_prefill, pred_again, active, ctx, vg)
