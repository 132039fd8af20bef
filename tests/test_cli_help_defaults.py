"""What the help says a query takes when a flag is not given.

Without --framework an algorithm command follows the default deployment's preset (nemo-rl's,
`rlmcost.frameworks.preset_model.DEFAULT_FRAMEWORK`), so an option a preset sets defaults to the
preset's value: its help must say so, not state rlmcost's bare-layout value as the default
(`grpo --help` said "--zero ... (default 0)" while `grpo -m 8b --gpus 8` ran ZeRO-3). The
presets' own tables (`Preset.defaults` and each size tier's, the rows of `rlmcost frameworks`)
are the reference for which flags a framework sets. `train` takes no --framework: its layout
options keep their bare defaults.
"""

import re

import typer
import typer.main

from rlmcost.cli import app
from rlmcost.frameworks.preset_model import Framework
from rlmcost.frameworks.presets import get_preset


def _helps(command: str) -> dict[str, str]:
    root = typer.main.get_command(app)
    cmd = root.get_command(typer.Context(root), command)
    return {n: p.help or "" for p in cmd.params for n in (*p.opts, *p.secondary_opts)}


def _preset_flags() -> set[str]:
    """Every flag some framework preset or size tier sets (the `flag` column of `rlmcost
    frameworks`)."""
    flags: set[str] = set()
    for fw in Framework:
        preset = get_preset(fw.value)
        rows = [*preset.defaults, *(d for s in preset.sized for d in s.defaults)]
        for d in rows:
            flags |= set(re.findall(r"--[a-z][a-z0-9-]*", d.flag))
    return flags


def test_preset_flags_say_the_framework_sets_their_default():
    helps = _helps("grpo")
    flags = _preset_flags()
    assert {"--zero", "--ckpt", "--rollout-tp", "--gpu-memory-utilization"} <= flags
    silent = sorted(f for f in flags if f in helps and "framework" not in helps[f])
    assert silent == [], f"help states a default the preset overrides: {silent}"


def test_zero_help_names_the_bare_default_under_framework_none():
    text = _helps("grpo")["--zero"]
    assert "--framework none" in text and "0 under" in text
    assert "(default 0" not in text


def test_train_layout_help_keeps_its_own_defaults():
    """`train` has no --framework: its layout options name their plain defaults."""
    helps = _helps("train")
    assert "--framework" not in helps
    for flag in ("--tp", "--pp", "--cp", "--ep", "--etp", "--sp", "--zero", "--ckpt",
                 "--micro-batch", "--pp-first-layers", "--pp-loss-slot"):  # fmt: skip
        assert "framework" not in helps[flag], (flag, helps[flag])
    assert "(default 0; 3 = FSDP)" in helps["--zero"]
    # train routes MoE tokens evenly (README): no busiest-rank factor in its --ep help
    assert "1.30" not in helps["--ep"]


def test_algorithm_docstring_names_the_default_deployment():
    root = typer.main.get_command(app)
    grpo = root.get_command(typer.Context(root), "grpo")
    dpo = root.get_command(typer.Context(root), "dpo")
    assert "nemo-rl's preset (the default deployment" in (grpo.help or "")
    assert "engine replica" in (grpo.help or "")
    assert "engine replica" not in (dpo.help or "")  # DPO generates nothing


def test_caption_of_an_actor_alone_says_so():
    """TRL's GRPO preset runs no reference (beta 0.0: `rlmcost frameworks`) and a verifier:
    the actor is the only model, and the caption said "Models: actor=X, none."."""
    import rlmcost
    from rlmcost.cli.algorithms_render import _caption

    alone = _caption(rlmcost.estimate("grpo", "llama-3.2-1b", gpus=1, framework="trl"))
    assert "Models: actor=llama-3.2-1b only." in alone and ", none." not in alone
    kl = _caption(rlmcost.estimate("grpo", "llama-3.2-1b", gpus=1))  # nemo-rl: a KL reference
    assert "Models: actor=llama-3.2-1b, reference=llama-3.2-1b." in kl


def test_compare_lists_the_models_each_algorithm_runs():
    """`compare`'s caption said "Critic/reward/reference = the actor's model" while GRPO under
    the default preset scores with a verifier (no reward model): a row names the roles each
    algorithm runs (`Estimate.models`)."""
    from typer.testing import CliRunner

    from rlmcost.cli import app

    r = CliRunner().invoke(app, ["compare", "ppo", "grpo", "-m", "llama-3.2-1b"],
                           env={"COLUMNS": "200"}, terminal_width=200)  # fmt: skip
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if line.startswith("│ models"))
    assert "actor, reward, reference, critic" in row  # PPO: all four
    assert row.rstrip(" │").endswith("actor, reference")  # GRPO: a verifier, no reward model
    assert "Critic/reward/reference" not in r.output


def test_validate_source_help_names_every_rl_framework():
    """`validate --source` takes each framework of rl_runs.json; its help left out miles."""
    import json
    from pathlib import Path

    import rlmcost

    data = Path(rlmcost.__file__).parent / "perf" / "data" / "rl_runs.json"
    frameworks = {r["framework"] for r in json.loads(data.read_text())["runs"]}
    text = _helps("validate")["--source"]
    assert "miles" in frameworks
    assert [f for f in sorted(frameworks) if f not in text] == []


def test_plan_hardware_help_gives_the_pool_syntax():
    """`plan --hardware h20:32,h100:16` searches a pool (rlmcost.plan.kinds.parse_pool); its help
    said only "Accelerator", as the algorithm commands' does."""
    from rlmcost.plan.kinds import parse_pool

    text = _helps("plan")["--hardware"]
    assert "NAME:GPUS" in text and "h20:32,h100:16" in text
    assert parse_pool("h20:32,h100:16") == (("h20", 32), ("h100-sxm", 16))
    assert "NAME:GPUS" not in _helps("grpo")["--hardware"]  # one accelerator there
