"""Turn pydantic's validation errors into one-line SpecErrors."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any, TypeVar, cast

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
        return cls.model_validate(data)  # the fields of ``cls(**data)``, pydantic's errors
    except ValidationError as exc:
        raise one_line(exc, cls, what, flags) from None


def one_line(exc: ValidationError, cls: type[BaseModel], what: str,
             flags: Mapping[str, str] | None = None) -> SpecError:  # fmt: skip
    """The SpecError of pydantic's ``exc`` for a ``cls`` built as ``what`` (:func:`build`)."""
    err = exc.errors()[0]
    msg = str(err["msg"]).removeprefix("Value error, ")
    where = ".".join(str(p) for p in err["loc"])
    flag = (flags or {}).get(where)
    if flag is not None:
        given = "" if err["type"] == "value_error" else f" {err.get('input')!r}"
        return SpecError(f"{flag}{given}: {msg}")
    if err["type"] == "extra_forbidden" and err["loc"]:
        return SpecError(f"{what}: field '{where}' {_unknown_field(cls, err['loc'])}")
    if where and err["type"] != "value_error":
        return SpecError(f"{what}: field '{where}': {msg}")
    return SpecError(f"{what}: {msg}")


if TYPE_CHECKING:  # its name for the type checker; at run time found through BaseModel
    from pydantic._internal._model_construction import ModelMetaclass
else:
    ModelMetaclass = type(BaseModel)  # BaseModel's metaclass, not pydantic's private module


class _OneLineErrors(ModelMetaclass):
    """``Model(...)`` with a ValidationError said as one SpecError (:class:`Checked`)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except ValidationError as exc:
            raise one_line(exc, cast("type[BaseModel]", cls), cls.__name__) from None


class Checked(BaseModel, metaclass=_OneLineErrors):
    """A pydantic model whose constructor says bad input in one line: ``TrainLayout(tp=0)``
    raises SpecError ("TrainLayout: field 'tp': Input should be greater than or equal to 1"),
    not pydantic's multi-line ValidationError (the README's library examples build
    Deployments this way). Only the call is wrapped (the metaclass's ``__call__``, not an
    ``__init__``, which pydantic would also run for every nested model it validates):
    ``model_validate`` (:func:`build`, the files, nested models) is pydantic's own."""


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
