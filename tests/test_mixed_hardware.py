"""Device groups on their own accelerators (``--groups rollout=8@h20,...``), pools of
accelerators in the planner (``plan --hardware h20:16,h100:8``) and the cost objective
(USD per iteration and per 1M trained tokens at ``--price`` or the cited list prices)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.layout import Checkpointing
from rlmcost.placement.groups import parse_groups
from rlmcost.plan.kinds import Objective, parse_pool
from rlmcost.plan.pool import assignments
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLSpace
from rlmcost.plan.search import rank
from rlmcost.run.spec import Run
from rlmcost.specs import get_hardware
from rlmcost.specs.prices import list_prices, parse_prices, price_sources

runner = CliRunner()

LLAMA_31_8B_PARAMS = 8_030_261_248
"""Llama-3.1-8B's parameters: the safetensors index of meta-llama/Llama-3.1-8B on the Hugging
Face Hub (metadata total_size 16,060,522,496 bytes in bf16 = 2 bytes x this)."""

NIC_A100_BYTES_PER_S = 25 * 10**9
"""One 200 Gb/s HDR InfiniBand NIC per A100 (DGX A100 datasheet: 8 x 200 Gb/s for 8 GPUs)."""

NVLINK_H100_BYTES_PER_S = 450 * 10**9
"""H100 SXM NVLink 4: 900 GB/s bidirectional, 450 GB/s per direction (H100 datasheet)."""


def _run(groups: list[dict], **cluster: object) -> Run:
    return Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True},
        "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"framework": None, "groups": groups},
        "cluster": dict(cluster),
    })  # fmt: skip


def _cli(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_groups_name_their_hardware_by_any_alias() -> None:
    a, b = parse_groups("rollout=16@h20[tp=4],actor+ref=8@H100")
    assert (a.hardware, a.settings, b.hardware) == ("h20", (("tp", 4),), "h100-sxm")
    assert parse_groups("rollout=16")[0].hardware is None  # the run's hardware


def test_each_group_is_evaluated_on_its_own_accelerator() -> None:
    """A group on ``@h20`` in a mixed run is the same group as in a run whose hardware is
    the H20: memory, capacity and every job's time (nothing else of the run leaks in)."""
    mixed = evaluate_deployment(_run([
        {"members": "rollout", "gpus": 8, "hardware": "h20"},
        {"members": "actor+reference", "gpus": 8, "hardware": "h100"}]))  # fmt: skip
    alone = evaluate_deployment(_run([
        {"members": "rollout", "gpus": 8},
        {"members": "actor+reference", "gpus": 8, "hardware": "h100"}],
        hardware="h20"))  # fmt: skip
    h20, h100 = get_hardware("h20"), get_hardware("h100")
    assert [(g.hardware, g.hbm_bytes) for g in mixed.groups] == [
        ("h20", h20.hbm_usable_bytes), ("h100-sxm", h100.hbm_usable_bytes)]  # fmt: skip
    for g, h in zip(mixed.groups, alone.groups, strict=True):
        assert g.peak_memory_bytes_per_device == h.peak_memory_bytes_per_device
        assert [j.predicted_s for j in g.jobs] == [j.predicted_s for j in h.jobs]
    assert mixed.fleet == {"h20": 8, "h100-sxm": 8}
    # MFU over each group's own peak: work / (time x (8 x H20 peak + 8 x H100 peak))
    peaks = 8 * h20.peak_flops_per_s["bf16"] + 8 * h100.peak_flops_per_s["bf16"]
    assert mixed.mfu == pytest.approx(mixed.work_flops / (mixed.iteration_time_s * peaks))


@pytest.mark.parametrize("order", [("h100", "a100-80gb"), ("a100-80gb", "h100")])
def test_weights_cross_between_accelerators_at_the_slower_link(order) -> None:  # noqa: ANN001
    rollout_hw, trainer_hw = order
    e = evaluate_deployment(_run([
        {"members": "rollout", "gpus": 8, "hardware": rollout_hw},
        {"members": "actor+reference", "gpus": 8, "hardware": trainer_hw}]))  # fmt: skip
    (sync,) = e.syncs
    assert sync.bytes == 2 * LLAMA_31_8B_PARAMS  # bf16 weights, one copy
    # 8 sending GPUs in parallel, each over the A100's 25 GB/s NIC (the H100 has 50 GB/s)
    assert sync.time_s == pytest.approx(2 * LLAMA_31_8B_PARAMS / (8 * NIC_A100_BYTES_PER_S))


