"""The hand-offs of AReaL v0.3's synchronous loop that its asynchronous loop overlaps: seconds
per training step between the trainer's weight save and its next batch that no GPU computes.

Synchronous AReaL (arXiv 2505.24298 Table 1 "Sync. AReaL", blog/AReaL_v0_3.md Table 2) is the
asynchronous system at maximum staleness 0 (§4.1: "when eta = 0, our system degenerates to
synchronous RL"). At inclusionAI/AReaL 23df2682a (the v0.3 release) one training step runs:

1. the trainer saves the parameters and publishes the version (``realhf/system/model_worker.py``
   ``param-sync-save``, ``name_resolve.add(model_version)``; priced by the disk refit,
   :mod:`rlmcost.perf.disk_refit`);
2. the generation-server manager finds the new version in its poll loop and has every SGLang
   server load it (``realhf/system/gserver_manager.py`` ``_poll_async``:
   ``check_new_params``, then ``flush_requests_and_update_weights`` on every server, then
   ``time.sleep(5)``): the load starts :data:`GSERVER_POLL_S` x U(0, 1) after the publish,
   2.5 s on average. ``allocate_rollout`` holds the same lock and refuses every new prompt
   while ``(trained + running) // batch > version`` (``is_staled`` at
   ``max_head_offpolicyness`` 0), so no prompt of the next batch starts before the load ends;
3. each rollout worker allocates at most one prompt per poll (``realhf/system/rollout_worker.py``
   ``_poll_async``: ``load_next_data`` then one ``allocate_new_rollout``), and a poll in which
   nothing finishes lasts :data:`ROLLOUT_POLL_S` (``poll_queue_dispatch_task``: 20 x
   ``asyncio.sleep(0.02)`` on an empty reply queue, beside ``poll_rollout_task``'s
   ``ROLLOUT_POLL_WAIT_TIME = 0.4``). The workers split the dataset
   (``make_dataset(..., worker_index, worker_count)``) and there are as many as the trainer
   has GPUs (``realhf/experiments/async_exp/async_rl_exp.py``: ``n_rollout_workers or
   train_world_size``; the benchmark's ``areal_config.yaml`` at 820ca49 sets none), so the
   batch's last prompts start (ceil(B / W) - 1) x 0.4 s after its first. Taken whole: with
   a few per cent of the answers at the length cap, one of the last-submitted groups almost
   surely holds one, so the batch ends about that much later (:func:`submission_ramp_s`);
4. generation, then the rule-based reward on the rollout worker's CPU (not priced: seconds
   for a group, overlapped with the other groups' generation but for the last one);
5. the master worker's data loop takes each finished group into the trainer's buffer, or
   sleeps :data:`MASTER_LOAD_POLL_S` when none arrived (``realhf/system/function_executor.py``
   ``load_data``: ``await asyncio.sleep(1)``): the last group waits 0.5 s on average;
6. training on the full batch.

The asynchronous loop (staleness >= 1, interruptible generation) runs 2-5 beside the trainer,
so only the synchronous loop pays them. Not modelled: the HTTP round trips of each request
through the manager (``schedule_request``, milliseconds), the shared storage's contention
when every server loads at once (:mod:`rlmcost.perf.disk_refit`).

What these leave unexplained (``rlmcost validate --rl``): the 1.5B synchronous run's 590 s step
is predicted at about 300 s. arXiv 2505.24298 Fig. 5c gives the same runs' effective
throughput against the staleness bound (128.7k, 269.3k, 356.6k, 356.6k, 371.7k, 382.4k,
396.8k tokens/s at 0, 1, 2, 4, 8, 16, unbounded; 76.0M tokens per step): unbounded, a step
takes 191.5 s, which bounds the trainer's step with its recomputing forward (predicted 186 s),
so the gap is not the trainer's. What is left is generation's tail: about 430 s for the
busiest server to finish its 96 samples, ~15 ms per decode step over the 27,648 steps of a
capped answer, where the kernel model prices 3-10 ms (1.5B on SGLang at 1-96 sequences in
flight) and AReaL's SGLang settings (v0.4.6.post4: CUDA graphs and the overlap scheduler on,
FlashInfer, ``decode_log_interval`` 1) show no per-step cost of that size. Candidates without
a source to price them: SGLang's per-step time at few sequences and long contexts, the
recover checkpoints (``ckpt_freq_secs: 600`` in training/configs/*.yaml; a 590 s step pays
about one, a 213 s step a third), the storage's contention in the reload.
"""

