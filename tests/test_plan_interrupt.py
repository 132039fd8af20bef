"""`rlmcost plan` ended by Ctrl-C: the partial result is printed (text and --json, whose
``interrupted`` is true), then the command exits with 130, Ctrl-C's code, and the console
script adds the one line ``interrupted`` on stderr (rlmcost.__main__). The interrupt is
simulated by an evaluation that raises KeyboardInterrupt after K candidates (in this process)
or sends the process a real SIGINT (a subprocess through the console script's entry point)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import rlmcost.plan.rl_candidates as rl_candidates
import rlmcost.plan.train as train
from rlmcost.__main__ import INTERRUPTED_CODE
from rlmcost.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
RL = ["plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
      "--gpus", "2..4", "--placements", "baseline,split", "--micro-batch", "1",
      "--ckpt", "full", "--top", "100"]  # fmt: skip
TRAIN = ["plan", "train", "-m", "gpt-2", "--gpus", "2..4", "--top", "50"]
K = 3


def _raise_after(k: int, real: Any, monkeypatch: pytest.MonkeyPatch, where: Any,
                 name: str) -> list[int]:  # fmt: skip
    """Replace ``where.name`` by ``real`` that raises KeyboardInterrupt on its (k+1)-th call."""
    calls = [0]

    def fake(item: Any) -> Any:
        if calls[0] == k:
            raise KeyboardInterrupt
        calls[0] += 1
        return real(item)

    monkeypatch.setattr(where, name, fake)
    return calls


def test_an_interrupted_rl_plan_prints_its_rows_and_exits_130(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    full = runner.invoke(app, [*RL, "--json"])
    assert full.exit_code == 0, full.output
    whole = json.loads(full.stdout)
    assert whole["interrupted"] is False and whole["counts"]["evaluated"] > K
    calls = _raise_after(K, rl_candidates.evaluate_chunk, monkeypatch, rl_candidates,
                         "evaluate_chunk")  # fmt: skip
    res = runner.invoke(app, [*RL, "--json"])
    assert res.exit_code == INTERRUPTED_CODE, res.output
    out = json.loads(res.stdout)
    assert calls[0] == K
    assert out["interrupted"] is True
    # the K candidates evaluated before the Ctrl-C, and only they (the local runner takes
    # one candidate per task)
    assert out["counts"]["evaluated"] == K
    assert 1 <= len(out["rows"]) <= K
    assert any("interrupted (Ctrl-C)" in n for n in out["notes"])
    # each row is one of the uninterrupted search's (--top 100 lists every fitting one),
    # with the same prediction
    assert len(whole["rows"]) == whole["counts"]["fitting"]
    seen = {r["command"]: r["time_s"] for r in whole["rows"]}
    assert {r["command"]: r["time_s"] for r in out["rows"]}.items() <= seen.items()
    monkeypatch.undo()
    _raise_after(K, rl_candidates.evaluate_chunk, monkeypatch, rl_candidates, "evaluate_chunk")
    text = runner.invoke(app, RL)
    assert text.exit_code == INTERRUPTED_CODE
    assert "best:" in text.stdout and "interrupted (Ctrl-C)" in text.stderr


def test_an_rl_plan_interrupted_before_any_row_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _raise_after(0, rl_candidates.evaluate_chunk, monkeypatch, rl_candidates, "evaluate_chunk")
    res = runner.invoke(app, RL)
    assert res.exit_code == INTERRUPTED_CODE, res.output
    assert "interrupted before a deployment that fits was found" in res.stderr
    assert "nothing fits" not in res.stderr


def test_an_interrupted_train_plan_prints_its_rows_and_exits_130(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    full = runner.invoke(app, [*TRAIN, "--json"])
    assert full.exit_code == 0, full.output
    assert json.loads(full.stdout)["interrupted"] is False
    _raise_after(K, train.report_row, monkeypatch, train, "report_row")
    res = runner.invoke(app, [*TRAIN, "--json"])
    assert res.exit_code == INTERRUPTED_CODE, res.output
    out = json.loads(res.stdout)
    assert out["interrupted"] is True
    assert out["counts"]["evaluated"] == K
    assert 1 <= len(out["rows"]) <= K
    assert any(f"after {K} of" in n for n in out["notes"])


def test_the_plan_schema_requires_the_interrupted_key() -> None:
    res = runner.invoke(app, ["schema", "plan"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)["$defs"]["PlanOut"]
    assert plan["properties"]["interrupted"]["type"] == "boolean"
    assert "interrupted" in plan["required"]


_SCRIPT = """
import os, signal, sys
import rlmcost.plan.rl_candidates as rc
real, calls = rc.evaluate_chunk, [0]
def fake(item):
    calls[0] += 1
    if calls[0] == {k}:
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C during the K-th evaluation
    return real(item)