def test_one_accelerator_in_one_node_keeps_nvlink() -> None:
    e = evaluate_deployment(_run([
        {"members": "rollout", "gpus": 4, "hardware": "h100"},
        {"members": "actor+reference", "gpus": 4, "hardware": "h100"}]))  # fmt: skip
    (sync,) = e.syncs
    assert sync.time_s == pytest.approx(2 * LLAMA_31_8B_PARAMS / (4 * NVLINK_H100_BYTES_PER_S))


def test_cost_is_time_times_the_price_of_every_gpu() -> None:
    e = evaluate_deployment(_run([
        {"members": "rollout", "gpus": 8, "hardware": "h20"},
        {"members": "actor+reference", "gpus": 8, "hardware": "h100"}],
        prices={"h20": 1.2, "h100": 2.5}))  # fmt: skip
    per_hour = 8 * 1.2 + 8 * 2.5
    assert e.cost_per_iteration_usd == pytest.approx(e.iteration_time_s / 3600 * per_hour)
    assert e.cost_per_million_tokens_usd == pytest.approx(
        e.cost_per_iteration_usd / e.tokens_per_iteration * 1e6)  # fmt: skip
    # no price for the H20 by default (none published found): no cost, and a note says why
    bare = evaluate_deployment(_run([{"members": "rollout", "gpus": 8, "hardware": "h20"},
                                     {"members": "actor+reference", "gpus": 8}]))  # fmt: skip
    assert bare.cost_per_iteration_usd is None
    assert any("--price h20=" in n for n in bare.notes)


def test_default_prices_are_cited() -> None:
    for p in price_sources():
        assert p["url"].startswith("https://") and p["date"].count("-") == 2
        get_hardware(p["hardware"])  # a built-in accelerator
    assert list_prices()["h100-sxm"] == 3.78  # Lambda on-demand H100 SXM, 2026-05-07
    assert parse_prices("h100=2.5,H20=1.2") == {"h100-sxm": 2.5, "h20": 1.2}


def test_the_mixed_query_from_the_cli() -> None:
    out = _cli("grpo", "-m", "llama-3.1-8b", "--reward", "rule", "-B", "16", "-K", "4",
               "--framework", "none", "--groups", "rollout=8@h20,actor+reference=8@h100",
               "--price", "h20=1.2")  # fmt: skip
    groups = {g["name"]: g["hardware"] for g in out["placement_detail"]["groups"]}
    assert groups == {"rollout": "h20", "actor+reference": "h100-sxm"}
    cost = out["cost"]
    per_hour = 8 * 1.2 + 8 * list_prices()["h100-sxm"]
    assert cost["per_iteration_usd"] == pytest.approx(out["iteration"]["time_s"] / 3600 * per_hour)
    assert cost["gpus"] == {"h20": 8, "h100-sxm": 8}
    # the Run keeps the hardware and prices: `rlmcost run` on the output reproduces it
    again = Run.from_data(out["run"])
    assert "@h20" in again.to_command() and "--price h20=1.2" in again.to_command()
    assert evaluate_deployment(again).cost_per_iteration_usd == cost["per_iteration_usd"]


def test_the_top_level_device_is_the_binding_stages_on_a_mixed_pool() -> None:
    # --hardware a100-80gb names no group's device: hardware, hbm_bytes_per_device and
    # capacity_bytes_per_device all name the device the binding stage's peak is on (hardware.json)
    out = _cli("grpo", "-m", "llama-3.1-8b", "--reward", "rule", "-B", "16", "-K", "4",
               "--framework", "none", "--hardware", "a100-80gb",
               "--groups", "rollout=8@h20,actor+reference=8@h100")  # fmt: skip
    stages = out["stages"]
    assert {s["hardware"] for s in stages.values()} == {"h20", "h100-sxm"}
    binding = max(stages.values(), key=lambda s: s["shortfall_bytes"] - s["headroom_bytes"])
    for view in (out, out["placement_detail"]):
        assert view["hardware"] == binding["hardware"]
        assert view["hbm_bytes_per_device"] == get_hardware(view["hardware"]).hbm_bytes
        assert view["capacity_bytes_per_device"] == \
            binding["memory_bytes_per_device"] + binding["headroom_bytes"] - \
            binding["shortfall_bytes"]  # fmt: skip


