"""CLI behaviour of `rlmcost ppo|grpo|dpo|<variant>`, `compare` and `algorithms`."""

import json

import pytest
from typer.testing import CliRunner

from rlmcost.algorithms.catalog import algorithms
from rlmcost.cli import app
from rlmcost.reports.estimate import estimate

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "160"})


def test_ppo_70b_tp8_works_as_written_and_says_it_does_not_fit():
    r = run("ppo", "--model", "70b", "--tp", "8")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "DOES NOT FIT" in out and "of one h100-sxm" in out
    for word in ("Generation", "Assessment", "Training", "optimizer", "kv cache", "share"):
        assert word in out
    # the stated defaults
    assert "B=64, K=1, S=1024, T=1024" in out and "h100-sxm" in out
    # predicted and bound columns, the phases by the frameworks' names
    assert "time >=" in out and "predicted iteration" in out
    for phase in ("generation", "reference", "update actor", "update critic", "timing_s/gen",
                  "tokens/s/GPU", "MFU"):
        assert phase in out


def test_json_is_the_library_result():
    r = run("grpo", "--model", "gpt-2", "--batch", "8", "--group", "4", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    lib = estimate("grpo", "gpt-2", batch=8, group=4).to_json()
    assert out["stages"] == json.loads(json.dumps(lib["stages"]))
    assert out["fits"] is True and out["iteration"]["work_flops"] == lib["iteration"]["work_flops"]
    assert out["iteration"]["time_s"] == lib["iteration"]["time_s"]
    for key in ("time_s", "tokens_per_s_per_gpu", "mfu"):
        assert key in out["iteration"]
    for stage in out["stages"].values():
        assert "time_s" in stage and "time_lower_bound_s" in stage


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dpo", "--model", "8b", "--group", "4"], "dpo samples no groups"),
        (["grpo", "--model", "8b", "--critic", "8b"], "grpo has no critic"),
        (["ppo", "--model", "8b", "--prompt-len", "-5"], "--prompt-len"),
        (["ppo", "--model", "8b", "--response-len", "0"], "--response-len"),
        (["ppo", "--model", "8b", "--oversample", "2"], "--oversample applies to dapo"),
        (["dapo", "--model", "8b", "--oversample", "abc"], "is not a number"),
        (["ppo", "--model", "8b", "--tp", "3"], "tp=3 must divide"),
        (["ppo", "--model", "8b", "--gpus", "12", "--tp", "8"], "multiple of 8 GPUs or --tp 1"),
        (["ppo"], "give --model"),
        (["ppo", "--model", "nope"], "unknown model"),
        (["grpo", "--model", "8b", "--reward", "rul"], "did you mean --reward rule"),
        (["ppo", "--model", "8b", "--ref-precomputed"], "cannot be precomputed"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_every_algorithm_has_a_command_and_runs():
    for name in algorithms():
        r = run(name, "--model", "gpt-2", "--batch", "4", "--json")
        assert r.exit_code == 0, (name, r.output)
        assert json.loads(r.stdout)["algorithm"] == name


def test_help_states_the_defaults():
    r = run("grpo", "--help")
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    assert "B=64" in text and "K=8" in text and "h100-sxm" in text
    assert "the actor's model" in text


def test_compare_side_by_side():
    r = run("compare", "ppo", "grpo", "dpo", "--model", "gpt-2", "--group", "4")
    assert r.exit_code == 0, r.output
    assert "ppo" in r.stdout and "grpo" in r.stdout and "dpo" in r.stdout
    assert "offline" in r.stdout
    assert "dpo: ignored group" in r.output  # the note on stderr
    r = run("compare", "ppo", "dpo", "--model", "gpt-2", "--json")
    assert [a["algorithm"] for a in json.loads(r.stdout)["algorithms"]] == ["ppo", "dpo"]


def test_compare_gives_each_algorithms_cost():
    """README: every report gives USD per iteration and per 1M trained tokens; compare's
    table had them in --json only. Each column's figures are its --json cost (time x 4 GPUs
    x 2.0 USD per GPU-hour / 3600 per iteration)."""
    args = ("compare", "ppo", "grpo", "--model", "gpt-2", "--gpus", "4", "-B", "8", "-S", "64",
            "-T", "64", "--price", "h100=2")  # fmt: skip
    r = run(*args)
    assert r.exit_code == 0, r.output
    out = json.loads(run(*args, "--json").stdout)["algorithms"]
    for label, key in (("USD per iteration", "per_iteration_usd"),
                       ("USD per 1M tokens", "per_million_tokens_usd")):  # fmt: skip
        line = next(ln for ln in r.stdout.splitlines() if label in ln)
        cells = [c.strip() for c in line.split("│") if c.strip()]
        assert cells == [label, *(f"{a['cost'][key]:,.4f}" for a in out)]
    for a in out:
        assert a["cost"]["per_iteration_usd"] == pytest.approx(
            a["iteration"]["time_s"] * 4 * 2.0 / 3600)  # fmt: skip


# a small query (gpt-2 on 4 GPUs) under the default framework, NeMo RL: GRPO takes its
# verifier, PPO its reward model (README, "The default deployment"; preset_options)
SMALL = ("--model", "gpt-2", "--gpus", "4", "-B", "8", "-S", "64", "-T", "64")


def _times(*args: str) -> dict[str, tuple[float, str]]:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    rows = out["algorithms"] if out["command"] == "compare" else [out]
    return {a["algorithm"]: (a["iteration"]["time_s"], a["reward"]) for a in rows}


def test_compare_gives_each_algorithm_what_its_own_command_gives(tmp_path):
    alone = {**_times("ppo", *SMALL), **_times("grpo", *SMALL), **_times("dpo", *SMALL)}
    assert "verifier" in alone["grpo"][1] and "reward model" in alone["ppo"][1]
    for order in (("ppo", "grpo", "dpo"), ("grpo", "ppo", "dpo")):
        assert _times("compare", *order, *SMALL) == alone, order  # not the first one's reward
        saved = tmp_path / "compare.json"
        saved.write_text(run("compare", *order, *SMALL, "--json").stdout)
        assert _times("run", str(saved)) == alone  # its embedded Run re-evaluated
        line = run("run", str(saved), "--command").stdout.split()
        assert line[1:2 + len(order)] == ["compare", *order]  # every algorithm it compared
        assert _times(*line[1:]) == alone
    # a reward the query gives is every algorithm's
    given = _times("compare", "grpo", "ppo", *SMALL, "--reward", "rule")
    assert "verifier" in given["ppo"][1]


def test_sp_at_tp_1_says_it_changes_nothing():
    # Megatron-LM megatron/training/arguments.py turns sequence parallelism off at TP 1 (a
    # warning); --sp at --tp 1 had been taken without a word, every number as without it
    r = run("grpo", *SMALL, "--sp")
    assert r.exit_code == 0 and "--sp has no effect at --tp 1" in r.output, r.output
    assert _times("grpo", *SMALL, "--sp") == _times("grpo", *SMALL)
    assert "--sp has no effect" not in run("grpo", *SMALL, "--sp", "--tp", "2").output


def test_algorithms_lists_every_algorithm():
    r = run("algorithms", "--json")
    assert r.exit_code == 0
    rows = json.loads(r.stdout)["algorithms"]
    assert [row["name"] for row in rows] == list(algorithms())
    assert all(row["citation"] and row["invocations"] for row in rows)
    r = run("algorithms")
    assert "safe-rlhf" in r.stdout and "Lagrangian" in r.stdout


def test_symbolic_rows():
    r = run("dpo", "--symbolic", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["stages"]
    assert [row["stage"] for row in rows] == ["generation", "assessment", "training"]
    assert "offline" in rows[0]["work"]
    assert rows[2]["work"] == "2 B (S + T) C_tr^tok(pi_theta)"
    r = run("ppo", "--symbolic")
    assert r.exit_code == 0 and "D_gen(pi_theta)" in r.stdout


def test_group_methods_need_two_samples_per_prompt():
    # GRPO normalizes by the group's reward std and RLOO leaves one sample out: K = 1 is
    # meaningless for both; ReMax's baseline is a greedy rollout, so K = 1 is its default
    from typer.testing import CliRunner

    from rlmcost.cli import app

    for alg in ("grpo", "rloo", "dapo"):
        r = CliRunner().invoke(app, [alg, "--model", "gpt-2", "--group", "1"])
        assert r.exit_code == 2 and "--group >= 2" in r.output, alg
    assert CliRunner().invoke(app, ["remax", "--model", "gpt-2"]).exit_code == 0


def test_reward_rule_replaces_the_reward_model_and_says_so():
    model = json.loads(run("grpo", "-m", "gpt-2", "--reward", "gpt-2", "--json").stdout)
    rule = json.loads(run("grpo", "-m", "gpt-2", "--reward", "rule", "--json").stdout)
    assert model["reward"].startswith("reward model gpt-2")
    assert rule["reward"].startswith("rule-based verifier") and "reward" not in rule["models"]
    whats = [i["what"] for i in rule["stages"]["assessment"]["invocations"]]
    assert not any(w.startswith("reward forward") for w in whats)
    assert any(w.startswith("verifier") for w in whats)
    # the GRPO work drops by exactly the reward model's forward over every response
    reward = next(i for i in model["stages"]["assessment"]["invocations"]
                  if i["what"].startswith("reward forward"))  # fmt: skip
    assert model["iteration"]["work_flops"] - rule["iteration"]["work_flops"] == (
        reward["work_flops"]
    )
    r = run("dapo", "-m", "gpt-2", "--reward", "rule")
    assert r.exit_code == 2 and "drop --reward rule" in r.output


def test_recomputed_log_probs_are_one_forward():
    out = json.loads(run("ppo", "-m", "gpt-2", "--recompute-logprobs", "--json").stdout)
    whats = [i["what"] for i in out["stages"]["assessment"]["invocations"]]
    assert sum("old log-probs recomputed" in w for w in whats) == 1


@pytest.mark.parametrize(
    "extra",
    [[], ["--length-dist", "uniform:256,1024"], ["--placement", "async", "--gpus", "16"],
     ["--groups", "rollout=8,actor+reference=8"]],  # fmt: skip
)
def test_one_json_layout_whatever_the_options(extra):
    # --placement / --groups / --length-dist add an optional section, never another shape
    base = json.loads(run("grpo", "-m", "gpt-2", "--json").stdout)
    out = json.loads(run("grpo", "-m", "gpt-2", "--json", *extra).stdout)
    assert set(base) <= set(out) <= set(base) | {"placement_detail"}
    assert set(out["stages"]) == set(base["stages"])
    assert set(out["iteration"]) == set(base["iteration"])
