"""Seconds a Ray single controller spends passing one step's batch through its driver when the
framework pads every sequence to the configured maximum lengths (verl's ``DataProto``).

verl's trainer (``verl/trainer/ppo/ray_trainer.py`` ``fit``, at commit b25bb7d4f of
volcengine/verl, the fully-async doc's code) keeps the step's batch on the driver and hands it
to the worker groups call by call:

* generation returns the batch padded to the *configured* lengths, not the longest response:
  ``verl/experimental/agent_loop/agent_loop.py`` ``_postprocess`` pads prompts to
  ``rollout.prompt_length`` and responses to ``rollout.response_length``
  (``padding="max_length"``) and returns ``prompts`` [N, S], ``responses`` and
  ``response_mask`` [N, T], ``input_ids``, ``attention_mask``, ``position_ids`` [N, S + T],
  all int64 (the tokenizer's and ``torch.arange``'s dtype);
* every later call (``compute_log_prob``, ``compute_ref_log_prob``, ``compute_values``,
  ``update_actor``, ``update_critic``) sends the whole batch: the dispatch
  (``verl/single_controller/base/decorator.py`` ``dispatch_nd_compute_dataproto``) chunks it
  by data rank and ``ray.put``\\ s each chunk, which pickles it through
  ``DataProto.__getstate__`` (``verl/protocol.py``: ``consolidate()`` then ``torch.save`` into a
  ``BytesIO``, the default unless ``VERL_DATAPROTO_SERIALIZATION_METHOD=numpy``); the results
  come back the same way and are concatenated on the driver;
* the forwards add fp32 [N, T] tensors to the batch (``old_log_probs`` and ``entropys`` from
  the actor, ``ref_log_prob``, ``values``) and the driver's ``compute_advantage`` adds four
  (``token_level_scores``, ``token_level_rewards``, ``advantages``, ``returns``), all of
  which the training calls carry.

* the driver fetches every rank's result, not only the ones it keeps: the worker group's call
  (``verl/single_controller/ray/base.py`` ``func_generator``) runs ``ray.get`` on all
  ``world_size`` outputs before ``collect_fn``
  (``verl/single_controller/base/decorator.py`` ``collect_nd_compute``) picks one rank per data
  shard, and every rank of a shard returns the whole shard's fp32 tensors
  (``verl/workers/fsdp_workers.py`` ``compute_log_prob``: each Ulysses rank holds the gathered
  log-probs, ``gather_outputs_and_unpad``; only ``is_collect`` marks sequence-parallel rank 0).
  A forward's results come back ``replicas`` = ranks per data shard times (Ulysses or context,
  tensor and pipeline ranks: the layout's GPUs over its data-parallel degree).

verl times each call with its dispatch and collect (``marked_timer("old_log_prob")`` and the
others wrap the worker-group call in ``ray_trainer.py`` ``fit``), so a call's bytes belong to
its phase (:func:`padded_call_bytes`); generation's come back before the batch exists on the
driver, the residual (rewards, advantages) stays in the controller term.

verl's fully-async trainer (``verl/experimental/fully_async_policy``, launched by
``fully_async_main.py``) has no shared driver: the rollouter process pickles each finished
prompt group (``fully_async_rollouter.py`` ``_process_single_sample_streaming``:
``ray.cloudpickle.dumps`` of its ``RolloutSample``, padded to the configured lengths by the
agent loop's postprocess, ``agent_loop/agent_loop.py``) into a Ray actor queue
(``message_queue.py``: FIFO, ``put_sample`` drops the oldest only when full), and the trainer
process fetches and unpickles them one by one, then concatenates the batch
(``fully_async_trainer.py`` ``_get_samples_from_queue``, ``detach_utils.py``
``assemble_batch_from_rollout_samples``) before it calls its workers: the generated batch
crosses the network from the rollout nodes and is deserialized again on the trainer's side
(about 9.5 GB per 512 x 16 sequences at S = 200, T = 28,672). Not modelled: a group's estimate
is shared by the synchronous and the overlapped loop (``placement.group_key`` has no
staleness), and verl's synchronous trainer on separate pools receives the batch once, in its
single driver (the controller term).

The driver does this serially (one process), so its seconds are the bytes it (de)serializes
over :data:`DATAPROTO_SERDE_BYTES_PER_S`; the chunks of the other nodes' workers also cross the
driver node's network (``RAY_CROSS_NODE_BYTES_PER_S``). At a long cap and a short mean response
(28K cap, ~1K mean) the padded batch is ~20x the tokens generated, and the time does not shrink
with more GPUs. Bytes are exact integers (int64 token tensors, fp32 per-token tensors).
"""

from __future__ import annotations

from collections.abc import Sequence