POOL_SPACE = RLSpace(placements=("baseline", "split"), tp=(1,), rollout_tp=(1,),
                     micro_batch=(1,), ckpt=(Checkpointing.FULL,), offload=(False,),
                     fractions=(0.5,), rollout_shares=(0.5,))  # fmt: skip


def test_pool_assignments_stay_within_what_is_available() -> None:
    pool = parse_pool("h20:16,h100:8")
    assert pool == (("h20", 16), ("h100-sxm", 8))
    assert parse_pool("h100") == ()  # one accelerator: the plain hardware
    # co-located: one accelerator with enough GPUs; apart: each group on one, within the pool
    assert assignments(0, (), 16, pool) == [("h20",)]
    assert sorted(assignments(2, (8, 8), 16, pool)) == [
        ("h100-sxm", "h20"), ("h20", "h100-sxm"), ("h20", "h20")]  # fmt: skip


def test_the_cost_plan_on_a_pool_from_the_api_ranks_the_cheaper_row_first() -> None:
    import rlmcost

    df = rlmcost.plan("grpo", "llama-3.2-1b", 16, hardware="h20:16,h100:8", reward="rule",
                      batch=16, group=4, price={"h20": 1.2, "h100": 2.5}, objective="cost",
                      space=POOL_SPACE, top=50)  # fmt: skip
    costs = list(df["cost_per_iteration_usd"])
    assert costs == sorted(costs) and len(costs) > 2
    for row in df.itertuples():  # independent: time x sum of GPUs x price / 3600
        run = Run.from_data(row.run)
        fleet = {"h20": 0, "h100-sxm": 0}
        if run.deployment.groups:
            for g in run.deployment.groups:
                fleet[g.hardware or run.cluster.hardware] += g.gpus
        else:
            fleet[get_hardware(run.cluster.hardware).name] += row.gpus
        assert fleet["h20"] <= 16 and fleet["h100-sxm"] <= 8
        usd = row.time_s / 3600 * (1.2 * fleet["h20"] + 2.5 * fleet["h100-sxm"])
        assert row.cost_per_iteration_usd == pytest.approx(usd)
    assert set(df["hardware"]) > {"16 x h20"}  # mixed rows were searched too


def test_cost_ranking_prefers_the_cheaper_of_two_rows() -> None:
    rows = [{"gpus": 8, "time_s": 10.0, "cost_per_iteration_usd": 0.9},
            {"gpus": 16, "time_s": 5.0, "cost_per_iteration_usd": 0.4}]  # fmt: skip
    assert rank(rows, Objective.COST)[0]["cost_per_iteration_usd"] == 0.4
    assert rank(rows, Objective.TIME)[0]["time_s"] == 5.0


def test_the_pool_plan_from_the_cli() -> None:
    out = _cli("plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
               "--hardware", "h20:8,h100:8", "--gpus", "16", "--price", "h20=1.2",
               "--objective", "cost", "--placements", "split", "--tp", "1", "--rollout-tp", "1",
               "--micro-batch", "1", "--ckpt", "full", "--top", "3")  # fmt: skip
    assert out["query"]["hardware"] == "h20:8,h100-sxm:8" and out["objective"] == "cost"
    best = out["rows"][0]
    assert best["groups"] in ("rollout=8@h20,actor+reference=8@h100-sxm",
                              "rollout=8@h100-sxm,actor+reference=8@h20")  # fmt: skip
    assert best["cost_per_iteration_usd"] <= out["rows"][-1]["cost_per_iteration_usd"]


