"""`rlmcost plan` searches the topologies users run (families of device groups) and sizes
their groups; `placements` and `--placement` size the built-in configurations by the same
search."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.options import Options, configure
from rlmcost.cli import app
from rlmcost.parallel.layout import Checkpointing
from rlmcost.plan.families import FRAMEWORK_FAMILIES, families, free_groups, group_counts
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.plan.sizing import sized, sizing_space
from rlmcost.reports.estimate import run_of
from rlmcost.reports.placement import placement_run

runner = CliRunner()


def _cli(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_openrlhf_three_group_split_is_among_the_fitting_rows() -> None:
    # OpenRLHF's DeepSpeed keeps bf16 parameters on the device beside CPU Adam
    out = _cli("plan", "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32", "--top", "5000",
               "--param-dtype", "bf16")  # fmt: skip
    rows = [r for r in out["rows"] if r["groups"] == "rollout=16,actor+reference=8,critic+reward=8"
            and r["family"] == "roles" and r["rollout_tp"] == 4 and r["zero"] == "3"
            and r["offload"] == "optimizer,grads" and r["ckpt"] == "full"]  # fmt: skip
    assert rows and all(r["fits"] for r in rows)
    row = rows[0]
    single = _cli(*shlex.split(row["command"])[1:])
    # independent: the `rlmcost ppo --groups ...` command line evaluated alone
    assert single["fits"] is True and single["iteration"]["time_s"] == row["time_s"]
    assert "--groups rollout=16,actor+reference=8,critic+reward=8" in row["command"]


def test_openrlhf_role_groups_with_and_without_the_colocation_switches() -> None:
    ppo = get_algorithm("ppo")
    got = {frozenset(f.members) for f in families(ppo, ("roles",))}
    # by hand, openrlhf/cli/train_ppo_ray.py: --colocate_actor_ref and --colocate_critic_reward
    assert got == {
        frozenset({"rollout", "actor+reference", "critic+reward"}),
        frozenset({"rollout", "actor+reference", "critic", "reward"}),
        frozenset({"rollout", "actor", "reference", "critic+reward"}),
        frozenset({"rollout", "actor", "reference", "critic", "reward"}),
    }
    grpo = configure(get_algorithm("grpo"), Options(rule_reward=True))
    # GRPO with a verifier: rollout / actor+reference, which is the split itself
    assert [f.members for f in families(grpo, ("roles",))] == [
        ("rollout", "actor+reference"), ("rollout", "actor", "reference")]
    assert [f.name for f in families(grpo, ("split", "roles"))] == ["split", "roles"]
    stale = families(ppo, ("async-roles",))
    assert all(f.stale and f.placement == "async" for f in stale)


def test_group_counts_by_shares_and_exhaustive() -> None:
    fam = families(get_algorithm("ppo"), ("roles",))[0]
    # by hand: rollout half of 32 in engines of 4; the actor's group half the rest
    assert group_counts(fam, 32, (4, 1, 1), (0.5,), (0.5,)) == [(16, 8, 8)]
    free = free_groups("rollout=?,actor+reference=?")
    # by hand: every split of 4 GPUs into two positive parts
    assert group_counts(free, 4, (1, 1), (), ()) == [(1, 3), (2, 2), (3, 1)]
    kept = free_groups("rollout=?[tp=2],actor=6")
    assert group_counts(kept, 10, (2, 1), (), ()) == [(4, 6)]
    assert kept.text((4, 6)) == "rollout=4[tp=2],actor=6"


def test_free_group_counts_are_searched_and_reproduce() -> None:
    out = _cli("plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
               "--gpus", "4", "--groups", "rollout=?,actor+reference=?", "--tp", "1",
               "--rollout-tp", "1", "--micro-batch", "1", "--ckpt", "full", "--top", "50")
    splits = {r["groups"] for r in out["rows"]}
    assert splits == {"rollout=1,actor+reference=3", "rollout=2,actor+reference=2",
                      "rollout=3,actor+reference=1"}  # fmt: skip
    row = out["rows"][0]
    single = _cli(*shlex.split(row["command"])[1:])
    assert single["iteration"]["time_s"] == row["time_s"]
    bad = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "4",
                              "--groups", "rollout=?,actor=x"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_framework_searches_what_it_launches() -> None:
    out = _cli("plan", "ppo", "-m", "llama-3.2-1b", "--framework", "openrlhf", "--gpus", "8",
               "--tp", "1", "--rollout-tp", "1", "--micro-batch", "1", "--top", "500")
    fams = {r["family"] for r in out["rows"]}
    assert fams and fams <= set(FRAMEWORK_FAMILIES["openrlhf"]) and "roles" in fams
    assert all(r["run"]["deployment"]["framework"] == "openrlhf" for r in out["rows"])
    nemo = _cli("plan", "grpo", "-m", "llama-3.2-1b", "--framework", "nemo-rl", "--gpus", "4",
                "--tp", "1", "--rollout-tp", "1", "--micro-batch", "1", "--top", "500")
    # NeMo RL: colocated or not, and async GRPO with in-flight weight updates (streaming)
    assert {r["family"] for r in nemo["rows"]} <= {"baseline", "split", "async-stream"}
    assert all(r["run"]["deployment"]["partial_rollout"] == (r["family"] == "async-stream")
               for r in nemo["rows"])  # fmt: skip


def test_long_sequences_search_context_parallelism() -> None:
    base = run_of("ppo", "qwen2.5-72b", prompt_len=40960, batch=64, hardware="h100-sxm")
    cands = candidates(base, RLSpace(placements=("baseline",)), 256)
    assert {c.cp for c in cands} == {1, 2, 4, 8} and {c.sp for c in cands} == {False, True}
    short = run_of("ppo", "qwen2.5-72b", batch=64, hardware="h100-sxm")
    assert {c.cp for c in candidates(short, RLSpace(placements=("baseline",)), 256)} == {1}
    space = RLSpace(placements=("baseline",), cp=(4,), tp=(8,), rollout_tp=(8,),
                    ckpt=(Checkpointing.FULL,), offload=(True,), micro_batch=(1,),
                    fractions=(0.5,))  # fmt: skip
    r = plan_rl(base, 256, space=space, top=1)
    assert r.best is not None and r.best["cp"] == 4
    # independent: the row's command line evaluated alone, ring attention 4
    assert "--cp 4" in r.best["command"]
    single = _cli(*shlex.split(r.best["command"])[1:])
    assert single["fits"] is True and single["iteration"]["time_s"] == r.best["time_s"]
    c = next(c for c in candidates(base, space, 256))
    assert candidate_run(base, c).deployment.train.cp == 4


@pytest.mark.parametrize("model", ["llama-3.2-1b", "llama-3.1-8b", "llama-3.1-70b"])
def test_built_in_configurations_are_sized_by_the_search(model: str) -> None:
    """Over 8, 16 and 32 GPUs: async and combined never come back short of memory when the
    search finds a fitting deployment of them, say so when nothing fits, and async is no
    slower than the best synchronous split of its GPUs unless a note says why."""
    for gpus in (8, 16, 32):
        for cfg in ("async", "combined"):
            run = placement_run("ppo", model, gpus=gpus, placement=cfg)
            try:
                got, e = sized(run)
            except Exception as exc:  # too few GPUs for the configuration's groups
                assert "needs at least" in str(exc) or "no split" in str(exc)
                continue
            if not e.fits:
                assert any("nothing fits" in n for n in e.notes)
                # independent of the sizing: the plan over the whole sizing space
                assert plan_rl(run, gpus, space=sizing_space(run)).best is None
            if cfg == "async" and e.fits:
                sync = plan_rl(got.replace(deployment={"staleness": None}), gpus,
                               space=RLSpace(placements=("split",), exhaustive=True,
                                             tp=(got.deployment.train.tp,),
                                             ckpt=(got.deployment.train.ckpt,),
                                             offload=("optimizer" in
                                                      got.deployment.train.offload,),
                                             micro_batch=(got.deployment.train.micro_batch,),
                                             rollout_tp=(got.deployment.engine.tp or 1,)),
                               top=1).best  # fmt: skip
                if sync is not None and sync["time_s"] < e.iteration_time_s:
                    assert any("slower than the best synchronous split" in n
                               for n in e.notes)  # fmt: skip


def test_the_plan_lists_the_best_of_each_topology_with_openrlhfs_split() -> None:
    """Past the top k the search evaluates each topology still without a fitting row, its
    leanest candidates first, so OpenRLHF's three-group split (rollout 16, actor+reference 8,
    critic+reward 8) is listed with the default --top, and its command reproduces it."""
    out = _cli("plan", "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32",
               "--framework", "openrlhf")  # fmt: skip
    tops = out["best_per_topology"]
    assert len({(r["gpus"], r["family"], r["groups"]) for r in tops}) == len(tops)
    assert [r["time_s"] for r in tops] == sorted(r["time_s"] for r in tops)
    (row,) = [r for r in tops if r["family"] == "roles"
              and r["groups"] == "rollout=16,actor+reference=8,critic+reward=8"]  # fmt: skip
    assert row["fits"] and len(out["rows"]) == 10
    single = _cli(*shlex.split(row["command"])[1:])
    # independent: the `rlmcost ppo --groups ...` command line evaluated alone
    assert single["fits"] is True and single["iteration"]["time_s"] == row["time_s"]


def test_the_default_plan_evaluates_each_family_under_the_framework_that_launches_it() -> None:
    """Without --framework, OpenRLHF's role groups are evaluated under OpenRLHF's preset
    (bf16 parameters beside CPU Adam), not NeMo RL's fp32 ones: the default plan lists the
    three-group split with `--framework openrlhf` in its command, which reproduces it; the
    co-located rows stay NeMo RL's, slime's async split slime's."""
    out = _cli("plan", "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32")
    tops = out["best_per_topology"]
    (row,) = [r for r in tops if r["family"] == "roles"
              and r["groups"] == "rollout=16,actor+reference=8,critic+reward=8"]  # fmt: skip
    assert row["fits"] and "--framework openrlhf" in row["command"]
    assert row["run"]["deployment"]["framework"] == "openrlhf"
    want = {"baseline": "nemo-rl", "split": "nemo-rl", "roles": "openrlhf",
            "async-roles": "openrlhf", "async-split": "slime"}  # fmt: skip
    for r in tops:
        assert f"--framework {want[r['family']]} " in r["command"], r["command"]
    assert any("under openrlhf" in n and "async-split under slime" in n for n in out["notes"])
    single = _cli(*shlex.split(row["command"])[1:])
    # independent: the `rlmcost ppo --framework openrlhf --groups ...` line evaluated alone
    assert single["fits"] is True and single["iteration"]["time_s"] == row["time_s"]
    # an explicit --framework keeps one base: every row is NeMo RL's
    nemo = _cli("plan", "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32",
                "--framework", "nemo-rl")  # fmt: skip
    assert all("--framework nemo-rl " in r["command"] for r in nemo["best_per_topology"])


