"""SGLang's default ``mem_fraction_static`` (rlmcost.deployment.sglang_fraction): the rule of
sgl-project/sglang ``python/sglang/srt/server_args.py`` ``_handle_gpu_memory_settings`` at
v0.5.5, the numbers below worked by hand from its source."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.sglang_fraction import sglang_default_fraction
from rlmcost.errors import SpecError

runner = CliRunner()


def test_h100_by_tp() -> None:
    """H100, torch total_memory 81079 MiB: chunk 8192, CUDA graph bs 256 below TP 4 and 512
    from it. TP 1: 512 + 12288 + 512 + 128 = 13440 -> 67639 / 81079 = 0.8342; TP 4: 512 +
    12288 + 1024 + 512 = 14336 -> 0.8232; TP 8: 14848 -> 0.8169."""
    assert [sglang_default_fraction(81079, tp) for tp in (1, 4, 8)] == [0.834, 0.823, 0.817]


def test_floor_drafts_and_dp_attention() -> None:
    """A100-40GB (40536 MiB, < 60 GiB: no 10 GiB floor) TP 1: 512 + 6144 + 64 + 128 = 6848 ->
    0.831. H200 (143156 MiB) TP 1: 13440 -> 0.906; an MTP draft adds 2048 -> 0.892. H100 TP 8
    with DP attention 8: 14848 + 512 x 8 x 3 + 512 x 8 x 1.5 = 33280 -> 0.590."""
    assert sglang_default_fraction(40536, 1) == 0.831
    assert sglang_default_fraction(143156, 1) == 0.906
    assert sglang_default_fraction(143156, 1, draft="eagle") == 0.892
    assert sglang_default_fraction(81079, 8, dp_attention=8) == 0.590


def test_bad_input() -> None:
    with pytest.raises(SpecError):
        sglang_default_fraction(0, 1)
    with pytest.raises(SpecError):
        sglang_default_fraction(81079, 1, draft="medusa")


def test_dedicated_sglang_engine_takes_it() -> None:
    """An SGLang engine of TP 1 on H100s of its own, no fraction given: its KV pool is 0.834 x
    (the device less the 512 MiB CUDA context) less its weights, not vLLM's 0.9."""
    args = ["grpo", "-m", "8b", "--gpus", "16", "--framework", "none", "--reward", "rule",
            "--groups", "rollout=8[tp=1],actor+reference=8", "--engine", "sglang", "--json"]
    out = json.loads(runner.invoke(app, args).stdout)
    kv = out["stages"]["generation"]["memory_breakdown_bytes"]["kv_cache"]
    total = 85017493504 - 2**29  # h100-sxm hbm_usable_bytes less the CUDA context
    assert 0.834 * total - 17e9 < kv < 0.834 * total - 15e9
