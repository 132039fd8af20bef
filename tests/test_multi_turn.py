"""Multi-turn (agentic) rollouts: ``--turns``, ``--observation-tokens``, ``--tool-latency``,
``--turn-schedule`` (rlmcost.placement.turns, rlmcost.placement.group_turns).

Independent sides: the decode steps one turn would run at the observations' positions summed
step by step with ``compiled.blocks.work_decode_step`` (Table III's C_f^tok(c), not the work
polynomial the code differences); an observation's prefill from ``compiled.blocks.
work_prefill``'s parts by hand (the body on its O tokens, its O causal queries over the whole
context, the LM head on the last); the one-turn evaluation of the same Run (turns = 1), which
the validation rows pin (``rlmcost validate --rl``: no row moves)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlmcost.algorithms.kinds import Kind
from rlmcost.choices import AttnCounting, TurnSchedule
from rlmcost.cli import app
from rlmcost.compiled import blocks as nb
from rlmcost.errors import SpecError
from rlmcost.evaluation import evaluate
from rlmcost.placement.turns import check_turns, decoded_lengths, turn_lengths, turn_sums
from rlmcost.run import Run
from rlmcost.specs import get_model

runner = CliRunner()
BASE = {"algorithm": {"name": "grpo"}, "models": {"actor": "8b"}, "cluster": {"gpus": 8},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 2048}}  # fmt: skip


def _run(**workload: object) -> Run:
    return Run.from_data({**BASE, "workload": {**BASE["workload"], **workload}})


def _generation(run: Run):  # the actor's rollout job
    e = evaluate(run)
    assert e.evaluation is not None
    jobs = [j for g in e.evaluation.groups for j in g.jobs if j.task.kind is Kind.GENERATE]
    assert len(jobs) == 1
    return jobs[0]


def test_one_turn_is_todays_numbers():
    """turns = 1 (given) evaluates as a Run without the key: the same work, bound and
    prediction of every phase."""
    plain = evaluate(Run.from_data(BASE)).to_json()
    one = evaluate(_run(turns=1)).to_json()
    assert one["phases"] == plain["phases"] and one["stages"] == plain["stages"]


def test_turns_without_observations_split_the_same_tokens():
    """N turns, O = 0, L = 0: every sample decodes its T tokens (they only split into turns),
    nothing is prefilled, nothing waits: the generation's work, bound and prediction are one
    turn's exactly."""
    assert decoded_lengths((5, 2048, 7), 4, 0) == (5, 2048, 7)
    assert sum(turn_lengths(2047, 4, 0)) == 2047
    one, four = _generation(_run()), _generation(_run(turns=4))
    assert four.work_flops == one.work_flops
    assert four.time.bound_s == one.time.bound_s
    assert four.predicted_s == one.predicted_s
    assert four.timeline.steps == one.timeline.steps


def _by_hand(arch, prompt: int, length: int, turns: int, o: int):
    """(observation prefill FLOPs, decode-step FLOPs they replace) of one sample, step by
    step from the compiled Table III blocks."""
    w = [int(nb.work_prefill(arch, c, 1, AttnCounting.CAUSAL)) for c in (1, 2, 3)]
    head = 3 * w[0] - 3 * w[1] + w[2]  # the constant term: the LM head on the last position
    pair = (w[2] - 2 * w[1] + w[0])  # one causal query-key pair over the layers
    body = w[0] - head - pair  # the body on one token
    prefill = replaced = p = 0
    parts = turn_lengths(length, turns, o)
    for g in parts[:-1]:
        p += g
        hit = prompt + p
        prefill += o * body + pair * sum(range(hit + 1, hit + o + 1)) + head
        replaced += sum(int(nb.work_decode_step(arch, prompt + p + q)) for q in range(1, o + 1))
        p += o
    return prefill, replaced


