"""rlmcost's dataclasses, made by the command line, compile their methods besides ``__init__``
on first call.

CPython 3.11 and 3.12 compile each method a dataclass generates from its source text when the
class is made, one ``exec`` per method (Lib/dataclasses.py, ``_create_fn``, called by
``_init_fn``, ``_repr_fn``, ``_cmp_fn``, ``_hash_fn`` and ``_frozen_get_del_attr``): a frozen
class gets ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__``. Making the ~90 rlmcost dataclasses a numeric query imports took 222 M of its
1,633 M instructions (callgrind, `rlmcost ppo --model 70b --tp 8 --json`, 2026-12; ~20 ms of
its 0.30 s, benchmarks/bench_cli_startup.py), although the query calls few of those methods
besides ``__init__``: a frozen class's ``__setattr__`` and ``__delattr__`` only raise, its
``__repr__`` serves debugging, and ``__eq__`` and ``__hash__`` only the classes that key a
memo (of the 441 methods deferred there, 21 are called).

:func:`defer_methods` has ``_create_fn`` compile ``__init__`` at once and hand back, for any
other method of a class in an ``rlmcost`` module, a stand-in that compiles the method as
dataclasses would (the same ``_create_fn``, the same arguments) on its first call and puts it
in its own place on the class, so later calls (a memo's ``__hash__`` and ``__eq__`` in a
plan's sweep) go straight to the compiled method. The methods behave as before; the
dependencies' dataclasses are left alone. CPython 3.13 builds a class's methods with one
``exec`` (``_FuncBuilder``) and has no ``_create_fn``: there this does nothing. The library
(``import rlmcost``) does not call it; the command line does, before a command's modules load
(:func:`rlmcost.cli.main`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

_OWN = "rlmcost"
"""The modules whose dataclasses defer their methods: rlmcost's own."""


def defer_methods() -> None:
    """Have dataclasses made from now on in rlmcost's modules compile their methods, but
    ``__init__``, on first call (module docstring); a second call changes nothing."""
    create = getattr(dataclasses, "_create_fn", None)
    if create is None or getattr(create, "deferring", False):
        return
    dataclasses._create_fn = _deferring(create)  # type: ignore[attr-defined]


def _deferring(create: Callable[..., Any]) -> Callable[..., Any]:
    """``create`` (dataclasses' ``_create_fn``) answering :func:`_on_first_call` stand-ins for
    the methods of rlmcost's classes other than ``__init__``."""

    def create_fn(name: str, *args: Any, **kwargs: Any) -> Any:
        module = (kwargs.get("globals") or {}).get("__name__", "")
        if name == "__init__" or not (module == _OWN or module.startswith(_OWN + ".")):
            return create(name, *args, **kwargs)
        return _on_first_call(name, lambda: create(name, *args, **kwargs))

    create_fn.deferring = True  # type: ignore[attr-defined]
    return create_fn


def _on_first_call(name: str, compile_method: Callable[[], Any]) -> Any:
    """A method ``name`` that compiles itself (``compile_method``) on its first call and puts
    the compiled method in its place on the class that holds it."""
    compiled: list[Any] = []

    def stand_in(self: Any, *args: Any) -> Any:
        if not compiled:
            method = compile_method()
            method.__qualname__ = stand_in.__qualname__  # dataclasses names it for the class
            compiled.append(method)
            for cls in type(self).__mro__:  # the class that holds it (self's or a base)
                if cls.__dict__.get(name) is stand_in:
                    setattr(cls, name, method)
                    break
        return compiled[0](self, *args)

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in
