"""Turn pydantic's validation errors into one-line SpecErrors."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from difflib import get_close_matches
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
        if err["type"] == "extra_forbidden" and err["loc"]:
            raise SpecError(f"{what}: field '{where}' {_unknown_field(cls, err['loc'])}") from None
        if where and err["type"] != "value_error":
            raise SpecError(f"{what}: field '{where}': {msg}") from None
        raise SpecError(f"{what}: {msg}") from None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X | None``, ``list[X]``, ``dict[str, X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _unknown_field(cls: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """``is not a field; did you mean 'zero'?`` for a mistyped key at ``loc`` (pydantic's
    ``extra_forbidden``): the names the models at that place accept, the nearest first
    (difflib), or all of them when none is near."""
    models = [cls]
    for part in loc[:-1]:
        if isinstance(part, str):
            models = [m for model in models if part in model.model_fields
                      for m in _models_in(model.model_fields[part].annotation)]  # fmt: skip
    names = sorted({n for m in models for n in m.model_fields})
    if not names:
        return "is not a field here"
    near = get_close_matches(str(loc[-1]), names, n=3)
    if not near:  # a key one level too high (``tp`` for ``train.tp``)
        near = sorted(f"{name}.{loc[-1]}" for m in models for name, f in m.model_fields.items()
                      if any(loc[-1] in m2.model_fields
                             for m2 in _models_in(f.annotation)))  # fmt: skip
    if near:
        quoted = [repr(n) for n in near]
        last = quoted.pop()
        return f"is not a field; did you mean {', '.join(quoted) + ' or ' if quoted else ''}{last}?"
    return "is not a field; the fields here: " + ", ".join(names)
