"""The note that a framework example's device groups are slower than co-locating the models on
the same GPUs (rlmcost.evaluation.split_advice): its numbers are those of the co-located run
evaluated on its own (`--placement baseline`), and it appears only where a size tier placed
the groups and the co-located run fits and is faster."""

from __future__ import annotations

import json

import rlmcost
from rlmcost.evaluation.split_advice import colocated_note, colocated_run
from rlmcost.units import format_seconds


def _run(gpus: int, framework: str = "trl", algorithm: str = "grpo", **kw: object):
    return rlmcost.run_of(algorithm, "llama-3.1-70b", hardware="h100", gpus=gpus,
                          framework=framework, **kw)  # fmt: skip


def test_trl_example_split_names_the_faster_colocated_run() -> None:
    # TRL's "GRPO at scale" tier (docs/source/grpo_trainer.md @f2cd5771: `trl vllm-serve` TP 8
    # on GPUs of its own) on 64 H100: the per-parameter NCCL weight sync crosses nodes
    run = _run(64)
    split = rlmcost.evaluate(run)
    assert run.deployment.groups and split.fits
    alt = colocated_run(run)
    assert alt is not None and not alt.deployment.groups
    co = rlmcost.evaluate(alt)
    assert co.fits and co.time_s < 0.9 * split.time_s
    # the co-located Run is the one `--placement baseline` gives (the same numbers)
    base = rlmcost.evaluate(_run(64, placement="baseline"))
    assert base.time_s == co.time_s
    line = colocated_note(run, split.time_s)
    assert line is not None
    assert format_seconds(co.time_s) in line and format_seconds(split.time_s) in line
    assert "vllm_mode='colocate'" in line and "--placement baseline" in line


def test_note_in_json_notes_before_the_deployment_line() -> None:
    from rlmcost.cli.deployment_line import evaluation_json

    notes = evaluation_json(rlmcost.evaluate(_run(64)))["notes"]
    assert notes[-1].startswith("deployment: ")
    assert notes[-2].startswith("co-located on the same 64 GPUs")
    json.dumps(notes)


def test_no_note_where_groups_are_the_users_or_colocated_does_not_fit() -> None:
    given = _run(64, groups="rollout=8,actor=56")
    assert colocated_run(given) is None  # the user's own groups: no tier placement to question
    # OpenRLHF's 70 B PPO example (train_ppo_llama_ray_70b.sh @c250c21a) on 32 H100: its groups
    # fit, every model co-located under vLLM's 0.95 reservation does not
    orl = _run(32, framework="openrlhf", algorithm="ppo")
    e = rlmcost.evaluate(orl)
    assert orl.deployment.groups and e.fits
    assert not rlmcost.evaluate(colocated_run(orl)).fits
    assert colocated_note(orl, e.time_s) is None