def test_plain_hardware_still_plans_as_before() -> None:
    base = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
                          "models": {"actor": "llama-3.2-1b"}})  # fmt: skip
    r = plan_rl(base, 8, space=POOL_SPACE, top=3)
    assert all("@" not in row["groups"] for row in r.rows)
    assert {row["hardware"] for row in r.rows} == {"8 x h100-sxm"}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["grpo", "-m", "8b", "--groups", "rollout=8@h2x,actor=8"], "unknown hardware 'h2x'"),
        (["grpo", "-m", "8b", "--price", "h20=abc"], "is not HARDWARE=USD"),
        (["grpo", "-m", "8b", "--price", "tpu=1"], "unknown hardware 'tpu'"),
        (["grpo", "-m", "8b", "--price", "h100=0"], "positive number"),
        # one accelerator priced twice (the same name or an alias): not the last one silently
        (["grpo", "-m", "8b", "--price", "h100=1,h100=2"], "h100 given twice"),
        (["grpo", "-m", "8b", "--price", "h100=1,h100-sxm=2"], "h100-sxm given twice"),
        (["plan", "grpo", "-m", "8b", "--hardware", "h20:x,h100:8"], "is not NAME:GPUS"),
        (["plan", "grpo", "-m", "8b", "--hardware", "h2x:8,h100:8"], "unknown hardware"),
        (["plan", "grpo", "-m", "8b", "--hardware", "h20:8,h100:8", "--objective", "cost"],
         "--price h20=USD"),
        # a group kept on the unpriced H20 (no pool): every row's cost was None, the ranking
        # "best by cost" arbitrary
        (["plan", "grpo", "-m", "8b", "--gpus", "8", "--groups", "rollout=?@h20,actor+reference=?",
          "--objective", "cost"], "--price h20=USD"),
    ],
)
def test_bad_input_is_one_line(args: list[str], fragment: str) -> None:
    r = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], r.output


def test_bad_names_list_the_known_hardware() -> None:
    with pytest.raises(SpecError, match="use one of: a100-40gb, .*h20.*mi325x"):
        parse_groups("rollout=8@tpu-v5")


def test_each_stage_fits_against_its_own_groups_device() -> None:
    """The engines on H200 hold more than an H100 (the run's hardware) could; their stage
    fits on the H200, while the trainers on two A100 40GB do not fit, nor the run."""
    out = _cli("grpo", "-m", "llama-3.1-8b", "--reward", "rule", "--framework", "none",
               "--groups", "rollout=8@h200,actor+reference=2@a100-40gb")  # fmt: skip
    gen, train = out["stages"]["generation"], out["stages"]["training"]
    assert gen["memory_bytes_per_device"] > get_hardware("h100").hbm_usable_bytes
    assert gen["memory_bytes_per_device"] <= get_hardware("h200").hbm_usable_bytes
    assert gen["fits"] and not train["fits"] and not out["fits"]


def test_a_pool_row_reproduces_as_a_single_query() -> None:
    """The row's command (``--groups ...@h20 ... --price h20=1.2``) gives its time and cost."""
    import shlex

    out = _cli("plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
               "--hardware", "h20:8,h100:8", "--gpus", "16", "--price", "h20=1.2",
               "--objective", "cost", "--groups", "rollout=?@h20,actor+reference=?",
               "--tp", "1", "--rollout-tp", "1",
               "--micro-batch", "1", "--ckpt", "full", "--top", "2")  # fmt: skip
    assert out["rows"]
    for row in out["rows"]:
        assert "rollout=" in row["groups"] and "@h20," in row["groups"]  # the kept one
        single = _cli(*shlex.split(row["command"])[1:])
        assert single["iteration"]["time_s"] == row["time_s"]
        assert single["cost"]["per_iteration_usd"] == row["cost_per_iteration_usd"]


def test_a_price_of_many_digits_round_trips_through_the_command() -> None:
    """``Run.to_command`` wrote prices with ``:g`` (6 significant digits): --price
    h20=1.2345678 came back as 1.23457 and the command's cost differed from the run's."""
    from rlmcost.cli.validate import run_from_argv

    run = _run([{"members": "rollout", "gpus": 8, "hardware": "h20"},
                {"members": "actor+reference", "gpus": 8, "hardware": "h100"}],
               prices={"h20": 1.2345678, "h100": 2.5})  # fmt: skip
    line = run.to_command()
    assert "--price h20=1.2345678,h100-sxm=2.5" in line, line
    import shlex

    again = run_from_argv("grpo", shlex.split(line)[2:])
    assert again.cluster.prices == run.cluster.prices


