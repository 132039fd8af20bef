"""Host amounts (--host-memory-gib, --host-bandwidth; ClusterSpec): NaN, infinity and values
<= 0 are one-line errors that say what is wrong with the value, not only the range."""

from __future__ import annotations

import re

import pytest
from test_cli_robustness import _refused

from rlmcost.errors import SpecError


@pytest.mark.parametrize(("flag", "value", "word"), [
    # NaN failed the option's range check (x >= 0.001) and the error named only the range
    ("--host-memory-gib", "nan", "is not a number (NaN"),
    ("--host-memory-gib", "inf", "must be a finite number"),
    ("--host-memory-gib", "-4", "must be positive"),
    ("--host-memory-gib", "0", "must be positive"),
    ("--host-bandwidth", "nan", "is not a number (NaN"),
    ("--host-bandwidth", "-inf", "must be a finite number"),
])  # fmt: skip
def test_host_amounts_say_what_is_wrong_with_them(flag, value, word, tmp_path, monkeypatch):
    line = _refused(["grpo", "-m", "gpt-2", flag, value], tmp_path, monkeypatch)
    assert flag in line and word in line, line


def test_a_run_file_host_memory_of_nan_is_refused_the_same_way() -> None:
    from rlmcost.run.spec import Run

    with pytest.raises(SpecError, match=re.escape("is not a number (NaN")):
        Run.from_data({"cluster": {"host_memory_gib": float("nan")}})
