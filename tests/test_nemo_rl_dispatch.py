"""NeMo RL's driver data per worker call (rlmcost.perf.nemo_rl_dispatch): every rank of a
data-parallel shard gets its own pickled copy, every rank's log-probs come back.

Sources: NVIDIA-NeMo/RL v0.3.0 nemo_rl/distributed/worker_groups.py
(run_all_workers_sharded_data: one ``.remote(data=shard)`` per worker;
MultiWorkerFuture.get_results: ``ray.get`` of every future), lm_policy.py (replicate_on_axes
context, tensor, pipeline),
algorithms/grpo.py (train_data: input_ids and token_mask int64, advantages and
generation_logprobs fp32), PR 1944 (ray.put once per shard, v0.7.0) and PR 3954 (results)."""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.perf.controller_data import DATAPROTO_SERDE_BYTES_PER_S
from rlmcost.perf.nemo_rl_dispatch import (
    FORWARD_INPUT_BYTES_PER_TOKEN,
    RESULT_BYTES_PER_TOKEN,
    TRAIN_INPUT_BYTES_PER_TOKEN,
    dispatch_s,
    sharded_call_bytes,
)
from rlmcost.perf.rl_constants import RAY_CROSS_NODE_BYTES_PER_S


def test_bytes_per_token_are_the_train_data_tensors():
    # grpo.py v0.3.0 train_data: input_ids (int64) + token_mask (ones_like: int64) +
    # advantages + generation_logprobs (fp32); the update adds prev_logprobs and
    # reference_policy_logprobs (fp32); a forward returns fp32 logprobs
    assert FORWARD_INPUT_BYTES_PER_TOKEN == 8 + 8 + 4 + 4
    assert TRAIN_INPUT_BYTES_PER_TOKEN == 24 + 4 + 4
    assert RESULT_BYTES_PER_TOKEN == 4


def test_every_rank_of_a_shard_is_a_copy():
    """Bytes scale with the ranks per shard (TP x PP x CP), not with the data-parallel degree:
    the shards together are the batch."""
    one = sharded_call_bytes(2048, 4096, 1, False)
    assert one == 2048 * 4096 * (24 + 4)
    assert sharded_call_bytes(2048, 4096, 16, False) == 16 * one
    assert sharded_call_bytes(2048, 4096, 16, True) == 16 * 2048 * 4096 * 32
    assert sharded_call_bytes(0, 4096, 16, True) == 0


def test_the_network_hides_under_the_pickling_or_sets_the_time():
    serde = DATAPROTO_SERDE_BYTES_PER_S.value
    net = RAY_CROSS_NODE_BYTES_PER_S.value
    n = 10**10
    assert dispatch_s(n, 0.0) == pytest.approx(n / serde)
    assert dispatch_s(n, 0.5) == pytest.approx(max(n / serde, 0.5 * n / net))
    assert dispatch_s(n, 1.0) == pytest.approx(max(n / serde, n / net))
    assert dispatch_s(n, 0.5, "low") < dispatch_s(n, 0.5) < dispatch_s(n, 0.5, "high")


def _calls(framework: str, tp: int, gpus: int) -> dict[str, int]:
    argv = ["--framework", framework, "--model", "llama-3.1-8b", "--kl", "--batch", "64",
            "--group", "32", "--prompt-len", "130", "--response-len", "3966",
            "--hardware", "h100-sxm", "--gpus", str(gpus), "--tp", str(tp),
            "--length-dist", "lognormal:795,0.67,3966"]  # fmt: skip
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    return {t.phase: t.bytes for g in est.groups for t in g.transfers
            if t.kind == "controller" and "once per rank" in t.what}  # fmt: skip


def test_nemo_rl_calls_carry_their_shards_in_their_phases():
    """The old log-prob, reference and update calls each carry their bytes in their own
    phase (grpo.py's timers wrap the calls); TP 2 doubles them against TP 1 at the same
    data-parallel degree; verl's preset has no such term (its own: perf.controller_data)."""
    tp1, tp2 = _calls("nemo-rl", 1, 8), _calls("nemo-rl", 2, 16)
    assert set(tp1) == {"old log-prob", "reference", "update actor"}
    for phase, nbytes in tp1.items():
        assert tp2[phase] == 2 * nbytes
    assert tp1["update actor"] * 28 == tp1["old log-prob"] * 32  # per-token bytes, same batch
    assert _calls("verl", 1, 8) == {}


def test_the_v03_blogs_16k_cp4_run_moves_its_shards_64_times():
    """NeMo RL v0.3 blog, Llama-3.3-70B at 16K on 128 H100s (rl_runs.json): TP 4 x PP 4 x CP 4
    = 64 ranks per data-parallel shard (grpo_math_70B_megatron.yaml with CP 4), 64 x 32 = 2048
    sequences padded to the 16,384-token maximum (the truncated share of a cap >= 16K reaches
    it): each log-prob call pickles 64 x 2048 x 16384 x 28 bytes; the update 32 per token."""
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import recipes
    from rlmcost.reports.rl_runs_rows import build_run

    rid = "nemo-rl-v0.3-blog-h100-llama3.3-70b-grpo-16k-cp4"
    recipe = next(r for r in recipes() if r.id == rid)
    ev = evaluate(build_run(recipe, run_from_argv)).evaluation
    calls = {t.phase: t for g in ev.groups for t in g.transfers
             if t.kind == "controller" and "once per rank" in t.what}  # fmt: skip
    assert calls["old log-prob"].bytes == 64 * 2048 * 16384 * 28
    assert calls["reference"].bytes == 64 * 2048 * 16384 * 28
    assert calls["update actor"].bytes == 64 * 2048 * 16384 * 32
    # the pickling (2.0 GB/s) sets the time: the network share (120 of 128 GPUs on other
    # nodes at 3.17 GB/s) moves under it
    rate = DATAPROTO_SERDE_BYTES_PER_S.value
    assert calls["old log-prob"].predicted == pytest.approx(calls["old log-prob"].bytes / rate)