def test_observations_move_work_from_decode_to_prefill():
    """O = 64 after each of 3 turns' first 2: per sample the prefill FLOPs of its 2
    observations on the cached context replace 2 x 64 decode steps (exact ints, by hand);
    the rollout decodes 2 x 64 fewer steps and its work changes by exactly the difference."""
    from rlmcost.compiled.invocation import work_poly_in_t
    from rlmcost.placement.task_work import frozen_values

    arch = get_model("8b").arch()
    prompt, length, turns, o = 1024, 2048, 3, 64
    run = _run(prompt_len=prompt, turns=turns, observation_tokens=o)
    job = _generation(run)
    values = frozen_values(evaluate(run).evaluation.values)
    coeffs = work_poly_in_t(job.task.invocation, arch, values, AttnCounting.CAUSAL)
    sums = turn_sums(arch, coeffs, prompt, (length,), turns, o, AttnCounting.CAUSAL)
    prefill, replaced = _by_hand(arch, prompt, length, turns, o)
    assert (sums.prefill_flops, sums.replaced_flops) == (prefill, replaced)
    assert sums.observation_tokens == 2 * o and prefill < replaced  # decode re-reads weights
    one = _generation(_run(prompt_len=prompt))
    assert one.timeline.steps - job.timeline.steps == 2 * o
    # the query counts attention full (the default): the same identity over its 64 samples,
    # beside the timelines' own re-prefills and shared prompts
    full = turn_sums(arch, work_poly_in_t(job.task.invocation, arch, values), prompt,
                     (length,) * 64, turns, o, AttnCounting.FULL)  # fmt: skip

    def own(j) -> int:
        return j.work_flops - j.layout.dp * (j.timeline.recompute_flops - j.timeline.shared_flops)

    assert own(job) - own(one) == full.prefill_flops - full.replaced_flops
    assert job.predicted_parts_s["observation_prefill_s"] > 0


def test_tool_latency_adds_exactly_to_the_turn_synchronous_chain():
    """turn-synchronous: each of the N - 1 environment steps waits L for its batch, so the
    rollout takes exactly (N - 1) L more, in the bound and the prediction."""
    kw = dict(turns=4, observation_tokens=32, turn_schedule="turn-synchronous")
    fast, slow = _generation(_run(**kw)), _generation(_run(tool_latency_s=2.5, **kw))
    assert slow.time.bound_s == pytest.approx(fast.time.bound_s + 3 * 2.5, abs=1e-9)
    assert slow.predicted_s == pytest.approx(fast.predicted_s + 3 * 2.5, abs=1e-9)
    assert slow.predicted_parts_s["tool_wait_s"] == pytest.approx(7.5, abs=1e-9)


def test_per_sample_overlaps_the_wait_with_other_samples():
    """per-sample: the engine's work or the longest sample's chain, whichever is longer; a
    short wait hides under the other samples' decode, a long one sets the time."""
    kw = dict(turns=4, observation_tokens=32, turn_schedule="per-sample")
    none, long = _generation(_run(**kw)), _generation(_run(tool_latency_s=600.0, **kw))
    assert none.predicted_parts_s["tool_wait_s"] == 0.0
    assert long.predicted_s >= 3 * 600.0
    sync = _generation(_run(**{**kw, "turn_schedule": "turn-synchronous",
                               "tool_latency_s": 600.0}))  # fmt: skip
    assert long.predicted_s <= sync.predicted_s


@settings(max_examples=8, deadline=None)
@given(st.floats(0, 60), st.floats(0, 60), st.sampled_from(list(TurnSchedule)))
def test_more_latency_never_shortens_generation(a: float, b: float, schedule: TurnSchedule):
    lo, hi = sorted((a, b))
    kw = dict(turns=3, observation_tokens=16, turn_schedule=str(schedule))
    x, y = _generation(_run(tool_latency_s=lo, **kw)), _generation(_run(tool_latency_s=hi, **kw))
    assert x.time.bound_s <= y.time.bound_s and x.predicted_s <= y.predicted_s
    assert x.time.bound_s <= x.predicted_s and y.time.bound_s <= y.predicted_s


def test_schedule_follows_the_framework():
    """NeMo RL (the default deployment) runs run_multi_turn_rollout: turn-synchronous; verl's
    agent loop a task per sample; a given schedule wins."""
    def schedule(run: Run) -> str:
        return str(evaluate(run).workload.turn_schedule)

    assert schedule(_run(turns=2)) == "turn-synchronous"
    verl = Run.from_data({**BASE, "workload": {**BASE["workload"], "turns": 2},
                          "deployment": {"framework": "verl"}})  # fmt: skip
    assert schedule(verl) == "per-sample"
    assert schedule(_run(turns=2, turn_schedule="per-sample")) == "per-sample"


def test_budget_checked():
    """(N - 1) O + N must fit T: the error names both mends."""
    check_turns(4, 100, 304)
    with pytest.raises(SpecError, match="--response-len 304 or more, or --turns 3"):
        check_turns(4, 100, 303)


