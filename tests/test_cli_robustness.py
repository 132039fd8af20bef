"""No traceback, no silent acceptance: every command's options over bad and edge values.

The commands and their options are read from the CLI itself (the click command typer builds
for each), so a new option joins the sweep without an edit here. Each value a type can take
badly (0, negative, 10^12, non-numeric, empty, unknown or misspelled names) is tried on one
option at a time, half the cases with --json; a list of contradictory combinations follows.
Every case must end with exit code 0 or 2 (a usage or spec error), print no traceback, and on
error print one line, ``error: ...``, that names the offending flag or the value given. A run
that succeeds with --json prints JSON. Deterministic: the sample of the larger commands is
drawn with a fixed seed. DESIGN.md, "Conventions": "the CLI never shows a traceback for
user error"; STYLE.md, "CLI behaviour": "bad input exits with code 2 and one line".
"""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()
SEED = 20251205

INTS = ["0", "-1", "1000000000000", "1e12", "abc", "", "2.5"]
FLOATS = ["0", "-1", "1e12", "abc", "", "nan", "inf"]
TEXTS = ["", "0", "-1", "nonsense", "1e12", "abc:1,2", ",", "=", "@"]

BASES: dict[str, list[str]] = {
    "ppo": ["-m", "gpt-2"],
    "grpo": ["-m", "gpt-2"],
    "dpo": ["-m", "gpt-2"],
    "dapo": ["-m", "gpt-2"],
    "compare": ["ppo", "dpo", "-m", "gpt-2"],
    "placements": ["-m", "gpt-2", "--gpus", "4"],
    "plan": ["grpo", "-m", "gpt-2", "--gpus", "8"],
    "train": ["-m", "gpt-2"],
    "blocks": ["-m", "gpt-2"],
    "models": [],
    "hardware": [],
    "algorithms": [],
    "frameworks": [],
    "validate": ["--source", "narayanan2021"],
}
"""Each swept command and the arguments that make it run (gpt-2: the smallest model)."""

SAMPLE = {"ppo": None, "grpo": 70, "dpo": 70, "dapo": 50, "compare": 50, "placements": 80,
          "plan": 90}  # fmt: skip
"""Cases drawn per command (None: every case; commands not named: every case)."""

SKIP = {
    "validate": {"--rl", "--engine"},  # the published RL runs: tens of seconds, no input
    "plan": {"--cluster"},  # a well-formed address waits for a scheduler; one case below
}
"""Options left out of the sweep, with the reason."""


def invoke(args: list[str]) -> Any:
    return runner.invoke(app, args, env={"COLUMNS": "160"})


def _commands() -> dict[str, Any]:
    """The click command of each swept command (the root group builds it on demand and
    reads no context for it: rlmcost.cli._lazy)."""
    root = typer.main.get_command(app)
    return {name: root.get_command(None, name) for name in BASES}


def _values(param: Any) -> list[str | None]:
    """The bad and edge values of one option, by its annotation (None: a flag, given bare)."""
    if getattr(param, "is_flag", False):
        return [None]
    ann = getattr(getattr(param, "type_descriptor", None), "annotation", str)
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        first = str(next(iter(ann)).value)
        return ["", "nonsense", first.upper() if first.upper() != first else first + "x",
                first[:-1] or "x"]  # fmt: skip
    if ann is int:
        return INTS
    if ann is float:
        return FLOATS
    return TEXTS


def _without(base: list[str], names: set[str]) -> list[str]:
    """``base`` without the option named by ``names`` and its value (the sweep gives it
    instead: two values of one option are a usage error of their own, DUPLICATES)."""
    out, i = [], 0
    while i < len(base):
        if base[i] in names:
            i += 2
            continue
        out.append(base[i])
        i += 1
    return out


def _grid() -> list[tuple[str, str, list[str]]]:
    """(command, flag, argv) for every option of every swept command and its bad values;
    the larger commands sampled with a fixed seed (:data:`SAMPLE`)."""
    rng = random.Random(SEED)
    out: list[tuple[str, str, list[str]]] = []
    for name, cmd in _commands().items():
        cases = []
        for p in cmd.params:
            if p.param_type_name != "option" or p.name == "help":
                continue
            flag = max(p.opts, key=len)
            if flag in SKIP.get(name, ()):
                continue
            base = _without(BASES[name], {*p.opts, *p.secondary_opts})
            for i, v in enumerate(_values(p)):
                json_flag = ["--json"] if i % 2 and flag != "--json" else []
                value = [flag] if v is None else [flag, v]
                cases.append((name, flag, [name, *base, *value, *json_flag]))
        n = SAMPLE.get(name)
        out += cases if n is None or n >= len(cases) else rng.sample(cases, n)
    return out


