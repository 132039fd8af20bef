"""The memory timeline per device group (rlmcost.reports.timeline) and its CLI: --timeline,
--timeline --json (the memory_timeline key) and --plot.

Independent references: the same Evaluation's per-job memory (each group's jobs'
``memory.total`` and ``memory.optimizer``, which the placement evaluation computes and the
timeline only reads); GPT-2 small's parameter count, 124,439,808 (transformers
``GPT2LMHeadModel(GPT2Config()).num_parameters()``, tied embeddings), times the 12 bytes per
parameter of mixed-precision Adam (fp32 master weights, exp_avg, exp_avg_sq: ZeRO, Rajbhandari
et al. 2020, arXiv:1910.02054 §3.1); the PNG file signature (PNG specification §5.2: bytes
137 80 78 71 13 10 26 10); the JSON Schema `rlmcost schema ppo` prints.
"""

from __future__ import annotations

import builtins
import json
from math import ceil

import jsonschema
import pytest
from typer.testing import CliRunner

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli import app
from rlmcost.evaluation.query import evaluate
from rlmcost.placement.group_memory import switches
from rlmcost.reports.timeline import FIRST_STEP, INIT, memory_timeline
from rlmcost.run.schema import json_schema
from rlmcost.run.spec import Run

runner = CliRunner()
SMALL = ["-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64"]
WORKLOAD = {"prompts": 8, "prompt_len": 64, "response_len": 64}
GPT2_PARAMS = 124_439_808
ADAM_BYTES_PER_PARAM = 12
PNG_SIGNATURE = bytes([137, 80, 78, 71, 13, 10, 26, 10])

RUNS = {
    "ideal grpo": {"algorithm": {"name": "grpo", "rule_reward": True},
                   "deployment": {"ideal": True}},
    "ppo default": {"algorithm": {"name": "ppo"}, "cluster": {"gpus": 2}},
    "grpo verl": {"algorithm": {"name": "grpo"}, "deployment": {"framework": "verl"},
                  "cluster": {"gpus": 2}},
    "grpo awake engine": {"algorithm": {"name": "grpo"},
                          "deployment": {"framework": "verl", "engine": {"sleep": False}},
                          "cluster": {"gpus": 2}},
    "ppo disaggregated": {"algorithm": {"name": "ppo"},
                          "deployment": {"placement": "disaggregated", "framework": "verl"},
                          "cluster": {"gpus": 8}},
    "grpo rollout group": {
        "algorithm": {"name": "grpo", "rule_reward": True},
        "deployment": {"framework": "verl", "groups": [
            {"members": "actor:generate", "gpus": 2}, {"members": "actor+reference", "gpus": 2}]},
        "cluster": {"gpus": 4},
    },
}  # fmt: skip


@pytest.fixture(scope="module", params=list(RUNS))
def evaluated(request):
    spec = RUNS[request.param]
    run = Run(models={"actor": "gpt-2"}, workload=WORKLOAD, **spec)
    return evaluate(run).evaluation


def test_steady_state_peak_is_the_evaluations_peak_per_group(evaluated):
    timelines = memory_timeline(evaluated)
    assert [t.group for t in timelines] == [g.name for g in evaluated.groups]
    for tl, g in zip(timelines, evaluated.groups, strict=True):
        assert tl.steady_peak_bytes == max(j.memory.total for j in g.jobs)
        assert [e.device_bytes for e in tl.phases] == [j.memory.total for j in g.jobs]
        assert [e.phase for e in tl.entries[:2]] == [INIT, FIRST_STEP]
        assert all(isinstance(e.device_bytes, int) for e in tl.entries)


def test_first_step_adds_exactly_the_optimizer_bytes_of_the_first_update(evaluated):
    for tl, g in zip(memory_timeline(evaluated), evaluated.groups, strict=True):
        update = next((j for j in g.jobs if j.task.kind is Kind.TRAIN), None)
        adam = update.memory.optimizer if update is not None else 0
        assert tl.first_step.allocated_bytes - tl.init.allocated_bytes == adam
        assert tl.init.memory.optimizer == 0
        assert tl.init.memory.activations == tl.init.memory.kv_cache == 0


def test_ideal_jump_is_mixed_precision_adam_of_gpt2():
    run = Run(models={"actor": "gpt-2"}, workload=WORKLOAD, **RUNS["ideal grpo"])
    (tl,) = memory_timeline(evaluate(run).evaluation)
    jump = tl.first_step.allocated_bytes - tl.init.allocated_bytes
    assert jump == ADAM_BYTES_PER_PARAM * GPT2_PARAMS
    # the paper's ideal deployment: no allocator slack, context or communicator bytes
    assert all(e.allocated_bytes == e.reserved_bytes == e.device_bytes for e in tl.entries)