from rlmcost.frozen import dataclass
from rlmcost.perf.rl_constants import RAY_CROSS_NODE_BYTES_PER_S, Constant

INT64_BYTES = 8
FP32_BYTES = 4

DATAPROTO_SERDE_BYTES_PER_S = Constant(2.0e9, 0.41e9, 2.9e9, "verl PR 3425")
"""Bytes per second the driver (de)serializes a padded ``DataProto`` with ``torch.save``.

verl-project/verl PR 3425 (2025-09-09, commit ac2f790f5): a batch of 6400 x 20480 (sequences x
prompt + response tokens) took 2.58 s to serialize on the driver (TaskRunner; four concurrent
chunk puts, ~2.58 s each) and 0.74 s to deserialize per worker with the default torch path. The
PR does not list the tensors. value: read as a ``compute_log_prob`` batch (prompts [6400, 2048],
responses and response_mask [6400, 18432], input_ids, attention_mask, position_ids
[6400, 20480], int64: 5.14 GB / 2.58 s = 2.0 GB/s; the workers' deserialization, a quarter of
it in 0.74 s, gives 1.7 GB/s). low: one int64 [6400, 20480] tensor, 1.05 GB / 2.58 s. high: an
``update_actor`` batch (five more fp32 [6400, 18432] tensors, 7.5 GB / 2.58 s).
"""


RESULT_CONCAT_PER_STATE = Constant(0.23, 0.14, 0.31, "benchmarks/bench_verl_driver_data.py")
"""Seconds the driver's ``DataProto.concat`` of a forward's collected fp32 outputs takes per
second of ``DataProto.__getstate__`` of the same tensors (what :data:`DATAPROTO_SERDE_BYTES_PER_S`
times), single-threaded.

verl's worker-group call (``verl/single_controller/base/decorator.py``
``collect_nd_compute_dataproto`` at volcengine/verl b25bb7d4f) concatenates the data shards'
results with ``torch.cat`` per key (``verl/protocol.py`` ``DataProto.concat``) inside the
call's ``marked_timer``. The driver is Ray's ``TaskRunner`` actor, ``@ray.remote(num_cpus=1)``
(``verl/trainer/main_ppo.py``), and Ray sets ``OMP_NUM_THREADS`` to an actor's ``num_cpus``
(docs.ray.io, ray-core/scheduling/resources.html), verl's runtime env not overriding it
(``verl/trainer/constants_ppo.py``): torch runs one thread. Measured 2026-12-05 with
benchmarks/bench_verl_driver_data.py (``driver_work``, N = 1024 and 2048, T = 28,672,
``torch.set_num_threads(1)``, torch 2.13 CPU, a 2-core Xeon sandbox), three runs each: 0.14 to
0.31 (low, high), median 0.23 (value). Taken as a ratio to the serialization so the host's
memory speed cancels against PR 3425's server-measured rate (an assumption: both are memory-
bound passes over the same bytes)."""

ENTROPY_MEAN_PER_STATE = Constant(1.24, 0.83, 1.39, "benchmarks/bench_verl_driver_data.py")
"""Seconds of the driver's ``agg_loss`` of the actor's entropies per second of
``DataProto.__getstate__`` of the entropy tensor alone, single-threaded (as
:data:`RESULT_CONCAT_PER_STATE`).

``ray_trainer.py`` ``fit`` (volcengine/verl b25bb7d4f), inside ``marked_timer("old_log_prob")``
after the call: ``agg_loss(loss_mat=entropys, loss_mask=response_mask, loss_agg_mode)``, the
``actor/entropy`` metric; DAPO's and verl's default ``token-mean`` is ``verl_F.masked_mean``
(``verl/utils/torch_functional.py``: ``torch.where(mask.bool(), values, 0.0) * mask``, summed,
over ``mask.sum()``) over the padded [N, T] fp32 entropies and the int64 mask: five passes.
Same benchmark and runs: 0.83 to 1.39, median 1.24."""


@dataclass(frozen=True)
class CallBytes:
    """Bytes the driver (de)serializes per worker call of one step (module docstring):
    ``generate`` (the prompts out, the padded batch back), one entry per forward (the batch out
    with the fp32 tensors added so far, its own tensors back ``replicas`` times) and per
    training call (the batch with every fp32 tensor of the step)."""

    generate: int
    forwards: tuple[int, ...]
    trains: tuple[int, ...]

    @property
    def total(self) -> int:
        return self.generate + sum(self.forwards) + sum(self.trains)


