"""`rlmcost plan` searches a trainer layout field that no evaluation of its candidates reads at
one value (rlmcost.plan.unread): under slime's token budget (``--max-tokens-per-gpu 9216``,
which packs every training and log-prob micro-batch: slime/utils/dp_schedule.py
``_pack_step_into_mbs`` @624b824a reads ``micro_batch_size`` on its static path alone) the
rows at ``--micro-batch`` 1 and 2 were the same deployment twice. The independent reference
is the exact evaluation itself: a candidate at micro-batch 2 evaluates exactly as the same
candidate at 1 where the rule says unread (rows, group layouts and engine units alike), and
differently somewhere where it says read (HF generate in the trainer's layout, NeMo RL's
packing, whose bin is the micro-batch times the sequence)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rlmcost.cli.plan_query import parsed, rl_query
from rlmcost.errors import SpecError
from rlmcost.plan import rl_space
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLCandidate, candidates, evaluate_row
from rlmcost.plan.unread import unread_fields

SLIME = ["grpo", "-m", "8b", "--gpus", "16", "--framework", "slime"]


def _query(argv: list[str]) -> tuple[Any, Any]:
    target, opts = parsed(argv)
    base, space, _ = rl_query(target, opts)
    return base, space


def _evaluated(base: Any, c: RLCandidate) -> tuple[Any, ...] | None:
    """The candidate's row without its micro-batch, its groups' layouts and engine units."""
    try:
        row = evaluate_row(base, c)
    except SpecError:
        return None
    numbers = {k: v for k, v in row.items() if k != "micro_batch"}
    return numbers, row.layouts, row.engines_s


def _every_field_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rlmcost.plan.unread.unread_fields", lambda base: {})


def test_slime_rows_are_distinct_deployments() -> None:
    """No two rows of the slime query share time, memory, groups and every layout value but
    the micro-batch (before: rows 1 and 2, async-split, differed in mb 1 and 2 alone)."""
    base, space = _query(SLIME)
    rows = plan_rl(base, 16, space=space, top=10).rows
    keys = [tuple((k, str(v)) for k, v in r.items()
                  if k not in ("micro_batch", "command", "run")) for r in rows]  # fmt: skip
    assert len(set(keys)) == len(keys) == 10
    # the row says no micro-batch was read (its groups' packed ones are in group_layouts)
    assert {r["micro_batch"] for r in rows} == {None}
    assert all(r["run"]["deployment"]["train"]["micro_batch"] == 1 for r in rows)


def test_the_note_says_what_collapsed_and_why() -> None:
    base, space = _query(SLIME)
    notes = plan_rl(base, 16, space=space, top=3).notes
    said = [n for n in notes if n.startswith("--micro-batch 1,2: searched at 1 alone")]
    assert len(said) == 1
    assert "--max-tokens-per-gpu 9216" in said[0] and "slime/utils/dp_schedule.py" in said[0]


def test_slime_candidates_halve(monkeypatch: pytest.MonkeyPatch) -> None:
    """768 candidates on 16 GPUs before, 384 now: exactly those at micro-batch 1."""
    base, space = _query(SLIME)
    now = candidates(base, space, 16)
    _every_field_read(monkeypatch)
    before = candidates(base, space, 16)
    assert (len(before), len(now)) == (768, 384)
    assert now == [c for c in before if c.micro_batch == 1]


def test_unread_micro_batch_evaluates_alike() -> None:
    """Where the rule says unread, micro-batch 2 evaluates as 1 on every family's candidates
    (every 3rd candidate: 128 pairs)."""
    base, space = _query(SLIME)
    assert set(unread_fields(base)) == {"micro_batch"}
    cands = candidates(base, space, 16)[::3]
    assert {c.family for c in cands} == {"baseline", "split", "async-split", "async-stream"}
    for c in cands:
        assert _evaluated(base, replace(c, micro_batch=2)) == _evaluated(base, c), c


@pytest.mark.parametrize("argv", [
    [*SLIME, "--engine", "hf"],  # generation in the trainer's layout reads it
    ["grpo", "-m", "8b", "--gpus", "16", "--framework", "nemo-rl"],  # packing: mb x seq
    ["grpo", "-m", "8b", "--gpus", "16", "--framework", "verl"],  # no budget at 8B
])  # fmt: skip
def test_read_where_some_pass_reads_it(argv: list[str]) -> None:
    """Where the rule says read, both values stay searched, and some candidate does evaluate
    differently at micro-batch 2 (so collapsing there would lose a deployment)."""
    base, space = _query(argv)
    assert unread_fields(base) == {}
    cands = candidates(base, space, 16)
    assert {c.micro_batch for c in cands} == {1, 2}
    ones = [c for c in cands if c.micro_batch == 1][::8]
    assert any(_evaluated(base, replace(c, micro_batch=2)) != _evaluated(base, c)
               for c in ones)  # fmt: skip


def test_a_single_given_value_is_kept() -> None:
    """`--micro-batch 2` alone: searched at 2 (the first value), and no note."""
    base, space = _query([*SLIME, "--micro-batch", "2"])
    assert {c.micro_batch for c in candidates(base, space, 16)} == {2}
    assert not [n for n in plan_rl(base, 16, space=space, top=1).notes
                if n.startswith("--micro-batch")]  # fmt: skip


def test_family_lists_cut_the_unread_field() -> None:
    """:func:`rl_space.family_lists` gives the unread field its first value alone."""
    from rlmcost.plan.rl_candidates import _algorithm, space_families

    base, space = _query([*SLIME, "--micro-batch", "4,1,2"])
    fam = space_families(base, space)[0]
    lists = rl_space.family_lists(_algorithm(base), fam, base, space,
                                  ((2,), (1,), ("1",), (1,)))  # fmt: skip
    assert lists["micro_batch"] == (4,)
