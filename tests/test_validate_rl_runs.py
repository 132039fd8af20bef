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
import shlex

import jsonschema
import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.frameworks.result import option_key
from rlmcost.perf.rl_constants import (
    RESPONSE_CLIP_FRACTION,
    RESPONSE_LENGTH_LOG_SIGMA,
    RESPONSE_MEAN_CEILING_TOKENS,
    RESPONSE_MEAN_OVER_MAX_FRACTION,
)
from rlmcost.reports.rl_runs import (
    LONG_CAP_TOKENS,
    assumed_length_dists,
    default_mean_response,
    length_dist,
    load_runs,
    published_step_s,
)
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
    # 46 + OpenRLHF benchmark/README.md@dbdd43b0: 4 rows + NeMo RL performance-summary.md v0.6
    # (tag v0.6.0): 16 more of its 18 GRPO rows (H100 BF16 9, H100 FP8 1, GB200 BF16 8; 2 were in)
    # + NeMo RL v0.3 blog (2025-07-21): its 4 Megatron rows, 2 DTensor rows and the 16K
    # context-parallel row; + its v0.7 section (commit c31fb937): 23 of 27 GRPO rows (the 4
    # Nemotron-3-Super rows out); + AMD's MI300 reproduction of verl's 7B fully-async 16:16 run and
    # its colocated baseline (ROCm/rocm-blogs verl/README.md @593d88df); + TRL: open-r1's
    # README (commit 571661a1) GRPO run of Qwen2.5-Math-7B on 8 H100 and issue 251's run of the
    # README's next recipe on 8 H100 SXM; + slime: issue 385's
    # Qwen3-0.6B colocated run on 16 H200 and SkyPilot's coding-agent benchmark (sync, 3
    # engines; not expressible: a 20-turn agent); + miles (slime's fork): the Qwen3.8-27B page's
    # measured step on 8 H200 (radixark/miles bb6f7dbd)
    assert len(report.rows) == 103


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
        if mean is None:  # the default rule recomputed: fraction of the cap, at most the ceiling
            frac = RESPONSE_MEAN_OVER_MAX_FRACTION.value * t_max
            mean = round(min(frac, RESPONSE_MEAN_CEILING_TOKENS.value))
        clip = f",{RESPONSE_CLIP_FRACTION.value:g}" if t_max >= LONG_CAP_TOKENS else ""
        if rec.get("response_clip_fraction") is not None:  # published: the run's own share
            clip = f",{rec['response_clip_fraction']:g}"
        assert w.length_dist == (
            f"lognormal:{mean},{RESPONSE_LENGTH_LOG_SIGMA.value:g},{t_max}{clip}"
        )


def test_long_caps_carry_the_truncated_share_and_say_so(report):
    # rl_runs.json: verl's Qwen2.5-Math-7B runs (H20 and MI300) cap at 28,672, AReaL's at
    # 31,744, the NeMo RL v0.3 blog's long-context row at 16,254 (16,384 less the prompt) and
    # NeMo RL v0.7's Qwen3-30B-A3B 40,960-token row at 40,850 (>= 16K); NeMo RL's other caps
    # (1,424 .. 8,088), verl's Qwen3-30B (8,192) and DeepSeek-V3 (9,632) do not
    long_ids = {r["id"] for r in DATA["runs"] if r["max_response_len"] >= LONG_CAP_TOKENS}
    assert len(long_ids) == 14
    for r in report.rows:
        if r.run is None or r.run.workload.length_dist == "fixed":
            continue
        said = [c for c in r.recipe.choices if c.startswith("response lengths ")]
        assert len(said) == 1, r.recipe.id
        if r.recipe.record.get("response_clip_fraction") is not None:  # published (miles)
            assert r.run.workload.length_dist.count(",") == 3, r.recipe.id
            assert "the published truncated share" in said[0], r.recipe.id
        elif r.recipe.id in long_ids:
            assert r.run.workload.length_dist.count(",") == 3, r.recipe.id
            assert "RESPONSE_CLIP_FRACTION" in said[0] and "0.001..0.05" in said[0]
        else:
            assert r.run.workload.length_dist.count(",") == 2, r.recipe.id
            assert "no truncated share" in said[0], r.recipe.id