def padded_call_bytes(sequences: int, prompt_len: int, response_len: int,
                      forward_outputs: Sequence[int], trains: int,
                      generated: int | None = None,
                      replicas: Sequence[int] = ()) -> CallBytes:  # fmt: skip
    """Per-call bytes of one step (module docstring): the generated batch coming back, each
    forward's batch going out and its ``forward_outputs[i]`` fp32 [N, T] tensors coming back
    ``replicas[i]`` times (default 1), each of ``trains`` training calls' batch going out with
    every fp32 tensor the step added. ``sequences`` = N, ``prompt_len`` = S and
    ``response_len`` = T are the padded shapes (the configured maxima); ``generated``: the
    sequences generated when more than N (DAPO's dynamic sampling, whose rounds all come back
    to the driver).

    >>> padded_call_bytes(1, 2, 3, [2], 1, replicas=[4])  # 48 + 184; 184 + 4 x 24; 184 + 72
    CallBytes(generate=232, forwards=(280,), trains=(256,))
    """
    s, t = prompt_len, response_len
    base = INT64_BYTES * (s + 2 * t + 3 * (s + t))  # prompts, responses + mask, ids/mask/pos
    n = sequences
    rollout = (INT64_BYTES * 3 * s + base) * max(n, generated or 0)  # prompts out, back
    forwards = []
    added = 0  # fp32 [N, T] tensors the forwards put in the batch so far
    for i, outputs in enumerate(forward_outputs):
        copies = replicas[i] if i < len(replicas) else 1
        forwards.append(n * (base + added * FP32_BYTES * t + copies * outputs * FP32_BYTES * t))
        added += outputs
    added += 4  # compute_advantage: token_level_scores, token_level_rewards, advantages, returns
    train = n * (base + added * FP32_BYTES * t)
    return CallBytes(rollout, tuple(forwards), (train,) * trains)


def padded_batch_bytes(sequences: int, prompt_len: int, response_len: int,
                       forward_outputs: Sequence[int], trains: int,
                       generated: int | None = None,
                       replicas: Sequence[int] = ()) -> int:  # fmt: skip
    """Bytes the driver (de)serializes in one step: the sum of :func:`padded_call_bytes`.

    >>> padded_batch_bytes(1, 2, 3, [2], 1)  # S=2, T=3: 48 + 184, 184 + 24, 184 + 72
    696
    """
    return padded_call_bytes(sequences, prompt_len, response_len, forward_outputs, trains,
                             generated, replicas).total  # fmt: skip


def controller_data_s(nbytes: int, cross_node_fraction: float, end: str = "value") -> float:
    """Seconds of ``nbytes`` through the driver: (de)serialization, plus the share that crosses
    the driver node's network (``cross_node_fraction``: workers on other nodes). ``end``:
    ``"low"``, ``"value"`` or ``"high"`` time, from the constants' spreads.

    >>> round(controller_data_s(2 * 10**9, 0.0), 2)
    1.0
    """
    if nbytes <= 0:
        return 0.0
    flip = {"low": "high", "high": "low"}.get(end, end)  # the low time takes the high rate
    serde = nbytes / DATAPROTO_SERDE_BYTES_PER_S.at(flip)
    return serde + nbytes * cross_node_fraction / RAY_CROSS_NODE_BYTES_PER_S.at(flip)


def driver_results_s(sequences: int, response_len: int, outputs: int, entropy: bool,
                     end: str = "value") -> float:  # fmt: skip
    """Seconds verl's driver works on one forward's results inside the call's timer, beside
    their (de)serialization (:func:`controller_data_s`): ``DataProto.concat`` of the
    ``outputs`` fp32 [N, T] tensors (:data:`RESULT_CONCAT_PER_STATE`) and, for the actor's
    forward (``entropy``: ``compute_log_prob`` returns the entropies, ``calculate_entropy=True``
    in ``fsdp_workers.py`` and ``megatron_workers.py``), ``agg_loss`` of them
    (:data:`ENTROPY_MEAN_PER_STATE`); each a ratio to the serialization of those tensors at
    :data:`DATAPROTO_SERDE_BYTES_PER_S`. N = ``sequences``, T = ``response_len`` (the padded
    cap). It grows with the global batch, not per GPU: one process. ``end``: as
    :func:`controller_data_s`.

    >>> round(driver_results_s(1000, 250_000, 2, True), 3)  # 1 GB each: 1.70 x 1 GB / 2 GB/s
    0.85
    """
    tensor_bytes = sequences * response_len * FP32_BYTES
    work = outputs * RESULT_CONCAT_PER_STATE.at(end)
    if entropy:
        work += ENTROPY_MEAN_PER_STATE.at(end)
    flip = {"low": "high", "high": "low"}.get(end, end)  # the low time takes the high rate
    return work * tensor_bytes / DATAPROTO_SERDE_BYTES_PER_S.at(flip)
