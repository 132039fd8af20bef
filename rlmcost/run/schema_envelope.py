"""What every ``--json`` output starts with, and the commands that print one.

Every command's ``--json`` output is one JSON object that starts with ``schema_version``
(:data:`SCHEMA_VERSION`) and ``command`` (the command that printed it, as `rlmcost schema`
takes it), then ``run`` (the :class:`~rlmcost.run.Run` it evaluated) where the output has one;
:func:`versioned` builds that head. The pydantic models of each output and their JSON Schemas
(`rlmcost schema COMMAND`) are in :mod:`rlmcost.run.schema`. Light to import (no pydantic):
listings and tables print their JSON without loading the query object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SCHEMA_VERSION = "2.25"
"""Version of the JSON every command prints (``schema_version``): major = a key renamed or
removed (the old one stays as a deprecated alias for one version, CHANGELOG.md), minor = keys
added."""

TOOL_COMMANDS = ("models", "hardware", "blocks", "algorithms", "train", "calibrate", "validate",
                 "plan", "frameworks")  # fmt: skip
"""The commands other than the queries whose ``--json`` output has a schema."""

IMPORT_COMMANDS = ("import verl", "import openrlhf", "import trl", "import nemo-rl",
                   "import slime", "import miles")  # fmt: skip
"""`rlmcost import FRAMEWORK`: one output shape for every framework."""


def schema_commands() -> tuple[str, ...]:
    """Every command with a ``--json`` output, as `rlmcost schema` takes it: the algorithm
    commands (``ppo``, ``grpo``, ...), ``compare``, ``placements``, :data:`TOOL_COMMANDS` and
    :data:`IMPORT_COMMANDS` (``import`` alone names their shared schema)."""
    from rlmcost.algorithms.catalog import algorithms

    return (*algorithms(), "compare", "placements", *TOOL_COMMANDS, *IMPORT_COMMANDS)


def versioned(
    command: str, body: Mapping[str, Any], run: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``body`` after the head every output starts with: ``schema_version``, ``command`` and,
    when given, ``run`` (a Run's :meth:`~rlmcost.run.Run.to_json`)."""
    head: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": command}
    if run is not None:
        head["run"] = dict(run)
    clash = head.keys() & body.keys()
    if clash:
        raise ValueError(f"the output of `rlmcost {command}` sets {sorted(clash)} itself")
    return {**head, **body}
