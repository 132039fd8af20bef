"""Start-up of a numeric query: what it imports (asserted on sys.modules in a fresh process,
never on time; benchmarks/bench_cli_startup.py prints the times) and the option conversion
typer builds only for the options given."""

import json
import os
import site
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer._coercion import RuntimeParam

from rlmcost.cli._app import _UNSET_FIRST, App

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import contextlib, io, json, sys
before = set(sys.modules)
sys.argv = ["rlmcost", *json.loads(sys.argv[1])]
from rlmcost.cli import main
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
json.loads(out.getvalue())  # the query answered
print(json.dumps(sorted(set(sys.modules) - before)))
"""


_ENV = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}


def imported_by(*args: str) -> set[str]:
    """The modules a fresh interpreter imports to answer `rlmcost ARGS` (those it had at
    start-up left out). It starts without ``site`` (-S), whose .pth files may import modules
    of their own, with the installed packages on its path."""
    path = os.pathsep.join([str(ROOT), *site.getsitepackages()])
    r = subprocess.run(
        [sys.executable, "-S", "-c", _PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**_ENV, "PYTHONPATH": path},
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.splitlines()[-1]))


NEVER_NUMERIC = ("sympy", "numpy", "pandas", "rich", "matplotlib", "scipy", "torch", "yaml")
"""Heavy packages a numeric --json query has no use for (DESIGN.md 7: numeric queries use the
compiled forms, no sympy; rich renders tables for people only)."""


PATH_MODULES = tuple(f"rlmcost.{m}" for m in (
    "perf.moe_ffn", "perf.moe_router", "perf.moe_eager_ops", "perf.megatron_rope",
    "perf.areal_sync", "perf.disk_refit", "perf.packed_refit",
    "placement.megatron_suspend", "deployment.sglang_limits", "deployment.files",
    "placement.groups", "deployment.group_brackets"))  # fmt: skip
"""Modules a numeric query imports only on the path that uses them (each imported there)."""


@pytest.mark.parametrize(
    "args",
    [
        ("ppo", "--model", "70b", "--tp", "8", "--json"),
        ("grpo", "--model", "8b", "--json"),
    ],
)
def test_numeric_query_imports_no_heavy_package(args: tuple[str, ...]) -> None:
    mods = imported_by(*args)
    roots = {m.split(".")[0] for m in mods}
    assert not roots & set(NEVER_NUMERIC), sorted(roots & set(NEVER_NUMERIC))
    # the JSON answer renders no table: the human renderer stays unloaded
    assert "rlmcost.cli.algorithms_render" not in mods
    assert "rlmcost.cli._help" not in mods  # help formatting loads for --help only
    # no scan for pydantic plugins (the CLI turns them off): no importlib.metadata, and
    # package data read beside the modules: no importlib.resources
    assert not {"importlib.metadata", "importlib.resources", "zipfile"} & mods
    # stdlib modules only some paths use load there: statistics (NormalDist, lognormal
    # lengths; ~2.5 ms with its imports) and shlex (Run.to_command)
    assert not {"statistics", "shlex"} & mods
    # no calibration profile ships for the default hardware: the Profile model stays unbuilt;
    # a text-only model needs no vision tower formulas
    assert not {"rlmcost.calibrate.profile", "rlmcost.specs.hf_vision"} & mods
    # without --placement nothing is sized: the placements' comparison stays unloaded
    assert "rlmcost.reports.placement" not in mods
    # modules of paths a dense model on nemo-rl's default deployment does not take load
    # where used: MoE FFN terms, unfused RoPE, disk and packed refits, AReaL's hand-offs,
    # Megatron's suspend, SGLang's limits, deployment files, --groups parsing
    assert not set(PATH_MODULES) & mods, sorted(set(PATH_MODULES) & mods)
    # the generated blocks load one function at a time: a query needs a part of them
    from rlmcost.compiled.blocks_gen import NAMES

    loaded = [m for m in mods if m.startswith("rlmcost.compiled.blocks_gen._")]
    assert 0 < len(loaded) < len(NAMES) / 2, (len(loaded), len(NAMES))


def _probe_app() -> typer.Typer:
    app = App()

    @app.command()
    def probe(
        given: Annotated[int | None, typer.Option(min=1)] = None,
        unset: Annotated[int | None, typer.Option(min=1)] = None,
        many: Annotated[list[str] | None, typer.Option()] = None,
        default: Annotated[int, typer.Option(min=1)] = 4,
    ) -> None:
        print(json.dumps([given, unset, many, default]))

    return app


def test_options_convert_only_given_values() -> None:
    """An unset option converts to None (or () when repeated) without typer's adapter; a given
    or defaulted one through typer's own conversion, its errors unchanged."""
    command = typer.main.get_command(_probe_app())
    ctx = command.make_context("probe", ["--given", "3"])
    assert (ctx.params["given"], ctx.params["unset"], ctx.params["default"]) == (3, None, 4)
    assert ctx.params["many"] in ((), [], None)  # typer's own value for an unset list
    built = {p.name: p._runtime_param for p in command.params}
    assert built["unset"] is _UNSET_FIRST and built["many"] is _UNSET_FIRST
    assert isinstance(built["given"], RuntimeParam) and isinstance(built["default"], RuntimeParam)
    with pytest.raises(typer.BadParameter, match="greater than or equal to 1"):
        command.make_context("probe", ["--given", "0"])
    with pytest.raises(typer.BadParameter, match="valid integer"):
        command.make_context("probe", ["--unset", "x"])


