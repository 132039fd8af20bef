"""Turn pydantic's validation errors into one-line SpecErrors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rlmcost.errors import SpecError

M = TypeVar("M", bound=BaseModel)


def build(cls: type[M], data: dict[str, Any], what: str,
          flags: Mapping[str, str] | None = None) -> M:  # fmt: skip
    """``cls(**data)``, or a SpecError naming ``what`` and the first bad field.

    ``flags``: the command-line flag that set each field (dotted path -> flag, e.g.
    ``{"engine.dtype": "--rollout-dtype"}``); a bad field with a flag is named by its flag and
    the value given (``--rollout-dtype '': Input should be ...``), so the message says which
    input to mend."""
    try:
        return cls(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        where = ".".join(str(p) for p in err["loc"])
        flag = (flags or {}).get(where)
        if flag is not None:
            given = "" if err["type"] == "value_error" else f" {err.get('input')!r}"
            raise SpecError(f"{flag}{given}: {msg}") from None
        if where and err["type"] != "value_error":
            raise SpecError(f"{what}: field '{where}': {msg}") from None
        raise SpecError(f"{what}: {msg}") from None
