"""Hostile launch scripts end in a one-line error, in bounded time and memory, never a hang or a
traceback: bash's arithmetic is signed 64-bit (``$((2**64))`` is 0, every result wraps: the
Bash Reference Manual, "Shell Arithmetic": "fixed-width integers with no check for overflow"),
a variable's value is capped at the script size rlmcost reads, and expansions nested thousands
deep are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.frameworks.shell_arith import Unresolved, integer

LAUNCH = "python3 -m verl.trainer.main_ppo data.train_batch_size=$X\n"


@pytest.mark.parametrize(("expr", "value"), [
    ("2**63", -(2**63)),  # wraps to the most negative 64-bit integer, as bash prints it
    ("2**64", 0),
    ("((2**64)**64)**64", 0),
    ("9223372036854775807 + 1", -(2**63)),
    ("-7 / 2", -3),  # C's truncation toward zero
    ("-7 % 2", -1),
    ("3 * 4 + 2**10", 1036),
])  # fmt: skip
def test_arithmetic_wraps_as_bash(expr: str, value: int) -> None:
    assert integer(expr, expr) == value


def test_an_error_names_a_long_expression_briefly() -> None:
    expr = "+".join(["x"] * 3000)
    with pytest.raises(Unresolved) as exc:
        integer(expr, expr)
    assert len(str(exc.value)) < 300


@pytest.mark.parametrize(("name", "text", "said"), [
    ("squares", "X=3\n" + "X=$((X*X))\n" * 40 + LAUNCH, "set actor_rollout_ref.model.path"),
    ("doubling", "A=abcdefgh\n" + 'A="$A$A"\n' * 40 + LAUNCH, "grows past 1,048,576"),
    ("array", 'A=("")\n' + 'A=("${A[@]}" "${A[@]}")\n' * 40 + LAUNCH, "grows past"),
    ("nested", "B=" + "${A:-" * 3000 + "x" + "}" * 3000 + "\n" + LAUNCH, "nested too deep"),
])  # fmt: skip
def test_hostile_scripts_end_in_one_line(tmp_path: Path, name: str, text: str,
                                         said: str) -> None:  # fmt: skip
    script = tmp_path / f"{name}.sh"
    script.write_text(text)
    res = CliRunner().invoke(app, ["import", "verl", str(script)])
    assert res.exit_code != 0
    assert "Traceback" not in res.output and res.exception is None or \
        isinstance(res.exception, SystemExit)  # fmt: skip
    assert said in " ".join(res.output.split())



def test_an_array_never_set_is_asked_for_and_may_be_given_empty(tmp_path: Path) -> None:
    """``"${EVAL_ARGS[@]}"`` of an array the script never sets is asked for, not taken as no
    words: bash gives no words, or a scalar's of the same name from the environment (arrays are
    not exported, scalars are); ``--env EVAL_ARGS=`` gives none (slime's scripts comment out
    ``EVAL_ARGS=(...)`` and still pass it; THUDM/slime @624b824a scripts/run-qwen3-4B.sh)."""
    from rlmcost.errors import SpecError
    from rlmcost.frameworks.shell_script import read_launch

    script = tmp_path / "run.sh"
    script.write_text('python3 -m verl.trainer.main_ppo "${EVAL_ARGS[@]}" trainer.nnodes=1\n')
    launch = read_launch(script, ("verl.trainer.main_ppo",), [], {})
    with pytest.raises(SpecError, match="--env EVAL_ARGS=VALUE"):
        launch.require(sorted(launch.unresolved))
    given = read_launch(script, ("verl.trainer.main_ppo",), [], {"EVAL_ARGS": ""})
    assert given.words == ["trainer.nnodes=1"] and not given.unresolved
