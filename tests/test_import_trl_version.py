"""`rlmcost import trl --trl-version`: each GRPOTrainer change of rlmcost.frameworks.trl_versions
switches at its release (the last release without the PR against the first with it, both
read from huggingface/trl's tags: ``git tag --contains`` of the merge commit, and each key's
default at every tag v0.14.0 to v1.9.0) and at its merge day; the validation row keeps its
command; bad versions are one-line errors."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks import trl_versions as tv
from rlmcost.frameworks.trl import import_trl
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe

CONFIG = """\
model_name_or_path: qwen2.5-7b
use_vllm: true
num_processes: 4
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
num_generations: 8
max_prompt_length: 512
max_completion_length: 1024
"""


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    path = tmp_path / "grpo.yaml"
    path.write_text(CONFIG)
    return path


def flags(path: Path, version: str | None, *overrides: str) -> dict:
    return dict(import_trl(path, list(overrides), None, version).flags)


def probe(rule: tv.Rule) -> list[str]:
    """Overrides that make ``rule`` show (the engine's reservation for PR 3094)."""
    return ["vllm_gpu_memory_utilization=0.5"] if rule is tv.VLLM_SERVER else []


def day_before(day: str) -> str:
    import datetime

    return (datetime.date.fromisoformat(day) - datetime.timedelta(days=1)).isoformat()


# (rule, the last release before it, its first release)
BOUNDARIES = [
    (tv.PROMPTS_PER_DEVICE, "0.14.0", "0.15.0"),
    (tv.VLLM_SERVER, "0.15.2", "0.16.0"),
    (tv.GENERATE_PER_BATCH, "0.16.1", "0.17.0"),
    (tv.BETA_ZERO, "0.18.2", "0.19.0"),
    (tv.CHECKPOINTING, "0.21.0", "0.22.0"),
    (tv.VLLM_IS_CORRECTION, "0.22.2", "0.23.0"),
    (tv.NON_REENTRANT, "0.26.2", "0.27.0"),
    (tv.COLOCATE_DEFAULT, "0.29.1", "1.0.0"),
]


def effect(rule: tv.Rule, f: dict) -> bool:
    """Whether the flags show ``rule``'s older meaning (config above: 4 per device, 4
    processes, 8 generations, 4 accumulation steps, vLLM, nothing else set)."""
    if rule is tv.PROMPTS_PER_DEVICE:  # 4 prompts x 8 = 32 completions per device
        return bool(f["--micro-batch"] == 32)
    if rule is tv.VLLM_SERVER:  # in-process vLLM at the config's 0.5 of one GPU, not the
        # server's own 0.9 (trl/scripts/vllm_serve.py), vllm_gpu_memory_utilization ignored
        return bool(f["--gpu-memory-utilization"] == 0.5 and f["--gpus"] == 5)
    if rule is tv.GENERATE_PER_BATCH:
        return "--sequences-per-call" in f
    if rule is tv.BETA_ZERO:
        return "--kl" in f
    if rule is tv.CHECKPOINTING:
        return bool(f["--ckpt"] == "none")
    if rule is tv.VLLM_IS_CORRECTION:
        return "--no-recompute-logprobs" in f
    if rule is tv.NON_REENTRANT:  # transformers' reentrant checkpoint: no early stop
        return "--no-recompute-early-stop" in f
    if rule is tv.COLOCATE_DEFAULT:  # server: vLLM on GPUs of its own beside the 4 processes
        return "--groups" in f and f["--gpus"] == 5
    raise AssertionError(rule)


@pytest.mark.parametrize("rule,last,first", BOUNDARIES, ids=[f"PR{b[0].pr}" for b in BOUNDARIES])
def test_each_rule_switches_at_its_first_release(cfg: Path, rule, last, first) -> None:
    assert ".".join(map(str, rule.release)) == first.removeprefix("v")
    old, new = flags(cfg, last, *probe(rule)), flags(cfg, first, *probe(rule))
    assert effect(rule, old) and not effect(rule, new)
    said = " ".join(import_trl(cfg, [], None, last).notes)
    assert f"PR {rule.pr} (TRL {first})" in said
    assert f"PR {rule.pr}" not in " ".join(
        n for n in import_trl(cfg, [], None, first).notes if "before PR" in n
    )


@pytest.mark.parametrize("rule,last,first", BOUNDARIES, ids=[f"PR{b[0].pr}" for b in BOUNDARIES])
def test_each_rule_switches_on_its_merge_day(cfg: Path, rule, last, first) -> None:
    old = flags(cfg, day_before(rule.merged), *probe(rule))
    new = flags(cfg, rule.merged, *probe(rule))
    assert effect(rule, old) and not effect(rule, new)
    said = " ".join(import_trl(cfg, [], None, day_before(rule.merged)).notes)
    assert f"PR {rule.pr} ({rule.merged})" in said


def test_the_current_trl_is_the_default(cfg: Path) -> None:
    f = flags(cfg, None)
    assert f == flags(cfg, "current") == flags(cfg, "9.0")
    # today's GRPOConfig: completions per device, colocated vLLM at 0.3, no reference,
    # checkpointing on, the importance-sampling forward
    assert f["--micro-batch"] == 4 and f["--gpu-memory-utilization"] == 0.3
    assert "--groups" not in f and f["--gpus"] == 4 and "--no-kl" in f
    assert f["--ckpt"] == "full" and "--recompute-logprobs" in f


def test_a_given_key_wins_over_every_default(cfg: Path) -> None:
    f = flags(cfg, "0.14.0", "beta=0.0", "gradient_checkpointing=true",
              "vllm_gpu_memory_utilization=0.5")  # fmt: skip
    assert "--no-kl" in f and f["--ckpt"] == "full" and f["--gpu-memory-utilization"] == 0.5
    # GRPOConfig's per_device_train_batch_size default was 1 prompt (TRL 0.14.0)
    path = cfg.parent / "no_per_device.yaml"
    path.write_text(CONFIG.replace("per_device_train_batch_size: 4\n", ""))
    # 1 prompt x 8 generations (0.14.0); transformers' default 8 completions (0.15.0)
    assert flags(path, "0.14.0")["--micro-batch"] == flags(path, "0.15.0")["--micro-batch"] == 8
    q = import_trl(path, [], None, "0.14.0")
    assert any("(GRPOConfig's default)" in n for n in q.notes)


def test_keys_of_later_releases_are_dropped_with_a_note(cfg: Path) -> None:
    # num_iterations came with PR 2899 (0.16.0): TrlParser drops a key it does not know
    q = import_trl(cfg, ["num_iterations=2"], None, "0.15.2")
    assert "--epochs" not in dict(q.flags)
    assert any(n.startswith("num_iterations dropped") and "PR 2899" in n for n in q.notes)
    assert dict(import_trl(cfg, ["num_iterations=2"], None, "0.16.0").flags)["--epochs"] == 2
    # vllm_mode came with PR 3394 (0.18.0): colocate asked of 0.17.0 is its server
    f = flags(cfg, "0.17.0", "vllm_mode=colocate")
    assert "--groups" in f
    said = import_trl(cfg, ["vllm_mode=colocate"], None, "0.17.0").notes
    assert any("the only vLLM mode of TRL 0.17.0: before PR 3394" in n for n in said)
    assert "--groups" not in flags(cfg, "0.18.0", "vllm_mode=colocate")
    # vllm_device: deprecated and ignored from 0.16.0 (server), gone from 0.18.0
    q = import_trl(cfg, ["vllm_device=cuda:4"], None, "0.16.0")
    assert any("vllm_device cuda:4: deprecated and ignored" in n for n in q.notes)
    q = import_trl(cfg, ["vllm_device=cuda:4"], None, "0.18.0")
    assert any(n.startswith("vllm_device dropped") for n in q.notes)


def test_hf_generation_per_micro_step_is_per_process(cfg: Path) -> None:
    # without vLLM each process generates its own micro-batch: 4 prompts x 8 = 32 per call
    f = flags(cfg, "0.14.0", "use_vllm=false")
    assert f["--engine"] == "hf" and f["--sequences-per-call"] == 32
    assert "--sequences-per-call" not in flags(cfg, "0.17.0", "use_vllm=false")


ROW = "trl-open-r1-readme-qwen2.5-math-7b-grpo-8gpu"
# The row's command before the mapper used the importer's rules (rlmcost validate --rl --json
# at 6d966c4, the three rules copied in reports/rl_runs_trl.py), less the workload's flags; the
# prompt length is since the row's counted prompt (165 tokens, not the cap 512: test_trl_rl_rows)
ROW_COMMAND = (
    "rlmcost rlvr --framework trl --model qwen2.5-7b --micro-batch 8 --no-recompute-logprobs "
    "--zero 2 --ckpt full --logits low-memory --kl --rollout-tp 1 --gpu-memory-utilization 0.7 "
    "--no-sleep --groups 'rollout=1[tp=1],actor+reference=7' --sequences-per-call 56 "
    "--batch 112 --group 8 --prompt-len 165 --response-len 1024 --hardware h100-sxm --gpus 8 "
)


def test_the_rows_flags_and_choices_are_unchanged() -> None:
    record = next(r for r in load_runs()["runs"] if r["id"] == ROW)
    rcp = recipe(copy.deepcopy(record))
    assert rcp.command.startswith(ROW_COMMAND)
    assert list(rcp.choices[:3]) == [
        "per_device_train_batch_size 1 prompts x num_generations 8 = 8 completions per device: "
        "TRL code of 2025-02-05, before PR 2776 (2025-02-06) made the key count completions",
        "beta 0.04 (a reference model): GRPOConfig's default in TRL code of 2025-02-05, before "
        "PR 3516 (2025-05-30) made it 0.0",
        "generation once per micro-step, 16 vLLM calls per step of per_device_train_batch_size "
        "x num_processes = 56 completions each, one after another (--sequences-per-call 56): "
        "TRL code of 2025-02-05, before PR 3283 (2025-04-17) generated once per "
        "gradient-accumulation batch",
    ]
    assert rcp.query is not None and not any("before PR" in n for n in rcp.query.notes)


@pytest.mark.parametrize("bad", ["banana", "0.13.0", "2024-12-01", "2025-13-01", "0.x", "2025-2-6"])
def test_bad_versions_are_one_line_errors(cfg: Path, bad: str) -> None:
    with pytest.raises(SpecError, match="give a TRL release X.Y or X.Y.Z"):
        tv.parse_trl_version(bad)
    result = CliRunner().invoke(app, ["import", "trl", str(cfg), "--trl-version", bad])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "YYYY-MM-DD" in lines[0]


def test_versions_parse() -> None:
    assert tv.parse_trl_version("v0.18").release == (0, 18, 0)
    assert tv.parse_trl_version("0.16.1").release == (0, 16, 1)
    assert tv.parse_trl_version("2025-02-05").date == "2025-02-05"
    assert tv.parse_trl_version(None).current and tv.parse_trl_version("current").current
