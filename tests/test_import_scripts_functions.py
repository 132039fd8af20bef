"""Launch scripts' ``case`` blocks and shell functions (rlmcost.frameworks.shell_lexer,
shell_test, shell_nested), read as data: a ``case`` whose word the script's values decide
takes the arm bash takes; a function's body runs where the script calls it, with the call's
words as ``$1``...; each value asserted is what bash 5.2 prints for the same script (``echo``
in place of the launch). miles' p2p weight-transfer scripts
(examples/infra_features/p2p_weight_transfer/run-*-profile.sh @31f1ca961) build every argument
array inside ``run_mode() { local mode="$1" ... }``, and run-glm5-disagg-profile.sh picks
its layout by ``case "${MODEL_NAME}" in``; before, each was refused ("set under a
condition")."""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_script import read_launch

CASE = """MODE=${1:-p2p}
case "$MODE" in
  p2p|rdma) X=1 ;;
  broadcast)
    X=2
    ;;
  *) X=3 ;;
esac
Y=none
case $MODE in (b*) Y=b;; p?p) Y=p;; esac
case "$MODE" in "p*") Z=quoted;; *) Z=glob;; esac
python3 train.py --x $X --y $Y --z $Z
"""

FUNCTION = """N=0
run_mode() {
  local mode="$1"
  ARGS=(--n 1)
  if [ "$mode" = "p2p" ]; then
    ARGS+=(--update-weight-transfer-mode p2p)
  else
    ARGS+=(--update-weight-transfer-mode broadcast)
  fi
  N=$((N + 1))
  python3 train.py "${ARGS[@]}" --nargs $# --calls $N
}
run_mode broadcast
run_mode p2p x
"""


def _launch(tmp_path, text: str, extra: list[str] | None = None):
    script = tmp_path / "run.sh"
    script.write_text(text)
    return read_launch(script, ("train.py",), extra or [], {})


@pytest.mark.parametrize(("args", "words"), [
    ([], "--x 1 --y p --z glob"),
    (["broadcast"], "--x 2 --y b --z glob"),
    (["other"], "--x 3 --y none --z glob"),
    (["p*"], "--x 3 --y none --z quoted"),  # a quoted pattern matches literally
])  # fmt: skip
def test_a_case_takes_the_arm_bash_takes(args, words, tmp_path) -> None:
    launch = _launch(tmp_path, CASE, args)
    assert launch.words == words.split() and not launch.unresolved


def test_a_case_of_an_unknown_word_leaves_its_arms_unknown(tmp_path) -> None:
    launch = _launch(tmp_path, 'case "$UNSET" in a) X=1;; *) X=2;; esac\npython3 train.py $X\n')
    assert "set under a condition" in launch.unresolved[0].why
    bad = tmp_path / "bad.sh"
    bad.write_text("case $A in\n  a b) X=1;;\nesac\npython3 train.py\n")
    with pytest.raises(SpecError, match="a case pattern does not end with"):
        read_launch(bad, ("train.py",), [], {})


def test_a_function_runs_where_it_is_called_with_its_arguments(tmp_path) -> None:
    launch = _launch(tmp_path, FUNCTION)
    assert launch.words == ["--n", "1", "--update-weight-transfer-mode", "p2p", "--nargs", "2",
                            "--calls", "2"]  # fmt: skip
    assert any("launches 2 times" in n for n in launch.notes)
    first = _launch(tmp_path, FUNCTION.replace("run_mode p2p x\n", ""))
    assert first.words[3] == "broadcast" and first.words[5] == "1"


def test_a_function_s_positional_words_are_not_the_script_s(tmp_path) -> None:
    """$1 inside the body is the call's; the script itself never reads $@, so the words
    given for it are appended to its launch (as for a script without functions)."""
    launch = _launch(tmp_path, 'f() {\n  python3 train.py --m "$1"\n}\nf p2p\n', ["--extra"])
    assert launch.words == ["--m", "p2p", "--extra"]


