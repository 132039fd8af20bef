"""Bounds on a query's counts: not model constants, limits past which rlmcost would fill
memory or run for hours instead of answering (each says so and how to mend the input)."""

from __future__ import annotations

from rlmcost.errors import SpecError

MAX_SEQUENCES = 2**20
"""Most sequences (B x K) one iteration may hold: 1,048,576. Not a model constant but a bound
on the input: the time model walks the responses one by one (their lengths, the engine's
admission order), so a count of 10^12 would fill memory instead of answering; 2^20 is 128x the
8,192 sequences of a large published GRPO step (verl's DAPO recipe scripts, recipe/dapo:
train_prompt_bsz=512, n_resp_per_prompt=16); at the bound one query takes about 20 s of CPU
here (`rlmcost rlvr -m gpt-2 --batch 65536 --group 16`, 0.64 GB peak, December 2026)."""

MAX_GPUS = 2**20
"""Most GPUs a query may name (--gpus, --dp, a group's GPUs): 1,048,576, a bound on the
input for the same reason as :data:`MAX_SEQUENCES` (per-device and per-replica lists)."""


def check_count(what: str, n: int, most: int, fix: str) -> None:
    """SpecError when the count ``n`` of ``what`` exceeds ``most`` (a bound on the input,
    :data:`MAX_SEQUENCES`, :data:`MAX_GPUS`), saying how to mend it."""
    if n > most:
        raise SpecError(f"{what} = {n:,} exceeds the {most:,} rlmcost evaluates; {fix}")

MAX_SPECULATIVE_TOKENS = 1024
"""Most draft tokens per speculative decoding step (--speculative-tokens): a bound on the
input. Each draft token adds a draft forward to every step while its chance of acceptance falls
as P^i, so the useful count is small (Leviathan et al. 2023, arXiv 2211.17192 §3, "Choosing
gamma": the optimal gamma is a few tokens for the acceptance rates measured); 1,024 is far past
any useful setting and keeps the step's per-token sum (perf.speculative) short."""
