"""Issue 18: each new term and choice is in --help, the README's time-term table and notebook 04.

The terms are the CHANGELOG's 'Unreleased' rounds': among them the weight update through
shared storage (--refit disk, rlmcost/perf/disk_refit.py), NeMo RL's async engine's 128
sequences (rlmcost/frameworks/nemo_rl_vllm.py), the MTP draft's checkpoint requirement
(ModelSpec.mtp_layers), NeMo RL's reference swap and FSDP2 copies (rlmcost/perf/policy_worker.py),
NeMo RL's version gate (rlmcost/placement/version_gate.py), pageable offload
(rlmcost/perf/host_offload.py), the busiest EP rank (rlmcost/perf/moe_imbalance.py) and the
training rows' DeepSpeed blocking p2p and embedding gradient.
"""

import json
from pathlib import Path

import pytest
import typer.main

from rlmcost.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _help_of(command: str) -> dict[str, str]:
    """Each option's help text of `rlmcost COMMAND`, by its long name."""
    group = typer.main.get_command(app)
    cmd = group.get_command(None, command)  # type: ignore[attr-defined]
    return {opt: p.help or "" for p in cmd.params for opt in p.opts if opt.startswith("--")}


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        # rlmcost/perf/disk_refit.py: DISK_REFIT_BYTES_PER_S 1.02e9 from AReaL PR 324
        ("--refit", ("disk", "DISK_REFIT_BYTES_PER_S", "1.02 GB/s", "AReaL PR 324")),
        # rlmcost/frameworks/nemo_rl_vllm.py ASYNC_ENGINE_MAX_NUM_SEQS
        ("--max-num-seqs", ("128", "async_engine", "vLLM PR 37393")),
        # ModelSpec.mtp_layers: the config key it is read from
        ("--speculative-draft", ("num_nextn_predict_layers", "error")),
    ],
)
def test_new_flags_help_names_value_and_source(flag, words):
    text = _help_of("grpo")[flag]
    for word in words:
        assert word in text, f"{flag} help lacks {word!r}"


def test_refit_is_a_choice():
    """The help shows the choice, and another value is a usage error (exit 2), not a
    validation error from deep inside the Run."""
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["grpo", "--help"], env={"COLUMNS": "200"})
    assert "--refit <disk>" in res.output
    res = CliRunner().invoke(app, ["grpo", "-m", "7b", "--refit", "nfs"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "'nfs' is not one of 'disk'" in res.output


def _table_terms() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("| term (phase) | model | source |")
    return readme[start:readme.index("\n\n", start)]


@pytest.mark.parametrize(
    "term",
    ["--refit disk", "reference swap", "FSDP2 copies", "fsdp2_reduce_bytes", "eager HF layers",
     "ENGINE_CONTEXT default of 128", "ModelSpec.mtp_layers", "padded_call_bytes",
     "LoRA fused into the TP shards", "per-sequence loss under packing", "overlap contention",
     "layer_launches", "chunked prefill of a long context", "fp64 MoE router",
     "packed micro-batches padded under pipeline parallelism", "AReaL's realhf trainer",
     "sharded_call_bytes", "version gate", "pageable offload", "Hybrid Engine host floor",
     "verl fully-async step", "DeepSpeed blocking pipeline p2p", "embedding gradient",
     "busiest EP rank", "prefix sharing", "KV admission", "environment step",
     "unfused MoE permutation"],
)
def test_readme_time_terms_table_has_term(term):
    assert term in _table_terms()


def _notebook_code(name: str) -> str:
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize(
    "switch",
    ["'refit': 'disk'", "reference_swap_s", "--zero 1", "async_engine",
     "'speculative_draft': 'mtp'", "mtp_layers", "'fused_loss': True", "overlap_slowdown",
     "layer_launches", "padded_share", "'router_dtype': 'fp32'", "sharded_call_bytes",
     "version gate", "pageable_offload_s", "moe_rank_imbalance", "for_params",
     "HYBRID_ENGINE_LAUNCH_S_PER_LAYER", "pp_serial_p2p", "embedding_grad_bytes",
     "--no-prefix-caching", "host work"],
)
def test_notebook_04_shows_switch(switch):
    assert switch in _notebook_code("04_placement.ipynb")


def test_help_states_the_pageable_rate_and_the_ep_imbalance_as_their_constants():
    """--offload and --ep name the values of rlmcost.perf.host_offload (NeMo RL PR 1404's
    pageable rate) and rlmcost.perf.moe_imbalance (UltraEP's low end), so the text cannot drift
    from the constants it states."""
    from rlmcost.perf.host_offload import PAGEABLE_OFFLOAD_BYTES_PER_S
    from rlmcost.perf.moe_imbalance import EP_RANK_IMBALANCE_RATIO

    helps = _help_of("grpo")
    assert f"{PAGEABLE_OFFLOAD_BYTES_PER_S.value / 1e9:.2f} GB/s" in helps["--offload"]
    assert "pageable" in helps["--offload"]
    assert f"{EP_RANK_IMBALANCE_RATIO.value:.2f} x the mean" in helps["--ep"]
