"""Generation on the trainer's layout (HF generate; a size tier's Megatron layout under
``--engine hf``) reads and caches as one pipeline stage (``Layout.one_stage``): the trainer's
uneven split (``--pp-first-layers``/``--pp-last-layers``, the embedding/loss slots) and its
virtual stages, which Megatron-core allows only at PP >= 2, are not carried to PP 1.

Reference: a decode step passes every pipeline stage in turn, so how the layers are split
among the stages leaves the generation stage unchanged; the query without the split options
is the expected value (the split still moves the trainer's stages)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()
BASE = ["grpo", "-m", "70b", "--framework", "none", "--engine", "hf", "--gpus", "8", "--tp",
        "4", "--pp", "2", "--json"]  # fmt: skip


def _stages(*extra: str) -> dict[str, float]:
    res = runner.invoke(app, [*BASE, *extra])
    assert res.exit_code == 0, res.output[-400:]
    return {k: v["time_s"] for k, v in json.loads(res.output)["stages"].items()}


@pytest.mark.parametrize("split", [("--pp-last-layers", "30"), ("--virtual-stages", "2")])
def test_hf_generate_under_a_pipeline_split(split: tuple[str, ...]) -> None:
    plain, with_split = _stages(), _stages(*split)
    assert with_split["generation"] == plain["generation"]


def test_slime_235b_tier_under_engine_hf() -> None:
    """slime's 235 B tier (PP 4, 22 layers last; SGLang serving FP8 weights) under --engine
    hf: the FP8 serving dtype is SGLang's/vLLM's (Default.engines), the split the trainer's."""
    res = runner.invoke(app, ["grpo", "-m", "qwen3-235b-a22b", "--framework", "slime",
                              "--engine", "hf", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output[-400:]
    out = json.loads(res.output)
    assert out["run"]["deployment"]["train"]["pp_split"]["last_layers"] == 22
    assert out["run"]["deployment"]["engine"]["dtype"] != "fp8"
