"""The MoE fields' notes come from one function (rlmcost.perf.moe_notes.moe_notes) for
``rlmcost train`` (train_step_time's notes) and the RL queries (pass_options.worker_notes),
with the texts they had before (pinned here word for word: the dense model's per-field notes,
the dense query's one note, the priced capacity and unfused-permutation notes, the Hugging
Face trainer's no-effect note); ``parallel.validate.check_layout`` checks the capacity and
leaves its note to the step (before, it built its own copy of the dense note)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.moe_capacity import capacity_note
from rlmcost.parallel.validate import check_layout
from rlmcost.perf.moe_notes import DENSE_QUERY_NOTE, moe_notes
from rlmcost.perf.moe_permute import UNFUSED_PERMUTE_NOTE
from rlmcost.perf.step_pass import StepOptions
from rlmcost.specs import get_model

DENSE_CF = "MoE capacity factor 1.25: llama-3.1-8b is dense, no effect"
DENSE_PERMUTE = "moe_permute_fusion off: llama-3.1-8b is dense, no MoE permutation to price (no effect)"  # noqa: E501
HF_PERMUTE = ("moe_permute_fusion off: verl's trainer runs the Hugging Face model at this "
              "layout (no Megatron-core permutation), no effect")  # fmt: skip
"""The texts the three call sites built before (rlmcost/parallel/validate.py check_layout,
rlmcost/perf/train_step.py, rlmcost/placement/pass_options.py worker_notes at 49d49a8)."""

UNFUSED = StepOptions(moe_permute_fusion=False)
CF = Layout(moe_capacity_factor=1.25)
PAD = Layout(moe_capacity_factor=1.25, moe_pad_to_capacity=True)


def test_one_model_dense_and_moe() -> None:
    dense, moe = get_model("llama-3.1-8b").arch(), get_model("qwen3-30b-a3b").arch()
    assert moe_notes([CF], UNFUSED, dense) == [DENSE_CF, DENSE_PERMUTE]
    assert moe_notes([Layout()], StepOptions(), dense) == []
    assert moe_notes([CF], UNFUSED, moe) == [capacity_note(1.25, False), UNFUSED_PERMUTE_NOTE]
    assert moe_notes([PAD], StepOptions(), moe) == [capacity_note(1.25, True)]


def test_a_query_dense_and_moe() -> None:
    assert DENSE_QUERY_NOTE == ("MoE fields (capacity factor, moe_permute_fusion) given on "
                                "dense models: no routed experts, no effect")  # fmt: skip
    assert moe_notes([CF, CF], None, moe=False) == [DENSE_QUERY_NOTE]
    assert moe_notes([Layout()], StepOptions(), moe=False, unfused=True) == [DENSE_QUERY_NOTE]
    assert moe_notes([Layout()], None, moe=False, unfused=False) == []
    # asked for but not priced: a Hugging Face trainer's fused options
    assert moe_notes([CF, PAD, CF], StepOptions(), moe=True, unfused=True, framework="verl") == [
        capacity_note(1.25, False), capacity_note(1.25, True), HF_PERMUTE]
    assert moe_notes([], UNFUSED, moe=True, unfused=True) == [UNFUSED_PERMUTE_NOTE]
    assert moe_notes([], UNFUSED, moe=True, unfused=False) == []


def test_check_layout_leaves_the_note_to_the_step() -> None:
    assert check_layout(get_model("llama-3.1-8b").arch(), CF) == []


def _notes(*args: str) -> list[str]:
    r = CliRunner().invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    return list(json.loads(r.stdout)["notes"])


def test_the_commands_print_them_once() -> None:
    flags = ("--moe-capacity-factor", "1.25", "--no-moe-permute-fusion")
    train = ("train", "--gpus", "16", "--seq", "4096", "--batch", "64", "--zero", "1")
    dense = _notes(*train, "-m", "llama-3.1-8b", *flags)
    assert [n for n in dense if "MoE" in n or "moe_" in n] == [DENSE_CF, DENSE_PERMUTE]
    moe = _notes(*train, "-m", "qwen3-30b-a3b", "--ep", "8", *flags)
    assert moe.count(capacity_note(1.25, False)) == 1 and moe.count(UNFUSED_PERMUTE_NOTE) == 1
    rl = _notes("grpo", "-m", "llama-3.1-8b", "--gpus", "16", "--zero", "1", *flags)
    assert [n for n in rl if "MoE" in n or "moe_" in n] == [DENSE_QUERY_NOTE]