CONTRADICTIONS = [
    # (argv, a word the error must hold)
    (["ppo", "-m", "8b", "--tp", "3", "--gpus", "8"], "tp"),
    (["ppo", "-m", "8b", "--tp", "16"], "tp"),
    (["ppo", "-m", "gpt-2", "--pp", "13"], "pp"),
    (["ppo", "-m", "gpt-2", "--pp", "1000"], "pp"),
    (["ppo", "-m", "8b", "--tp", "8", "--gpus", "12"], "gpus"),
    (["ppo", "-m", "8b", "--dp", "2", "--gpus", "3"], "gpus"),
    (["grpo", "-m", "gpt-2", "--gpus", "8", "--groups", "rollout=8,actor+reference=8"], "8"),
    (["grpo", "-m", "gpt-2", "--groups", "rollout=2@nonsense,actor+reference=2"], "nonsense"),
    (["grpo", "-m", "gpt-2", "--groups", "rollout=2,actor=2"], "reference"),
    (["grpo", "-m", "gpt-2", "--groups", "rollout=2,actor+reference=2[tp=5]"], "tp"),
    (["grpo", "-m", "gpt-2", "--groups", "rollout=0,actor+reference=2"], "rollout=0"),
    (["grpo", "-m", "gpt-2", "--groups", "rollout=2,rollout=2,actor+reference=2"], "rollout"),
    (["grpo", "-m", "gpt-2", "--groups", "rollout=2,actor+reference=2000000"], "2,000,000"),
    (["grpo", "-m", "gpt-2", "--staleness", "2"], "--staleness"),
    (["grpo", "-m", "gpt-2", "--partial-rollout"], "--partial-rollout"),
    (["grpo", "-m", "gpt-2", "--in-flight-batches", "2"], "--in-flight-batches"),
    (["grpo", "-m", "gpt-2", "--gpus", "4", "--placement", "async", "--staleness", "1",
      "--partial-rollout", "--in-flight-batches", "3"], "--in-flight-batches"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:2000,0.5,1000"], "lognormal"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:500,abc,1000"], "lognormal"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:500,-1,1000"], "sigma"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:500,0.5,1000,1.5"], "lognormal"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:500,0.5,1000,1"], "clip"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:100,0.5,1000,0.5"], "lognormal"),
    (["grpo", "-m", "gpt-2", "--length-dist", "lognormal:500,0.5,1000,x"], "lognormal"),
    (["grpo", "-m", "gpt-2", "--length-dist", "uniform:900,100"], "uniform"),
    (["grpo", "-m", "gpt-2", "--length-dist", "uniform:0,100"], "uniform"),
    (["grpo", "-m", "gpt-2", "--length-dist", "file:/nonexistent/lengths.txt"], "lengths"),
    (["grpo", "-m", "gpt-2", "--speculative-draft", "gpt-2"], "--speculative-draft"),
    (["grpo", "-m", "gpt-2", "--speculative-acceptance", "0.5"], "--speculative-acceptance"),
    (["grpo", "-m", "gpt-2", "--speculative-tokens", "2", "--speculative-draft", "nonsense",
      "--speculative-acceptance", "0.5"], "nonsense"),
    (["grpo", "-m", "gpt-2", "--speculative-tokens", "2", "--engine", "hf"], "engine"),
    (["grpo", "-m", "gpt-2", "--tp-gather-layers", "4"], "--tp-gather-layers"),
    (["grpo", "-m", "gpt-2", "--rollout-dtype", "fp32"], "fp32"),
    (["grpo", "-m", "gpt-2", "--rollout-dtype", "fp8", "--engine", "hf"], "fp8"),
    (["grpo", "-m", "gpt-2", "--lora-targets", "q_proj"], "--lora-rank"),
    (["grpo", "-m", "gpt-2", "--init-on-gpu", "--init-load", "host-each"], "--init-load"),
    (["grpo", "-m", "gpt-2", "--routing-replay"], "--routing-replay"),
    (["grpo", "-m", "gpt-2", "--framework", "verl", "--gpus", "2", "--max-tokens-per-gpu",
      "10"], "--max-tokens-per-gpu"),
    (["grpo", "-m", "gpt-2", "--offload", "params,nonsense"], "nonsense"),
    (["grpo", "-m", "gpt-2", "--price", "h100=-2"], "h100"),
    (["grpo", "-m", "gpt-2", "--price", "nonsense=2"], "nonsense"),
    (["grpo", "-m", "gpt-2", "-H", "a100"], "a100"),
    (["grpo", "-m", "gpt-2", "-H", "h100:8"], "h100"),
    (["grpo", "-m", "/nonexistent/config.json"], "config.json"),
    (["grpo", "-m", "gpt-2", "--deployment", "/nonexistent.yaml"], "nonexistent"),
    (["grpo", "-m", "gpt-2", "--critic", "gpt-2"], "critic"),
    (["dpo", "-m", "gpt-2", "--group", "4"], "--group"),
    (["dpo", "-m", "gpt-2", "--recompute-logprobs"], "--recompute-logprobs"),
    (["dapo", "-m", "gpt-2", "--oversample", "0"], "oversample"),
    (["dapo", "-m", "gpt-2", "--oversample", "1/0"], "oversample"),
    (["dapo", "-m", "gpt-2", "--oversample", "-2"], "oversample"),
    (["dapo", "-m", "gpt-2", "--reward", "rule"], "--reward"),
    (["ppo", "-m", "gpt-2", "--placement", "ac-shared", "--critic", "llama-3.2-1b"], "critic"),
    (["ppo", "--tp", "2"], "--model"),
    (["ppo", "-m", "gpt-2", "--symbolic", "--timeline"], "--symbolic"),
    (["ppo", "-m", "gpt-2", "--plot", "out.txt"], "--plot"),
    (["ppo", "-m", "gpt-2", "--mini-batches", "3"], "mini-batches"),
    (["ppo", "-m", "gpt-2", "--gpu-memory-utilization", "1.5"], "gpu_memory_utilization"),
    (["compare", "-m", "gpt-2"], "ALGORITHM"),
    (["compare", "ppo", "nonsense", "-m", "gpt-2"], "nonsense"),
    (["placements", "-m", "gpt-2", "--algorithm", "nonsense"], "nonsense"),
    (["plan", "nonsense", "-m", "gpt-2", "--gpus", "8"], "nonsense"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "64..8"], "64..8"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--hardware", "h20:32,nonsense:16"],
     "nonsense"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--objective", "cost", "--price",
      "h100=x"], "h100=x"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--zero", ","], "--zero"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--cluster", "nonsense"], "--cluster"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--workers", "1000000"], "--workers"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--placements", "nonsense"], "nonsense"),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--groups", "rollout=?"], "groups"),
    (["train", "-m", "gpt-2", "--tp", "5"], "tp"),
    (["train", "-m", "gpt-2", "--virtual-stages", "3"], "virtual"),
    (["train", "-m", "gpt-2", "--schedule", "interleaved", "--pp", "2", "--virtual-stages",
      "5"], "5"),
    (["train", "-m", "gpt-2", "--batch", "3", "--micro-batch", "2"], "micro"),
    (["blocks", "-m", "nonsense"], "nonsense"),
    (["schema", "nonsense"], "nonsense"),
    (["schema"], "command"),
    (["run", "/nonexistent/run.yaml"], "run.yaml"),
    (["import", "verl", "/nonexistent/run.yaml"], "run.yaml"),
    (["import", "nonsense"], "nonsense"),
    (["import", "openrlhf", "--", "--pretrain"], "pretrain"),
    (["import", "openrlhf", "--", "--pretrain"], "pretrain"),
    (["calibrate", "--device", "nonsense"], "--device"),
    (["calibrate", "--ranks", "0"], "--ranks"),
    (["calibrate", "--kernel", "nonsense", "--quick"], "nonsense"),
    (["validate", "--source", "nonsense"], "nonsense"),
    (["nonsense"], "nonsense"),
    (["ppo", "-m", "gpt-2", "--nonsense"], "--nonsense"),
    (["ppo", "-m", "gpt-2", "--tp"], "--tp"),
]
"""Contradictory or malformed combinations: each must be an error (exit 2) whose line holds
the word given (the flag or value to mend)."""