rc.evaluate_chunk = fake
sys.argv = {argv!r}
from rlmcost.__main__ import main
sys.exit(main())
"""


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")
def test_a_real_sigint_through_the_console_entry_point() -> None:
    script = _SCRIPT.format(k=K, argv=["rlmcost", *RL, "--json"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300, check=False)  # fmt: skip
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == INTERRUPTED_CODE
    assert r.stderr == "interrupted\n"
    out = json.loads(r.stdout)
    assert out["interrupted"] is True and out["rows"]


def test_a_min_gpus_search_interrupted_keeps_the_counts_searched_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # --min-gpus walks the budget 1, 2, 4, ...: a Ctrl-C at 2 GPUs keeps what 1 GPU showed
    # (nothing fits there: 70B's bf16 engine weights alone exceed one H100, even with NeMo RL's
    # states in host memory) and says the larger counts went unsearched
    import rlmcost.plan.rl as rl

    real = rl._search_count

    def at_two(base: Any, space: Any, gpus: int, *args: Any, **kw: Any) -> Any:
        if gpus == 2:
            raise KeyboardInterrupt
        return real(base, space, gpus, *args, **kw)

    monkeypatch.setattr(rl, "_search_count", at_two)
    args = ["plan", "grpo", "-m", "llama-3.1-70b", "-H", "h100", "--reward", "rule", "-B", "16",
            "-K", "4", "--gpus", "1..8", "--min-gpus", "--placements", "baseline",
            "--json"]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == INTERRUPTED_CODE, res.output
    out = json.loads(res.stdout)
    assert out["interrupted"] is True and out["rows"] == []
    assert any("interrupted (Ctrl-C) at 2 GPUs: nothing fits on up to 1 GPUs" in n
               for n in out["notes"])  # fmt: skip
    assert not any(n.startswith("nothing fits on up to 8") for n in out["notes"])


LONGEST = ["plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
           "--gpus", "1", "--placements", "baseline", "--max-response-len"]  # fmt: skip


def _longest_interrupted_at(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The (k+1)-th response length the search tries raises KeyboardInterrupt."""
    import rlmcost.plan.rl as rl

    real, calls = rl._search_count, [0]

    def fake(*args: Any, **kw: Any) -> Any:
        if calls[0] == k:
            raise KeyboardInterrupt
        calls[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(rl, "_search_count", fake)


def test_an_interrupted_longest_response_search_prints_what_it_settled(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # uninterrupted: 10,240 tokens fit on one H100 and 11,264 do not (doubling 1,024 ->
    # 16,384, then bisection); the search tries 1,024 and 2,048 first (both fit)
    full = runner.invoke(app, [*LONGEST, "--json"])
    assert full.exit_code == 0, full.output
    whole = json.loads(full.stdout)
    assert whole["interrupted"] is False
    t, above = whole["max_response_len"], whole["not_fitting"]
    assert above is not None and 2048 < t < above <= t + 1024
    _longest_interrupted_at(2, monkeypatch)  # Ctrl-C while 4,096 tokens are tried
    res = runner.invoke(app, [*LONGEST, "--json"])
    assert res.exit_code == INTERRUPTED_CODE, res.output
    out = json.loads(res.stdout)
    assert out["interrupted"] is True
    assert out["max_response_len"] == 2048 and out["not_fitting"] is None
    assert out["deployment"]["fits"] is True and "-T 2048" in out["deployment"]["command"]
    monkeypatch.undo()
    _longest_interrupted_at(2, monkeypatch)
    text = runner.invoke(app, LONGEST)
    assert text.exit_code == INTERRUPTED_CODE
    assert "2,048 tokens at least (the search was interrupted)" in text.stdout
    assert "interrupted (Ctrl-C): 2,048 tokens fit" in text.stderr
    monkeypatch.undo()
    _longest_interrupted_at(0, monkeypatch)  # before the first length was settled
    first = runner.invoke(app, LONGEST)
    assert first.exit_code == INTERRUPTED_CODE
    assert "before a response length that fits was found" in first.stderr
    assert "no deployment fits" not in first.stderr


def test_the_longest_response_moved_module_keeps_its_old_import_path() -> None:
    import rlmcost.plan.longest as longest
    import rlmcost.plan.rl as rl

    assert rl.max_response_len is longest.max_response_len
    assert rl.response_limit is longest.response_limit
    with pytest.raises(AttributeError):
        rl.no_such_name  # noqa: B018


def test_a_longest_search_that_fits_nothing_names_the_length_it_tried() -> None:
    # Llama-3.1-405B's context 131,072 less a 130,572-token prompt leaves 500 response tokens
    # (plan.longest.response_limit): the first length tried is 500, not 1,024, and on one H100
    # no deployment holds the model at all
    args = ["plan", "grpo", "-m", "405b", "--gpus", "1", "--prompt-len", "130572",
            "--max-response-len"]  # fmt: skip
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["max_response_len"], out["not_fitting"], out["deployment"]) == (0, 500, None)
    text = runner.invoke(app, args)
    assert text.exit_code == 0
    assert "no deployment fits even 500 response tokens on 1 GPUs" in text.stderr


def test_a_prompt_that_fills_the_context_is_a_clear_error() -> None:
    # Llama-3.1-8B's trained context is 131,072 tokens (its config.json); a 200,000-token
    # prompt leaves no response to search for (was: "no deployment fits even 1 response tokens");
    # the engines refuse it (vLLM's _validate_prompt_len: run/prompt_context.py), so the Run says
    # how to mend it before any search
    res = runner.invoke(app, ["plan", "grpo", "-m", "8b", "--gpus", "8", "--prompt-len",
                              "200000", "--max-response-len"])  # fmt: skip
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "--prompt-len 200000 fills" in res.output and "131,072 tokens" in res.output
    assert "--prompt-len 131071 or less" in res.output
