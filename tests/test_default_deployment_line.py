"""A query without --framework says which deployment it assumed: NeMo RL's preset, its summary
and the flags that set the same by hand (issue 18: the flagless query must 'say which default
deployment it assumed'). Independent reference: the preset's own Default entries
(rlmcost/frameworks/preset_data/nemo_rl.py, each citing NeMo RL's
examples/configs/grpo_math_1B.yaml)."""

from __future__ import annotations

import json

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
    # every flag of the preset for an 8B actor (grpo_math_8B.yaml's micro-batches), e.g. FSDP2
    # as --zero 3 and sequence packing
    assert get_preset("nemo-rl").for_params(8_030_261_248).flags() in line
    assert "--micro-batch 1 --global-batch 512" in line
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


def test_ppo_lists_only_the_options_the_preset_applies_to_it() -> None:
    """PPO keeps its reward model under every preset (presets.preset_options' docstring), so the
    default deployment's flags must not claim ``--reward rule`` for it; the output names what
    was left out instead, and the run's own reward line agrees (a reward model's forward)."""
    res = CliRunner().invoke(app, ["ppo", "-m", "llama-3.2-1b", "--gpus", "8"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    line = text[text.index("deployment: nemo-rl's defaults"):]
    flags = line[line.index("as flags:"):line.index("; not applied to ppo:")]
    assert "--reward rule" not in flags and "--recompute-logprobs" in flags
    assert "not applied to ppo: --reward rule)" in line
    assert "Reward: reward model llama-3.2-1b" in text


def test_the_flagless_json_names_the_default_deployment_too() -> None:
    """--json carries the same deployment line among its notes (the text prints it last), so
    a script reading the JSON learns which default deployment was assumed, not only
    ``deployment.framework``."""
    import json

    query = ["grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "16", "-B", "128", "-K", "16",
             "-S", "1", "-T", "1060", "--json"]  # fmt: skip
    res = CliRunner().invoke(app, query)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["deployment"]["framework"] == "nemo-rl"
    lines = [n for n in out["notes"] if n.startswith("deployment: ")]
    assert len(lines) == 1
    assert "(the default deployment: NeMo RL: DTensor (FSDP2)" in lines[0]
    assert get_preset("nemo-rl").for_params(8_030_261_248).flags() in lines[0]
    bare = CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8",
                                    "--framework", "none", "--json"])  # fmt: skip
    assert bare.exit_code == 0, bare.output
    assert any("rlmcost's bare layout" in n for n in json.loads(bare.stdout)["notes"])


def test_a_split_placement_is_said_beside_the_co_located_summary() -> None:
    # the summary says "vLLM colocated on the same GPUs" (the preset's own placement, NeMo RL's
    # generation.colocated.enabled: true); a query that gives models GPUs of their own says so,
    # or the line contradicts its own device-group table. The Table IX placements that keep
    # every model on all GPUs (fusion, hybrid; ac-shared) add nothing.
    def line(*extra: str) -> str:
        res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8", *extra,
                                       "--json"])  # fmt: skip
        assert res.exit_code == 0, res.output
        return json.loads(res.output)["notes"][-1]

    split = "; the models placed on the GPUs {} gives, not co-located"
    assert split.format("--placement async") in line("--placement", "async", "--staleness", "1")
    assert split.format("--groups") in line("--groups", "rollout=4,actor+reference=4")
    for same in ([], ["--placement", "fusion"], ["--placement", "hybrid"]):
        assert "not co-located" not in line(*same)