_LOADER_PROBE = """
import os, sys
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
from rlmcost.cli import _no_plugin_loader
_no_plugin_loader()
import pydantic

class M(pydantic.BaseModel):
    x: int

assert M(x="3").x == 3  # pydantic builds and validates as before
from pydantic.plugin._loader import get_plugins
assert tuple(get_plugins()) == ()
assert "importlib.metadata" not in sys.modules
import pydantic.plugin._loader as loader
assert loader.PYDANTIC_ENTRY_POINT_GROUP == "pydantic"  # any other name: the real module's
assert sys.modules["pydantic.plugin._loader"].__file__.endswith("_loader.py")
print("ok")
"""


def test_plugin_loader_stand_in_answers_as_pydantic_does() -> None:
    """With plugins off, the stand-in gives pydantic no plugins, as pydantic's loader does,
    and hands every other name on to the real loader."""
    r = subprocess.run(
        [sys.executable, "-S", "-c", _LOADER_PROBE],
        capture_output=True,
        text=True,
        env={**_ENV, "PYTHONPATH": os.pathsep.join([str(ROOT), *site.getsitepackages()])},
        check=False,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_plugin_loader_left_alone_when_plugins_are_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlmcost.cli import _no_plugin_loader

    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    before = sys.modules.get("pydantic.plugin._loader")
    _no_plugin_loader()
    assert sys.modules.get("pydantic.plugin._loader") is before


def test_spec_models_annotate_their_fields_with_objects() -> None:
    """The numeric query's pydantic models read their fields' annotations as objects (their
    modules have no ``from __future__ import annotations``): as strings, pydantic compiles
    each one (a ForwardRef) at every start."""
    from pydantic import BaseModel

    from rlmcost.deployment import engine, overhead, pipeline_split, spec
    from rlmcost.run import spec as run_spec
    from rlmcost.run import workload_spec
    from rlmcost.specs import hardware, model, workload

    modules = (engine, overhead, pipeline_split, spec, run_spec, workload_spec, hardware, model,
               workload)
    models = [c for m in modules for c in vars(m).values() if isinstance(c, type)
              and issubclass(c, BaseModel) and c.__module__ == m.__name__]  # fmt: skip
    assert len(models) >= 14
    strings = [(c.__name__, k) for c in models for k, v in c.__annotations__.items()
               if isinstance(v, str)]  # fmt: skip
    assert not strings, strings