from __future__ import annotations

from rlmcost.errors import SpecError

GSERVER_POLL_S = 5.0
"""Seconds between two polls of AReaL's generation-server manager for new weights
(``realhf/system/gserver_manager.py`` ``_poll_async`` ends with ``time.sleep(5)`` at
inclusionAI/AReaL 23df2682a): a new version waits U(0, 5) s before the servers load it."""

ROLLOUT_POLL_S = 0.4
"""Seconds of one rollout-worker poll in which no rollout finishes, each allocating at most one
new prompt (``realhf/system/rollout_worker.py`` at 23df2682a: ``ROLLOUT_POLL_WAIT_TIME = 0.4``,
"Should be equal to the poll time of partial rollout"; ``poll_queue_dispatch_task`` sleeps
20 x 0.02 s on an empty queue)."""

MASTER_LOAD_POLL_S = 1.0
"""Seconds the master worker's data loop sleeps when no trajectory arrived
(``realhf/system/function_executor.py`` ``load_data`` at 23df2682a: ``await asyncio.sleep(1)``):
the batch's last group reaches the trainer's buffer U(0, 1) s after it is pushed."""


def submission_ramp_s(prompts: int, rollout_workers: int) -> float:
    """Seconds from the first to the last prompt of a batch of ``prompts`` submitted by
    ``rollout_workers`` workers, one per poll each (module docstring, step 3).

    >>> submission_ramp_s(512, 32)  # AReaL 1.5B on 128 GPUs: 32 training GPUs
    6.0
    >>> round(submission_ramp_s(512, 48), 6)  # 7B on 192 GPUs: ceil(512 / 48) = 11 prompts
    4.0
    """
    if prompts < 1 or rollout_workers < 1:
        raise SpecError(f"AReaL's submission ramp needs prompts and rollout workers (got "
                        f"{prompts} prompts, {rollout_workers} workers)")  # fmt: skip
    return (-(-prompts // rollout_workers) - 1) * ROLLOUT_POLL_S


def sync_handoff_s(prompts: int, rollout_workers: int, end: str = "value") -> float:
    """Seconds per step of synchronous AReaL's hand-offs (module docstring, steps 2, 3 and 5):
    the manager's poll wait, the submission ramp and the master's load poll wait; ``end``:
    ``"low"`` (no poll wait), ``"value"`` (half of each poll, the mean) or ``"high"`` (a whole
    poll each).

    >>> sync_handoff_s(512, 32)
    9.0
    >>> sync_handoff_s(512, 32, "low"), sync_handoff_s(512, 32, "high")
    (6.0, 12.0)
    """
    share = {"low": 0.0, "value": 0.5, "high": 1.0}.get(end)
    if share is None:
        raise SpecError(f"end {end!r}: give low, value or high")
    waits = share * (GSERVER_POLL_S + MASTER_LOAD_POLL_S)
    return waits + submission_ramp_s(prompts, rollout_workers)


HANDOFF_NOTE = (
    f"--refit disk without --partial-rollout (AReaL's synchronous loop): the weight sync also "
    f"carries the hand-offs its asynchronous loop overlaps: the generation-server manager's "
    f"{GSERVER_POLL_S:g} s weight-version poll (half on average), the next batch's prompts "
    f"submitted one per {ROLLOUT_POLL_S:g} s poll by as many rollout workers as training GPUs, "
    f"the trainer's {MASTER_LOAD_POLL_S:g} s data poll (half on average); and the manager sends "
    "each prompt's samples to one server, round robin (rlmcost.perf.areal_sync)"
)
"""The note of a run whose disk refit carries the hand-offs (:func:`sync_handoff_s`)."""
