"""Odd inputs a multi-flag sweep of the command line turned up, each once a traceback or a
silently wrong number: now a one-line error (exit 2) that names the input to mend.

The checks are test_cli_robustness's (:func:`_check`: no traceback, exit 0 or 2, one
``error: ...`` line). The framework configs are the ones tests/data/frameworks holds, each
given one override of the framework's own ``key=value`` syntax.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_robustness import _refused, invoke

DATA = Path(__file__).parent / "data" / "frameworks"
VERL = str(DATA / "verl_grpo.yaml")
NEMO = str(DATA / "nemo_rl_grpo_math.yaml")
TRL = str(DATA / "trl_grpo.yaml")
ACCELERATE = (DATA / "trl_accelerate_zero3.yaml").read_text()

CASES = [
    # (argv, a word the error must hold)
    # a key set to null or left empty where the framework reads a number (verl multiplies
    # trainer.n_gpus_per_node by trainer.nnodes; NeMo RL compares the parallel sizes with 1):
    # a TypeError inside the importer before
    (["import", "verl", VERL, "trainer.nnodes="], "'trainer.nnodes' must be a whole number"),
    (["import", "nemo-rl", NEMO, "policy.dtensor_cfg.tensor_parallel_size=null"],
     "'policy.dtensor_cfg.tensor_parallel_size' must be a whole number"),
    (["import", "nemo-rl", NEMO, "policy.generation.vllm_cfg.pipeline_parallel_size="],
     "pipeline_parallel_size"),
    (["import", "nemo-rl", NEMO, "policy.generation.vllm_cfg.gpu_memory_utilization=null"],
     "gpu_memory_utilization"),
    # the reference's micro-batch, compared with the old-log-prob forward's: int() of a list
    # or of '1e9' (YAML 1.1 reads it as text) raised before
    (["import", "verl", VERL, "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=[]"],
     "log_prob_micro_batch_size_per_gpu' must be a whole number"),
    (["import", "verl", VERL, "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1e9"],
     "'1e9'"),
]

ACCELERATE_EDITS = [
    # (the accelerate config's line, its replacement, a word the error must hold): a
    # distributed_type accelerate does not know (DistributedType refuses it) or that launches no
    # GPU data parallelism, and ZeRO-Infinity's nvme offload, were read as DDP / no offload
    ("distributed_type: DEEPSPEED", "distributed_type: DEEPSPPED", "'DEEPSPPED' is not one of"),
    ("distributed_type: DEEPSPEED", "distributed_type: XLA", "distributed_type"),
    ("offload_param_device: none", "offload_param_device: nvme", "offload_param_device"),
    ("offload_optimizer_device: none", "offload_optimizer_device: nvme", "'nvme'"),
]


@pytest.mark.parametrize(("line", "edit", "word"), ACCELERATE_EDITS,
                         ids=[e for _, e, _ in ACCELERATE_EDITS])  # fmt: skip
def test_accelerate_configs_trl_cannot_launch_are_errors(line, edit, word, tmp_path, monkeypatch):
    assert line in ACCELERATE
    path = tmp_path / "accelerate.yaml"
    path.write_text(ACCELERATE.replace(line, edit))
    refused = _refused(["import", "trl", TRL, "--accelerate", str(path)], tmp_path, monkeypatch)
    assert word in refused, refused


@pytest.mark.parametrize(("args", "word"), CASES, ids=[" ".join(a[:2] + a[3:]) for a, _ in CASES])
def test_odd_inputs_are_one_line_errors_naming_the_input(args, word, tmp_path, monkeypatch):
    line = _refused(args, tmp_path, monkeypatch)
    assert word in line, line


RUN_EDITS = [
    # (a dotted path of a saved Run, the value put there, a word the error must hold): the
    # framework defaults read these parts before the Run's validation did (a TypeError or
    # AttributeError there), and a KV block of 10^12 tokens filled memory in the paged
    # admission (rlmcost.deployment.engine.MAX_BLOCK_SIZE)
    ("deployment.forward", 3, "'deployment.forward' must be a mapping"),
    ("deployment.engine", [], "'deployment.engine' must be a mapping"),
    ("deployment", "verl", "'deployment' must be a mapping"),
    ("algorithm.name", True, "'algorithm.name' must be an algorithm's name"),
    ("workload.prompts", "many", "'workload.prompts' must be a whole number"),
    ("workload.samples_per_prompt", 2.5, "'workload.samples_per_prompt' must be a whole"),
    ("deployment.engine.block_size", 10**12, "block_size"),
]


def _saved_run() -> dict:
    """The Run a query saves with --json (gpt-2, GRPO: a framework preset's defaults)."""
    r = invoke(["grpo", "-m", "gpt-2", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["run"]


@pytest.mark.parametrize(("path", "value", "word"), RUN_EDITS, ids=[p for p, _, _ in RUN_EDITS])
def test_saved_runs_with_malformed_parts_are_errors(path, value, word, tmp_path, monkeypatch):
    run = _saved_run()
    *head, last = path.split(".")
    part = run
    for key in head:
        part = part[key]
    part[last] = value
    file = tmp_path / "run.json"
    file.write_text(json.dumps(run))
    line = _refused(["run", str(file)], tmp_path, monkeypatch)
    assert word in line, line


def test_whole_counts_given_as_text_or_float_still_run(tmp_path):
    """The Run's fields take 64, 64.0 and "64" alike (pydantic's lax integers); the framework
    defaults read them the same way: the same estimate as the saved Run's."""
    run = _saved_run()
    run["workload"] = {"prompts": "64", "samples_per_prompt": 8.0}
    file = tmp_path / "run.json"
    file.write_text(json.dumps(run))
    r = invoke(["run", str(file), "--json"])
    assert r.exit_code == 0, r.output
    again = invoke(["grpo", "-m", "gpt-2", "-B", "64", "-K", "8", "--json"])
    assert json.loads(r.stdout)["stages"] == json.loads(again.stdout)["stages"]


@pytest.mark.parametrize(("text", "word"), [
    # a forward layout's capacity factor (TrainLayout.moe_capacity_factor) was taken as given:
    # nan and inf went into the --json output (not JSON), -3 into the output's capacity note
    ("forward: {moe_capacity_factor: .nan}", "'forward.moe_capacity_factor': Input should be "
                                             "a finite number"),
    ("forward: {moe_capacity_factor: -3}", "'forward.moe_capacity_factor': Input should be "
                                           "greater than 0"),
    ("train: {moe_capacity_factor: .inf}", "'train.moe_capacity_factor'"),
])  # fmt: skip
def test_deployment_capacity_factors_are_finite_and_positive(text, word, tmp_path, monkeypatch):
    file = tmp_path / "deployment.yaml"
    file.write_text(text + "\n")
    line = _refused(["grpo", "-m", "qwen1.5-moe-a2.7b", "--deployment", str(file), "--json"],
                    tmp_path, monkeypatch)  # fmt: skip
    assert word in line, line


def test_more_optimizer_steps_than_samples_is_an_error(tmp_path, monkeypatch):
    """slime's global batch is rollout_batch_size x n_samples_per_prompt //
    num_steps_per_rollout (slime/utils/arguments.py): more steps than the rollout's 32 x 8
    samples leave 0 per step (a ZeroDivisionError in the importer before)."""
    argv = ["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "32", "--n-samples-per-prompt",
            "8", "--colocate", "--actor-num-gpus-per-node", "8", "--num-steps-per-rollout", "1000"]
    line = _refused(["import", "slime", "--", *argv], tmp_path, monkeypatch)
    assert "--num-steps-per-rollout" in line and "at most 256" in line, line


def test_a_run_file_that_is_no_mapping_is_called_a_run_file(tmp_path, monkeypatch):
    """A Run file holding a list: the error says a Run's fields are wanted (it said
    "deployment fields", the --deployment file's words)."""
    file = tmp_path / "run.yaml"
    file.write_text("- 1\n- 2\n")
    line = _refused(["run", str(file)], tmp_path, monkeypatch)
    assert "must hold a mapping of Run fields" in line, line
