"""Deployment documents: a JSON or safe-YAML mapping read from text (``--deployment FILE``,
run files). Light to import: PyYAML loads only for a document that is not JSON."""

from __future__ import annotations

import json
from typing import Any

from rlmcost.errors import SpecError


def parse_document(text: str, where: str, what: str = "deployment fields") -> dict[str, Any]:
    """A JSON or safe-YAML mapping from ``text``; SpecError naming ``where`` and ``what`` the
    mapping holds otherwise."""
    try:
        data = json.loads(text)
    except ValueError:
        try:
            import yaml
        except ImportError:  # pragma: no cover - PyYAML ships with the test extras
            raise SpecError(f"{where} is not JSON and PyYAML is not installed") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0]
            raise SpecError(f"{where} is neither JSON nor safe YAML ({first})") from None
    if not isinstance(data, dict):
        raise SpecError(
            f"{where} must hold a mapping of {what}, got {type(data).__name__}"
        )
    return data
