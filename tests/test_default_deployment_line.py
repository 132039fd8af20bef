"""A query without --framework says which deployment it assumed: NeMo RL's preset, its summary
and the flags that set the same by hand (issue 18: the flagless query must 'say which default
deployment it assumed'). Independent reference: the preset's own Default entries
(rlmcost/frameworks/presets.py, each citing NeMo RL's examples/configs/grpo_math_1B.yaml)."""

from __future__ import annotations

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.frameworks.presets import get_preset


def test_the_flagless_query_names_the_default_deployment_and_its_flags() -> None:
    res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "16",
                                   "-B", "128", "-K", "16", "-S", "1", "-T", "1060"])  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    line = text[text.index("deployment: nemo-rl's defaults"):]
    assert "(the default deployment: NeMo RL: DTensor (FSDP2)" in line
    # every flag of the preset, e.g. FSDP2 as --zero 3 and sequence packing
    assert get_preset("nemo-rl").flags() in line
    assert "--zero 3" in line and "--packing" in line
    # one flag that sets two fields (training and forward packing) is written once
    assert line.count("--packing") == 1


def test_an_explicit_framework_keeps_the_short_line() -> None:
    res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8",
                                   "--framework", "verl"])  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "deployment: verl's defaults, listed by" in text
    assert "as flags:" not in text
