"""A Run file's top-level ``forward:`` layout goes over its ``train:`` layout field by field
(rlmcost.deployment.given.forward_over_train, the rule of a group's layouts: ``layered``): a
field the forward layout does not give is the trainer's (without offload), so a trainer's MoE
capacity factor, EP degree and ZeRO stage reach the forwards when ``forward:`` gives only its
micro-batch and TP. Before, those fields took TrainLayout's defaults (dropless, EP 1, ZeRO 0).
The reference is the same file with the forward layout giving those fields itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rlmcost.evaluation.query import evaluate
from rlmcost.run.spec import Run, load_run

TRAIN = {"tp": 2, "ep": 4, "zero": "1", "moe_capacity_factor": 0.5, "moe_pad_to_capacity": True,
         "ckpt": "full", "offload": ["optimizer"]}  # fmt: skip


def _file(tmp_path: Path, name: str, forward: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({
        "algorithm": {"name": "grpo", "rule_reward": True},
        "models": {"actor": "qwen3-30b-a3b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "prompt_len": 256,
                     "response_len": 512},
        "cluster": {"gpus": 16, "hardware": "h100"},
        "deployment": {"framework": "none", "train": TRAIN, "forward": forward},
    }))  # fmt: skip
    return path


def test_a_files_forward_layout_keeps_the_trainers_fields(tmp_path: Path) -> None:
    run, _ = load_run(_file(tmp_path, "run.yaml", {"micro_batch": 4, "tp": 2}))
    fwd = run.deployment.forward_layout()
    assert (fwd.moe_capacity_factor, fwd.moe_pad_to_capacity, fwd.ep) == (0.5, True, 4)
    assert (str(fwd.zero), str(fwd.ckpt), fwd.micro_batch, fwd.offload) == ("1", "full", 4, ())
    # the same forwards as a file whose forward layout says the trainer's fields itself
    spelled = {**TRAIN, "offload": [], "micro_batch": 4}
    again, _ = load_run(_file(tmp_path, "spelled.yaml", spelled))
    assert again.deployment.forward_layout() == fwd
    a, b = evaluate(run).to_json(), evaluate(again).to_json()
    assert a["iteration"] == b["iteration"] and a["phases"] == b["phases"]


def test_the_run_is_written_with_the_forwards_whole_layout(tmp_path: Path) -> None:
    # written back (Run.to_json, --json's run) whole, as before, with the trainer's fields the
    # file's forward layout did not give, and re-read to the same Run
    run, _ = load_run(_file(tmp_path, "run.yaml", {"micro_batch": 4, "tp": 2}))
    written = run.to_json()["deployment"]["forward"]
    assert (written["moe_capacity_factor"], written["ep"], written["micro_batch"]) == (0.5, 4, 4)
    assert Run.from_data(run.to_json()) == run