def test_the_printed_plan_shows_openrlhfs_split_among_the_topologies() -> None:
    """Issue 20: `rlmcost plan ppo -m 70b -H a100-80gb --gpus 32` lists OpenRLHF's
    three-group split in its printed output, not only in --json (the table showed the first
    15 of 26 topologies, the split 18th)."""
    # a terminal as wide as the table (about 306 columns with the offload lists and the cost
    # columns), so that no groups cell wraps
    res = CliRunner().invoke(app, ["plan", "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus",
                                   "32"], env={"COLUMNS": "320"})  # fmt: skip
    assert res.exit_code == 0, res.output
    table = res.output[res.output.index("best of each topology"):]
    assert any("roles" in line and "rollout=16,actor+reference=8,critic+reward=8" in line
               for line in table.splitlines())  # fmt: skip


def test_a_megatron_only_framework_searches_its_distributed_optimizer() -> None:
    """slime trains with Megatron-LM, whose distributed optimizer shards the optimizer states
    alone (slime sets use_distributed_optimizer: `rlmcost import slime` reads it as --zero 1);
    it has no ZeRO-3, so its plan rows (and their commands) say --zero 1, where the rows had
    taken the FSDP frameworks' ZeRO-3."""
    res = CliRunner().invoke(app, ["plan", "grpo", "-m", "qwen3-4b", "--framework", "slime",
                                   "--gpus", "8", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows"]
    assert rows and {r["zero"] for r in rows} == {"1"}
    assert all("--zero 1" in r["command"] for r in rows)


@pytest.mark.parametrize("alg", ["grpo", "dpo"])
def test_zero3_under_slime_is_refused_clearly(alg: str) -> None:
    """By hand too: `--framework slime --zero 3` is a one-line error naming --zero 1 (slime's
    Megatron-LM trainer has no ZeRO-3), not a price of a deployment slime cannot launch; DPO
    too, which generates nothing (the check had run only beside a generation)."""
    res = CliRunner().invoke(app, [alg, "-m", "qwen3-4b", "--framework", "slime",
                                   "--zero", "3"])  # fmt: skip
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "it has no ZeRO-3: give --zero 1" in " ".join(res.output.split())