def test_the_deployment_file_names_group_hardware(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "dep.yaml"
    path.write_text("groups:\n  - {members: rollout, gpus: 8, hardware: H20}\n"
                    "  - {members: actor+reference, gpus: 8, hardware: h100}\n")  # fmt: skip
    out = _cli("grpo", "-m", "llama-3.1-8b", "--reward", "rule", "--deployment", str(path))
    assert [g["hardware"] for g in out["run"]["deployment"]["groups"]] == ["h20", "h100-sxm"]
    assert out["cost"]["gpus"] == {"h20": 8, "h100-sxm": 8}
    path.write_text("groups:\n  - {members: rollout, gpus: 8, hardware: tpu}\n")
    r = runner.invoke(app, ["grpo", "-m", "8b", "--deployment", str(path)],
                      env={"COLUMNS": "400"})  # fmt: skip
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2 and len(lines) == 1 and "unknown hardware 'tpu'" in lines[0]


def test_an_unpriced_accelerator_names_the_price_that_mends_it() -> None:
    from rlmcost.cli.algorithms_render import cost_text

    class _Ev:  # what cost_text reads of an evaluation: its cost_json()
        def cost_json(self) -> dict:
            return {"per_iteration_usd": None, "per_million_tokens_usd": None,
                    "usd_per_gpu_hour": {"h20": None, "h100-sxm": 3.78}}  # fmt: skip

    text = cost_text(_Ev())
    assert "not priced" in text and "give --price h20=USD)" in text
    assert "h100-sxm=USD" not in text  # a priced accelerator needs no --price


def test_groups_on_faster_accelerators_than_the_run_keep_the_exhaustive_top_rows() -> None:
    """Branch and bound skips a candidate only when its time bound is worse than the k-th
    exact row; the bound took the base Run's L40S peak and HBM bandwidth for groups that run
    on an H200 and a B200, so it exceeded their exact times and the top 10 missed a row
    (rollout=8/actor+reference=8 at TP 1 and engine TP 1, 13.18 s). Independent: every
    candidate of the space evaluated exactly, the fitting ones sorted by time."""
    from rlmcost.plan.rl_candidates import candidate_run, candidates

    base = Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 1024},
        "cluster": {"hardware": "l40s"}})  # fmt: skip
    space = RLSpace(placements=(), groups="rollout=?@h200,actor+reference=?@b200", tp=(1, 2),
                    rollout_tp=(1, 2), micro_batch=(1,), ckpt=(Checkpointing.FULL,),
                    offload=(False,))  # fmt: skip
    got = [(r["time_s"], r["groups"], r["tp"], r["rollout_tp"])
           for r in plan_rl(base, 16, space=space, top=10).rows]  # fmt: skip
    every = []
    for c in candidates(base, space, 16):
        e = evaluate_deployment(candidate_run(base, c))
        if e.fits:
            every.append((e.iteration_time_s, c.groups, c.tp, c.rollout_tp))
    assert got == sorted(every)[:10]


def test_an_async_split_on_two_accelerators_offers_no_gpu_second_balance() -> None:
    """The async note balanced the groups by GPU-seconds (rollout 7, actor+reference 9 of
    rollout=8@h20, actor+reference=8@h100): an H20's GPU-second is not an H100's, and the
    split named no accelerator. On one accelerator the balance stays."""
    def split_note(groups: list[dict]) -> str:
        run = _run(groups).replace(deployment={"placement": "async", "staleness": 1})
        (note,) = [n for n in evaluate_deployment(run).notes if n.startswith("GPU split")]
        return note

    mixed = split_note([{"members": "rollout", "gpus": 8, "hardware": "h20"},
                        {"members": "actor+reference", "gpus": 8, "hardware": "h100"}])
    assert "on different accelerators" in mixed and "balanced by GPU-seconds it" not in mixed
    one = split_note([{"members": "rollout", "gpus": 8},
                      {"members": "actor+reference", "gpus": 8}])  # fmt: skip
    assert "balanced by GPU-seconds it would be" in one