def test_views_add_the_slack_then_the_fixed_bytes(evaluated):
    dep = evaluated.deployment
    if dep.ideal:
        pytest.skip("the ideal deployment has no overhead")
    o = dep.overhead
    for tl, g in zip(memory_timeline(evaluated), evaluated.groups, strict=True):
        # SGLang's process group (2 GiB, sglang PR 11716's log) on an SGLang replica's GPUs
        comm = 2 * 2**30 if g.sglang_gpus > 1 else o.communicator_bytes if g.gpus > 1 else 0
        fixed = o.cuda_context_bytes + comm
        for e in tl.entries:
            assert e.device_bytes - e.reserved_bytes == fixed
            assert e.reserved_bytes >= e.allocated_bytes
        for e, j in zip(tl.phases, g.jobs, strict=True):
            assert e.allocated_bytes == j.memory.total - j.memory.overhead
        init = tl.init
        if init.memory.engine == 0:
            # the group's slack: larger where its GPUs switch between generation and training
            s = o.allocator_slack_for(switches(j.task.kind for j in g.jobs))
            slack = ceil(init.allocated_bytes * s)
            assert init.reserved_bytes - init.allocated_bytes == slack


def test_an_awake_engine_is_reserved_at_init():
    run = Run(models={"actor": "gpt-2"}, workload=WORKLOAD, **RUNS["grpo awake engine"])
    ev = evaluate(run).evaluation
    (tl,) = memory_timeline(ev)
    beside = max(j.memory.engine for j in ev.groups[0].jobs)
    assert beside > 0 and tl.init.memory.engine == beside


def test_a_rollout_group_holds_its_engine_reservation_from_init():
    run = Run(models={"actor": "gpt-2"}, workload=WORKLOAD, **RUNS["grpo rollout group"])
    ev = evaluate(run).evaluation
    rollout = next(t for t in memory_timeline(ev) if t.group == "rollout")
    (gen,) = next(g for g in ev.groups if g.name == "rollout").jobs
    assert rollout.init.allocated_bytes == gen.own.total  # weights + KV pool + workspace
    assert rollout.first_step.allocated_bytes == rollout.init.allocated_bytes


def test_jobs_run_in_order_and_stages_wait_for_each_other(evaluated):
    timelines = memory_timeline(evaluated)
    ends: dict[str, float] = {}
    for tl, g in zip(timelines, evaluated.groups, strict=True):
        assert tl.init.start_s is None and tl.first_step.start_s is None
        for e, j in zip(tl.phases, g.jobs, strict=True):
            assert e.end_s == pytest.approx(e.start_s + j.predicted_s)
        for a, b in zip(tl.phases, tl.phases[1:], strict=False):
            assert b.start_s >= a.end_s - 1e-9
        for e, j in zip(tl.phases, g.jobs, strict=True):
            ends[str(j.task.stage)] = max(ends.get(str(j.task.stage), 0.0), e.end_s)
    starts = [e.start_s for tl in timelines for e in tl.phases]
    assert min(starts) == 0.0
    for tl, g in zip(timelines, evaluated.groups, strict=True):
        for e, j in zip(tl.phases, g.jobs, strict=True):
            if str(j.task.stage) == "training" and "assessment" in ends:
                assert e.start_s >= ends["assessment"] - 1e-9


# -- CLI ------------------------------------------------------------------------------------


def _cli(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_timeline_table_is_printed_per_group():
    r = _cli("grpo", *SMALL, "--gpus", "4", "--groups", "actor:generate=2,actor+reference=2",
             "--reward", "rule", "--timeline")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Memory timeline of rollout" in r.output
    assert "Memory timeline of actor+reference" in r.output
    assert "nvidia-smi" in r.output and "first step" in r.output


def test_timeline_json_key_validates_against_the_schema():
    r = _cli("ppo", *SMALL, "--timeline", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout[r.stdout.index("{") :])
    jsonschema.validate(out, json_schema("ppo"), cls=jsonschema.Draft202012Validator)
    (group,) = out["memory_timeline"]
    # one group: its peak is the largest stage peak the same output reports
    assert group["steady_peak_bytes_per_device"] == max(out["device_memory_bytes"].values())
    first, init = group["entries"][1], group["entries"][0]
    assert first["allocated_bytes"] - init["allocated_bytes"] == first["terms_bytes"]["optimizer"]
    plain = json.loads(_cli("ppo", *SMALL, "--json").stdout)
    assert "memory_timeline" not in plain


def test_plot_writes_a_png_and_an_svg(tmp_path):
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "t.png", tmp_path / "t.svg"
    r = _cli("ppo", *SMALL, "--gpus", "4", "--placement", "disaggregated", "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    r = _cli("grpo", *SMALL, "--plot", str(svg), "--json")
    assert r.exit_code == 0, r.output
    assert b"<svg" in svg.read_bytes()[:400]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--plot", "t.pdf"], "give a file ending in .png or .svg"),
        (["--symbolic", "--timeline"], "drop --symbolic"),
    ],
)
def test_bad_timeline_options_are_one_line(args, message):
    r = _cli("ppo", *SMALL, *args)
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_without_matplotlib_the_error_names_the_extra(monkeypatch, tmp_path):
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    path = tmp_path / "t.png"
    r = _cli("ppo", *SMALL, "--plot", str(path))
    assert r.exit_code == 2, r.output
    assert 'pip install "rlmcost[plot]"' in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not path.exists()
