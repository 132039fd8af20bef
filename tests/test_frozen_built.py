"""``placement.frozen.built``: a frozen dataclass built without its ``__init__`` equals the one
its ``__init__`` builds (the fields, their order in ``__dict__``, equality and hash), and a
call that does not give every field, or a class with ``__post_init__``, is refused."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rlmcost.algorithms.kinds import Stage
from rlmcost.placement.estimate import StageResult
from rlmcost.placement.frozen import built


def test_built_equals_init() -> None:
    values = (Stage.TRAINING, 12, 3, 4096, 1.5, ("trainer",), 2.25)
    made, init = built(StageResult, *values), StageResult(*values)
    assert made == init
    assert hash(made) == hash(init)
    assert list(made.__dict__.items()) == list(init.__dict__.items())
    with pytest.raises(AttributeError):  # still frozen
        made.depth = 4  # type: ignore[misc]


def test_built_refuses_missing_fields_and_post_init() -> None:
    with pytest.raises(TypeError, match="takes 7 fields, got 6"):
        built(StageResult, Stage.TRAINING, 12, 3, 4096, 1.5, ("trainer",))

    @dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("x < 0")

    with pytest.raises(TypeError, match="without __post_init__"):
        built(Checked, -1)
