"""The ``rlmcost`` command line: typer commands that parse, call the library once, render.

Start-up is kept light: this package imports typer and the command names only; a run imports
and builds the one command it runs (rlmcost.cli._lazy), and sympy, numpy, pandas and rich load
inside the commands that need them.
"""

from __future__ import annotations

import gc
import os
import sys
import types

import typer

from rlmcost.cli._lazy import LazyCommands


def _no_options() -> None:
    """The root takes no options of its own (a callback makes typer build a group, whose
    commands LazyCommands loads when one runs)."""


app = typer.Typer(
    cls=LazyCommands,
    name="rlmcost",
    help=(
        "Work, depth, memory and time of RL post-training (PPO, GRPO, DPO) of LLMs, "
        "from analytical formulas checked against PyTorch."
    ),
    callback=_no_options,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
"""The command line; its commands (rlmcost.cli._lazy.command_modules) load on first use."""


_PLUGINS_OFF = ("__all__", "1", "true")
"""The values of PYDANTIC_DISABLE_PLUGINS that turn every plugin off
(pydantic/plugin/_loader.py, ``get_plugins``, pydantic 2.5-2.13)."""


def _no_plugin_loader() -> None:
    """With every pydantic plugin off, stand in for pydantic's plugin loader.

    pydantic asks ``pydantic.plugin._loader.get_plugins()`` for the plugins of each model it
    builds; that function returns ``()`` at once when PYDANTIC_DISABLE_PLUGINS is one of
    :data:`_PLUGINS_OFF`, but its module imports ``importlib.metadata`` first (with zipfile,
    email, csv: 8-12 ms of a cold query here). The stand-in answers ``get_plugins()`` with the
    same ``()`` and hands any other name on to the real module, which it imports then."""
    name = "pydantic.plugin._loader"
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in _PLUGINS_OFF or name in sys.modules:
        return
    loader = types.ModuleType(name, _no_plugin_loader.__doc__)

    def real(attr: str) -> object:
        if attr.startswith("__"):  # the import system's probes (__path__, ...)
            raise AttributeError(attr)
        del sys.modules[name]
        import importlib

        return getattr(importlib.import_module(name), attr)

    loader.get_plugins = tuple  # type: ignore[attr-defined]  # tuple() is ()
    loader.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[name] = loader


def main() -> None:
    """Console-script entry point.

    pydantic plugins (observability hooks) have nothing to observe in a one-shot calculator,
    and looking for them scans the entry points of every installed distribution (30-70 ms of
    a cold query here); the command line turns them off unless ``PYDANTIC_DISABLE_PLUGINS``
    is set already, and then skips importing the plugin loader (:func:`_no_plugin_loader`).
    The library (``import rlmcost``) leaves them alone.

    When the command is done, the objects it leaves go to the collector's permanent
    generation (``gc.freeze``), which the interpreter's collections at exit skip
    (Python/pylifecycle.c ``Py_FinalizeEx`` -> ``finalize_modules`` ->
    ``_PyGC_CollectNoFail``, CPython 3.11): they traced every object of the modules a query
    loaded (62 M of its ~1,400 M instructions, callgrind; 0.304 -> 0.270-0.276 s medians of
    the cold `ppo --model 70b --tp 8 --json` with bytecode caches, the tree before and after,
    alternated, 2026-12: the walk's cache misses, benchmarks/bench_cli_startup.py). The
    process's memory goes back whole at exit; atexit handlers run and stdout and stderr are
    flushed as before, and the commands close the files they write (``with``,
    ``Path.write_text``), so no buffer waits for a collection."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _no_plugin_loader()
    try:
        app()
    finally:
        gc.freeze()
