"""``dataclass`` as the standard library's, whose frozen classes start faster.

``@dataclass(frozen=True)`` from here makes the class ``dataclasses.dataclass(frozen=True)``
makes, method for method, but compiles less at import. CPython 3.11's ``dataclasses`` writes the
source text of six methods for each frozen class (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``) and compiles each (``_create_fn``: one ``exec``
a method), which a command line pays at every start for every class it imports. Here:

* ``__init__``: the same text (``_init_fn`` of CPython 3.11.7's ``Lib/dataclasses.py``: the same
  parameters, annotations, defaults, ``default_factory`` calls, fields set through
  ``object.__setattr__``, then ``__post_init__``), compiled at class creation as there;
* ``__eq__`` and ``__hash__``: the same text (``_cmp_fn``, ``_hash_fn``), compiled when first
  called on the class (most classes a query imports are never compared or hashed);
* ``__repr__``, ``__setattr__``, ``__delattr__``: closures of shared code over the field names,
  with the same results (``Name(a=1, b='x')`` of the ``repr`` fields under
  ``reprlib.recursive_repr``; ``FrozenInstanceError`` on assigning or deleting a field, or any
  name on an instance of the class itself), compiled never.

A method the class body defines is kept, as there; ``__hash__`` follows the same rule
(``field(hash=...)``, else ``compare``; none where the body defines it). ``__doc__`` and
``__match_args__`` are the standard library's. What it records in ``__dataclass_params__`` says
``init=False, repr=False, eq=False, frozen=False`` (the methods are made here); ``fields``,
``replace``, ``asdict``, ``is_dataclass`` and pickling work as for any dataclass. A class here
inherits from no dataclass but others made here, and has no ``InitVar`` and no ``kw_only`` field
(TypeError); a standard frozen dataclass cannot inherit from one (the standard library refuses a
frozen class over a dataclass not frozen). Any other use (``@dataclass``, ``slots=True``,
``order=True`` ...) is the standard decorator's. Type checkers see ``dataclasses.dataclass``.

Measured (callgrind, CPython 3.11.7): a frozen class of 8 fields costs 5.0 M instructions with the
standard decorator, 1.7 M here; a cold ``rlmcost ppo -m 70b --tp 8 --json`` imports ~90 of them
(``benchmarks/bench_cli_startup.py``).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable, Iterable
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        """``dataclasses.dataclass`` with the same arguments; ``frozen=True`` alone takes
        :func:`_frozen` (module docstring)."""
        if options != {"frozen": True}:
            return dataclasses.dataclass(cls, **options)
        return _frozen if cls is None else _frozen(cls)


MISSING = dataclasses.MISSING


class _HasDefaultFactory:
    """The default of a ``default_factory`` parameter in ``__init__`` (the standard library's
    ``_HAS_DEFAULT_FACTORY``: its signature shows ``<factory>``)."""

    def __repr__(self) -> str:
        return "<factory>"


_HAS_DEFAULT_FACTORY = _HasDefaultFactory()

_MADE: set[type] = set()
"""The classes :func:`_frozen` made: the only dataclasses one of them may inherit from."""


def _frozen(cls: Any) -> Any:
    """``cls`` as ``dataclasses.dataclass(frozen=True)`` makes it (module docstring)."""
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if name in own:  # the standard library's refusal for a frozen class
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    for base in cls.__mro__[1:]:
        if "__dataclass_fields__" in base.__dict__ and base not in _MADE:
            raise TypeError(f"{cls.__name__}: a frozen dataclass of rlmcost.frozen inherits "
                            f"only from others of it, not from {base.__qualname__}")  # fmt: skip
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    doc = cls.__doc__
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    for f in cls.__dataclass_fields__.values():
        if f.kw_only is True or "InitVar" in str(f.type):
            raise TypeError(f"{cls.__name__}.{f.name}: rlmcost.frozen makes no InitVar and no "
                            "kw_only field; use dataclasses.dataclass")  # fmt: skip
    module = sys.modules.get(cls.__module__)
    space = module.__dict__ if module else {}  # the methods' globals, as there
    if "__init__" not in own:
        _set(cls, _init(fields, "__dataclass_self__" if "self" in cls.__dataclass_fields__
                        else "self", hasattr(cls, "__post_init__"), space))  # fmt: skip
    if "__repr__" not in own:
        _set(cls, _repr(tuple(f.name for f in fields if f.repr)))
    if "__eq__" not in own:
        compared = [f.name for f in fields if f.compare]
        _set(cls, _on_first_call(cls, "__eq__", ("self", "other"), (
            "if other.__class__ is self.__class__:",
            f" return {_tuple('self', compared)}=={_tuple('other', compared)}",
            "return NotImplemented"), space))  # fmt: skip
    names = tuple(f.name for f in fields)
    _set(cls, _setattr(cls, names))
    _set(cls, _delattr(cls, names))
    if not explicit_hash:
        hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        _set(cls, _on_first_call(cls, "__hash__", ("self",),
                                 (f"return hash({_tuple('self', hashed)})",), space))
    if not doc:  # the standard library's docstring of a class without one, of its __init__
        try:
            cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            cls.__doc__ = cls.__name__
    _MADE.add(cls)
    return cls


def _set(cls: type, method: Callable[..., Any]) -> None:
    method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    setattr(cls, method.__name__, method)


def _create_fn(name: str, args: Iterable[str], body: Iterable[str], space: dict[str, Any],
               local: dict[str, Any] | None = None, returns: bool = False) -> Any:  # fmt: skip
    """A function compiled from its text, its ``local`` names bound by a closure
    (``_create_fn`` of CPython 3.11.7's ``dataclasses``)."""
    local = {} if local is None else local
    annotation = ""
    if returns:
        local["_return_type"] = None
        annotation = "->_return_type"
    text = f" def {name}({','.join(args)}){annotation}:\n" + "\n".join(f"  {b}" for b in body)
    text = f"def __create_fn__({', '.join(local)}):\n{text}\n return {name}"
    made: dict[str, Any] = {}
    # compiled without this module's ``from __future__ import annotations``, as there
    exec(compile(text, "<string>", "exec", dont_inherit=True), space, made)
    return made["__create_fn__"](**local)


def _init(fields: tuple[dataclasses.Field[Any], ...], self_name: str, post_init: bool,
          space: dict[str, Any]) -> Any:  # fmt: skip
    """``__init__`` of a frozen dataclass of these fields (``_init_fn``, ``_field_init``,
    ``_init_param`` of CPython 3.11.7's ``dataclasses``, without InitVar and kw_only)."""
    seen_default = False
    for f in fields:
        if f.init:
            if not (f.default is MISSING and f.default_factory is MISSING):
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
    local: dict[str, Any] = {f"_type_{f.name}": f.type for f in fields}
    local.update({"MISSING": MISSING, "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
                  "__dataclass_builtins_object__": object})  # fmt: skip
    body = []
    params = [self_name]
    for f in fields:
        default = f"_dflt_{f.name}"
        if f.default_factory is not MISSING:
            local[default] = f.default_factory
            value = (f"{default}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}" if f.init
                     else f"{default}()")  # fmt: skip
        elif f.init:
            if f.default is not MISSING:
                local[default] = f.default
            value = f.name
        else:
            continue  # read from the class attribute, its default
        body.append(f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})")
    for f in fields:
        if f.init:
            given = ("" if f.default is MISSING and f.default_factory is MISSING
                     else f"=_dflt_{f.name}" if f.default is not MISSING
                     else "=_HAS_DEFAULT_FACTORY")  # fmt: skip
            params.append(f"{f.name}:_type_{f.name}{given}")
    if post_init:
        body.append(f"{self_name}.__post_init__()")
    return _create_fn("__init__", params, body or ["pass"], space, local, returns=True)


def _tuple(obj: str, names: list[str]) -> str:
    """``(obj.a,obj.b,)`` (``_tuple_str`` of CPython 3.11.7's ``dataclasses``)."""
    return f"({','.join(f'{obj}.{name}' for name in names)},)" if names else "()"


def _on_first_call(cls: type, name: str, args: tuple[str, ...], body: tuple[str, ...],
                   space: dict[str, Any]) -> Callable[..., Any]:  # fmt: skip
    """A method that, called, compiles the method of this text, puts it on ``cls`` in its place
    and returns its result."""

    def method(self: Any, *rest: Any) -> Any:
        compiled = _create_fn(name, args, body, space)
        _set(cls, compiled)
        return compiled(self, *rest)

    method.__name__ = name
    return method


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _setattr(cls: Any, names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _delattr(cls: Any, names: tuple[str, ...]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__
