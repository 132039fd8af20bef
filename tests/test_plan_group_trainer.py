"""`rlmcost plan` rows show the trainer settings a ``--groups`` bracket fixes (issue 20).

A group's bracket goes over the run's trainer layout on that group
(``rlmcost.plan.rl_runs.candidate_sections``, ``rlmcost.placement.inputs._replica``), so
``--groups "rollout=16,actor+reference=8[tp=2]"`` trains GRPO's actor at TP 2 whatever the
run-wide ``--tp``. The plan had shown TP 1, 2, 4 and 8 with identical times (the run-wide TP,
which no task read) and commanded ``--tp 1``; ``zero``, ``ckpt`` and ``mb`` alike. The
reference for "what runs" is the evaluation itself: the layouts of the jobs of the row's own
Run, and the row's command evaluated by ``rlmcost grpo``.
"""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.plan.families import free_groups
from rlmcost.plan.rl_candidates import _algorithm
from rlmcost.plan.rl_space import engine_tp_note, groups_trainer_fixed
from rlmcost.reports.estimate import run_of
from rlmcost.run.spec import Run

runner = CliRunner()


def _plan(*args: str) -> dict:
    res = runner.invoke(app, ["plan", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _trained(run: Run) -> set[tuple[int, str, str, int]]:
    """(tp, zero, ckpt, micro-batch) of every train job of ``run``'s evaluation."""
    e = evaluate_deployment(run)
    return {(j.layout.tp, str(j.layout.zero), str(j.layout.ckpt), j.layout.micro_batch)
            for g in e.groups for j in g.jobs if j.task.kind == "train"}  # fmt: skip


def _command_time(command: str) -> float:
    """The iteration time ``rlmcost grpo`` predicts for a row's command line."""
    res = runner.invoke(app, [*shlex.split(command)[1:], "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)["iteration"]["time_s"]


def test_the_row_shows_and_commands_the_groups_trainer_tp() -> None:
    out = _plan("grpo", "-m", "8b", "--groups", "rollout=16,actor+reference=8[tp=2]",
                "--top", "3")  # fmt: skip
    rows = out["rows"]
    assert rows and {r["tp"] for r in rows} == {2}
    assert all(" --tp 2 " in r["command"] for r in rows)
    assert {t[0] for t in _trained(Run.from_data(rows[0]["run"]))} == {2}
    assert _command_time(rows[0]["command"]) == pytest.approx(rows[0]["time_s"], rel=1e-12)
    # one trainer TP, not the four (1, 2, 4, 8) that all train at TP 2: x 4 engine TPs x
    # ckpt none, full x micro-batch 1, 2 x offload off, on (the default RLSpace); had 128
    assert out["counts"]["enumerated"] == 1 * 4 * 2 * 2 * 2


def test_zero_ckpt_and_micro_batch_brackets_are_the_rows() -> None:
    groups = "rollout=16,actor+reference=8[zero=2;ckpt=full;mb=2]"
    out = _plan("grpo", "-m", "8b", "--groups", groups, "--top", "2")
    rows = out["rows"]
    assert rows and all((r["zero"], r["ckpt"], r["micro_batch"]) == ("2", "full", 2)
                        for r in rows)  # fmt: skip
    assert all(" --zero 2 --ckpt full --micro-batch 2 " in r["command"] for r in rows)
    run = Run.from_data(rows[0]["run"])
    assert {t[1:] for t in _trained(run)} == {("2", "full", 2)}
    assert _command_time(rows[0]["command"]) == pytest.approx(rows[0]["time_s"], rel=1e-12)
    # 4 trainer TPs x 4 engine TPs x offload off, on: ZeRO, ckpt, mb one each (had 128)
    assert out["counts"]["enumerated"] == 4 * 4 * 2


def test_a_critic_without_the_bracket_keeps_the_search_and_marks_the_row() -> None:
    """PPO's critic group reads the run-wide TP: the run-wide TP stays searched (and the
    rows differ in what runs on the critic), the table marks the value the actor's group
    does not run."""
    groups = "rollout=8,actor+reference=8[tp=2],critic+reward=8"
    out = _plan("ppo", "-m", "8b", "--groups", groups, "--top", "20")
    assert len({r["tp"] for r in out["rows"]}) > 1
    res = runner.invoke(app, ["plan", "ppo", "-m", "8b", "--groups", groups, "--top", "20"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    head = next(x for x in lines if "engine tp" in x).split("┃")
    cells = [{h.strip(): v.strip() for h, v in zip(head, x.split("│"), strict=True)}
             for x in lines if x.startswith("│ ")]  # fmt: skip
    assert {c["tp"] for c in cells} >= {"2", "1*"}  # TP 2: everywhere; 1: the critic's
    assert "a group's brackets give it a value of its own" in res.output.replace("\n", " ")


@pytest.mark.parametrize(("alg", "groups", "fixed"), [
    ("grpo", "rollout=?,actor+reference=?[tp=2]", {"tp": 2}),
    ("grpo", "rollout=?[tp=4],actor+reference=?", {}),  # the engine's TP, not the trainer's
    ("grpo", "rollout=?,actor=?[mb=2],reference=?", {}),  # the reference's forwards: run-wide
    ("grpo", "rollout=?,actor=?[pp=2],reference=?[pp=2]", {"pp": 2}),
    ("grpo", "rollout=?,actor=?[tp=2],reference=?[tp=4]", {}),  # two values: run-wide searched
    ("ppo", "rollout=?,actor+reference=?[tp=2],critic=?", {}),
    ("ppo", "rollout=?,actor+reference=?[tp=2;ckpt=full],critic=?[tp=2;ckpt=full]",
     {"tp": 2, "ckpt": "full"}),
    ("grpo", "rollout=?,actor+reference=?[ep=2]", {"ep": 2}),
    ("grpo", "rollout=?[ep=2],actor+reference=?", {}),  # the engine's EP under vLLM
    ("grpo", "rollout=?,actor=?[ep=2],reference=?", {}),  # the reference's forwards: run-wide
    ("grpo", "rollout=?,actor+reference=?[offload=optimizer]", {"offload": "optimizer"}),
    # the offload is the trainer's alone: a group that runs forwards only does not read it
    ("grpo", "rollout=?,actor=?[offload=optimizer,params],reference=?",
     {"offload": "optimizer,params"}),
    ("ppo", "rollout=?,actor+reference=?[offload=optimizer],critic=?", {}),  # the critic trains
])  # fmt: skip
def test_the_trainer_fields_a_family_fixes(alg: str, groups: str, fixed: dict) -> None:
    base = run_of(alg, "llama-3.2-1b", reward="rule")
    got = groups_trainer_fixed(_algorithm(base), free_groups(groups), base)
    assert {k: v if isinstance(v, int) else str(v) for k, v in got.items()} == fixed


@pytest.mark.parametrize("engine", ["hf", "megatron"])
def test_a_group_generating_in_the_trainers_layout_reads_its_pp_and_ep(engine: str) -> None:
    """HF generate runs in the trainer's layout at the group's TP, and a Megatron engine
    given no PP or EP takes the policy's (placement.inputs._replica, megatron_degrees): a
    rollout group without the bracket reads the run-wide PP and EP, which stay searched."""
    groups = "rollout=?,actor+reference=?[pp=2;ep=1;mb=2]"
    fam = free_groups(groups)
    vllm = run_of("grpo", "llama-3.2-1b", reward="rule")
    assert groups_trainer_fixed(_algorithm(vllm), fam, vllm) == {"pp": 2, "ep": 1,
                                                                 "micro_batch": 2}
    base = run_of("grpo", "llama-3.2-1b", reward="rule", deployment={"engine": {"kind": engine},
                  "train": {"zero": "1"}})  # fmt: skip
    assert groups_trainer_fixed(_algorithm(base), fam, base) == {"micro_batch": 2}


def test_the_row_shows_and_commands_the_groups_ep() -> None:
    """A MoE actor's group at EP 2 (qwen3-30b-a3b: 128 routed experts): the rows had shown
    EP 1, 2 and 4 with identical times and commanded --ep 1."""
    out = _plan("grpo", "-m", "30b-a3b", "--ep", "1,2,4", "--groups",
                "rollout=8,actor+reference=8[ep=2]", "--top", "3")  # fmt: skip
    rows = out["rows"]
    assert rows and {r["ep"] for r in rows} == {2}
    assert all(" --ep 2 " in r["command"] for r in rows)
    e = evaluate_deployment(Run.from_data(rows[0]["run"]))
    assert {j.layout.ep for g in e.groups for j in g.jobs if j.task.kind != "generate"} == {2}
    assert _command_time(rows[0]["command"]) == pytest.approx(rows[0]["time_s"], rel=1e-12)
    # one EP, not three: 4 trainer TPs x 4 engine TPs x ckpt x mb x offload (had 384)
    assert out["counts"]["enumerated"] == 4 * 4 * 2 * 2 * 2


def test_the_row_shows_and_commands_the_groups_offload() -> None:
    """``actor+reference=8[offload=optimizer]``: the actor trains with its optimizer on the
    host whatever the run-wide --offload; the rows had shown '' and the framework's FSDP CPU
    offload (optimizer,params,grads) with identical times and commanded --offload ''."""
    out = _plan("grpo", "-m", "8b", "--groups", "rollout=16,actor+reference=8[offload=optimizer]",
                "--top", "2")  # fmt: skip
    rows = out["rows"]
    assert rows and {r["offload"] for r in rows} == {"optimizer"}
    assert all(" --offload optimizer " in r["command"] for r in rows)
    res = runner.invoke(app, [*shlex.split(rows[0]["command"])[1:], "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["iteration"]["time_s"] == pytest.approx(rows[0]["time_s"], rel=1e-12)
    peak = max(g["peak_memory_bytes_per_device"] for g in got["placement_detail"]["groups"])
    assert peak == rows[0]["memory_bytes_per_device"]
    # the offload on, not on and off: 4 trainer TPs x 4 engine TPs x ckpt x mb (had 128)
    assert out["counts"]["enumerated"] == 4 * 4 * 2 * 2


def test_rollout_tp_beside_a_generating_groups_tp_is_a_note() -> None:
    """placement.inputs._replica reads the group's own ``tp=`` over the run-wide engine TP:
    the bracket wins; --rollout-tp still sets the other families' engines, so a note."""
    alg = _algorithm(run_of("grpo", "llama-3.2-1b", reward="rule"))
    fam = free_groups("rollout=?[tp=2],actor+reference=?")
    (note,) = engine_tp_note(alg, fam, (4,))
    assert note.startswith("--rollout-tp 4: --groups rollout[tp=2] generates at its bracket's")
    assert engine_tp_note(alg, fam, (2, 4)) == []  # the bracket's TP among those asked
    assert engine_tp_note(alg, fam, None) == []
    out = _plan("grpo", "-m", "8b", "--rollout-tp", "4", "--groups",
                "rollout=16[tp=2],actor+reference=8", "--top", "1")  # fmt: skip
    assert any(n.startswith("--rollout-tp 4: --groups rollout[tp=2]") for n in out["notes"])
    assert {r["rollout_tp"] for r in out["rows"]} == {2}