NOTED = [
    (["grpo", "-m", "gpt-2", "--refit", "disk", "--engine", "hf"], "--refit disk is not used"),
    (["dpo", "-m", "gpt-2", "--rollout-tp", "2", "--max-num-seqs", "8"], "--rollout-tp"),
    (["compare", "ppo", "dpo", "-m", "gpt-2", "-K", "4"], "dpo"),
    (["import", "openrlhf", "--", "--pretrain", "gpt-2", "--remote_rm_url", "http://x",
      "--nonsense_flag", "3"], "--nonsense_flag"),
]
"""Inputs accepted but without effect here: the run succeeds and says so, naming the input,
on stderr or among the --json output's notes (never a silently ignored flag)."""


def _check(args: list[str], r: Any) -> list[str]:
    """The problems of one run (empty: it behaved)."""
    out: list[str] = []
    text = r.output
    if "Traceback" in text or (r.exception is not None and not isinstance(r.exception,
                                                                          SystemExit)):
        out.append(f"crash {type(r.exception).__name__}: {r.exception!r:.200}")
    elif r.exit_code not in (0, 2):
        out.append(f"exit code {r.exit_code}")
    elif r.exit_code == 2:
        err = [line for line in r.stderr.splitlines() if line.strip()]
        if not err or not err[-1].startswith("error: "):
            out.append(f"no one-line error: {r.stderr[-200:]!r}")
        elif sum(line.startswith("error: ") for line in err) != 1:
            out.append(f"more than one error line: {r.stderr[-300:]!r}")
    elif "--json" in args:
        try:
            json.loads(r.stdout)
        except ValueError:
            out.append(f"--json printed no JSON: {r.stdout[:200]!r}")
    return out


