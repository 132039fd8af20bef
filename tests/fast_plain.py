"""Variants of one small GRPO query evaluated on the fast path and the plain one, shared by the
tests that check a new deployment field keys the kept estimates (tests/test_module_ckpt.py,
tests/test_lora_early_stop.py, tests/test_model_dropout.py), and the text of an evaluation or
its error that the fast-vs-plain tests compare (tests/test_fast_equal.py,
tests/test_fast_membership.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.reports.estimate import run_of
from rlmcost.run.spec import Run


def fast_and_plain(edits: list[Callable[[dict[str, Any]], None]],
                   model: str = "llama-3.2-1b") -> tuple[list[str], list[str]]:  # fmt: skip
    """The JSON of GRPO on ``model`` (Llama-3.2-1B), 8 H100, with each of ``edits`` applied to
    its Run's data, evaluated together on the fast path (``evaluate_many``) and one by one
    plainly."""
    data = run_of("grpo", model, hardware="h100-sxm", gpus=8).to_json()
    runs = []
    for edit in edits:
        d = json.loads(json.dumps(data))
        edit(d["deployment"])
        runs.append(Run.from_data(d))
    fast = [json.dumps(e.to_json(), sort_keys=True, default=repr) for e in evaluate_many(runs)]
    with memo.plain():
        plain = [json.dumps(evaluate_deployment(r).to_json(), sort_keys=True, default=repr)
                 for r in runs]  # fmt: skip
    return fast, plain


def result_text(result: Any) -> str:
    """An evaluation's JSON, or a SpecError's message, as one comparable string."""
    if isinstance(result, SpecError):
        return f"SpecError: {result}"
    return json.dumps(result.to_json(), sort_keys=True, default=repr)


def plain_text(run: Run) -> str:
    """:func:`result_text` of ``run`` evaluated with nothing kept (``memo.plain``)."""
    with memo.plain():
        try:
            return result_text(evaluate_deployment(run))
        except SpecError as exc:
            return result_text(exc)


def fresh_fast_equals_plain(runs: list[Run]) -> list[Any]:
    """Evaluate ``runs`` together on the fast path from empty caches (every memo table and
    the kept queries cleared) and assert each equals its plain evaluation and none is an
    error; the fast results, for the caller's own checks."""
    from rlmcost.placement import query as resolved

    memo.clear_all()
    resolved._QUERIES.clear()
    results = evaluate_many(runs)
    texts = [result_text(e) for e in results]
    assert texts == [plain_text(r) for r in runs]
    assert not any(t.startswith("SpecError") for t in texts)
    return results
