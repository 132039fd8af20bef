"""A size tier's device groups: OpenRLHF's and TRL's examples for 70 B actors run their vLLM
engines on GPUs of their own, and a query that names no placement nor groups takes those
groups scaled to its GPUs (rlmcost/frameworks/tier_placement.py, rlmcost/run/tier_groups.py).
"""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

import rlmcost
from rlmcost import Run
from rlmcost.cli import app
from rlmcost.frameworks.presets import get_preset
from rlmcost.frameworks.tier_placement import scale

runner = CliRunner()
ORLHF = get_preset("openrlhf").sized[-1]  # the 70 B example's (the small one has no groups)
TRL = get_preset("trl").sized[0]


def _cli(*args: str) -> dict:
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _groups(out: dict) -> list[tuple[str, int]]:
    return [(g["members"], g["gpus"]) for g in out["run"]["deployment"]["groups"]]


def test_openrlhf_ppo_on_the_examples_gpus_is_the_example() -> None:
    # OpenRLHF examples/scripts/train_ppo_llama_ray_70b.sh @c250c21a: --vllm_num_engines 4 x
    # --vllm_tensor_parallel_size 2, actor 8, critic 8, ref 4, reward 4 GPUs (32 in all)
    roles = ("actor", "critic", "reward", "reference")
    groups, why = scale(ORLHF.placement, roles, 32, 2, 1)
    assert why == ""
    assert groups == [("rollout", 8, ""), ("actor", 8, ""), ("critic", 8, ""),
                      ("reference", 4, ""), ("reward", 4, "")]  # fmt: skip


def test_shares_round_to_whole_replicas_the_actor_takes_the_rest() -> None:
    # GRPO has no critic: the example's other groups (8 + 8 + 4 + 4 = 24 GPUs) share 32;
    # rollout 32 x 8/24 = 10.7 GPUs = 5.3 TP-2 engines -> 5 (10 GPUs); reference and reward
    # 5.3 -> 5 each; the actor the rest, 12
    groups, _ = scale(ORLHF.placement, ("actor", "reward", "reference"), 32, 2, 1)
    assert groups == [("rollout", 10, ""), ("actor", 12, ""), ("reference", 5, ""),
                      ("reward", 5, "")]  # fmt: skip
    # a trainer of TP 4: every trainer group in whole TP-4 replicas
    groups, _ = scale(ORLHF.placement, ("actor", "reward", "reference"), 64, 2, 4)
    assert groups is not None and all(n % 4 == 0 for m, n, _ in groups if m != "rollout")
    assert sum(n for _, n, _ in groups) == 64


def test_trl_server_node_scaled_and_refused_under_half_an_engine() -> None:
    # TRL docs 'GRPO at scale': trl vllm-serve --tensor_parallel_size 8 on one node, 32
    # training processes: of 32 GPUs the server's share is 6.4 -> one TP-8 engine
    groups, _ = scale(TRL.placement, ("actor",), 32, 8, 1)
    assert groups == [("rollout", 8, "gmu=0.9"), ("actor", 24, "")]
    # with the KL the reference runs in the training processes (rest_with_actor)
    groups, _ = scale(TRL.placement, ("actor", "reference"), 40, 8, 1)
    assert groups == [("rollout", 8, "gmu=0.9"), ("actor+reference", 32, "")]
    # of 8 GPUs the server's share is 1.6, under half a TP-8 engine: co-located
    groups, why = scale(TRL.placement, ("actor",), 8, 8, 1)
    assert groups is None and "under half a replica" in why


def test_openrlhf_refuses_a_model_its_example_has_no_group_for() -> None:
    # the 70B script gives no cost model a group (OpenRLHF runs PPO's four models)
    groups, why = scale(ORLHF.placement, ("actor", "critic", "cost"), 32, 2, 1)
    assert groups is None and "cost" in why


