"""Every hint holds: the fix an error message suggests is taken from the message itself and run;
it must be accepted (exit 0)."""

import re

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "160"})


def _replace(args: list[str], flag: str, value: str) -> list[str]:
    out = list(args)
    if flag in out:
        out[out.index(flag) + 1] = value
    else:
        out += [flag, value]
    return out


CASES = [
    # (bad command, pattern capturing the suggestion, command built from the suggestion)
    (
        ["ppo", "-m", "70b", "--tp", "16", "--gpus", "16", "--zero", "3"],
        r"--rollout-tp (\d+) with a training --tp of at most (\d+)",
        lambda a, m: _replace(_replace(a, "--tp", m[2]), "--rollout-tp", m[1]),
    ),
    (
        ["rloo", "-m", "gpt-2", "--groups", "rollout=1,actor=1"],
        r"--groups \.\.\.,(\S+=\d+)",
        lambda a, m: _replace(a, "--groups", "rollout=1,actor=1," + m[1]),
    ),
    (
        ["grpo", "-m", "gpt-2", "--gpus", "2", "--offload", "params", "--framework", "none"],
        r"add (--zero 3)",
        lambda a, m: a + m[1].split(),
    ),
    (
        ["grpo", "-m", "gpt-2", "--gpus", "2", "--framework", "verl", "--max-tokens-per-gpu",
         "100"],
        r"give at least (\d+)",
        lambda a, m: _replace(a, "--max-tokens-per-gpu", m[1]),
    ),
    (
        ["dapo", "-m", "gpt-2", "--reward", "rule"],
        r"drop (--reward rule)",
        lambda a, m: a[: a.index("--reward")] + a[a.index("--reward") + 2:],
    ),
    (
        ["ppo", "-m", "gpt-2", "-H", "a100"],
        r"'a100' is ambiguous: (a100-40gb) or (a100-80gb)\?",
        lambda a, m: _replace(a, "-H", m[2]),
    ),
    (
        ["ppo", "-m", "30b", "--gpus", "8", "--zero", "3"],
        r"'30b' is ambiguous: (qwen3-30b-a3b) or nemotron-3-nano-30b-a3b\?",
        lambda a, m: _replace(a, "-m", m[1]),
    ),
    (
        ["ppo", "-m", "8b", "--tp", "3"],
        r"try one of ([\d, ]+)",
        lambda a, m: _replace(a, "--tp", m[1].split(",")[-1].strip()),
    ),
    (
        ["ppo", "-m", "8b", "--gpus", "12", "--tp", "8", "--zero", "3"],
        r"tp\*pp\*cp=(\d+) must divide",
        lambda a, m: _replace(a, "--gpus", str(2 * int(m[1]))),
    ),
]


@pytest.mark.parametrize(("bad", "pattern", "fix"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_the_suggested_fix_is_accepted(bad, pattern, fix):
    r = run(*bad)
    assert r.exit_code == 2, r.output
    found = re.search(pattern, r.output)
    assert found, r.output  # the message names the fix
    fixed = fix(bad, found)
    again = run(*fixed)
    assert again.exit_code == 0, (fixed, again.output)


def test_a_pool_given_to_one_run_points_to_groups_and_plan():
    # `--hardware h20:4,h100:4` is a pool, which only `plan` searches (README "a pool"); one
    # run gives each group its device with --groups ROLE=N@HW
    r = run("grpo", "-m", "gpt-2", "--hardware", "h20:4,h100:4")
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert '--groups "rollout=4@h20,actor=4@h100"' in text
    assert "rlmcost plan ALGORITHM --hardware h20:4,h100:4" in text
    assert "did you mean" not in text
    r = run("grpo", "-m", "gpt-2", "--hardware", "h20:4")
    assert r.exit_code == 2 and "--hardware h20 --gpus 4" in " ".join(r.output.split())
