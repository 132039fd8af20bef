"""Launch scripts whose command or files the script's text reaches another way
(rlmcost.frameworks.shell_script, shell_checkout, launch_scripts): ``srun ... bash -c "..."``
(the string's commands read as the script's), a config folder under ``$(pwd)`` (the checkout
holding the script), a sourced file at the framework's container path. The frameworks' own
scripts are copied under tests/data/scripts (each names its repository path and commit on its
first lines); each imports as the same arguments typed by hand or given with ``--env``."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import (
    import_openrlhf_script,
    import_slime_script,
    import_verl_script,
)
from rlmcost.frameworks.shell_script import MAX_SOURCE_DEPTH, read_launch

SCRIPTS = Path(__file__).parent / "data" / "scripts"
VERL_REPO = SCRIPTS / "verl_checkout"
VERL_MULTITURN = VERL_REPO / "examples" / "sglang_multiturn" / "run_qwen2.5-3b_gsm8k_multiturn.sh"


def test_openrlhf_slurm_bash_c_imports_as_its_arguments_typed() -> None:
    """OpenRLHF examples/scripts/train_ppo_ray_slurm.sh @3c3be623 submits its job as
    ``srun ... bash -c "pip install ... && ray job submit ... -- python3 -m
    openrlhf.cli.train_ppo_ray ..."``: the words after the entry point, typed here from the
    script's text (the closing quote and redirection cut), are the query's."""
    from rlmcost.frameworks.openrlhf import import_openrlhf

    text = (SCRIPTS / "openrlhf_train_ppo_ray_slurm.sh").read_text()
    body = text.split("openrlhf.cli.train_ppo_ray", 1)[1].split('" &>>', 1)[0]
    typed = import_openrlhf(shlex.split(body.replace("\\\n", " ")))
    q = import_openrlhf_script(SCRIPTS / "openrlhf_train_ppo_ray_slurm.sh", [], [])
    assert q.flags == typed.flags and q.algorithm == typed.algorithm
    assert dict(q.flags)["--groups"] == "rollout=8[tp=2],actor+reference=4,critic+reward=4"
    assert any("line 55" in n and "train_ppo_ray" in n for n in q.notes)


def test_bash_c_expands_outside_then_reads_inside(tmp_path) -> None:
    """A double-quoted string is expanded by the outer shell ($N known there); a single-quoted
    one reaches the inner shell whole, which reads the same variables; an unknown value inside
    keeps its variable's name in the one-line error."""
    script = tmp_path / "run.sh"
    script.write_text('N=4\nsrun -N1 bash -c "echo hi && python3 train.py --actor-num-gpus-'
                      'per-node $N --tp $(nproc)"\nsh -lc \'python3 train.py --a $N\'\n')
    launch = read_launch(script, ("train.py",), [], {})
    assert launch.words == ["--a", "4"] and launch.line == 3
    script.write_text('N=4\nsrun -N1 bash -c "python3 train.py --g $N --tp $(nproc)"\n')
    launch = read_launch(script, ("train.py",), [], {})
    assert launch.words[:2] == ["--g", "4"]
    with pytest.raises(SpecError, match=r"\$\(nproc\) in .* is a command's output"):
        launch.require(list(launch.unresolved))


@pytest.mark.parametrize(("text", "error"), [
    ("bash -c " + shlex.quote("bash -c " + shlex.quote("python3 train.py --a 1")), None),
    ("bash -c 'bash -c 'bash -c python3 train.py''", "no command runs train.py"),
    ('bash -c "python3 train.py \'unclosed"', r"line 1 \(bash -c\) line 1: a ' quote does not"),
    ("bash -c", "no command runs train.py"),  # no string
])
def test_hostile_bash_c_is_one_line_or_read(tmp_path, text, error) -> None:
    script = tmp_path / "run.sh"
    script.write_text(text + "\n")
    if error is None:
        assert read_launch(script, ("train.py",), [], {}).words == ["--a", "1"]
        return
    with pytest.raises(SpecError, match=error) as exc:
        read_launch(script, ("train.py",), [], {})
    assert "\n" not in str(exc.value)


def test_bash_c_nested_past_the_bound_is_an_error(tmp_path) -> None:
    """A string whose commands run ``bash -c`` again, deeper than MAX_SOURCE_DEPTH: one line
    (each level quoted with the escaped quotes the outer levels strip)."""
    inner = "python3 train.py"
    for level in range(MAX_SOURCE_DEPTH + 2):
        inner = "bash -c " + shlex.quote(inner)
        assert level < 20
    script = tmp_path / "run.sh"
    script.write_text(inner + "\n")
    with pytest.raises(SpecError, match=rf"bash -c nested more than {MAX_SOURCE_DEPTH} deep"):
        read_launch(script, ("train.py",), [], {})