def test_truncated_share_spread_pairs_with_the_mean_spread():
    # verl Qwen2.5-Math-7B rows: mean 1,000 (interval 500..1,500, rl_runs.json) under 28,672;
    # the interval's ends take RESPONSE_CLIP_FRACTION's low and high ends with the mean's
    rec = RECORDS["verl-fully-async-doc-qwen2.5-math-7b-dapo-colocate-sync-32gpu"]
    sigma = f"{RESPONSE_LENGTH_LOG_SIGMA.value:g}"
    assert assumed_length_dists(rec) == (
        f"lognormal:500,{sigma},28672,{RESPONSE_CLIP_FRACTION.low:g}",
        f"lognormal:1500,{sigma},28672,{RESPONSE_CLIP_FRACTION.high:g}",
    )
    # a run's own published clip ratio replaces the global share, with no assumed spread of
    # its own: a made-up record (a long cap, a sourced mean, a published share)
    own = {"max_response_len": 20480, "mean_response_len": 4000,
           "response_clip_fraction": 0.03, "response_clip_fraction_source": "a log: step 100"}
    assert assumed_length_dists(own) == ()
    text, how = length_dist(own)
    assert text == f"lognormal:4000,{sigma},20480,0.03" and "a log" in how
    # a share the mean cannot hold (0.05 x 20,480 = 1,024 tokens > a mean of 800) is limited to
    # (800 - 1) / (20,480 - 1) = 0.03902, rounded down to 0.039, and the choice says so
    text, how = length_dist({"max_response_len": 20480, "mean_response_len": 800,
                             "response_clip_fraction": 0.05, "response_clip_fraction_source": "x"})
    assert text == f"lognormal:800,{sigma},20480,0.039" and "limited to 0.039 by the mean" in how
    with pytest.raises(SpecError, match="cite where"):  # a share needs its citation
        length_dist({"id": "r", "max_response_len": 20480, "response_clip_fraction": 0.05})


def test_default_mean_is_the_fraction_below_the_ceiling_and_never_above_it():
    # short caps keep 0.70 x max (0.70: NeMo RL v0.7 Qwen3-235B 5,719 / 8,192); 1,024 is
    # OpenRLHF's generate_max_len, 4,096 NeMo RL's Qwen3-32B cap (rl_runs.json)
    assert default_mean_response(1024) == round(0.70 * 1024) == 717
    assert default_mean_response(4096) == round(0.70 * 4096) == 2867
    # long caps stop at the ceiling: 0.70 x 8,192 = 5,734 is above it, as are verl's 28,672
    # and AReaL's 31,744 (rl_runs.json)
    for t_max in (8192, 28672, 31744, 131072):
        assert default_mean_response(t_max) == RESPONSE_MEAN_CEILING_TOKENS.value
    for end in ("low", "value", "high"):
        for t_max in (256, 1024, 4096, 8192, 16384, 28672, 40960, 131072):
            mean = default_mean_response(t_max, end)
            assert 0 < mean <= RESPONSE_MEAN_CEILING_TOKENS.at(end) and mean <= t_max


def test_length_spread_brackets_the_point_mean():
    for rec in DATA["runs"]:
        t_max, mean = rec["max_response_len"], rec.get("mean_response_len")
        ends = [int(d.split(":")[1].split(",")[0]) for d in assumed_length_dists(rec)]
        if mean is None:
            mean = default_mean_response(t_max)
            assert len(ends) == 2, rec["id"]  # every unpublished mean carries its spread
        if ends:
            assert ends[0] <= mean <= ends[1] <= t_max, rec["id"]


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


def names(command: str) -> set[str]:
    """Every option name of `rlmcost COMMAND` (the CLI's flag table)."""
    import typer.main

    cmd = typer.main.get_command(app).get_command(None, command)  # type: ignore[attr-defined]
    return {n for p in cmd.params if p.param_type_name == "option"
            for n in (*p.opts, *p.secondary_opts)}  # fmt: skip


def test_runs_round_trip_and_the_command_rebuilds_them(report):
    for r in report.rows:
        if r.run is None:
            continue
        assert Run.from_data(r.run.to_json()) == r.run
        assert Run.from_data(json.loads(json.dumps(r.run.to_json()))) == r.run
        assert build_run(r.recipe, run_from_argv) == r.run
        # the command as printed, typed again: each option once (an option given twice with
        # different values is refused: rlmcost.cli._repeats), the same Run
        words = shlex.split(r.recipe.command)
        assert words[:2] == ["rlmcost", r.recipe.query.algorithm]
        keys = [option_key(w) for w in words[2:] if w.startswith("-") and w in names(words[1])]
        assert len(keys) == len(set(keys)), (r.recipe.id, words)
        typed = run_from_argv(words[1], words[2:])
        assert (typed.replace(**r.recipe.overlay) if r.recipe.overlay else typed) == r.run


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
        if rec.get("batch_rule") == "named_command":  # the named script's per-device batch
            per_device = rec["framework_settings"]["--per_device_generation_batch_size"]
            rec = {**rec, "prompts_per_step": per_device * rec["gpus"]}
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
        every = [r for r in report.rows if name in ("all", r.recipe.framework)]
        rows = [r for r in every if not r.recipe.record.get("excluded")]
        assert got["excluded"] == len(every) - len(rows)
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


