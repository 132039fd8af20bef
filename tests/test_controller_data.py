"""verl's driver passes each step's batch, padded to the configured maximum lengths, through
every worker call (rlmcost.perf.controller_data).

Independent references: the tensor shapes of verl's agent loop output
(verl/experimental/agent_loop/agent_loop.py ``_postprocess`` at volcengine/verl b25bb7d4f:
prompts [N, S], responses and response_mask [N, T], input_ids, attention_mask, position_ids
[N, S + T], int64) and the keys its trainer adds (ray_trainer.py ``fit``: old_log_probs and
entropys from compute_log_prob; token_level_scores, token_level_rewards, advantages, returns
from the driver's compute_advantage), summed by hand below.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.perf.controller_data import (
    DATAPROTO_SERDE_BYTES_PER_S,
    ENTROPY_MEAN_PER_STATE,
    RESULT_CONCAT_PER_STATE,
    controller_data_s,
    driver_results_s,
    padded_batch_bytes,
    padded_call_bytes,
)
from rlmcost.perf.refit import controller_s


def test_the_7b_dapo_step_moves_the_hand_summed_bytes():
    """verl fully-async doc, colocated 7B rows: 512 x 16 sequences, max_prompt_length 2048,
    max_response_length 28672; one actor forward (old log-probs) and one actor update."""
    n, s, t = 512 * 16, 2048, 28672
    gen_in = 3 * 8 * s  # input_ids, attention_mask, position_ids of the prompts
    batch = 8 * s + 2 * 8 * t + 3 * 8 * (s + t)  # the padded generated batch, int64
    logprob = batch + 2 * 4 * t  # out: the batch; back: old_log_probs, entropys (fp32)
    update = batch + (2 + 4) * 4 * t  # plus those two and the four advantage-step tensors
    expected = n * (gen_in + batch + logprob + update)
    got = padded_batch_bytes(n, s, t, [2], 1)
    assert isinstance(got, int)
    assert got == expected
    assert 37e9 < got < 38e9  # ~38 GB per step, ~20x the ~1.9 GB of tokens generated (1K mean)


def test_a_reference_forward_carries_the_old_log_probs():
    """The reference call goes out with the batch and the actor's two fp32 tensors, returns
    one; the update then carries seven fp32 tensors (two + one + four)."""
    s, t = 3, 5
    batch = 8 * (s + 2 * t + 3 * (s + t))
    expected = 3 * 8 * s + batch + (batch + 2 * 4 * t) + (batch + 2 * 4 * t + 4 * t) \
        + (batch + 7 * 4 * t)  # fmt: skip
    assert padded_batch_bytes(1, s, t, [2, 1], 1) == expected


@given(n=st.integers(1, 10**4), s=st.integers(1, 4096), t=st.integers(1, 32768))
def test_bytes_grow_with_the_cap_and_scale_with_the_batch(n, s, t):
    base = padded_batch_bytes(n, s, t, [2], 1)
    assert padded_batch_bytes(2 * n, s, t, [2], 1) == 2 * base
    assert padded_batch_bytes(n, s, t + 1, [2], 1) > base


def test_seconds_span_the_constants_spread():
    nbytes = 40 * 10**9
    low, value, high = (controller_data_s(nbytes, 0.5, e) for e in ("low", "value", "high"))
    assert low < value < high
    # no network share: bytes over the driver's rate
    rate = DATAPROTO_SERDE_BYTES_PER_S.value
    assert controller_data_s(nbytes, 0.0) == pytest.approx(nbytes / rate)


def _controller_s(framework: str, gpus: int, response_len: int) -> float:
    argv = ["--framework", framework, "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "16", "--prompt-len", "256", "--response-len", str(response_len),
            "--hardware", "h20", "--gpus", str(gpus), "--rollout-tp", "4",
            "--length-dist", "lognormal:1000,0.67," + str(response_len)]  # fmt: skip
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    found = [t for g in est.groups for t in g.transfers if t.kind == "controller"
             and not t.what.startswith("environment")]  # NeMo RL's verifier: perf.nemo_rl_env
    assert len(found) == 3  # the residual, plus the log-prob and update calls (both frameworks)
    return sum(t.predicted for t in found)


def test_verl_pays_for_the_padded_cap_and_nemo_rl_does_not():
    """Same responses (1K mean), a 4x longer cap: verl's driver moves ~4x the bytes; NeMo RL's
    (no padded batch in its Behaviour) pads to the batch's longest response, not to the cap
    (perf.nemo_rl_dispatch): the same for two caps above the longest (~6.4K tokens)."""
    residual = controller_s()
    short, long = _controller_s("verl", 8, 4096), _controller_s("verl", 8, 16384)
    assert short > residual
    assert (long - residual) / (short - residual) > 3.5  # S + T: 4352 -> 16640 tokens
    assert _controller_s("nemo-rl", 8, 32768) == pytest.approx(_controller_s("nemo-rl", 8, 16384))


def test_more_gpus_do_not_shorten_the_drivers_share():
    """The driver is one process: more nodes only add network share."""
    assert _controller_s("verl", 32, 8192) >= _controller_s("verl", 8, 8192)


def test_every_rank_of_a_shard_returns_the_forwards_tensors():
    """verl's worker-group call ``ray.get``\\ s all world_size outputs before collect_fn keeps
    one rank per data shard (verl/single_controller/ray/base.py func_generator,
    base/decorator.py collect_nd_compute at b25bb7d4f), and every Ulysses rank returns the
    gathered log-probs (fsdp_workers.py compute_log_prob): with 4 ranks per shard the
    old_log_probs and entropys [N, T] fp32 come back 4 times; what goes out does not change."""
    n, s, t = 8, 5, 7
    batch = 8 * (s + 2 * t + 3 * (s + t))
    one = padded_call_bytes(n, s, t, [2], 1)
    four = padded_call_bytes(n, s, t, [2], 1, replicas=[4])
    assert one.forwards == (n * (batch + 2 * 4 * t),)
    assert four.forwards == (n * (batch + 4 * 2 * 4 * t),)
    assert (four.generate, four.trains) == (one.generate, one.trains)
    assert padded_batch_bytes(n, s, t, [2], 1, replicas=[4]) == four.total


def _verl_7b(extra: list[str]):
    argv = ["--framework", "verl", "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "16", "--prompt-len", "256", "--response-len", "8192",
            "--hardware", "h20", "--gpus", "16", "--rollout-tp", "4",
            "--length-dist", "lognormal:1000,0.67,8192", *extra]  # fmt: skip
    return evaluate_deployment(run_from_argv("rlvr", argv))


def test_a_calls_driver_data_is_timed_in_its_phase():
    """verl's marked_timer('old_log_prob') and ('update_actor') wrap the worker-group call,
    dispatch and collect included (verl/trainer/ppo/ray_trainer.py fit at b25bb7d4f): the
    phase is the job plus its driver data; the controller term keeps the residual and the
    generated batch."""
    est = _verl_7b([])
    phases = {p.name: p.time_s for p in est.phases}
    (g,) = est.groups
    jobs = {j.phase: j.predicted_s for j in g.jobs}
    data = {t.phase: t.predicted for t in g.transfers if t.kind == "controller"}
    assert set(data) == {"controller", "old log-prob", "update actor"}
    for name in ("old log-prob", "update actor"):
        assert data[name] > 0
        assert phases[name] == pytest.approx(jobs[name] + data[name])
    assert phases["controller"] == pytest.approx(data["controller"])
    assert data["controller"] > controller_s()  # the generated batch coming back


def test_ulysses_ranks_multiply_the_returned_log_probs():
    """The same run with Ulysses 4 (rlmcost's --cp 4): the old-log-prob call's bytes grow by
    three more copies of old_log_probs and entropys, N x T x 4 B x 2 each (N = 64 x 16,
    T = 8192); the update's do not change."""
    def calls(est):
        return {t.phase: t.bytes for g in est.groups for t in g.transfers
                if t.kind == "controller" and t.phase != "controller"}  # fmt: skip

    one, four = calls(_verl_7b([])), calls(_verl_7b(["--cp", "4"]))
    assert four["old log-prob"] - one["old log-prob"] == 3 * 64 * 16 * 8192 * 4 * 2
    assert four["update actor"] == one["update actor"]


def test_the_drivers_own_work_on_the_results_is_counted_by_hand():
    """verl's ``old_log_prob`` timer (ray_trainer.py ``fit`` at b25bb7d4f) also concatenates the
    shards' old_log_probs and entropys (``DataProto.concat``) and takes the entropies' token
    mean (``agg_loss``); a reference forward concatenates its one tensor and takes no mean.
    Each is its measured ratio (benchmarks/bench_verl_driver_data.py) times the serialization
    of the same fp32 [N, T] tensors at PR 3425's rate."""
    n, t = 8192, 28672
    per_tensor_s = n * t * 4 / DATAPROTO_SERDE_BYTES_PER_S.value
    actor = driver_results_s(n, t, 2, True)
    reference = driver_results_s(n, t, 1, False)
    assert actor == pytest.approx(per_tensor_s * (2 * RESULT_CONCAT_PER_STATE.value
                                                  + ENTROPY_MEAN_PER_STATE.value))  # fmt: skip
    assert reference == pytest.approx(per_tensor_s * RESULT_CONCAT_PER_STATE.value)
    # the 7B DAPO rows: under a second per step, beside ~13 s of serialization
    assert 0.5 < actor < 1.0
    low, high = driver_results_s(n, t, 2, True, "low"), driver_results_s(n, t, 2, True, "high")
    assert low < actor < high


def test_the_drivers_work_on_the_results_is_in_the_log_prob_phase():
    """On one node (no network share) the old-log-prob call's controller transfer is its
    bytes' serialization plus the driver's concat and entropy mean over N = 64 x 16,
    T = 8192 (hand-built from the module's functions); the update's call has no results to
    collect."""
    argv = ["--framework", "verl", "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "16", "--prompt-len", "256", "--response-len", "8192",
            "--hardware", "h20", "--gpus", "8", "--rollout-tp", "4",
            "--length-dist", "lognormal:1000,0.67,8192"]  # fmt: skip
    one_node = evaluate_deployment(run_from_argv("rlvr", argv))
    (lp,) = [t for g in one_node.groups for t in g.transfers
             if t.kind == "controller" and t.phase == "old log-prob"]  # fmt: skip
    own = driver_results_s(64 * 16, 8192, 2, True)
    data = controller_data_s(padded_call_bytes(64 * 16, 256, 8192, [2], 1).forwards[0], 0.0)
    assert lp.predicted == pytest.approx(data + own)
    assert "entropies' mean" in lp.what
    est = _verl_7b([])
    (g,) = est.groups
    (upd,) = [t for t in g.transfers if t.kind == "controller" and t.phase == "update actor"]
    assert "concatenated" not in upd.what and "entropies" not in upd.what