def _names(flag: str) -> set[str]:
    """How a message may name ``flag``: --max-num-seqs, max-num-seqs, max_num_seqs, ..."""
    bare = flag.lstrip("-")
    return {flag, bare, bare.replace("-", "_"), bare.replace("-", " ")}


def _names_the_input(message: str, flag: str, value: str | None) -> bool:
    low = message.lower()
    if any(n.lower() in low for n in _names(flag)):
        return True
    return value is not None and len(value) >= 2 and value.lower() in low


GRID = _grid()
COMMANDS = sorted({c for c, _, _ in GRID})


@pytest.mark.parametrize("command", COMMANDS)
def test_bad_values_of_every_option_end_cleanly(command, tmp_path, monkeypatch):
    """Every option of ``command`` (sampled for the large ones) with each bad value: exit 0
    or 2, no traceback, one error line naming the flag or the value."""
    monkeypatch.chdir(tmp_path)  # --out, --plot and friends write nowhere that matters
    problems = []
    n = 0
    for name, flag, args in GRID:
        if name != command:
            continue
        n += 1
        r = invoke(args)
        found = _check(args, r)
        if not found and r.exit_code == 2:
            value = args[args.index(flag) + 1] if args.index(flag) + 1 < len(args) else None
            line = r.stderr.strip().splitlines()[-1]
            if not _names_the_input(line, flag, value):
                found.append(f"error names neither {flag} nor its value: {line[:200]!r}")
        problems += [f"{' '.join(args)}: {p}" for p in found]
    assert n > 0
    assert not problems, "\n".join(problems)


