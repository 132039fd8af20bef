"""``dataclass`` as the standard library's, whose frozen classes start faster.

``@dataclass(frozen=True)`` from here makes the class ``dataclasses.dataclass(frozen=True)``
makes, method for method, but compiles less at import. CPython 3.11's ``dataclasses`` writes the
source text of six methods for each frozen class (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``) and compiles each (``_create_fn``: one ``exec``
a method), which a command line pays at every start for every class it imports. Here:

* ``__init__``: what ``_init_fn`` of CPython 3.11.7's ``Lib/dataclasses.py`` makes (the same
  parameters, defaults, annotations, errors on bad arguments; fields set through
  ``object.__setattr__`` in order, ``default_factory`` called, then ``__post_init__``), its code
  made once per shape of class and renamed to each class's fields (:func:`_init`);
* ``__eq__`` and ``__hash__``: the same text (``_cmp_fn``, ``_hash_fn``), made when first
  called on the class (most classes a query imports are never compared or hashed), its code
  made once per number of fields and renamed to the class's fields (:func:`_method`);
* ``__repr__``, ``__setattr__``, ``__delattr__``: closures of shared code over the field names,
  with the same results (``Name(a=1, b='x')`` of the ``repr`` fields under
  ``reprlib.recursive_repr``; ``FrozenInstanceError`` on assigning or deleting a field, or any
  name on an instance of the class itself), compiled never.

Each shape's code is the text ``_text`` writes, compiled once: read from
:mod:`rlmcost.frozen_code` (that text for the package's shapes, written by
:func:`code_module_text`), whose bytecode the interpreter caches as any module's, else compiled
at first use; a function from there gets the file, first line and qualified name of the text
compiled as ``"<string>"``, so the methods' code objects are those compiled here.

A method the class body defines is kept, as there; ``__hash__`` follows the same rule
(``field(hash=...)``, else ``compare``; none where the body defines it). ``__doc__`` and
``__match_args__`` are the standard library's. What it records in ``__dataclass_params__`` says
``init=False, repr=False, eq=False, frozen=False`` (the methods are made here); ``fields``,
``replace``, ``asdict``, ``is_dataclass`` and pickling work as for any dataclass. A class here
inherits from no dataclass but others made here, and has no ``InitVar`` and no ``kw_only`` field
(TypeError); a standard frozen dataclass cannot inherit from one (the standard library refuses a
frozen class over a dataclass not frozen). Any other use (``@dataclass``, ``slots=True``,
``order=True`` ...) is the standard decorator's. Type checkers see ``dataclasses.dataclass``.

Measured (callgrind, CPython 3.11.7, bytecode cached): a cold ``rlmcost ppo --model 70b --tp 8
--json`` makes 87 such classes (29 shapes of ``__init__``) and executes 1,687 M instructions with
the standard decorator, 1,391 M with this one; a new query in a warm process 171.4 M and
169.5 M (``benchmarks/bench_cli_startup.py``). Later (December 2026): ``__eq__``/``__hash__``
made per number of fields rather than compiled per class on first call (22 in that query), then
the 29 shapes and the methods read from :mod:`rlmcost.frozen_code` rather than compiled: 1,363 M
-> 1,300 M.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable
from reprlib import recursive_repr
from types import CodeType, FunctionType
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
            raise TypeError(
                f"{cls.__name__}: a frozen dataclass of rlmcost.frozen inherits "
                f"only from others of it, not from {base.__qualname__}"
            )
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    doc = cls.__doc__
    if not doc:  # for now: the standard library would sign the class before its __init__ exists
        cls.__doc__ = cls.__name__  # (object's signature, parsed by tokenize: ~13 M instructions)
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    for f in cls.__dataclass_fields__.values():
        if f.kw_only is True or "InitVar" in str(f.type) or f.name.startswith("__dataclass_"):
            raise TypeError(
                f"{cls.__name__}.{f.name}: rlmcost.frozen makes no InitVar, no "
                "kw_only field, no __dataclass_* name; use dataclasses.dataclass"
            )
    module = sys.modules.get(cls.__module__)
    space = module.__dict__ if module else {}  # the methods' globals, as there
    if "__init__" not in own:
        _set(
            cls,
            _init(
                fields,
                "__dataclass_self__" if "self" in cls.__dataclass_fields__ else "self",
                hasattr(cls, "__post_init__"),
                space,
            ),
        )
    if "__repr__" not in own:
        _set(cls, _repr(tuple(f.name for f in fields if f.repr)))
    if "__eq__" not in own:
        _set(cls, _on_first_call(cls, "__eq__", [f.name for f in fields if f.compare], space))
    names = tuple(f.name for f in fields)
    _set(cls, _setattr(cls, names))
    _set(cls, _delattr(cls, names))
    if not explicit_hash:
        hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        _set(cls, _on_first_call(cls, "__hash__", hashed, space))
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


_SHAPES: dict[tuple[tuple[str, ...], bool], Callable[..., Any]] = {}
"""The compiled ``__init__`` maker of each shape (:func:`_init`)."""


def _init(
    fields: tuple[dataclasses.Field[Any], ...],
    self_name: str,
    post_init: bool,
    space: dict[str, Any],
) -> Any:
    """``__init__`` of a frozen dataclass of these fields, as ``_init_fn`` of CPython 3.11.7's
    ``dataclasses`` makes it (without InitVar and kw_only): the same parameters, defaults
    (``<factory>`` for a ``default_factory``), annotations, errors on bad arguments, and body
    (each field set by ``object.__setattr__`` in field order, a ``default_factory`` called when
    its argument is not given or its field is not in ``__init__``, then ``__post_init__()``).

    It is compiled once per shape (which fields are parameters, which have a factory, and
    whether there is ``__post_init__``), from generic names; each class's function is that
    code with the field names as its parameter names (``CodeType.replace``), the field names
    and factories in its closure, and its defaults and annotations set: 87 classes of a cold
    query have 29 shapes."""
    seen_default = False
    for f in fields:
        if f.init:
            if not (f.default is MISSING and f.default_factory is MISSING):
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
    set_by_init = [f for f in fields if f.init or f.default_factory is not MISSING]
    kinds = tuple(
        ("factory" if f.default_factory is not MISSING else "arg") if f.init else "call"
        for f in set_by_init
    )
    make = _SHAPES.get((kinds, post_init))
    if make is None:
        make = _SHAPES[kinds, post_init] = _shape(kinds, post_init)
    made = make(
        object.__setattr__,
        _HAS_DEFAULT_FACTORY,
        *(f.name for f in set_by_init),
        *(f.default_factory for f in set_by_init),
    )
    params = [f for f in fields if f.init]
    code = _as_compiled(made.__code__)
    code = code.replace(
        co_varnames=(self_name, *(f.name for f in params), *code.co_varnames[1 + len(params) :])
    )
    defaults = tuple(
        f.default if f.default is not MISSING else _HAS_DEFAULT_FACTORY
        for f in params
        if f.default is not MISSING or f.default_factory is not MISSING
    )
    init = FunctionType(code, space, "__init__", defaults or None, made.__closure__)
    init.__annotations__ = {**{f.name: f.type for f in params}, "return": None}
    return init


def _shape(kinds: tuple[str, ...], post_init: bool) -> Callable[..., Any]:
    """The compiled maker of ``__init__`` functions of one shape (:func:`_init`): its
    arguments are ``object.__setattr__``, the factory sentinel, the names of the fields set,
    their factories."""
    return _maker(("__init__", kinds, post_init))


def _text(key: tuple[Any, ...]) -> str:
    """The source of the ``__create_fn__`` of ``key``: ``("__init__", kinds, post_init)``
    (:func:`_shape`) or ``(name, n)`` (:func:`_compiled`)."""
    if key[0] != "__init__":
        return _method_text(*key)
    kinds, post_init = key[1], key[2]
    names = [f"__dataclass_n{i}__" for i in range(len(kinds))]
    factories = [f"__dataclass_d{i}__" for i in range(len(kinds))]
    params = ["s"]
    body = []
    for i, kind in enumerate(kinds):
        if kind != "call":
            params.append(f"a{i}")
        value = {
            "arg": f"a{i}",
            "call": f"{factories[i]}()",
            "factory": f"{factories[i]}() if a{i} is __dataclass_F__ else a{i}",
        }[kind]
        body.append(f"__dataclass_setattr__(s,{names[i]},{value})")
    if post_init:
        body.append("s.__post_init__()")
    local = ["__dataclass_setattr__", "__dataclass_F__", *names, *factories]
    return (
        f"def __create_fn__({', '.join(local)}):\n def __init__({','.join(params)}):\n"
        + "\n".join(f"  {b}" for b in body or ["pass"])
        + "\n return __init__"
    )


COMPILED: list[tuple[Any, ...]] = []
"""The keys (:func:`_text`) this process compiled, not found in :mod:`rlmcost.frozen_code`."""


def _maker(key: tuple[Any, ...]) -> Callable[..., Any]:
    """The ``__create_fn__`` of :func:`_text`'s source for ``key``: precompiled in
    :mod:`rlmcost.frozen_code` (the same text, its code read from the bytecode cache:
    compiling the 29 shapes of a cold query's classes was ~57 M instructions), else compiled
    (compiled without this module's ``from __future__ import annotations``, as there)."""
    from rlmcost.frozen_code import MAKERS

    made: Any = MAKERS.get(key)  # a function of the generated module, or None
    if made is None:
        COMPILED.append(key)
        space: dict[str, Any] = {}
        exec(compile(_text(key), "<string>", "exec", dont_inherit=True), {}, space)
        made = space["__create_fn__"]
    return made


def _as_compiled(code: CodeType) -> CodeType:
    """``code`` of a function made in a ``__create_fn__``, with the file, first line and
    qualified name the text compiled as ``"<string>"`` gives it (:func:`_maker`)."""
    return code.replace(co_filename="<string>", co_firstlineno=2,
                        co_qualname=f"__create_fn__.<locals>.{code.co_name}")  # fmt: skip


def code_module_text(keys: list[tuple[Any, ...]]) -> str:
    """The source of :mod:`rlmcost.frozen_code` holding the makers of ``keys``."""
    lines = ['"""The compiled makers of ``rlmcost.frozen`` (``__init__`` per shape, ``__eq__`` '
             "and ``__hash__``\nper number of fields), written by "
             '``rlmcost.frozen.code_module_text``: do not edit."""', "",
             "# ruff: noqa", "# mypy: ignore-errors", ""]  # fmt: skip
    for i, key in enumerate(keys):
        lines += ["", _text(key).replace("def __create_fn__(", f"def _m{i}(", 1), ""]
    lines += ["", "MAKERS = {"] + [f"    {key!r}: _m{i}," for i, key in enumerate(keys)] + ["}"]
    return "\n".join(lines) + "\n"


_METHODS: dict[tuple[str, int], CodeType] = {}
"""The compiled code of ``__eq__`` or ``__hash__`` per number of fields (:func:`_method`)."""


def _method(name: str, fields: list[str], space: dict[str, Any]) -> Callable[..., Any]:
    """``__eq__`` (``name``) or ``__hash__`` of these fields as ``_cmp_fn`` and ``_hash_fn`` of
    CPython 3.11.7's ``dataclasses`` write it: ``if other.__class__ is self.__class__: return
    (self.a,self.b,)==(other.a,other.b,)``, else ``NotImplemented``; ``return
    hash((self.a,self.b,))`` (``()`` for no field). Its code is compiled once per number of
    fields from placeholder names and renamed to the fields (``co_names``), the same bytecode
    as there."""
    code = _METHODS.get((name, len(fields)))
    if code is None:
        code = _METHODS[name, len(fields)] = _compiled(name, len(fields))
    names = {f"__dataclass_f{i}__": f for i, f in enumerate(fields)}
    code = code.replace(co_names=tuple(names.get(n, n) for n in code.co_names))
    return FunctionType(code, space, name)


def _compiled(name: str, n: int) -> CodeType:
    """The code of :func:`_method`'s ``name`` over ``n`` placeholder field names."""
    return _as_compiled(_maker((name, n))().__code__)


def _method_text(name: str, n: int) -> str:
    """:func:`_text` of ``__eq__`` or ``__hash__`` over ``n`` placeholder field names."""

    def fields(obj: str) -> str:
        return f"({''.join(f'{obj}.__dataclass_f{i}__,' for i in range(n))})" if n else "()"

    if name == "__eq__":
        body = (f" def __eq__(self,other):\n  if other.__class__ is self.__class__:\n"
                f"   return {fields('self')}=={fields('other')}\n  return NotImplemented")
    else:
        body = f" def __hash__(self):\n  return hash({fields('self')})"
    return f"def __create_fn__():\n{body}\n return {name}"


def _on_first_call(cls: type, name: str, fields: list[str],
                   space: dict[str, Any]) -> Callable[..., Any]:  # fmt: skip
    """A method that, called, makes the method (:func:`_method`), puts it on ``cls`` in its
    place and returns its result."""

    def method(self: Any, *rest: Any) -> Any:
        made = _method(name, fields, space)
        _set(cls, made)
        return made(self, *rest)

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