def test_excluded_runs_are_printed_with_their_reason_and_left_out_of_the_summary(report):
    """A run whose record gives a reason (``excluded``: slime issue 385, a report of an anomalous
    run) keeps its prediction and error in the rows; the summary's statistics leave it out."""
    out = [r for r in report.rows if r.recipe.record.get("excluded")]
    assert [r.recipe.id for r in out] == ["slime-issue385-qwen3-0.6b-gsm8k-colocate-16gpu"]
    row = out[0]
    assert row.predicted_s is not None and row.error is not None
    assert "0 % GPU utilization" in row.excluded
    assert row.to_json()["excluded"] == row.excluded
    summary = report.summary()
    assert summary["slime"]["excluded"] == 1 and summary["all"]["excluded"] == 1
    kept = [abs(r.error) for r in report.rows if r.error is not None and not r.excluded]
    assert summary["all"]["max_abs_error"] == max(kept)
    assert summary["all"]["predicted"] == len(kept)


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
    (recomputed here by evaluating the doubled batch), but for a row whose command the blog
    names (batch_rule named_command: that script's per-device batch), and the published hours
    convert over that batch's step count (ceil(264,292 / pairs))."""
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
        if rec["batch_rule"] == "named_command":  # the blog names the command (Tables 4, 5)
            per_device = rec["framework_settings"]["--per_device_generation_batch_size"]
            assert pairs == per_device * rec["gpus"], r.recipe.id
            continue
        if pairs < 1024 and r.fits:
            bigger = recipe({**rec, "prompts_per_step": 2 * pairs})
            offload = r.run.deployment.train.offload
            if offload:
                bigger.query.set("--offload", ",".join(sorted(str(o) for o in offload)))
            bigger.query.set("--engine", str(r.run.deployment.engine.kind))  # pinned or not
            assert not evaluate(build_run(bigger, run_from_argv)).fits, r.recipe.id


#: The README's label of each framework's row in its table of `validate --rl` figures.
README_LABELS = {"NeMo RL": "nemo-rl", "verl": "verl", "DeepSpeed-Chat": "deepspeed-chat",
                 "OpenRLHF": "openrlhf", "AReaL": "areal", "TRL": "trl", "slime": "slime",
                 "miles": "miles", "all": "all"}  # fmt: skip


def test_the_readme_states_the_figures_validate_prints(report):
    """Issue 18: the figures are printed and stated in the README. Each row of the README's
    table ('Current figures') and its reading of the targets (median <= 15 %, max <= 40 %,
    coverage >= 80 %) against the summary this report prints, to the README's precision."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("| framework | runs | predicted | median")
    table = readme[start:readme.index("\n\n", start)].splitlines()[2:]
    summary = report.summary()

    def pct(x: float | None, digits: int) -> str:
        return "-" if x is None else f"{100 * x:.{digits}f} %"

    seen = []
    for line in table:
        label, *cells = [c.strip() for c in line.strip("|").split(" | ")]
        key = next(v for k, v in README_LABELS.items() if label.startswith(k))
        s = summary[key]
        want = [str(s["runs"]), str(s["predicted"]), pct(s["median_abs_error"], 1),
                pct(s["max_abs_error"], 0), pct(s["coverage"], 0), str(s["not_fitting"]),
                str(s["excluded"])]  # fmt: skip
        assert cells == want, (label, cells, want)
        seen.append(key)
    assert sorted(seen) == sorted(summary)
    flat = " ".join(readme.split())
    a = summary["all"]
    read = (f"coverage ({pct(a['coverage'], 0)}) {'meets' if a['coverage'] >= 0.8 else 'misses'}"
            f" its 80 % target; the median ({pct(a['median_abs_error'], 1)}) "
            f"{'meets' if a['median_abs_error'] <= 0.15 else 'misses'} its 15 %; the maximum "
            f"({pct(a['max_abs_error'], 0)} against <= 40 %) "
            f"{'meets it' if a['max_abs_error'] <= 0.40 else 'does not'}")  # fmt: skip
    assert read in flat


def test_no_published_run_is_called_does_not_fit(report):
    """Issue 18: no published run that ran is called "does not fit" when expressed with its
    framework's preset or import (every run of rl_runs.json ran: the source measured its step);
    an excluded run is held to it too, a run rlmcost cannot express has no fit to state."""
    assert [r.recipe.id for r in report.rows if r.fits is False] == []
    assert sum(r.fits is True for r in report.rows) == sum(r.run is not None for r in report.rows)