def test_cli_70b_queries_take_the_examples_groups_and_fit() -> None:
    # both co-located queries were 98.6 / 83.4 GiB on 32 H100 (do not fit)
    orlhf = _cli("grpo", "-m", "70b", "-H", "h100", "--gpus", "32", "--framework", "openrlhf")
    assert _groups(orlhf) == [("rollout", 10), ("actor", 12), ("reference", 5), ("reward", 5)]
    trl = _cli("grpo", "-m", "70b", "-H", "h100", "--gpus", "32", "--framework", "trl")
    assert _groups(trl) == [("rollout", 8), ("actor", 24)]
    assert trl["run"]["deployment"]["groups"][0]["engine"]["gpu_memory_utilization"] == 0.9
    assert orlhf["fits"] and trl["fits"]
    line = next(n for n in orlhf["notes"] if n.startswith("deployment:"))
    assert "placed as its example (rollout=8,actor=8,critic=8,reference=4,reward=4)" in line


@pytest.mark.parametrize("extra", [["--no-sized-defaults"], ["--placement", "baseline"],
                                   ["--groups", "rollout=16,actor+reference+reward=16"]])
def test_own_placement_groups_or_unsized_defaults_win(extra: list[str]) -> None:
    out = _cli("grpo", "-m", "70b", "-H", "h100", "--gpus", "32", "--framework", "openrlhf",
               *extra)  # fmt: skip
    want = [("rollout", 16), ("actor+reference+reward", 16)] if "--groups" in extra else []
    assert _groups(out) == want
    again = Run.from_data(out["run"])  # to_json -> from_data keeps the Run's own choice
    assert again.deployment.groups == Run.from_data(out["run"]).deployment.groups
    assert [(g.members, g.gpus) for g in again.deployment.groups] == want


def test_gpus_that_cannot_hold_the_split_stay_co_located_and_say_so() -> None:
    out = _cli("grpo", "-m", "70b", "-H", "h100", "--gpus", "8", "--framework", "trl")
    assert _groups(out) == []
    line = next(n for n in out["notes"] if n.startswith("deployment:"))
    assert "co-located: its example's groups (rollout=8[gmu=0.9],actor=32) do not hold" in line


def test_the_actor_group_holds_whole_expert_grids() -> None:
    """slime's 235 B tier (scripts/run-qwen3-235B-A22B.sh @624b824a: TP 4, PP 4, CP 2, EP 16,
    ETP 1): a trainer replica is tp*pp*cp = 32 GPUs times the 2 data-parallel ranks that
    etp*ep = 16 needs inside tp*cp*dp (Megatron-core), 64 GPUs. The split keeps the actor's
    group a multiple of 64: 192 GPUs give rollout 64 + actor 128 (not 96 + 96, which the
    evaluation refuses), and 64 GPUs, too few for both, stay co-located."""
    out = _cli("grpo", "-m", "qwen3-235b-a22b", "--framework", "slime", "--gpus", "192")
    assert _groups(out) == [("rollout", 64), ("actor", 128)]
    out = _cli("grpo", "-m", "qwen3-235b-a22b", "--framework", "slime", "--gpus", "64")
    assert _groups(out) == []
    line = next(n for n in out["notes"] if n.startswith("deployment:"))
    assert "not whole trainer replicas of 64" in line


@pytest.mark.parametrize("fw,alg", [("openrlhf", "ppo"), ("trl", "grpo")])
def test_command_and_run_file_round_trip(fw: str, alg: str, tmp_path) -> None:
    out = _cli(alg, "-m", "70b", "-H", "h100", "--gpus", "32", "--framework", fw)
    cmd = shlex.split(Run.from_data(out["run"]).to_command())[1:]
    assert "--no-sized-defaults" not in cmd
    again = _cli(*cmd)
    path = tmp_path / "out.json"
    path.write_text(json.dumps(out))
    rerun = _cli("run", str(path))
    assert again["iteration"] == out["iteration"] == rerun["iteration"]
    assert _groups(again) == _groups(out) == _groups(rerun)


