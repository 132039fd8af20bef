"""The query object every entry point shares: :class:`Run` (:mod:`rlmcost.run.spec`), its CLI
line (:mod:`rlmcost.run.command`) and the flag table that builds it
(:mod:`rlmcost.run.flags`). Light to import (pydantic only, on first use)."""

from typing import Any

__all__ = ["SCHEMA_VERSION", "Run", "load_run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from rlmcost.run import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'rlmcost.run' has no attribute {name!r}")
