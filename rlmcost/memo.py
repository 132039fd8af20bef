"""Memoization of the evaluation's pure functions, shared by every deployment of a query.

The exact evaluation of a deployment (``evaluation.deployment``) calls the same pure
functions many times over the deployments of one query (the planner's candidates differ in a
few layout or engine settings; most of their groups, passes and lengths recur): a forward's or
training step's prediction for a layout, the memory of a layout, the work over a set of
lengths. :func:`memoized` caches such a function on its arguments, so each value is computed
once per process and returned as computed, the same object, bit for bit.

Keys are the arguments with their types (``1``, ``1.0`` and ``True`` are equal in Python but
are different keys here), so a cached value is only returned for arguments that would have
computed it. Arguments that cannot be hashed (a mapping given for an ``Arch``) bypass the
cache. Exceptions are not cached. A function whose result is mutable gets ``copy``: the cache
keeps its own value and hands out copies.

:func:`per_object` keeps a value derived from an object that is never changed (a group's
estimate) by the object's identity, with no hashing of the object (:func:`per_instance` on the
object itself, :func:`by_identities` by several objects' identities); :class:`kept_property` an
attribute computed once per object; :func:`collector_paused` pauses the cyclic garbage
collector over a batch of evaluations that keeps its results.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, Generic, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

MAX_ENTRIES = 65536
"""Entries per memoized function before its cache starts over (bounds the memory a long
search holds; a value is recomputed, never changed, after a reset)."""

_CACHES: list[dict[Any, Any]] = []
_PLAIN = [0]  # depth of plain() blocks: nothing is kept or looked up while > 0


def enabled() -> bool:
    """Whether memoized values are kept and used (False inside :func:`plain`)."""
    return not _PLAIN[0]


@contextmanager
def plain() -> Iterator[None]:
    """Evaluate without any memoized value (the path the memoized one is tested equal to)."""
    _PLAIN[0] += 1
    try:
        yield
    finally:
        _PLAIN[0] -= 1


def memoized(copy: Callable[[Any], Any] | None = None,
             max_entries: int = MAX_ENTRIES) -> Callable[[F], F]:  # fmt: skip
    """Decorator: cache a pure function on its (hashable) arguments and their types (module
    docstring); ``copy`` is applied to every value handed out."""

    def deco(fn: F) -> F:
        cache: dict[Any, Any] = {}
        _CACHES.append(cache)

        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _PLAIN[0]:
                return fn(*args, **kwargs)
            key: tuple[Any, ...] = (args, tuple(map(type, args)))
            if kwargs:  # by name in the caller's order (another order: another key)
                items = tuple(kwargs.items())
                key = (*key, items, tuple(type(v) for _, v in items))
            try:
                out = cache[key]
            except KeyError:
                out = fn(*args, **kwargs)
                if len(cache) >= max_entries:
                    cache.clear()
                cache[key] = out
            except TypeError:  # an unhashable argument: computed afresh
                return fn(*args, **kwargs)
            return out if copy is None else copy(out)

        wrapper.__wrapped__ = fn
        return wrapper  # type: ignore[return-value]

    return deco


def per_object(max_entries: int = 4096) -> Callable[[F], F]:
    """Decorator: cache ``fn(obj, *args)`` per object ``obj`` (by identity, the object kept
    beside its value so that its id is not reused) and hashable ``args``, for values derived
    from an object never changed after it is made (a group's estimate, shared by the
    deployments of a query); nothing kept inside :func:`plain`."""

    def deco(fn: F) -> F:
        cache: dict[Any, Any] = {}
        _CACHES.append(cache)

        @wraps(fn)
        def wrapper(obj: Any, *args: Any) -> Any:
            if _PLAIN[0]:
                return fn(obj, *args)
            key = (id(obj), args)
            hit = cache.get(key)
            if hit is not None and hit[0] is obj:
                return hit[1]
            out = fn(obj, *args)
            if len(cache) >= max_entries:
                cache.clear()
            cache[key] = (obj, out)
            return out

        wrapper.__wrapped__ = fn
        return wrapper  # type: ignore[return-value]

    return deco


def per_instance(fn: F) -> F:
    """Decorator: :func:`per_object` with the value kept on the object itself, in one dict
    per object (attribute ``_kept_values``, set past a frozen dataclass's ``__setattr__``)
    under the function's name and ``args``: the value lives and dies with its object, and no
    table entry (a key and an (object, value) pair per value) is kept beside it for the
    cyclic collector to walk. For objects never changed after they are made, with a
    ``__dict__`` (a group's estimate, a transfer); nothing kept inside :func:`plain`."""
    name = fn.__qualname__

    @wraps(fn)
    def wrapper(obj: Any, *args: Any) -> Any:
        if _PLAIN[0]:
            return fn(obj, *args)
        try:
            kept = obj._kept_values
        except AttributeError:
            kept = {}
            object.__setattr__(obj, "_kept_values", kept)
        key = (name, args) if args else name
        try:
            return kept[key]
        except KeyError:
            out = kept[key] = fn(obj, *args)
            return out

    wrapper.__wrapped__ = fn
    return wrapper  # type: ignore[return-value]


class kept_property(Generic[T]):  # noqa: N801 - used as a decorator, like ``property``
    """``functools.cached_property`` without its lock (Python 3.11 takes an RLock on every
    first access, a fifth of the cost of a small property): the value is computed on the
    first access and stored in the instance's ``__dict__``, where later reads find it
    before this (non-data) descriptor. For objects one thread builds and reads (a group's
    model during its estimate)."""

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> kept_property[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused inside (resumed after when it was on), for a batch
    of evaluations that keeps its results: an evaluation's objects are freed by reference
    counting (the planner's sweep of 3,264 deployments of PPO Llama-3.1-70B on 32 A100 leaves
    no cyclic garbage), while the collector would walk the growing list of kept results again
    and again (about a fifth of the batch's time on that sweep,
    ``benchmarks/bench_rl_eval.py``)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def by_identities(kept: dict[Any, Any], objs: tuple[Any, ...], compute: Callable[[], T],
                  most: int = 4096, also: tuple[Any, ...] = ()) -> T:  # fmt: skip
    """``compute()`` kept in ``kept`` (a :func:`table`) by the identities of ``objs`` (held
    beside the value, so that no id is reused), for a value derived from objects never changed
    after they are made (a Run's validated sections, which the planner's candidates share; a
    deployment's group estimates), with no hashing of them (a pydantic model hashes its
    fields in Python at each ``hash``) and hashable values ``also``; ``most`` values at once
    (1: the last call's, for two readers of one evaluation); nothing kept inside
    :func:`plain`. An exception is not kept (raised again at each call). A key's ids are the
    objects' own: each entry holds its objects, so while it is kept no other object can take
    one of their ids (no identity check on a hit). An entry is one tuple, the value then the
    objects (not the caller's tuple of objects beside the value: one object fewer per entry
    for the cyclic collector to walk)."""
    if _PLAIN[0]:
        return compute()
    key = (*map(id, objs), also)
    hit = kept.get(key)
    if hit is not None:
        return hit[0]
    out = compute()
    if len(kept) >= most:
        kept.clear()
    kept[key] = (out, *objs)
    return out


class Hashed:
    """A value as a key, hashed once: compared by identity first, then by hash and value (a
    key part made once per object, e.g. by :func:`by_identities`, that many keys hold)."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: tuple[Any, ...]) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Hashed) and self._hash == other._hash and self.value == other.value
        )


def table() -> dict[Any, Any]:
    """A new dict that :func:`clear_all` empties (a cache kept outside the decorators)."""
    out: dict[Any, Any] = {}
    _CACHES.append(out)
    return out


def clear_all() -> None:
    """Empty every memoized function's cache (e.g. before timing a cold evaluation)."""
    for c in _CACHES:
        c.clear()
