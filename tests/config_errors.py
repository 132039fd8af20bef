"""A config.json rlmcost refuses: one line that names the fault (the model-type tests share it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlmcost.errors import SpecError
from rlmcost.specs.hf_config import load_config


def assert_refused_in_one_line(tmp_path: Path, cfg: dict[str, Any], fragment: str) -> None:
    """``cfg`` written as a config.json is a SpecError of one line holding ``fragment``."""
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(SpecError) as exc:
        load_config(p)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)
