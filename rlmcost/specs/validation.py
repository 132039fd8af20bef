"""Turn pydantic's validation errors into one-line SpecErrors."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rlmcost.errors import SpecError

M = TypeVar("M", bound=BaseModel)


def build(cls: type[M], data: dict[str, Any], what: str) -> M:
    """``cls(**data)``, or a SpecError naming ``what`` and the first bad field."""
    try:
        return cls(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        where = ".".join(str(p) for p in err["loc"])
        if where and err["type"] != "value_error":
            raise SpecError(f"{what}: field '{where}': {msg}") from None
        raise SpecError(f"{what}: {msg}") from None
