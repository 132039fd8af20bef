"""The command line's dataclasses that compile their methods on first call
(rlmcost.cli._dataclass_methods) behave as dataclasses' own: the same results, the compiled
method in its place after the first call, the dependencies' classes untouched; and a query
run by ``python -m rlmcost`` (which defers) answers as the app called in-process (which does
not)."""

import dataclasses
import inspect
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli._dataclass_methods import _deferring

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not hasattr(dataclasses, "_create_fn"), reason="CPython >= 3.13 has no _create_fn to defer"
)

_SOURCE = """
from dataclasses import dataclass, field

@dataclass(frozen=True)
class Point:
    x: int
    y: tuple = ()
    z: float = field(default=0.5, compare=False)

@dataclass(frozen=True)
class Labelled(Point):
    label: str = "a"

    def __repr__(self):
        return "Labelled/" + super().__repr__()

@dataclass(order=True)
class Mutable:
    n: int
"""


def _module(name: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``_SOURCE`` made as module ``name`` (dataclasses read a class's module globals)."""
    mod = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, mod)
    exec(compile(_SOURCE, name, "exec"), mod.__dict__)  # noqa: S102
    return mod


def _made_at_once(cls: type, name: str) -> bool:
    """Whether ``cls`` holds dataclasses' compiled method (``__repr__`` in its wrapper)."""
    return inspect.unwrap(cls.__dict__[name]).__code__.co_name == name


def _deferred(name: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``_SOURCE`` made as module ``name`` with the methods deferred as the CLI defers them."""
    create = dataclasses._create_fn  # type: ignore[attr-defined]
    monkeypatch.setattr(dataclasses, "_create_fn", _deferring(create))
    try:
        return _module(name, monkeypatch)
    finally:
        monkeypatch.setattr(dataclasses, "_create_fn", create)


def test_methods_compile_on_first_call_and_answer_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own = _deferred("rlmcost._probe_dataclasses", monkeypatch)
    ref = _module("probe_dataclasses", monkeypatch)  # dataclasses' own methods
    P, L, M = own.Point, own.Labelled, own.Mutable
    assert _made_at_once(P, "__init__") and not _made_at_once(P, "__eq__")
    assert not _made_at_once(P, "__hash__") and not _made_at_once(M, "__lt__")
    # eq and hash as dataclasses make them (z is left out of both), then in place
    a, b = P(1, (2,), 0.1), P(1, (2,), 0.9)
    assert a == b and hash(a) == hash(b) == hash(ref.Point(1, (2,), 0.3))
    assert a != P(2) and P.__eq__(a, 3) is NotImplemented
    assert _made_at_once(P, "__eq__") and _made_at_once(P, "__hash__")
    assert P.__eq__.__qualname__ == "Point.__eq__"
    # a frozen class refuses attributes as before, with dataclasses' error
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        a.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del a.y  # type: ignore[misc]
    # a subclass's own method calling the base's deferred one; the base's made in place
    assert repr(L(1)) == repr(ref.Labelled(1)) == "Labelled/Labelled(x=1, y=(), z=0.5)"
    assert repr(a) == repr(ref.Point(1, (2,), 0.1))
    assert L(1) != P(1) and L(1, label="b") != L(1)
    # order methods of a mutable class; its instances still take attributes
    assert sorted([M(3), M(1), M(2)]) == [M(1), M(2), M(3)] and M(1) <= M(1)
    m = M(1)
    m.n = 4
    assert m == M(4) and M.__hash__ is None


def test_the_dependencies_classes_compile_their_methods_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dep = _deferred("rlmcostless_dependency", monkeypatch)  # a name rlmcost only begins
    for name in ("__init__", "__eq__", "__repr__", "__setattr__"):
        assert _made_at_once(dep.Point, name), name


_ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}


@pytest.mark.parametrize(
    "args", [("ppo", "--model", "70b", "--tp", "8"), ("grpo", "--model", "8b", "--batch", "16")]
)
def test_a_query_answers_as_the_app_in_process(args: tuple[str, ...]) -> None:
    """``python -m rlmcost`` (rlmcost.cli.main: methods deferred) prints the JSON that the app
    prints called in-process (no deferral: the tests do not run main)."""
    assert not hasattr(dataclasses._create_fn, "deferring")
    r = subprocess.run(
        [sys.executable, "-m", "rlmcost", *args, "--json"],
        capture_output=True, text=True, cwd=ROOT, env=_ENV, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    direct = CliRunner().invoke(app, [*args, "--json"])
    assert direct.exit_code == 0, direct.output
    assert json.loads(r.stdout) == json.loads(direct.stdout)


_FREEZE_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0, file=sys.stderr))
sys.argv = ["rlmcost", "grpo", "--model", "8b", "--json"]
from rlmcost.cli import main
main()
"""


def test_main_leaves_the_objects_to_the_exit_frozen() -> None:
    """rlmcost.cli.main moves what the command leaves to the permanent generation (the exit's
    collections skip it), and the answer still comes whole."""
    r = subprocess.run([sys.executable, "-c", _FREEZE_PROBE], capture_output=True, text=True,
                       cwd=ROOT, env=_ENV, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["run"]["models"]["actor"]
    assert r.stderr.strip().splitlines()[-1] == "frozen True"


@pytest.mark.parametrize(
    "args", [("ppo", "--model", "70b", "--tp", "3"), ("grpo", "--model", "8b", "--batch", "0")]
)
def test_a_bad_query_fails_as_the_app_in_process(args: tuple[str, ...]) -> None:
    """User errors (a validator's, pydantic's) read the same one line, exit code 2."""
    r = subprocess.run([sys.executable, "-m", "rlmcost", *args], capture_output=True,
                       text=True, cwd=ROOT, env=_ENV, check=False)  # fmt: skip
    direct = CliRunner().invoke(app, list(args))
    assert r.returncode == direct.exit_code == 2
    assert r.stderr.strip().startswith("error: ")
    # the same line, but the program's name (`python -m rlmcost` runs as it)
    assert r.stderr.strip().replace("python -m rlmcost", "rlmcost") == direct.stderr.strip()
