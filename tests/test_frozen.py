"""``rlmcost.frozen.dataclass``: a frozen class behaves as ``dataclasses.dataclass(frozen=True)``
makes it. The reference is the standard library's decorator itself, applied to the same class
body; every check runs on both."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from dataclasses import FrozenInstanceError, field  # noqa: F401  (the class bodies use it)
from pathlib import Path
from typing import Any

import pytest

from rlmcost import frozen
from rlmcost.frozen import dataclass


def _both(body: str) -> tuple[Any, Any]:
    """The class of ``body`` (source of a class named C) made by the standard decorator and by
    rlmcost.frozen, both defined in this module's namespace."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=True), dataclass(frozen=True)):
        space = dict(globals())
        exec(body, space)
        made.append(decorate(space["C"]))
    return made[0], made[1]


PLAIN = """
class C:
    '''A class.'''
    a: int
    b: str = "x"
    c: tuple[int, ...] = field(default_factory=tuple)
    d: float = field(default=0.5, compare=False, repr=False)
    e: tuple[int, ...] = field(default=(), hash=False)
"""

UNDOCUMENTED = """
class C:
    a: int
    b: dict[str, int] = field(default_factory=dict)
"""

POST_INIT = """
class C:
    a: int
    twice: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "twice", 2 * self.a)
"""

OWN_HASH = """
class C:
    a: int
    b: int = 0

    def __hash__(self) -> int:
        return self.a
"""

OWN_EQ = """
class C:
    a: int

    def __eq__(self, other: object) -> bool:
        return True
"""

SELF_FIELD = """
class C:
    self: int
    other: int = 1
"""

FACTORIES = """
class C:
    a: int
    b: list[int] = field(default_factory=list)
    c: dict[str, int] = field(default_factory=dict, init=False)
    d: str = field(default="z", init=False)
    e: int = 3

    def __post_init__(self) -> None:
        self.c["n"] = len(self.b)
"""

EMPTY = """
class C:
    pass
"""


@pytest.mark.parametrize(
    "body", [PLAIN, UNDOCUMENTED, POST_INIT, OWN_HASH, OWN_EQ, SELF_FIELD, FACTORIES, EMPTY]
)
def test_same_class_as_the_standard_decorator(body: str) -> None:
    std, ours = _both(body)
    assert [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare)
        for f in dataclasses.fields(std)
    ] == [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare)
        for f in dataclasses.fields(ours)
    ]
    assert str(inspect.signature(std)) == str(inspect.signature(ours))
    assert std.__init__.__annotations__ == ours.__init__.__annotations__
    assert std.__doc__ == ours.__doc__
    assert std.__match_args__ == ours.__match_args__
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        assert (getattr(std, name) is None) == (getattr(ours, name) is None), name
        if name in std.__dict__ and std.__dict__[name] is not None:
            assert ours.__dict__[name].__qualname__ == std.__dict__[name].__qualname__


def _outcome(fn: Any, *args: Any) -> Any:
    """``fn(*args)``, or the type of the exception it raised."""
    try:
        return fn(*args)
    except Exception as exc:
        return type(exc)


def _instances(cls: Any) -> list[Any]:
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    if not names:
        return [cls(), cls()]
    if names[0] == "self":
        return [cls(1), cls(1, 2), cls(self=2)]
    out = [cls(1), cls(1), cls(2)]
    if "b" in names and "c" in names:
        out += [cls(1, "y", (3,)), cls(1, d=9.0), cls(1, e=(4,))]
    return out


@pytest.mark.parametrize(
    "body", [PLAIN, UNDOCUMENTED, POST_INIT, OWN_HASH, OWN_EQ, SELF_FIELD, FACTORIES, EMPTY]
)
def test_same_behaviour_as_the_standard_decorator(body: str) -> None:
    std, ours = _both(body)
    for x, y in zip(_instances(std), _instances(ours), strict=True):
        assert repr(x).replace(std.__qualname__, "C") == repr(y).replace(ours.__qualname__, "C")
        assert vars(x) == vars(y)
        assert _outcome(hash, x) == _outcome(hash, y)  # the hash of the same field tuple
        assert copy.deepcopy(y) == y
        assert (x == x, x == 1, x != x) == (y == y, y == 1, y != y)
        for a in [f.name for f in dataclasses.fields(std)] + ["new"]:
            for obj in (x, y):
                with pytest.raises(FrozenInstanceError):
                    setattr(obj, a, 0)
                with pytest.raises(FrozenInstanceError):
                    delattr(obj, a)
    pairs = list(zip(_instances(std), _instances(ours), strict=True))
    for x1, y1 in pairs:
        for x2, y2 in pairs:
            assert (x1 == x2) == (y1 == y2)


def test_same_errors_for_bad_arguments() -> None:
    std, ours = _both(FACTORIES)
    for args, kwargs in [
        ((), {}),
        ((1, [], 2, 3), {}),
        ((1,), {"z": 3}),
        ((1,), {"a": 2}),
        ((1,), {"c": {}}),
    ]:
        assert _message(std, args, kwargs) == _message(ours, args, kwargs).replace(
            ours.__qualname__, std.__qualname__
        )
    assert _message(std, (1,), {}) is None
    assert vars(std(1, [5])) == vars(ours(1, [5])) == {"a": 1, "b": [5], "c": {"n": 1}, "e": 3}
    assert std(1).b is not std(1).b and ours(1).b is not ours(1).b  # a new list each time


