"""A query that does not fit names the planner query that finds the fewest GPUs that do, and
that query runs as printed (its workload and framework carried over). Independent check: the
planner's own answer, `rlmcost plan ... --min-gpus`."""

from __future__ import annotations

import re
import shlex

from typer.testing import CliRunner

from rlmcost.cli import app


def _hint(args: list[str]) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "DOES NOT FIT" in text
    found = re.search(r"`(rlmcost plan [^`]+)` finds the fewest GPUs", text)
    assert found, text[-800:]
    return found.group(1)


def test_the_hint_carries_the_workload_and_runs() -> None:
    # (on 4 GPUs TP 4 with every state offloaded fits since NeMo RL frees the gradients
    # after the update, tests/test_nemo_rl_grads_freed.py: 2 GPUs, an engine of TP 2)
    cmd = _hint(["grpo", "-m", "70b", "--gpus", "2", "--rollout-tp", "2", "-B", "32", "-K",
                 "4", "--length-dist", "reasoning"])  # fmt: skip
    assert cmd.startswith("rlmcost plan grpo -m llama-3.1-70b -H h100-sxm -B 32 -K 4 ")
    assert "--length-dist reasoning" in cmd and cmd.endswith("--min-gpus")
    assert "--framework" not in cmd  # the default deployment: each family under its framework
    res = CliRunner().invoke(app, shlex.split(cmd)[1:])
    assert res.exit_code == 0, res.output
    gpus = re.search(r"smallest GPU count with a fitting deployment: (\d+)", res.output)
    assert gpus and int(gpus.group(1)) > 2  # 2 GPUs did not fit


def test_an_explicit_framework_is_carried() -> None:
    # verl's own defaults: its 72 B example's vLLM TP 16 (its preset for a 70 B actor) needs
    # 16 GPUs, an error on 4
    cmd = _hint(["grpo", "-m", "70b", "--gpus", "4", "--framework", "verl",
                 "--no-sized-defaults"])  # fmt: skip
    assert " --framework verl --min-gpus" in cmd


def test_a_cut_list_of_families_that_never_fit_says_so() -> None:
    # the table shows 12 families; the PPO plan of 70B on 8..128 GPUs has 32 that never fit
    # (four models on few GPUs; GRPO's has 10 since the presets offload as their frameworks do)
    res = CliRunner().invoke(app, ["plan", "ppo", "-m", "70b", "--gpus", "8..128", "--min-gpus"],
                             env={"COLUMNS": "200"})  # fmt: skip
    assert res.exit_code == 0, res.output
    total = re.search(r"families that never fit \((\d+);", res.output)
    assert total and int(total.group(1)) > 12
    assert "the first 12; --json 'never_fit' has every one" in res.output


def test_a_problem_alone_gets_no_length_hint() -> None:
    # the engine's reservation too small for its KV cache (a problem, no memory over the
    # capacity): the hint that memory is at the maximum lengths would mislead, so it is absent
    # (a query over the capacity by its lengths keeps it: test_frameworks_import's verl example)
    res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.1-8b", "--gpus", "8", "-H", "h100",
                                   "--gpu-memory-utilization", "0.12"])  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "problem: actor generate" in text and "leaves 0.00 GiB for the KV cache" in text
    assert "memory at the maximum lengths" not in text


def test_no_length_hint_where_the_states_alone_exceed_the_device() -> None:
    # PPO on Llama-3.1-70B on 8 H100s: the Training peak is over by 131 GiB, the optimizer its
    # largest term; weights, gradients and Adam states alone exceed 80 GB whatever the lengths,
    # so a line naming the lengths at which it fits would be false (its LENGTH_TERMS:
    # activations, KV cache, logits, rollout buffers, overhead are less than the shortfall)
    res = CliRunner().invoke(app, ["ppo", "-m", "70b", "--gpus", "8"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "DOES NOT FIT" in text and "largest term: optimizer" in text
    assert "memory at the maximum lengths" not in text
