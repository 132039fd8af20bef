"""Launch scripts that choose values in an ``if`` (rlmcost.frameworks.shell_test, the lexer's
if arms, shell_script): a condition over values the script gives is decided as bash's ``test``
decides it (bash 5.2's test builtin and ``[[ ]]``; each case below is what bash gives), the
arm taken is read and the others skipped; a condition the script cannot decide leaves its
values unknown, the one-line error naming them as before. verl's own script is copied under
tests/data/scripts with its repository path and commit on its first line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import import_verl_script
from rlmcost.frameworks.shell_script import read_launch
from rlmcost.frameworks.shell_test import condition

SCRIPTS = Path(__file__).parent / "data" / "scripts"
TRTLLM = SCRIPTS / "verl_qwen2-7b_math_megatron_trtllm.sh"


@pytest.mark.parametrize(("words", "value"), [
    (["[", "-z", "", "]"], True), (["[", "-n", "", "]"], False), (["[", "x", "]"], True),
    (["[", "-z", "]"], True),  # `[ -z $UNSET ]`: one argument, not empty: true
    (["[", "4", "-eq", "4", "]"], True), (["[", " 8", "-gt", "10", "]"], False),
    (["[", "3", "-le", "3", "]"], True), (["[", "a", "=", "a", "]"], True),
    (["[[", "megatron", "==", "megatron", "]]"], True), (["[", "a", "!=", "a", "]"], False),
    (["!", "[", "a", "=", "b", "]"], True), (["[", "!", "a", "=", "b", "]"], True),
    (["test", "1", "-ne", "0"], True), (["true"], True), (["false"], False),
    (["[", "abc", "-eq", "1", "]"], None),  # bash: "integer expression expected"
    (["[[", "abc", "==", "a*", "]]"], None),  # a pattern, or quoted text: not known here
    (["[", "-d", "/root/models", "]"], None), (["command", "-v", "nvidia-smi"], None),
    (["[", "\x00X\x00", "=", "a", "]"], None),  # a value the script does not give
])
def test_conditions_as_bash_test_decides(words, value) -> None:
    assert condition(words) is value


def test_verl_trtllm_takes_the_arm_of_its_tp(tmp_path) -> None:
    """verl examples/grpo_trainer/run_qwen2-7b_math_megatron_trtllm.sh @b178a3cd5: TP=${1:-4},
    ``if [ $TP -eq 4 ]; then MAX_BATCH_SIZE=1024; else MAX_BATCH_SIZE=384; fi`` and
    ``"${@:2}"`` (the words after the first given): as --env gives the arm's value."""
    q = import_verl_script(TRTLLM, [], [], None, "h100")
    given = import_verl_script(TRTLLM, [], ["MAX_BATCH_SIZE=1024"], None, "h100")
    assert q.flags == given.flags and any("the if at line 21" in n for n in q.notes)
    two = import_verl_script(TRTLLM, ["2", "trainer.nnodes=1"], [], None, "h100")
    given = import_verl_script(TRTLLM, ["2", "trainer.nnodes=1"], ["MAX_BATCH_SIZE=384"],
                               None, "h100")  # fmt: skip
    assert two.flags == given.flags and two.flags != q.flags
    launch = read_launch(TRTLLM, ("verl.trainer.main_ppo",), ["2", "a=1", "b=2"], {})
    assert launch.words[-2:] == ["a=1", "b=2"]
    assert "actor_rollout_ref.rollout.max_num_seqs=384" in launch.words


def test_elif_else_nested_and_joined(tmp_path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(
        'B=fsdp\nN=""\nif [[ $B == "megatron" ]]; then\n  C=m\nelif [ "$B" = fsdp ]; then\n'
        "  C=f\n  if [ -z \"$N\" ] || [ \"$N\" -le 0 ]; then N=8; fi\nelse\n  C=x\nfi\n"
        "if [ $B = fsdp ] && false; then D=1; else D=2; fi\n"
        "python3 train.py --c $C --n $N --d $D\n")
    launch = read_launch(script, ("train.py",), [], {})
    assert launch.words == ["--c", "f", "--n", "8", "--d", "2"] and not launch.unresolved
    assert any("the ifs at lines 3, 7, 11" in n or "lines 3, 7, 11" in n for n in launch.notes)


def test_an_undecided_condition_keeps_every_arm_unknown(tmp_path) -> None:
    """slime scripts/run-qwen3-4B.sh's shape: a GPU count from nvidia-smi, then an if over
    it: not decided, the one-line error naming --env NUM_GPUS=VALUE."""
    script = tmp_path / "run.sh"
    script.write_text(
        "if command -v nvidia-smi >/dev/null 2>&1; then\n  G=$(nvidia-smi -L | wc -l)\n"
        "else\n  G=0\nfi\nNUM_GPUS=${NUM_GPUS:-$G}\n"
        'if [ -z "$NUM_GPUS" ] || [ "$NUM_GPUS" -le 0 ]; then\n  NUM_GPUS=8\nfi\n'
        "python3 train.py --actor-num-gpus-per-node $NUM_GPUS\n")
    launch = read_launch(script, ("train.py",), [], {})
    with pytest.raises(SpecError, match=r"\$NUM_GPUS .* set under a condition .*--env "
                                        r"NUM_GPUS=VALUE"):  # fmt: skip
        launch.require(list(launch.unresolved))
    assert read_launch(script, ("train.py",), [], {"NUM_GPUS": "4"}).words[-1] == "4"


@pytest.mark.parametrize("text", [
    "fi\nfi\nelse\npython3 train.py --a 1\n",  # closings with no if
    "if [ 1 -eq 1 ]; then\n" * 300 + "python3 train.py --a 1\n",  # never closed, deep
    "if\nthen\nfi\npython3 train.py --a 1\n",  # an if with no condition
    "if [ 1 -eq 1 ]; then :; elif; else A=2; fi\npython3 train.py --a 1\n",
])
def test_hostile_if_blocks_read_or_one_line(tmp_path, text) -> None:
    script = tmp_path / "run.sh"
    script.write_text(text)
    assert read_launch(script, ("train.py",), [], {}).words == ["--a", "1"]


def test_a_set_variable_read_with_a_default_keeps_its_value(tmp_path) -> None:
    """``${A:-d}`` / ``${A:=d}`` of a set A is A's value (bash 5.2 prints ``1 1 5 1``); it had
    been an unknown value (verl's trtllm script: TP=${1:-4} with $1 given)."""
    script = tmp_path / "run.sh"
    script.write_text("A=1\nB=${A:-2}\nC=${A:=3}\nD=${E-5}\npython3 train.py $B $C $D $A\n")
    assert read_launch(script, ("train.py",), [], {}).words == ["1", "1", "5", "1"]
    script.write_text("python3 train.py ${A:?not set}\n")
    launch = read_launch(script, ("train.py",), [], {})
    assert "which rlmcost does not follow" in launch.unresolved[0].why


def test_an_if_in_a_function_is_decided_where_the_function_is_called(tmp_path) -> None:
    """A function body runs where it is called, with the values of then: bash, calling f
    after Y=a, gives --x 2 (before, the body was read where it is defined, its if undecided
    and X unknown)."""
    script = tmp_path / "run.sh"
    script.write_text('X=1\nY=b\nf() {\n  if [ "$Y" = a ]; then\n    X=2\n  fi\n}\nY=a\nf\n'
                      "python3 train.py --x $X\n")
    launch = read_launch(script, ("train.py",), [], {})
    assert launch.words == ["--x", "2"] and not launch.unresolved