def _message(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    try:
        cls(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return None


def test_eq_and_hash_compiled_on_first_call_then_the_same_function() -> None:
    std, ours = _both(OWN_EQ.replace("__eq__", "_unused"))
    stub = ours.__dict__["__hash__"]
    assert hash(ours(1)) == hash(std(1))
    assert ours.__dict__["__hash__"] is not stub  # replaced by the compiled text
    assert ours.__dict__["__hash__"].__code__.co_filename == "<string>"
    assert ours(1) == ours(1) and ours(1) != ours(2)
    assert ours.__dict__["__eq__"].__code__.co_filename == "<string>"


@pytest.mark.parametrize("fields", [0, 1, 2, 5])
def test_eq_and_hash_are_the_standard_librarys_bytecode(fields: int) -> None:
    """The methods made from one compiled code per number of fields, renamed to the class's
    fields, run the bytecode CPython's ``dataclasses`` compiles for the class (its text)."""
    body = "class C:\n" + "".join(f"    f{i}x: int = {i}\n" for i in range(fields)) + "    pass\n"
    std, ours = _both(body)
    a, b = ours(), ours()
    assert (a == b, hash(a)) == (True, hash(std()))
    for name in ("__eq__", "__hash__"):
        mine, theirs = ours.__dict__[name].__code__, std.__dict__[name].__code__
        assert (mine.co_code, mine.co_names, mine.co_consts, mine.co_varnames) == (
            theirs.co_code, theirs.co_names, theirs.co_consts, theirs.co_varnames)


def test_subclass_attributes_and_a_cycle_in_repr() -> None:
    std, ours = _both("class C:\n    a: Any\n")

    def cycle(cls: Any) -> str:
        items: list[Any] = []
        obj = cls(items)
        items.append(obj)
        return repr(obj)

    assert cycle(std).replace(std.__qualname__, "C") == cycle(ours).replace(ours.__qualname__, "C")

    for cls in (std, ours):
        sub = type("Sub", (cls,), {})
        obj = sub(1)
        obj.extra = 2  # a subclass takes other names
        assert obj.extra == 2
        with pytest.raises(FrozenInstanceError):
            obj.a = 3


@dataclass(frozen=True)
class Kept:
    """A class pickle finds by name."""

    a: int
    b: tuple[str, ...] = ()


def test_pickle_and_replace() -> None:
    obj = Kept(1, ("x",))
    assert pickle.loads(pickle.dumps(obj)) == obj
    assert hash(pickle.loads(pickle.dumps(obj))) == hash(obj)
    assert dataclasses.replace(obj, a=2) == Kept(2, ("x",))
    assert dataclasses.asdict(obj) == {"a": 1, "b": ("x",)}


def test_refusals() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        exec("@dataclass(frozen=True)\nclass C:\n    a: int = 0\n    b: int\n", globals())
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        exec(
            "@dataclass(frozen=True)\nclass C:\n    a: int\n"
            "    def __setattr__(self, n, v): pass\n",
            globals(),
        )
    with pytest.raises(TypeError, match="kw_only"):
        exec("@dataclass(frozen=True)\nclass C:\n    a: int = field(kw_only=True)\n", globals())
    base = dataclasses.dataclass(frozen=True)(type("B", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="inherits only from others of it"):
        dataclass(frozen=True)(type("C", (base,), {}))


def test_other_uses_are_the_standard_decorator() -> None:
    @dataclass
    class Mutable:
        a: int

    m = Mutable(1)
    m.a = 2
    assert Mutable.__dataclass_params__.eq and not Mutable.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert frozen.dataclass(frozen=True, order=True)(type("O", (), {})).__lt__


def test_the_code_module_is_its_generated_text() -> None:
    """rlmcost/frozen_code.py is what ``code_module_text`` writes for its keys (edited by hand,
    it would hold code the text does not say)."""
    from rlmcost import frozen_code

    path = Path(frozen_code.__file__)
    assert path.read_text() == frozen.code_module_text(list(frozen_code.MAKERS)), REGENERATE


REGENERATE = ("regenerate it: python -c 'from pathlib import Path; from rlmcost import frozen, "
              "frozen_code as c; Path(c.__file__).write_text(frozen.code_module_text([*c.MAKERS, "
              "*NEW_KEYS]))' with NEW_KEYS the keys a cold query printed")  # fmt: skip

_COMPILED_PROBE = """
import contextlib, io, sys
sys.argv = ["rlmcost", *sys.argv[1:]]
from rlmcost.cli import main
from rlmcost import frozen
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(frozen.COMPILED)
"""


@pytest.mark.parametrize("args", [("ppo", "--model", "70b", "--tp", "8", "--json"),
                                  ("grpo", "--model", "8b", "--json")])  # fmt: skip
def test_a_cold_query_compiles_no_method(args: tuple[str, ...]) -> None:
    """Every ``__init__`` shape and ``__eq__``/``__hash__`` a cold query makes is in
    rlmcost.frozen_code; a new one prints its key (add it: ``code_module_text``)."""
    r = subprocess.run([sys.executable, "-c", _COMPILED_PROBE, *args], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parents[1], check=True)  # fmt: skip
    assert r.stdout.strip() == "[]", f"{r.stdout}; {REGENERATE}"