def _refused(args: list[str], tmp_path: Any, monkeypatch: Any) -> str:
    """The one-line error ``args`` get (exit 2, no traceback, the robustness checks): its line."""
    monkeypatch.chdir(tmp_path)
    r = invoke(args)
    assert not _check(args, r), (_check(args, r), r.output)
    assert r.exit_code == 2, r.output
    return str(r.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(("args", "word"), CONTRADICTIONS, ids=[" ".join(a) for a, _ in
                                                                 CONTRADICTIONS])
def test_contradictory_inputs_are_one_line_errors_naming_the_input(args, word, tmp_path,
                                                                   monkeypatch):
    line = _refused(args, tmp_path, monkeypatch)
    assert word.lower() in line.lower(), line


@pytest.mark.parametrize(("args", "words"), NOTED, ids=[" ".join(a) for a, _ in NOTED])
def test_inputs_without_effect_are_noted(args, words):
    r = invoke([*args, "--json"] if args[0] != "import" else args)
    assert not _check(args, r), (_check(args, r), r.output)
    assert r.exit_code == 0, r.output
    notes = json.loads(r.stdout).get("notes", []) if args[0] != "import" else []
    assert words in r.stderr or any(words in n for n in notes), (r.stderr, notes)


@pytest.mark.parametrize("command", sorted(BASES))
def test_every_command_runs_with_json(command):
    """Each swept command with its base arguments and --json: exit 0 and JSON on stdout."""
    r = invoke([command, *BASES[command], "--json"])
    assert r.exit_code == 0, r.output
    assert isinstance(json.loads(r.stdout), dict)


def test_the_sweep_covers_the_options_of_the_query_commands():
    """The grid is built from the CLI: the algorithm commands' 70+ options all appear."""
    ppo = {flag for name, flag, _ in GRID if name == "ppo"}
    assert len(ppo) >= 70
    assert {"--groups", "--length-dist", "--staleness", "--speculative-tokens",
            "--rollout-dtype", "--refit", "--partial-rollout", "--max-num-seqs"} <= ppo


FILE_FLAGS = [
    ["run", "{f}"],
    ["ppo", "-m", "gpt-2", "--deployment", "{f}"],
    ["ppo", "-m", "{f}"],
    ["grpo", "-m", "gpt-2", "--length-dist", "file:{f}"],
    ["ppo", "-m", "gpt-2", "--price", "{f}"],
    ["ppo", "-m", "gpt-2", "--calibration", "{f}"],
    ["import", "verl", "{f}"],
    ["import", "trl", "{f}"],
    ["import", "nemo-rl", "{f}"],
]
"""Every option or argument that reads a file: given an empty, a binary and a malformed one."""


@pytest.mark.parametrize("content", [b"", b"\x00\xff\xfe", b":::[\n", b"- 1\n- 2\n", b"3"],
                         ids=["empty", "binary", "broken-yaml", "a-list", "a-number"])
def test_files_that_are_not_what_the_flag_reads_are_one_line_errors(content, tmp_path,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "input.json"  # .json: -m takes it as a config.json path
    path.write_bytes(content)
    problems = []
    for args in FILE_FLAGS:
        if content == b"3" and args[-1] == "file:{f}":
            continue  # one response length of 3 tokens: a valid lengths file
        argv = [a.replace("{f}", str(path)) for a in args]
        r = invoke(argv)
        found = _check(argv, r)
        if not found and r.exit_code != 2:
            found.append(f"accepted (exit {r.exit_code})")
        problems += [f"{' '.join(argv)}: {p}" for p in found]
    assert not problems, "\n".join(problems)


REPEATED = [
    # (argv, the words the error must hold: the option and both values as given)
    (["ppo", "-m", "gpt-2", "--tp", "2", "--tp", "4"], ["--tp", "'2'", "'4'"]),
    (["ppo", "-m", "gpt-2", "--sleep", "--no-sleep"], ["--sleep", "--no-sleep"]),
    (["ppo", "-m", "gpt-2", "--cuda-graphs", "--enforce-eager"],
     ["--enforce-eager", "--cuda-graphs"]),
    (["ppo", "-m", "gpt-2", "--model", "llama-3.2-1b", "--json"],
     ["--model", "-m 'gpt-2'", "--model 'llama-3.2-1b'"]),
    (["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--gpus=16"], ["--gpus", "'8'", "'16'"]),
    (["import", "verl", "x.yaml", "-H", "h100-sxm", "--hardware", "a100-80gb"],
     ["--hardware", "h100-sxm", "a100-80gb"]),
]
"""An option given twice with different values (a flag under both its names): a usage error
naming the option and both values, whichever comes last (README, "Conventions")."""

SAME_TWICE = [
    ["ppo", "-m", "gpt-2", "--model", "gpt-2", "--json", "--json"],
    ["ppo", "-m", "gpt-2", "--tp", "1", "--tp=1", "--sleep", "--sleep"],
    ["plan", "grpo", "-m", "gpt-2", "--gpus", "8", "--gpus", "8"],
]
"""The same value given twice states one thing: accepted, as given once. (A positional
argument repeated is the command's to judge: ``compare ppo ppo`` compares nothing and is an
error, tests/test_compare_caption.py.)"""


@pytest.mark.parametrize(("args", "words"), REPEATED, ids=[" ".join(a) for a, _ in REPEATED])
def test_an_option_given_twice_with_different_values_is_refused(args, words, tmp_path,
                                                                monkeypatch):
    line = _refused(args, tmp_path, monkeypatch)
    assert "given twice" in line or "given as both" in line, line
    assert all(w in line for w in words), line


@pytest.mark.parametrize("args", SAME_TWICE, ids=[" ".join(a) for a in SAME_TWICE])
def test_the_same_value_given_twice_is_accepted(args):
    r = invoke(args)
    assert not _check(args, r), (_check(args, r), r.output)
    assert r.exit_code == 0, r.output
