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
    # every sequence admitted, the pool running out as they grow: said so, not "holds at most
    # 64 of 64" (the note had read as a contradiction)
    assert "admits all of each replica's" in note and "as they grow" in note
    assert "preemptions (recomputed)" in note and "holds at most" not in note


def test_calls_of_fewer_sequences_are_named() -> None:
    # TRL 0.16.1 hands vLLM 112 completions a call, one call after another
    # (tests/data/frameworks/trl_grpo.yaml as `rlmcost import trl` reads it: 16 calls of
    # per_device_train_batch_size 16 x 7 processes); the KV cache would hold more
    (note,) = _held("rlvr", "--framework", "trl", "--model", "qwen2.5-7b", "--batch", "256",
                    "--group", "7", "--prompt-len", "512", "--response-len", "1024", "--gpus",
                    "8", "--sequences-per-call", "112", "--max-num-seqs", "1024")  # fmt: skip
    assert "its calls, one after another (--sequences-per-call), not the KV cache, hold at " \
        "most 112 of each replica's" in note  # fmt: skip


# An 8B model's SGLang engine on 4 GPUs of its own at a 0.15 reservation: the weights and
# workspace leave no KV pool (the problem line: 0.00 GiB for the KV cache)
SGLANG_SMALL_POOL = ["grpo", "-m", "llama-3.1-8b", "--reward", "rule", "--framework", "none",
                     "--engine", "sglang", "--gpus", "8", "--groups",
                     "rollout=4,actor+reference=4", "--gpu-memory-utilization", "0.15", "-T",
                     "4096"]  # fmt: skip


def test_a_cap_that_follows_from_the_kv_pool_names_the_pool() -> None:
    """SGLang sets max_running_requests from its KV pool where --max-running-requests is not
    given (managers/tp_worker.py: ``max_total_num_tokens // 2``, capped by the request pool:
    rlmcost.deployment.sglang_limits); a pool with no room runs one request at a time. The
    note had blamed ``--max-num-seqs``, "not its KV cache", beside a problem line reporting
    0.00 GiB of KV cache; it names the pool and the reservation that sizes it
    (``--mem-fraction-static``, slime's ``--sglang-mem-fraction-static``)."""
    out = CliRunner().invoke(app, [*SGLANG_SMALL_POOL, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert any("leaves 0.00 GiB for the KV cache" in p for p in data["problems"])
    (note,) = [n for n in data["notes"] if "sequences in flight" in n]
    assert note.startswith("actor generate on rollout: the KV pool (what "
                           "--gpu-memory-utilization: SGLang's --mem-fraction-static, slime's "
                           "--sglang-mem-fraction-static, leaves after the weights")
    assert "max_running_requests that follows from it" in note
    assert "hold at most 1 of each replica's 128 sequences" in note  # 64 x 8 / 4 replicas
    assert "not its KV cache" not in note
    # given, the cap is the flag's: named as before
    roomy = [w if w != "0.15" else "0.6" for w in SGLANG_SMALL_POOL]
    (note,) = _held(*roomy, "--max-num-seqs", "2")
    assert "cap on running requests (--max-num-seqs" in note and "at most 2 of" in note


def test_megatrons_cap_from_its_pool_names_the_pool() -> None:
    """Megatron-core's max_requests follows from its KV pool's blocks
    (rlmcost.deployment.megatron_engine, NeMo RL's buffer_size_gb = --kv-buffer-gib): a
    0.1 GiB pool, below one 4K-token sequence of an 8B model, runs one request at a time."""
    (note,) = _held("grpo", "-m", "llama-3.1-8b", "--reward", "rule", "--framework", "nemo-rl",
                    "--engine", "megatron", "--gpus", "8", "--kv-buffer-gib", "0.1", "-T",
                    "4096")  # fmt: skip
    assert "the KV pool (--kv-buffer-gib) and Megatron-core's max_requests" in note
    assert "hold at most 1 of each replica's" in note and "not its KV cache" not in note