def test_verl_config_under_pwd_is_the_checkout_holding_the_script() -> None:
    """verl examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn.sh @b178a3cd5 (kept at
    its checkout path with config/gsm8k_multiturn_grpo.yaml): ``PROJECT_DIR="$(pwd)"``, the
    script asking to be run from the project root, is read as the folder above the script
    holding examples/sglang_multiturn/config/gsm8k_multiturn_grpo.yaml, as ``--env
    PROJECT_DIR=<checkout>`` gives; the multi-turn tool config path is cost-free."""
    q = import_verl_script(VERL_MULTITURN, [], [], None, "h100")
    given = import_verl_script(VERL_MULTITURN, [], [f"PROJECT_DIR={VERL_REPO}"], None, "h100")
    assert q.flags == given.flags
    assert any("$PROJECT_DIR is set from $(pwd)" in n and str(VERL_REPO) in n for n in q.notes)
    assert not any("--config-path" in n and "kept unexpanded" in n for n in q.notes)
    assert not any("tool_config_path" in w for w in q.ignored)


def test_pwd_outside_a_checkout_keeps_its_error(tmp_path) -> None:
    """The same script copied where no folder above it holds the config: the error naming
    ``--env PROJECT_DIR=VALUE`` (a wrong --env names the file that is not there)."""
    copy = tmp_path / "run.sh"
    copy.write_text(VERL_MULTITURN.read_text())
    with pytest.raises(SpecError, match=r"\$PROJECT_DIR .* is set from \$\(pwd\) .*--env "
                                        r"PROJECT_DIR=VALUE"):  # fmt: skip
        import_verl_script(copy, [], [], None, "h100")
    with pytest.raises(SpecError, match=r"gsm8k_multiturn_grpo.yaml is not there"):
        import_verl_script(copy, [], [f"PROJECT_DIR={tmp_path}"], None, "h100")


def test_slime_source_at_the_container_path_is_the_checkout_s_file() -> None:
    """slime examples/retool/retool_qwen3_4b_rl.sh @624b824a sources
    /root/slime/scripts/models/qwen3-4B.sh (slime's Docker image keeps the checkout at
    /root/slime): read as the checkout's models/qwen3-4B.sh (tests/data/scripts/models, slime
    @624b824a), the query that ``--env MODEL_ARGS`` with that file's words gives."""
    model = (SCRIPTS / "models" / "qwen3-4B.sh").read_text()
    words = model.split("MODEL_ARGS=(", 1)[1].rsplit(")", 1)[0]
    words = words.replace('"${MODEL_ARGS_ROTARY_BASE:-1000000}"', "1000000")
    script = SCRIPTS / "slime_retool_qwen3_4b_rl.sh"
    q = import_slime_script(script, [], [], None, None)
    given = import_slime_script(script, [], [f"MODEL_ARGS={words}"], None, None)
    assert q.flags == given.flags
    assert any("/root/slime/scripts/models/qwen3-4B.sh" in n and "checkout" in n
               for n in q.notes)  # fmt: skip


def test_a_missing_file_inside_the_checkout_is_not_moved(tmp_path) -> None:
    """``source "$DIR/../scripts/models/x.sh"`` naming a path inside the script's own
    folders that is not there (a script's mistake) stays missing, though models/x.sh is
    elsewhere in the checkout; only a path outside the script's folders is looked for."""
    (tmp_path / "scripts" / "models").mkdir(parents=True)
    (tmp_path / "scripts" / "models" / "x.sh").write_text("MODEL_ARGS=(--num-layers 2)\n")
    (tmp_path / "scripts" / "low").mkdir()
    script = tmp_path / "scripts" / "low" / "run.sh"
    script.write_text(f'source "{tmp_path}/scripts/low/../scripts/models/x.sh"\n'
                      "python3 train.py ${MODEL_ARGS[@]}\n")
    launch = read_launch(script, ("train.py",), [], {})
    assert launch.missing and launch.unresolved


def test_openrlhf_sft_script_names_what_it_runs() -> None:
    """OpenRLHF examples/scripts/train_sft.sh @3c3be623 runs openrlhf.cli.train_sft (its
    command in a here-document, read): not imported; the one-line error names what it runs,
    not "no command runs"."""
    script = SCRIPTS / "openrlhf_checkout" / "examples" / "scripts" / "train_sft.sh"
    with pytest.raises(SpecError, match=r"runs openrlhf.cli.train_sft: supervised fine-tuning, "
                                        r"which rlmcost does not price") as exc:  # fmt: skip
        import_openrlhf_script(script, [], [])
    assert "\n" not in str(exc.value)


def test_bash_c_ifs_are_apart_from_the_script_s(tmp_path) -> None:
    """The string's own if is decided apart from the script's first if (both numbered 1 by
    their own lexers): bash gives --a 2 --b 3 (A exported to the inner shell)."""
    script = tmp_path / "run.sh"
    script.write_text("if [ 1 -eq 2 ]; then export A=1; else export A=2; fi\n"
                      "bash -c 'if [ 1 -eq 1 ]; then B=3; fi; python3 train.py --a $A --b $B'\n")
    assert read_launch(script, ("train.py",), [], {}).words == ["--a", "2", "--b", "3"]


def test_bash_c_of_a_huge_value_many_times_is_one_line(tmp_path) -> None:
    """A 512 KiB value run by bash -c on 20 lines: past 8 MiB read in all, one line (no hang)."""
    script = tmp_path / "run.sh"
    script.write_text(f"A='{'x ' * (1 << 18)}'\n" + 'bash -c "$A"\n' * 20)
    with pytest.raises(SpecError, match=r"past 8,388,608 characters in all") as exc:
        read_launch(script, ("train.py",), [], {})
    assert "\n" not in str(exc.value)
