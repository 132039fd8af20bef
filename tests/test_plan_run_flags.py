"""`rlmcost plan` takes the run-level flags of the algorithm commands that its search holds
fixed (``rlmcost.cli.plan_query.RUN_FACTS``): ``--rank-order`` (rlmcost/placement/rank_order.py:
NeMo RL before v0.7 sorts Ray's random node ids, so a GB200 group crosses racks) goes into the
Run every candidate evaluates and into each row's reproducing command; its --help says why it
leaves the others out."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app

# one layout on 144 GB200 (two NVL72 racks): the only thing that differs is the rank order
QUERY = ["plan", "grpo", "-m", "8b", "--gpus", "144", "-H", "gb200", "--placements", "baseline",
         "--tp", "8", "--zero", "3", "--ckpt", "full", "--micro-batch", "1", "--rollout-tp", "8",
         "--top", "1", "--json"]  # fmt: skip


def _best(extra: list[str]) -> dict:
    res = CliRunner().invoke(app, [*QUERY, *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)["rows"][0]


def test_rank_order_reaches_each_candidate_and_its_command():
    topo, rand = _best([]), _best(["--rank-order", "random"])
    assert rand["run"]["cluster"]["rank_order"] == "random"
    assert "--rank-order random" in rand["command"]
    assert "--rank-order" not in topo["command"]
    # 144 GPUs span two 72-GPU NVLink domains: at random the TP-8 groups' hosts cross racks
    # (rlmcost.placement.rank_order), so the same deployment runs slower than by topology
    assert rand["time_s"] > topo["time_s"]
    # the row's command evaluates to the row: `rlmcost grpo` reads the flag the same way
    res = CliRunner().invoke(app, [*rand["command"].split()[1:], "--json"])
    assert res.exit_code == 0, res.output
    again = json.loads(res.output)["iteration"]["time_s"]
    assert abs(again - rand["time_s"]) < 1e-9 * rand["time_s"]


def test_engine_setting_is_held_by_every_candidate():
    """--enforce-eager (a run fact, vLLM enforce_eager) slows decoding: the plan's best row runs
    with it and says it."""
    eager = _best(["--enforce-eager"])
    assert "--enforce-eager" in eager["command"]
    assert eager["run"]["deployment"]["engine"]["eager"] is True


def test_help_lists_the_run_flags_and_says_why_the_others_are_not_taken():
    res = CliRunner().invoke(app, ["plan", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for flag in ("--rank-order", "--image-tokens", "--lora-rank", "--enforce-eager",
                 "--staleness", "--max-tokens-per-gpu"):  # fmt: skip
        assert flag in res.output, flag
    text = " ".join(res.output.split())
    assert "virtual-stages" in text and "are searched" in text


def test_staleness_zero_is_refused_where_a_family_overlaps():
    """--staleness 0 had been searched at k = 1 (the candidates' ``staleness or 1``); k = 0 is
    the synchronous loop, which `rlmcost grpo --placement async` refuses as well."""
    import pytest

    import rlmcost
    from rlmcost.errors import SpecError

    res = CliRunner().invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "8",
                                   "--staleness", "0"])  # fmt: skip
    assert res.exit_code != 0 and "--staleness 0 is the synchronous loop" in res.output
    with pytest.raises(SpecError, match="synchronous loop"):
        rlmcost.plan("grpo", "llama-3.2-1b", 8, staleness=0)
    # the synchronous families alone take it as it is
    ok = CliRunner().invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "8",
                                  "--staleness", "0", "--placements", "baseline", "--top", "1",
                                  "--json"])  # fmt: skip
    assert ok.exit_code == 0, ok.output


def test_a_query_no_candidate_can_run_fails_up_front():
    """--image-tokens on a text model: every candidate's evaluation refuses it
    (placement.query.resolve: "needs a vision-language model"), and the plan had printed
    "nothing fits: raise --gpus"; its base is now resolved as the evaluation resolves it."""
    res = CliRunner().invoke(app, ["plan", "grpo", "-m", "8b", "--gpus", "8", "--image-tokens",
                                   "64"])  # fmt: skip
    assert res.exit_code != 0
    assert "needs a vision-language model" in res.output and "nothing fits" not in res.output
