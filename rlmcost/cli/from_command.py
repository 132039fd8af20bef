"""The Run of an algorithm command line, for the library: :func:`run_from_command`.

``rlmcost.run_from_command("rlmcost ppo -m 70b --tp 8")`` is the Run that `rlmcost ppo -m 70b
--tp 8` evaluates (its ``--json`` ``run``): the words go through that command's own options
(the click command typer builds from its flag table, :mod:`rlmcost.cli._lazy`) and the Run is
built from the parsed options as the command builds it
(:func:`rlmcost.cli._run.run_from_options`), so a command typed by hand, the same command read
here and an importer's query (:class:`~rlmcost.frameworks.result.ImportedQuery`, whose
``argv()`` is that command's flags) give one Run. Bad input (an unknown command or option, a
bad value, text with unbalanced quotes) is a one-line :class:`~rlmcost.errors.SpecError`.

Imported on first use of ``rlmcost.run_from_command`` (the CLI's own start-up does not load it).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

_PROGRAM = "rlmcost"
"""The program name a command line may start with (the console script of pyproject.toml)."""


def run_from_command(command: str | Sequence[str] | Any, argv: Sequence[str] = ()) -> Run:
    """The :class:`~rlmcost.run.Run` of an algorithm command: ``command`` a command line
    (``"rlmcost ppo -m 70b --tp 8"``, the leading ``rlmcost`` optional, split as a POSIX shell
    splits it), its words (``["ppo", "-m", "70b", "--tp", "8"]``) or an importer's query (an
    :class:`~rlmcost.frameworks.result.ImportedQuery`, e.g.
    ``rlmcost.frameworks.verl.import_verl(path)``: its ``algorithm`` and ``argv()``); ``argv``:
    words added after it (``["--hardware", "h100"]``). The Run is the one the command's
    ``--json`` prints as ``run`` (module docstring); SpecError for what the command rejects.

    >>> import rlmcost
    >>> run = rlmcost.run_from_command("rlmcost ppo -m 70b --tp 8")
    >>> run.algorithm.name, run.models.actor, run.deployment.train.tp
    ('ppo', '70b', 8)
    >>> run_from_command("ppo", ["-m", "70b", "--tp", "8"]) == run
    True
    """
    words = [*_words(command), *_texts(argv, "argv")]
    if words[:1] == [_PROGRAM]:
        words = words[1:]
    if not words:
        raise SpecError("run_from_command: give an algorithm command, e.g. "
                        "'rlmcost ppo -m 70b --tp 8'")  # fmt: skip
    run = run_from_argv(words[0], words[1:])
    check_names(run)  # as the command fails: its names resolve when it evaluates
    return run


def _words(command: object) -> list[str]:
    """The words of ``command`` (text, words, or an importer's query)."""
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError as exc:  # "No closing quotation"
            raise SpecError(f"run_from_command: {command!r:.60}: {exc}") from None
    algorithm, argv = getattr(command, "algorithm", None), getattr(command, "argv", None)
    if isinstance(algorithm, str) and callable(argv):  # an ImportedQuery
        return [algorithm, *_texts(argv(), "the query's argv()")]
    return _texts(command, "command")


def _texts(words: object, name: str) -> list[str]:
    """``words`` as a list of strings, else a SpecError naming ``name``."""
    if isinstance(words, (str, bytes)) or not isinstance(words, Sequence) \
            or not all(isinstance(w, str) for w in words):  # fmt: skip
        raise SpecError(f"run_from_command: {name}={words!r:.60} must be a command line, a list "
                        "of its words or an importer's query (rlmcost.frameworks)")  # fmt: skip
    return list(words)


def run_from_argv(algorithm: str, argv: Sequence[str]) -> Run:
    """The Run of `rlmcost ALGORITHM ARGV`, parsed by that command's own options (the flag
    table) and built as the command builds it (:func:`rlmcost.cli._run.run_from_options`);
    SpecError for a command that is not an algorithm's, an option or value it rejects, or
    ``--help`` (which prints rather than parses). The names it holds are not resolved here
    (`rlmcost validate --rl` replaces a row's models by specs of its own after it parses:
    :func:`check_names` is :func:`run_from_command`'s)."""
    import typer.main

    from rlmcost.algorithms.catalog import algorithms
    from rlmcost.cli import app
    from rlmcost.cli._app import _click_exceptions, choice_message
    from rlmcost.cli._run import run_from_options

    if algorithm not in algorithms():
        other = " (a Run file: rlmcost.load_run)" if algorithm == "run" else ""
        raise SpecError(f"`rlmcost {algorithm}` is not an algorithm command{other}; use one of "
                        f"{', '.join(algorithms())}")  # fmt: skip
    if "--help" in argv:  # the command would print its help and exit: no Run
        raise SpecError(f"`rlmcost {algorithm}`: --help gives no Run; drop it")
    cmd = typer.main.get_command(app).get_command(None, algorithm)  # type: ignore[attr-defined]
    try:
        ctx = cmd.make_context(f"rlmcost {algorithm}", list(argv))
        return run_from_options(ctx.params, algorithm)
    except _click_exceptions.ClickException as exc:  # usage, a bad value (BadParameter)
        text = choice_message(exc.format_message().replace("\n", " ").strip())
        raise SpecError(f"`rlmcost {algorithm}`: {text}") from None


def check_names(run: Run) -> None:
    """Resolve the names ``run`` holds as its evaluation will, so that a Run built from a
    command fails where the command would, with the command's one-line error: its query
    (:func:`rlmcost.placement.query.resolve`: the algorithm, each role's model, the workload,
    the hardware, the calibration profile) and its engines' draft models
    (:func:`rlmcost.placement.speculative.draft_spec`)."""
    from rlmcost.placement.query import resolve
    from rlmcost.placement.speculative import draft_spec

    resolve(run, None)
    dep = run.deployment
    for engine in (dep.engine, *(g.engine for g in dep.groups or () if g.engine is not None)):
        if engine.speculative_tokens:
            draft_spec(engine.speculative_draft)
