"""The note on a paged rollout's sequences in flight names what limits them
(``iteration_groups``, ``Timeline.capped``): the engine's cap on running requests
(``--max-num-seqs``: vLLM's ``SchedulerConfig.max_num_seqs``, SGLang's
``max_running_requests``, admission stops at ``len(running) < max_num_seqs`` in vLLM's
scheduler) or its paged KV cache (admission stops when no block is free, or running
sequences are preempted). It had blamed the KV cache for a cap of 256 running requests
(verl's rollout.yaml ``max_num_seqs: 256``, verl @b178a3cd) whose KV pool held more: the
remedy is a larger ``--max-num-seqs``, not a larger ``--gpu-memory-utilization``.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app

# verl's examples/grpo_trainer/run_qwen2-7b_seq_balance.sh as `rlmcost import verl` reads it
VERL = ["rlvr", "--framework", "verl", "--model", "Qwen/Qwen2-7B-Instruct", "--kl", "--batch",
        "1024", "--group", "5", "--mini-batches", "4", "--prompt-len", "512", "--response-len",
        "1024", "--gpus", "8", "--zero", "3", "--param-dtype", "fp32", "--ckpt", "full",
        "--logits", "low-memory", "--max-tokens-per-gpu", "24000", "--rollout-tp", "2",
        "--engine", "sglang", "--gpu-memory-utilization", "0.6"]  # fmt: skip


def _held(*args: str) -> list[str]:
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    return [n for n in json.loads(out.output)["notes"] if "sequences in flight" in n]


def test_a_running_request_cap_is_named_not_the_kv_cache() -> None:
    # 1,024 x 5 sequences over 4 replicas (TP 2 on 8 GPUs): 1,280 each, 256 at once
    (note,) = _held(*VERL, "--max-num-seqs", "256")
    assert "cap on running requests (--max-num-seqs" in note
    assert "not its KV cache, holds at most 256 of each replica's 1280 sequences" in note


def test_the_kv_cache_is_named_where_it_binds() -> None:
    # a cap above the share: the KV pool (0.6 of an H100 less the weights) admits fewer
    (note,) = _held(*VERL, "--max-num-seqs", "4096")
    assert "the paged KV cache holds at most" in note and "of each replica's 1280" in note
    assert "--max-num-seqs" not in note
    # a pool too small for the share: preemptions, so the KV cache binds whatever the cap
    (note,) = _held("grpo", "-m", "qwen2.5-1.5b", "--gpus", "8", "-T", "16384",
                    "--gpu-memory-utilization", "0.3", "--max-num-seqs", "1024")  # fmt: skip
    assert "the paged KV cache holds at most" in note and "preemptions (recomputed)" in note


def test_calls_of_fewer_sequences_are_named() -> None:
    # TRL 0.16.1 hands vLLM 112 completions a call, one call after another
    # (tests/data/frameworks/trl_grpo.yaml as `rlmcost import trl` reads it: 16 calls of
    # per_device_train_batch_size 16 x 7 processes); the KV cache would hold more
    (note,) = _held("rlvr", "--framework", "trl", "--model", "qwen2.5-7b", "--batch", "256",
                    "--group", "7", "--prompt-len", "512", "--response-len", "1024", "--gpus",
                    "8", "--sequences-per-call", "112", "--max-num-seqs", "1024")  # fmt: skip
    assert "its calls, one after another (--sequences-per-call), not the KV cache, hold at " \
        "most 112 of each replica's" in note  # fmt: skip
