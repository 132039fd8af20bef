"""Advice on a Megatron engine's KV pool (rlmcost.evaluation.pool_advice): the largest
``--kv-buffer-gib`` that still fits, the longest response the pool admits, and the pool
changes that make a run fit, each checked against independent evaluations."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.evaluation.pool_advice import POOL_STEP_GIB

runner = CliRunner()
# --zero 1: the engine generates on NeMo RL's Megatron policy (its distributed optimizer), not on
# the preset's ZeRO-3 DTensor policy (deployment.megatron_engine.check_policy)
BASE = ["grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "16", "--engine", "megatron",
        "--zero", "1"]  # fmt: skip
SMALL = ["grpo", "-m", "llama-3.2-1b", "--reward", "rule", "--gpus", "2", "-B", "4", "-K", "2",
         "-S", "512", "--engine", "megatron", "--zero", "1"]  # fmt: skip


def _out(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    return res.output


def _fits(*args: str) -> bool:
    return bool(re.search(r"^fits: ", _out(*args), re.M))


def test_the_largest_pool_that_still_fits_is_the_largest() -> None:
    out = _out(*BASE)
    gib = float(re.search(r"largest KV pool that still fits: --kv-buffer-gib ([\d.]+)",
                          out).group(1))  # fmt: skip
    assert gib > 10  # NeMo RL's 10 GiB fits with room to spare here
    # independent: the run evaluated at that pool, and one step larger
    assert _fits(*BASE, "--kv-buffer-gib", f"{gib:g}")
    assert not _fits(*BASE, "--kv-buffer-gib", f"{gib + POOL_STEP_GIB:g}")


def test_the_longest_response_the_pool_admits() -> None:
    # Llama-3.2-1B: 16 layers x 8 KV heads x 64 x 2 (K, V) x 2 B = 32 KiB per token at TP 1,
    # so 64 MiB hold 2,048 tokens, 8 blocks of 256: a 512-token prompt leaves 1,536
    pool = ["--kv-buffer-gib", "0.0625"]
    out = _out(*SMALL, "-T", "1024", *pool)
    assert "longest response the KV pool admits: 1,536 tokens" in out
    # independent: the evaluation's own pool rule at 1,536 and one token more
    assert _fits(*SMALL, "-T", "1536", *pool)
    over = _out(*SMALL, "-T", "1537", *pool)
    assert "holds less than one sequence" in over and not re.search(r"^fits: ", over, re.M)


def test_a_pool_that_does_not_fit_beside_the_trainer_gets_its_changes() -> None:
    out = _out(*BASE, "--kv-buffer-gib", "30")
    assert "DOES NOT FIT" in out and "(largest term: engine)" in out
    shrink = re.search(r"fits with --kv-buffer-gib ([\d.]+)", out)
    assert shrink and float(shrink.group(1)) < 30
    assert "fits with --sleep" in out
    assert "fits with --zero 3" not in out  # the engine decodes on the Megatron policy
    # independent: each suggested change evaluated alone
    assert _fits(*BASE, "--kv-buffer-gib", shrink.group(1))
    assert _fits(*BASE, "--kv-buffer-gib", "30", "--sleep")


def test_other_engines_get_no_pool_hints() -> None:
    out = _out("grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "16")
    assert "largest engine reservation that still fits" in out
    assert "KV pool" not in out and "--kv-buffer-gib" not in out
