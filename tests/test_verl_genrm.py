"""`rlmcost import verl` of a generative reward model (GenRM) under verl's reward loop, and its
placement as verl runs it.

Sources (volcengine/verl b178a3cd): docs/advance/reward_loop.rst ("Generative Reward Model":
``reward_model.model.path`` plus ``custom_reward_function``; colocate and standalone modes);
verl/experimental/reward_loop/reward_loop.py ``RewardLoopWorker.compute_score`` (a custom
function scores; without one an enabled reward model is a DisRM); reward_model.py
``RewardModelManager`` (standalone: ``n_gpus_per_node x nnodes`` GPUs); main_ppo.py
``init_resource_pool_mgr`` (both above 0 or an error); vllm_async_server.py (a standalone
server skips sleep and wake). The keys are those of
tests/experimental/reward_loop/test_reward_model_genrm.py (custom_reward_function.path,
reward_model.enable, enable_resource_pool, n_gpus_per_node 8, nnodes 1, rollout.name,
gpu_memory_utilization 0.9, tensor_model_parallel_size 2, response_length 4096) and the
defaults of trainer/config/reward_model/dp_reward_loop.yaml (max_num_seqs 1024,
enforce_eager true).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.cli.from_command import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.verl import import_verl
from rlmcost.placement.groups import parse_groups

CFG = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
RM = ["reward_model.enable=true", "reward_model.model.path=Qwen/Qwen2.5-1.5B"]
GENRM = [*RM, "custom_reward_function.path=tests/experimental/reward_loop/reward_fn.py",
         "custom_reward_function.name=compute_score_gsm8k", "reward_model.rollout.name=vllm",
         "reward_model.rollout.tensor_model_parallel_size=1",
         "reward_model.rollout.response_length=4096"]  # fmt: skip
STANDALONE = ["reward_model.enable_resource_pool=true", "reward_model.n_gpus_per_node=8",
              "reward_model.nnodes=1", "reward_model.rollout.gpu_memory_utilization=0.9"]


def _flags(q) -> dict:  # noqa: ANN001 - an ImportedQuery
    return dict(q.flags)


def test_a_genrm_imports_as_d_rlaif_with_the_judge_and_its_length() -> None:
    q = import_verl(CFG, GENRM)
    flags = _flags(q)
    assert q.algorithm == "d-rlaif"
    assert flags["--judge"] == "Qwen/Qwen2.5-1.5B" and "--reward" not in flags
    assert flags["--judge-len"] == 4096  # reward_model.rollout.response_length
    assert "--groups" not in flags and flags["--gpus"] == 8  # colocate: the actor's pool
    (note,) = [n for n in q.notes if n.startswith("GenRM colocated")]
    assert "TP 1" in note and "actor's vllm layout (TP 2)" in note  # its own TP, said
    assert not any(k.startswith(("reward_model.", "custom_reward")) for k in q.ignored)


def test_the_judge_length_defaults_to_the_reward_engines() -> None:
    # dp_reward_loop.yaml: rollout.response_length 2048
    q = import_verl(CFG, [g for g in GENRM if "response_length" not in g])
    assert _flags(q)["--judge-len"] == 2048


def test_a_disrm_keeps_todays_mapping() -> None:
    q = import_verl(CFG, RM)  # no custom function: verl takes the model as a DisRM
    assert q.algorithm == "grpo" and _flags(q)["--reward"] == "Qwen/Qwen2.5-1.5B"
    assert "--judge" not in _flags(q)
    assert any(n.startswith("reward_model.use_reward_loop") for n in q.notes)


def test_the_legacy_worker_is_a_classifier_whatever_the_function() -> None:
    q = import_verl(CFG, [*GENRM, "reward_model.use_reward_loop=false"])
    assert q.algorithm == "grpo" and _flags(q)["--reward"] == "Qwen/Qwen2.5-1.5B"


def test_before_the_loop_was_the_default_a_genrm_needs_the_key() -> None:
    # PR 4452 (2025-12-09) made use_reward_loop true by default; verl 0.6 is of 2025-10-15
    assert import_verl(CFG, GENRM, verl_version="0.6.0").algorithm == "grpo"
    on = [*GENRM, "reward_model.use_reward_loop=true"]
    assert import_verl(CFG, on, verl_version="0.6.0").algorithm == "d-rlaif"


def test_a_genrm_under_ppo_keeps_the_reward_forward_and_says_so() -> None:
    q = import_verl(CFG, [*GENRM, "algorithm.adv_estimator=gae"])
    assert q.algorithm == "ppo" and _flags(q)["--reward"] == "Qwen/Qwen2.5-1.5B"
    assert any("decode not priced" in n for n in q.notes)


def test_standalone_puts_the_judge_on_its_own_gpus_with_its_engine() -> None:
    q = import_verl(CFG, [*GENRM, *STANDALONE])
    flags = _flags(q)
    assert flags["--gpus"] == 16  # trainer 8 x 1 + reward 8 x 1
    assert flags["--groups"] == (
        "actor+reference=8,judge=8[tp=1;gmu=0.9;max-num-seqs=1024;"
        "max-num-batched-tokens=8192;eager=true;prefix-caching=true;sleep=false;engine=vllm]")
    assert any(n.startswith("GenRM standalone") and "overlap" in n for n in q.notes)
    assert [c.value for c in q.conversions if c.flag == "--gpus"] == [16]


@pytest.mark.parametrize("pool", [["reward_model.nnodes=0"], ["reward_model.n_gpus_per_node=0"]])
def test_standalone_without_a_pool_is_refused(pool: list[str]) -> None:
    with pytest.raises(SpecError, match="enable_resource_pool needs"):
        import_verl(CFG, [*GENRM, *STANDALONE, *pool])


def test_a_judge_group_takes_engine_keys() -> None:
    (_, judge) = parse_groups("actor=4,judge=4[tp=2;gmu=0.8;sleep=false]")
    assert judge.settings == (("tp", 2),)
    with pytest.raises(SpecError, match="runs no generation"):
        parse_groups("actor=4,reference=4[gmu=0.8]")


SMALL = ["--framework", "verl", "--model", "qwen2.5-1.5b", "--judge", "qwen2.5-0.5b", "--batch",
         "16", "--group", "4", "--prompt-len", "256", "--response-len", "512",
         "--hardware", "h100-sxm", "--rollout-tp", "1", "--kl"]  # fmt: skip


def _judge(argv: list[str]):  # noqa: ANN202 - (the estimate, the judge's Job)
    est = evaluate_deployment(run_from_argv("d-rlaif", argv))
    (job,) = [j for g in est.groups for j in g.jobs if j.task.role is Role.JUDGE]
    return est, job


def test_the_judges_decode_is_a_priced_stage_that_grows_with_its_length() -> None:
    # rlmcost's d-rlaif (algorithms.catalog): the judge prefills S + T and decodes T_j tokens
    short = _judge([*SMALL, "--gpus", "2", "--judge-len", "64"])
    long = _judge([*SMALL, "--gpus", "2", "--judge-len", "1024"])
    for est, job in (short, long):
        assert job.task.kind is Kind.GENERATE and job.predicted_s > 0
        (reward,) = [p for p in est.phases if p.name == "reward"]  # verl's timing_s/reward
        assert reward.key == "timing_s/reward" and reward.time_s >= job.predicted_s
    assert long[1].predicted_s > 4 * short[1].predicted_s
    assert long[1].work_flops > short[1].work_flops


def _alone(gmu: float):  # noqa: ANN202 - (the estimate, the judge's Job)
    return _judge([*SMALL, "--gpus", "4", "--groups",
                   f"actor+reference=2,judge=2[tp=2;gmu={gmu};sleep=false]"])  # fmt: skip


def test_standalone_and_colocate_differ_as_verl_runs_them() -> None:
    colocated = _judge([*SMALL, "--gpus", "2"])[1]
    est, alone = _alone(0.9)
    assert colocated.task.group == "all" and colocated.layout.tp == 1  # the actor's engine TP
    assert alone.task.group == "judge" and alone.layout.tp == 2  # the reward engine's own
    # its own engine's reservation holds its KV cache: gmu of the device's 79.2 GiB (h100-sxm)
    half = _alone(0.5)[1]
    assert half.memory.kv_cache < 0.5 * 79.2 * 2**30 < alone.memory.kv_cache
    # the run's controller dispatch rides on the rollout's group only
    controllers = [t for g in est.groups for t in g.transfers if t.phase == "controller"]
    assert {t.group for t in controllers} == {"actor+reference"}
    # a judge's S + T prompt holds its own response: no prefix shared within a prompt group
    assert alone.timeline is not None and alone.timeline.shared_tokens == 0


def test_the_import_prints_the_groups_bracket_and_names_the_judge() -> None:
    from typer.testing import CliRunner

    from rlmcost.cli import app

    res = CliRunner().invoke(app, ["import", "verl", str(CFG), *GENRM, *STANDALONE])
    assert res.exit_code == 0, res.output
    table = res.output.split("verl batch knobs")[1]
    assert "judge=8[tp=1;gmu=0.9;" in table.replace("\n", "")  # text, not rich markup
    res = CliRunner().invoke(app, ["import", "verl", str(CFG), *GENRM, "--json"])
    body = json.loads(res.stdout[res.stdout.index("{"):])
    # the estimate's reward in words (it was "none in the loop (preference data)")
    assert body["estimate"]["reward"] == (
        "judge qwen2.5-1.5b (T_j verdict tokens generated per response)")
