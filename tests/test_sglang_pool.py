"""SGLang's KV pool as SGLang sizes it (rlmcost.deployment.sglang_pool, the SGLang branch of
rlmcost.placement.engine_budget): ``mem_fraction_static`` x the memory free once the process
group is set up, less the weights (sgl-project/sglang model_executor/model_runner.py
``profile_max_num_token``: ``rest_memory = available_gpu_memory - total_gpu_memory * (1 -
mem_fraction_static)``, ``max_num_token = rest_memory // cell_size``)."""

from __future__ import annotations

import json
from math import floor

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.deployment.sglang_pool import dist_init_bytes, sglang_pool_bytes, total_gpu_bytes
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout
from rlmcost.perf.validate_memory_engine import engine_job, predict_engine
from rlmcost.specs import get_hardware, get_model

runner = CliRunner()
GIB, MIB = 2**30, 2**20
ROW = "vllm-issue21348-qwen3-235b-fp8-h100-tp4-sglang"
CELL = 94 * 1 * 128 * 2 * 2  # Qwen3-235B-A22B config.json: 94 layers, 4 KV heads / TP 4, 128


def _row(rid: str) -> dict:
    with open("rlmcost/perf/data/memory_runs.json") as f:
        return next(r for r in json.load(f)["rows"] if r["id"] == rid)


def test_issue_21348_tokens_by_sglangs_formula() -> None:
    """Qwen3-235B-A22B-FP8, 4 H100, ``--mem-fraction-static 0.93``: SGLang's total is the
    device (torch's total_memory, 79.18 GiB) less the CUDA context (512 MiB) and the process
    group's 2 GiB (sgl-project/sglang PR 11716's "Init torch distributed ends. mem usage=2.01
    GB"); the pool 0.93 x that less the weights, its tokens the pool over 48,128 B a token.
    The weights: every parameter on the rank at 1 B but the FP8 checkpoint's bf16 embedding,
    LM head, norms and routers (2 x 37,984 x 4,096 + 94 x (2 x 4,096 + 2 x 128 + 4,096 x 128)
    + 4,096 = 361,246,208 elements, one more byte each). The log: "#tokens: 367404"; this
    lands 1.6 % below it, inside the interval."""
    row = _row(ROW)
    _est, _g, job = engine_job(row, run_from_argv)
    cap = get_hardware("h100-sxm").hbm_usable_bytes
    total = cap - 512 * MIB - 2 * GIB
    pool = floor(0.93 * total) - int(job.memory.weights)
    assert int(job.memory.kv_cache) == pool
    got = predict_engine(row, run_from_argv)
    assert got["predicted_tokens"] == pool // CELL == 361_486
    low, high = got["interval_tokens"]
    assert low <= row["published_tokens"] <= high
    assert abs(got["predicted_tokens"] / row["published_tokens"] - 1) < 0.02


def _generation(args: list[str]) -> dict:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    return json.loads(out[out.index("{") :])["stages"]["generation"]["memory_breakdown_bytes"]


ARGS = ["grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8", "-B", "16", "-K", "4",
        "-S", "512", "--framework", "none", "--gpu-memory-utilization", "0.7", "--engine",
        "sglang"]  # fmt: skip


def test_the_workspace_stays_out_of_sglangs_pool() -> None:
    """SGLang subtracts no activations from its pool (they live in 1 - mem_fraction_static):
    a response 8x longer grows the engine's workspace and leaves the pool where it was."""
    short = _generation([*ARGS, "-T", "1024"])
    long = _generation([*ARGS, "-T", "8192"])
    assert long["activations"] > short["activations"]
    assert long["kv_cache"] == short["kv_cache"]


def test_one_gpu_sets_up_no_process_group() -> None:
    """PR 11032's TP 1 log: "Init torch distributed ends. mem usage=0.00 GB"."""
    one = _generation([*ARGS, "-T", "1024", "--rollout-tp", "1"])
    two = _generation([*ARGS, "-T", "1024", "--rollout-tp", "2"])
    cap = get_hardware("h100-sxm").hbm_usable_bytes
    arch = get_model("llama-3.1-8b").arch()
    w1, w2 = (memory_per_rank(arch, Layout(tp=t), "generate", 1, 1).weights for t in (1, 2))
    assert one["kv_cache"] == floor(0.7 * (cap - 512 * MIB)) - w1
    assert two["kv_cache"] == floor(0.7 * (cap - 512 * MIB - 2 * GIB)) - w2
    assert dist_init_bytes(1) == 0


def test_bad_fractions_and_spans_are_refused() -> None:
    with pytest.raises(SpecError, match="mem-fraction-static"):
        sglang_pool_bytes(1.5, 80 * GIB, GIB)
    with pytest.raises(SpecError, match="GPU"):
        total_gpu_bytes(80 * GIB, 512 * MIB, 0)


def _fixed(args: list[str]) -> set[int]:
    """Each timeline entry's device view less its reserved view: the CUDA context and the
    communicators (rlmcost.reports.timeline)."""
    result = runner.invoke(app, [*args, "--timeline", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout[result.stdout.index("{") :])
    return {e["device_bytes"] - e["reserved_bytes"]
            for t in out["memory_timeline"] for e in t["entries"]}  # fmt: skip


def test_sglangs_process_group_is_the_devices_communicators_once() -> None:
    """The 2 GiB SGLang's ``init_torch_distributed`` takes on a replica of several GPUs (PR
    11716's log) is both what its pool leaves out of ``total_gpu_memory`` and the device's
    communicators: context 512 MiB + 2 GiB, not + the generic 512 MiB as well. A TP 1 replica
    sets up no process group (PR 11032): the 8-GPU group keeps the trainer's 512 MiB; vLLM's
    TP 2 replica keeps the generic 512 MiB (rlmcost.deployment.overhead.COMMUNICATOR_BYTES)."""
    assert _fixed([*ARGS, "-T", "1024", "--rollout-tp", "2"]) == {512 * MIB + 2 * GIB}
    assert _fixed([*ARGS, "-T", "1024", "--rollout-tp", "1"]) == {512 * MIB + 512 * MIB}
    vllm = [*ARGS[:-1], "vllm", "-T", "1024", "--rollout-tp", "2"]
    assert _fixed(vllm) == {512 * MIB + 512 * MIB}
