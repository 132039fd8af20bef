"""ZeRO-3 / FSDP log-prob forwards gather every parameter once per micro-batch; under a token
budget (NeMo RL dynamic batching, verl log_prob_max_token_len_per_gpu) the micro-batches are the
packed ones, not one per longest-sequence slot.

Independent reference: NeMo RL v0.3 blog (2025-07-21), Llama-3.1-70B with the DTensor policy on
64 H100 (TP 8, FSDP over 8 nodes, dynamic batching): 'Get logprobs' 28 s for the policy's and
the reference's forwards together. Hand count: 2048 sequences of 130 + ~395 tokens over 8
data-parallel ranks are ~134K tokens per rank, ~17 micro-batches of 8,192 tokens; one gather of
a TP-8 shard of 70.6e9 bf16 parameters (17.6 GB) x 7/8 over one 50 GB/s NIC is ~0.31 s, so
~5 s of gathers per forward, where one micro-batch per two 4,096-token slots (128) gave 39.5 s.
"""

from __future__ import annotations

import pytest

from rlmcost import memo
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment

ROW = ("--framework nemo-rl --model llama-3.1-70b --kl --mini-batches 4 --param-dtype fp32 "
       "--no-expandable-segments --tp 8 --sp --zero 3 --ckpt none --max-tokens-per-gpu 4096 "
       "--forward-micro-batch 2 --forward-max-tokens-per-gpu {budget} --logits materialized "
       "--rollout-tp 4 --gpu-memory-utilization 0.6 --sleep --offload optimizer-idle,params-idle "
       "--batch 64 --group 32 --prompt-len 130 --response-len 3966 --hardware h100-sxm "
       "--gpus 64 --length-dist lognormal:395,0.67,3966")  # the rl_runs.json row's command


def _reference_s(budget: int) -> float:
    with memo.plain():
        e = evaluate_deployment(run_from_argv("rlvr", ROW.format(budget=budget).split()))
    return next(p.time_s for p in e.phases if p.name == "reference")


def test_packed_micro_batches_set_the_gathers() -> None:
    ref = _reference_s(8192)
    assert 5.0 < ref < 20.0  # ~17 gathers of ~0.31 s plus the compute; not 128 of them
    # a budget twice as large packs half as many micro-batches: fewer gathers, never slower
    assert _reference_s(16384) <= ref
    assert _reference_s(4096) > ref


@pytest.mark.parametrize("budget", [4096, 8192])
def test_the_prediction_stays_at_least_its_bound(budget: int) -> None:
    with memo.plain():
        e = evaluate_deployment(run_from_argv("rlvr", ROW.format(budget=budget).split()))
    assert e.iteration_time_s >= e.iteration_time_lower_bound_s