def test_run_api_and_deployment_file_get_the_cli_groups(tmp_path) -> None:
    out = _cli("ppo", "-m", "70b", "-H", "h100", "--gpus", "32", "--framework", "openrlhf")
    api = Run.from_data({"algorithm": {"name": "ppo"}, "models": {"actor": "70b"},
                         "deployment": {"framework": "openrlhf"},
                         "cluster": {"gpus": 32, "hardware": "h100"}})  # fmt: skip
    assert [(g.members, g.gpus) for g in api.deployment.groups] == _groups(out)
    assert Run.from_data(api.to_json()) == api  # to_json -> from_data: the identity
    est = rlmcost.estimate("ppo", "70b", hardware="h100", gpus=32, framework="openrlhf")
    assert est.run.deployment.groups == api.deployment.groups
    dep = tmp_path / "dep.yaml"
    dep.write_text("framework: openrlhf\n")
    filed = _cli("ppo", "-m", "70b", "-H", "h100", "--gpus", "32", "--deployment", str(dep))
    assert _groups(filed) == _groups(out)
    dep.write_text("framework: openrlhf\ngroups: []\n")  # a file's own co-location
    assert _groups(_cli("ppo", "-m", "70b", "-H", "h100", "--gpus", "32",
                        "--deployment", str(dep))) == []  # fmt: skip


def test_smaller_actors_and_other_frameworks_stay_co_located() -> None:
    # OpenRLHF's tier starts at 23.8 B; verl's 72 B tier has no placement (its example is
    # the hybrid engine)
    assert _groups(_cli("grpo", "-m", "8b", "--gpus", "32", "--framework", "openrlhf")) == []
    assert get_preset("verl").sized[-1].placement is None


def test_frameworks_lists_the_tier_placement() -> None:
    out = _cli("frameworks")
    tiers = {f["framework"]: f["sized"] for f in out["frameworks"]}
    assert tiers["openrlhf"][0]["placement"] is None  # the Hybrid Engine example: co-located
    assert tiers["openrlhf"][-1]["placement"]["groups"] == \
        "rollout=8,actor=8,critic=8,reference=4,reward=4"  # fmt: skip
    assert tiers["trl"][0]["placement"]["gpus"] == 40
    assert all(s["placement"] is None for s in tiers["verl"])


def test_compare_gives_each_algorithm_its_own_tier_groups() -> None:
    # PPO takes the script's five groups; GRPO (no critic) the four it keeps; DPO generates
    # nothing (no engines): co-located
    out = _cli("compare", "ppo", "grpo", "dpo", "-m", "70b", "-H", "h100", "--gpus", "32",
               "--framework", "openrlhf")  # fmt: skip
    groups = [[(g["members"], g["gpus"]) for g in e["run"]["deployment"]["groups"]]
              for e in out["algorithms"]]  # fmt: skip
    assert groups[0] == [("rollout", 8), ("actor", 8), ("critic", 8), ("reference", 4),
                         ("reward", 4)]  # fmt: skip
    assert groups[1] == [("rollout", 10), ("actor", 12), ("reference", 5), ("reward", 5)]
    assert groups[2] == []
    ppo = _cli("ppo", "-m", "70b", "-H", "h100", "--gpus", "32", "--framework", "openrlhf")
    assert out["algorithms"][0]["iteration"] == ppo["iteration"]


def test_gpus_not_given_run_the_example_as_it_is() -> None:
    # TRL's "GRPO at scale" example (docs/source/grpo_trainer.md @f2cd5771): `trl vllm-serve`
    # TP 8 on one node of 8 GPUs, 32 training processes; slime's run-qwen3-235B-A22B.sh
    # (@624b824a): 64 rollout GPUs at SGLang TP 32 and 64 training GPUs. A query naming no
    # --gpus takes the example's own groups (it had stayed co-located, and slime's 235 B did
    # not fit on the 64 GPUs the co-located engine replica rule chose)
    import rlmcost
    from rlmcost.cli.deployment_line import deployment_line

    trl = rlmcost.run_of("grpo", "llama-3.1-70b", hardware="h100", framework="trl")
    assert [(g.members, g.gpus) for g in trl.deployment.groups] == [("rollout", 8),
                                                                    ("actor", 32)]
    assert "the GPUs not given (--gpus): the example's 40" in deployment_line(trl)
    slime = rlmcost.run_of("grpo", "qwen3-235b-a22b", hardware="h100", framework="slime")
    assert [(g.members, g.gpus) for g in slime.deployment.groups] == [("rollout", 64),
                                                                      ("actor", 64)]
    assert rlmcost.evaluate(slime).fits