def test_cli_flags_and_errors():
    res = runner.invoke(app, ["grpo", "-m", "8b", "--gpus", "8", "-T", "2048", "--turns", "4",
                              "--observation-tokens", "128", "--tool-latency", "3", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["run"]["workload"]["turns"] == 4
    assert any(n.startswith("multi-turn rollout: 4 turns") and "tool wait" in n
               for n in out["notes"])  # fmt: skip
    bad = runner.invoke(app, ["grpo", "-m", "8b", "-T", "100", "--turns", "4",
                              "--observation-tokens", "64"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "--response-len 196 or more" in bad.output


def test_verl_multi_turn_import():
    """verl's rollout.multi_turn (rollout.yaml @b178a3cd: max_tool_response_length 256,
    max_parallel_calls 1): max_assistant_turns an upper bound taken whole, 256 tool tokens at
    most per turn; null: one turn and a note."""
    from pathlib import Path

    from rlmcost.frameworks.verl import import_verl

    verl = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
    mt = "actor_rollout_ref.rollout.multi_turn"
    q = import_verl(verl, [f"{mt}.enable=true", f"{mt}.max_assistant_turns=5",
                           "data.max_response_length=4096"])  # fmt: skip
    flags = dict(q.flags)
    assert flags["--turns"] == 5 and flags["--observation-tokens"] == 256
    # 5 turns of 256-token tool responses need 4 x 256 + 5 = 1029 tokens: 512 holds 2
    q = import_verl(verl, [f"{mt}.enable=true", f"{mt}.max_assistant_turns=5",
                           "data.max_response_length=512"])  # fmt: skip
    assert dict(q.flags)["--turns"] == 2
    q = import_verl(verl, [f"{mt}.enable=true"])
    assert "--turns" not in dict(q.flags) and any("max_assistant_turns null" in n
                                                  for n in q.notes)  # fmt: skip
    # tool_agent_loop.py ends a trajectory once user_turns reaches max_user_turns: 2 tool
    # responses, 3 assistant turns at most
    q = import_verl(verl, [f"{mt}.enable=true", f"{mt}.max_assistant_turns=5",
                           f"{mt}.max_user_turns=2", "data.max_response_length=4096"])
    assert dict(q.flags)["--turns"] == 3 and f"{mt}.max_user_turns" not in q.ignored


@pytest.mark.parametrize(("async_engine", "schedule"),
                         [("false", "turn-synchronous"), ("true", "per-sample")])
def test_nemo_rl_rollout_turns_import(async_engine: str, schedule: str):
    """grpo.max_rollout_turns (grpo_sliding_puzzle.yaml @7ea279abf: 50) as --turns; the
    schedule by should_use_async_rollouts (vllm_cfg.async_engine)."""
    from pathlib import Path

    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    nemo = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
    q = import_nemo_rl(nemo, ["grpo.max_rollout_turns=4",
                              f"policy.generation.vllm_cfg.async_engine={async_engine}"], 200)
    flags = dict(q.flags)
    assert flags["--turns"] == 4 and flags["--turn-schedule"] == schedule


def test_offline_algorithms_take_no_turns():
    """DPO generates nothing (Table IV's offline methods): --turns is an error, not ignored."""
    res = runner.invoke(app, ["dpo", "-m", "8b", "--turns", "2"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "generates no rollouts" in res.output


def test_slimes_custom_generate_function_is_said_not_ignored():
    """slime/rollout/sglang_rollout.py @624b824a: --custom-generate-function-path replaces the
    single-turn generate (a multi-turn agent lives there): read and said, priced as one turn."""
    from rlmcost.frameworks.slime import import_slime

    base = ["--hf-checkpoint", "/root/Qwen3-4B", "--rollout-batch-size", "8",
            "--n-samples-per-prompt", "4", "--actor-num-gpus-per-node", "4",
            "--rollout-num-gpus-per-engine", "2", "--rollout-num-gpus", "4"]  # fmt: skip
    q = import_slime([*base, "--custom-generate-function-path", "generate.generate"])
    assert "--custom-generate-function-path" not in q.ignored and "--turns" not in dict(q.flags)
    assert any(n.startswith("--custom-generate-function-path") and "--turns" in n
               for n in q.notes)  # fmt: skip
