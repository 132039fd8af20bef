"""What a user reads of a query: the title's parallel degrees multiply to its GPUs (cp and ep
named where they are not 1), a device-group report names its model as the one-group report
does, and a value outside an option's choices says the nearest choice, or for `--framework
miles` (a fork of slime without a preset of its own) what to give instead.

Independent references: slime's example scripts/run-qwen3-next-80B-A3B.sh @624b824a (TP 2,
PP 4, CP 4, EP 8 on 32 GPUs: 2 x 4 x 4 x dp 1 = 32); the choices are the options' enums
(rlmcost.frameworks.preset_model.FrameworkChoice, rlmcost.placement.kinds.Config)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli._app import choice_message
from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import framework_hint, get_preset


def _run(*argv: str, code: int = 0) -> str:
    r = CliRunner().invoke(app, list(argv))
    assert r.exit_code == code, r.output
    return r.output


def test_title_degrees_multiply_to_the_gpus() -> None:
    """slime's Qwen3-Next tier: TP 2, PP 4, CP 4, EP 8 on 32 GPUs; the title had said
    'tp=2, pp=4, dp=1' (8 GPUs' worth) beside '32 x h100-sxm'."""
    out = _run("grpo", "-m", "qwen3-next-80b-a3b", "--framework", "slime", "--gpus", "32")
    title = out.splitlines()[0]
    assert "32 x h100-sxm (tp=2, pp=4, cp=4, ep=8, dp=1, zero=1)" in title
    deg = {k: int(v) for k, v in re.findall(r"\b(tp|pp|cp|dp)=(\d+)", title)}
    assert deg["tp"] * deg["pp"] * deg["cp"] * deg["dp"] == 32


def test_title_without_cp_ep_unchanged() -> None:
    out = _run("grpo", "-m", "llama-3.2-1b", "--gpus", "8", "--framework", "none")
    assert "8 x h100-sxm (tp=1, pp=1, dp=8, zero=0)" in out.splitlines()[0]


def test_group_report_names_the_model() -> None:
    """A placement's report ('grpo, placement async: 8 x h100-sxm') named no model."""
    out = _run("grpo", "-m", "llama-3.2-1b", "--gpus", "8", "--placement", "async",
               "--staleness", "1")  # fmt: skip
    assert "grpo on llama-3.2-1b, placement async: 8 x h100-sxm" in out.splitlines()[0]


@pytest.mark.parametrize(("argv", "said"), [
    (("grpo", "-m", "8b", "--framework", "verll"), "did you mean 'verl'?"),
    (("grpo", "-m", "8b", "--framework", "nemo_rl"), "did you mean 'nemo-rl'?"),
    (("grpo", "-m", "8b", "--framework", "miles"), "--framework slime gives their defaults"),
    (("ppo", "-m", "8b", "--placement", "split"), "did you mean 'disaggregated'?"),
    (("grpo", "-m", "8b", "--ckpt", "fulll"), "did you mean 'full'?"),
])  # fmt: skip
def test_choice_errors_say_what_to_give(argv: tuple[str, ...], said: str) -> None:
    out = _run(*argv, code=2)
    line = out.strip().splitlines()[-1]
    assert line.startswith(f"error: {argv[-2]} '{argv[-1]}' is not one of ")
    assert said in line and "Value error" not in line


def test_choice_message_leaves_other_messages() -> None:
    assert choice_message("No such option: --lora") == "No such option: --lora"
    text = ("Invalid value for '--zero': Value error, '4' is not one of '0', '1', '2', '3'.")
    assert choice_message(text) == "--zero '4' is not one of '0', '1', '2', '3'"


def test_library_framework_hint() -> None:
    assert framework_hint("slim") == "did you mean 'slime'?"
    assert framework_hint("zzz") == ""
    with pytest.raises(SpecError, match="import miles"):
        get_preset("miles")


@pytest.mark.parametrize("name", ["slime", "miles"])
def test_import_without_arguments_says_what_to_give(name: str) -> None:
    """A bare `rlmcost import slime|miles` said the Megatron model arguments matched 70 models
    (there were none); `import miles`'s errors told a miles user to run `import slime`."""
    line = _run("import", name, code=2).strip().splitlines()[-1]
    assert line.startswith("error: give the train.py arguments after `--`")
    assert f"rlmcost import {name} --" in line
    line = _run("import", "miles", "--", "--lr", "1e-6", code=2).strip().splitlines()[-1]
    assert "rlmcost import miles --model" in line and "import slime" not in line


def test_offline_memory_caption_names_no_engine() -> None:
    """DPO (Table IV: offline, no Generation stage) had its memory caption say generation
    runs in an engine reserving --gpu-memory-utilization, and TRL's 'no --sleep'."""
    text = " ".join(_run("dpo", "-m", "llama-3.2-1b", "--gpus", "8", "--framework", "trl")
                    .split())  # fmt: skip
    assert "No engine: an offline method generates nothing" in text
    assert "reserves --gpu-memory-utilization" not in text and "no --sleep" not in text
    text = " ".join(_run("grpo", "-m", "llama-3.2-1b", "--gpus", "8").split())
    assert "Generation runs in an engine that reserves --gpu-memory-utilization" in text


def test_frameworks_lists_the_presets_named() -> None:
    """`rlmcost frameworks` printed every preset's tables (1,600+ lines) with no way to ask
    for one; a name not a preset is one error with the nearest name."""
    out = _run("frameworks", "slime", "--json")
    assert [f["framework"] for f in json.loads(out)["frameworks"]] == ["slime"]
    text = _run("frameworks", "slime")
    assert "--framework slime:" in text and "--framework verl" not in text
    line = _run("frameworks", "slimee", code=2).strip().splitlines()[-1]
    assert "did you mean 'slime'?" in line