def test_a_call_under_an_unknown_condition_keeps_the_body_unknown(tmp_path) -> None:
    text = 'X=1\nf() { X=2; }\nif [ -f /etc/x ]; then f; fi\npython3 train.py $X\n'
    assert "set under a condition" in _launch(tmp_path, text).unresolved[0].why


def test_a_function_never_called_is_read_as_if_it_ran(tmp_path) -> None:
    """Its call may be one the reader cannot see (a name in a variable): the launch inside is
    read under a condition, with a note, rather than refused as missing."""
    launch = _launch(tmp_path, 'A=3\ntrain() {\n  python3 train.py --a $A\n}\n"$RUN"\n')
    assert launch.words == ["--a", "3"]
    assert any("runs under a condition" in n for n in launch.notes)


def test_a_function_calling_itself_is_an_error(tmp_path) -> None:
    script = tmp_path / "loop.sh"
    script.write_text("f() {\n  f\n}\nf\npython3 train.py\n")
    with pytest.raises(SpecError, match="function f calls nest more than"):
        read_launch(script, ("train.py",), [], {})


def test_a_one_line_function_body_is_its_own(tmp_path) -> None:
    """``f() { X=2; }`` (bash: the braces' words are the body) then ``f``: --x 2."""
    text = 'X=1\nf() { X=2; }\nfunction g { Y=$1; }\nf\ng 5\npython3 train.py --x $X --y $Y\n'
    assert _launch(tmp_path, text).words == ["--x", "2", "--y", "5"]


def test_miles_weight_transfer_modes() -> None:
    """miles' --update-weight-transfer-mode (miles/utils/arguments.py @31f1ca961: broadcast,
    p2p, disk-delta; p2p and disk-delta refused with --colocate): p2p was an ignored key; now
    a note (timed as the broadcast), disk-delta the disk refit with its delta bound."""
    from rlmcost.frameworks.slime import import_slime

    base = ["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--n-samples-per-prompt",
            "4", "--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "4",
            "--rollout-num-gpus-per-engine", "2"]  # fmt: skip
    plain = import_slime(base)
    p2p = import_slime([*base, "--update-weight-transfer-mode", "p2p"])
    assert p2p.flags == plain.flags and p2p.ignored == []
    assert any("point-to-point RDMA" in n for n in p2p.notes)
    delta = import_slime([*base, "--update-weight-transfer-mode", "disk-delta"])
    assert dict(delta.flags)["--refit"] == "disk"
    assert any("disk-delta" in n and "an upper bound" in n for n in delta.notes)
    with pytest.raises(SpecError, match="not compatible with --colocate"):
        import_slime([*base, "--colocate", "--update-weight-transfer-mode", "p2p"])


def test_an_exit_the_script_reaches_ends_it(tmp_path) -> None:
    """miles' run-*-profile.sh start with ``if [ $# -lt 3 ]; then echo "Usage: ..."; exit 1;
    fi``: without its arguments bash exits there, so the error says so (before, it named the
    arrays the undecided ``$mode`` tests left unknown). An exit under an unknown condition, or
    after the launch, changes nothing."""
    text = ('if [ $# -lt 1 ]; then\n  echo "Usage: $0 <MODE>"\n  exit 1\nfi\nMODE="$1"\n'
            'python3 train.py --mode $MODE\n')  # fmt: skip
    script = tmp_path / "run.sh"
    script.write_text(text)
    with pytest.raises(SpecError, match=r"exits at line 3 before it launches \(the if at line 1 "
                       "holds with 0 argument"):  # fmt: skip
        read_launch(script, ("train.py",), [], {})
    assert read_launch(script, ("train.py",), ["p2p"], {}).words == ["--mode", "p2p"]
    later = _launch(tmp_path, "[ -f /x ] && exit 1\npython3 train.py --a 1\nexit 0\n")
    assert later.words == ["--a", "1"]
