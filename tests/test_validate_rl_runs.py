"""`rlmcost validate --rl`: every published RL run of rlmcost/perf/data/rl_runs.json as the query
its framework's users would write, predicted and compared.

Checked against independent references: the data file itself (ids, workloads, the step times
each e2e-hours run's ``conversion`` text states), exact arithmetic recomputed here (error,
median, maximum, coverage), the Run's own JSON round trip, the CLI's flag parser (a row's
command typed again gives the same Run), `rlmcost run` (re-evaluates an embedded Run), the JSON
Schema `rlmcost schema validate` prints (jsonschema), and transformers models on the meta device
(parameter counts of the models the data gives by their config). No accuracy threshold is
asserted: the figures are printed (``-s``) for the reader.
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.perf.rl_constants import RESPONSE_LENGTH_LOG_SIGMA, RESPONSE_MEAN_OVER_MAX_FRACTION
from rlmcost.reports.rl_runs import load_runs, published_step_s
from rlmcost.reports.rl_runs_rows import build_run, validate_rl_runs
from rlmcost.run.spec import Run

runner = CliRunner()
DATA = load_runs()
RECORDS = {r["id"]: r for r in DATA["runs"]}


@pytest.fixture(scope="module")
def report():
    rep = validate_rl_runs(run_from_argv)
    for r in rep.rows:  # the figures, for the reader (pytest -s)
        err = "-" if r.error is None else f"{100 * r.error:+.1f} %"
        print(f"{r.recipe.id}: published {r.published_s:.1f} s, predicted "
              f"{r.predicted_s or 0:.1f} s, error {err}, inside {r.inside}, fits {r.fits}, "
              f"{r.status}")  # fmt: skip
    print(json.dumps(rep.summary(), indent=1))
    return rep


@pytest.fixture(scope="module")
def cli_json():
    res = runner.invoke(app, ["validate", "--rl", "--json"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_every_run_has_a_row_in_data_order(report):
    assert [r.recipe.id for r in report.rows] == [r["id"] for r in DATA["runs"]]
    assert len(report.rows) == 46


def test_every_row_is_predicted_or_says_why_not(report):
    for r in report.rows:
        if r.status == "ok":
            assert r.run is not None and r.predicted_s is not None and r.predicted_s > 0
            assert r.recipe.command.startswith("rlmcost ")
        else:
            assert r.status.startswith("not expressible: ") and "\n" not in r.status
            assert r.predicted_s is None and r.error is None and r.inside is None


def test_the_published_workload_is_the_runs(report):
    for r in report.rows:
        if r.run is None:
            continue
        rec, w, c = r.recipe.record, r.run.workload, r.run.cluster
        assert (w.prompts, w.samples_per_prompt, w.prompt_len, w.response_len) == (
            rec["prompts_per_step"], rec["samples_per_prompt"], rec["prompt_len"],
            rec["max_response_len"])  # fmt: skip
        assert (c.hardware, c.gpus) == (rec["hardware"], rec["gpus"])
        t_max = rec["max_response_len"]
        mean = rec.get("mean_response_len")
        if mean == t_max:
            assert w.length_dist == "fixed"
            continue
        if mean is None:
            mean = round(RESPONSE_MEAN_OVER_MAX_FRACTION.value * t_max)
        assert w.length_dist == f"lognormal:{mean},{RESPONSE_LENGTH_LOG_SIGMA.value:g},{t_max}"


def test_async_runs_overlap_with_the_sources_split(report):
    for r in report.rows:
        if r.run is None or r.recipe.record.get("off_policy_steps") == 0:
            continue
        dep = r.run.deployment
        assert dep.placement == "async" and dep.staleness and dep.staleness >= 1
        assert sum(g.gpus for g in dep.groups) == r.recipe.record["gpus"]
        roles = r.recipe.record.get("gpus_by_role") or {}
        if roles:  # the source's split: the generation group as published
            gen = roles.get("generation", roles.get("rollout"))
            assert next(g.gpus for g in dep.groups if g.members == "rollout") == gen
        k = r.recipe.record.get("off_policy_steps")
        if k:
            assert dep.staleness == k


def test_runs_round_trip_and_the_command_rebuilds_them(report):
    for r in report.rows:
        if r.run is None:
            continue
        assert Run.from_data(r.run.to_json()) == r.run
        assert Run.from_data(json.loads(json.dumps(r.run.to_json()))) == r.run
        assert build_run(r.recipe, run_from_argv) == r.run


def test_error_and_interval(report):
    for r in report.rows:
        if r.predicted_s is None:
            continue
        assert r.error == r.predicted_s / r.published_s - 1
        lo, hi = r.interval_s
        assert lo <= r.predicted_s <= hi
        assert r.inside == (lo <= r.published_s <= hi)
        assert r.lower_bound_s <= r.predicted_s


def test_published_step_times_agree_with_the_conversions_stated():
    for rec in DATA["runs"]:
        if rec["metric"] == "step_time_s":
            assert published_step_s(rec) == rec["published"]
            continue
        if rec.get("batch_rule") == "largest_fitting":  # the batch is the row's choice
            continue  # (tests/test_rl_runs_data.py checks its conversion)
        # the conversion text gives the step time it implies, e.g. "... = 53.3 s"
        stated = float(re.findall(r"=\s*([0-9]+(?:\.[0-9]+)?)(?= s\b| if)", rec["conversion"])[-1])
        assert round(published_step_s(rec), 1) == stated, rec["id"]


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def test_summary_recomputed(report):
    summary = report.summary()
    frameworks = {rec["framework"] for rec in DATA["runs"]}
    assert set(summary) == frameworks | {"all"}
    for name, got in summary.items():
        rows = [r for r in report.rows if name in ("all", r.recipe.framework)]
        errs = [abs(r.predicted_s / r.published_s - 1) for r in rows if r.predicted_s]
        inside = [r for r in rows if r.interval_s is not None]
        assert got["runs"] == len(rows)
        assert got["predicted"] == len(errs)
        if errs:
            assert got["median_abs_error"] == pytest.approx(_median(errs), rel=1e-12)
            assert got["max_abs_error"] == max(errs)
            share = sum(r.interval_s[0] <= r.published_s <= r.interval_s[1] for r in inside)
            assert got["coverage"] == share / len(inside)
        assert got["not_fitting"] == sum(r.fits is False for r in rows)


def test_json_validates_and_carries_the_rows(report, cli_json):
    res = runner.invoke(app, ["schema", "validate"])
    assert res.exit_code == 0, res.output
    schema = json.loads(res.stdout)
    jsonschema.validate(cli_json, schema, cls=jsonschema.Draft202012Validator)
    assert cli_json["command"] == "validate"
    assert [r["id"] for r in cli_json["rl_runs"]] == [r.recipe.id for r in report.rows]
    for row, r in zip(cli_json["rl_runs"], report.rows, strict=True):
        assert row["predicted"] == r.predicted_s and row["status"] == r.status
        if r.run is not None:
            assert Run.from_data(row["run"]) == r.run
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**cli_json, "undeclared": 1}, schema)


def test_rlmcost_run_reevaluates_an_embedded_run(report, tmp_path):
    row = next(r for r in report.rows if r.run is not None and r.run.grouped)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(row.run.to_json()))
    res = runner.invoke(app, ["run", str(path), "--json"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout[res.stdout.index("{") :])
    assert out["iteration"]["time_s"] == pytest.approx(row.predicted_s, rel=1e-12)


def test_the_table_prints_every_run_and_a_summary():
    res = runner.invoke(app, ["validate", "--rl", "--source", "openrlhf"],
                        env={"COLUMNS": "250"})  # fmt: skip
    assert res.exit_code == 0, res.output
    for rid in (r["id"] for r in DATA["runs"] if r["framework"] == "openrlhf"):
        assert rid in res.output
    assert "median |error|" in res.output and "coverage" in res.output
    bad = runner.invoke(app, ["validate", "--rl", "--source", "nope"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


def test_models_given_by_config_match_transformers():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from rlmcost.evaluation.deployment import spec_params
    from rlmcost.reports.rl_runs import model_spec
    from rlmcost.specs import ModelSpec

    opt = RECORDS["deepspeed-chat-blog-opt-6.7b-a100-40gb-8gpu-step3"]["model_config"]
    llama = RECORDS["openrlhf-readme-llama2-34b-ppo-32gpu"]["model_config"]
    with torch.device("meta"):
        hf_opt = transformers.OPTForCausalLM(transformers.OPTConfig(
            hidden_size=opt["hidden"], num_hidden_layers=opt["layers"], ffn_dim=opt["ffn"],
            num_attention_heads=opt["heads"], vocab_size=opt["vocab"],
            max_position_embeddings=opt["max_position"], word_embed_proj_dim=opt["hidden"]))
        hf_llama = transformers.LlamaForCausalLM(transformers.LlamaConfig(
            hidden_size=llama["hidden"], num_hidden_layers=llama["layers"],
            intermediate_size=llama["ffn"], num_attention_heads=llama["heads"],
            num_key_value_heads=llama["kv_heads"], vocab_size=llama["vocab"],
            tie_word_embeddings=False))  # fmt: skip
    for hf, cfg in ((hf_opt, opt), (hf_llama, llama)):
        spec = ModelSpec.model_validate(model_spec("m", cfg, "hf"))
        assert spec_params(spec) == sum(p.numel() for p in hf.parameters())


def test_deepspeed_chat_rows_run_the_largest_batch_that_fits(report):
    """BenckmarkSetting.md: the largest batch that runs within 1024 pairs. Every DeepSpeed-Chat
    row states the batch it ran; a smaller one only where the next larger does not fit
    (recomputed here by evaluating the doubled batch), and the published hours convert over
    that batch's step count (ceil(264,292 / pairs))."""
    import math

    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs_frameworks import recipe

    rows = [r for r in report.rows if r.recipe.record["source"] == "dschat_blog"]
    assert len(rows) == 11
    for r in rows:
        rec = r.recipe.record
        pairs = r.run.workload.prompts
        assert any(f"pairs per step: {pairs} " in c for c in r.recipe.choices), r.recipe.id
        hours = float(rec["published"])
        assert r.published_s == pytest.approx(hours * 3600 / math.ceil(264292 / pairs))
        if pairs < 1024 and r.fits:
            bigger = recipe({**rec, "prompts_per_step": 2 * pairs})
            offload = r.run.deployment.train.offload
            if offload:
                bigger.query.set("--offload", ",".join(sorted(str(o) for o in offload)))
            bigger.query.set("--engine", str(r.run.deployment.engine.kind))  # pinned or not
            assert not evaluate(build_run(bigger, run_from_argv)).fits, r.recipe.id
