"""Shared fixtures of the KV-admission replay tests (tests/test_paged.py, test_sglang_admit.py,
test_prefix_sharing.py): a Llama-3.1-8B decode on one H100 SXM and a schedule's segments."""

from __future__ import annotations

from rlmcost.placement.rollout import DecodeCost
from rlmcost.specs import get_hardware, get_model

ARCH = get_model("llama-3.1-8b").arch()
H100 = get_hardware("h100-sxm")
COST = DecodeCost(f0=16 * 10**9, f1=2 * 10**6, prefill_flops=10**12, weight_bytes=16e9,
                  kv_bytes_per_token=131072.0)  # Llama-3.1-8B-like: 16 GB bf16, 128 KiB/token


def segments(schedule):  # noqa: ANN001, ANN201
    """(sequence, start, end, context) of each segment of a replay's schedule."""
    return [(x.seq, x.start, x.end, x.context) for x in schedule.segments]
