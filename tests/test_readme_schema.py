"""README.md states the ``--json`` output's current ``schema_version``
(rlmcost.run.schema_envelope.SCHEMA_VERSION, which CHANGELOG.md's entries follow); the README
had kept 2.7 after the 2.8 entry (CHANGELOG: "Schema 2.8")."""

from __future__ import annotations

import re
from pathlib import Path

from rlmcost.run.schema_envelope import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]


def test_readme_states_the_current_schema_version() -> None:
    text = (ROOT / "README.md").read_text()
    stated = re.findall(r"`schema_version` \(now (\d+\.\d+)", text)
    assert stated == [SCHEMA_VERSION]


def test_changelog_names_the_current_schema_version() -> None:
    assert f"Schema {SCHEMA_VERSION}" in (ROOT / "CHANGELOG.md").read_text()
