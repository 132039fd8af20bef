"""Words the launch-script reader builds from text: a here-document's parts, a default value's
word, an array given with ``--env`` (:mod:`rlmcost.frameworks.shell_script`)."""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_lexer import Part, _Lexer, commands


def doc_parts(body: str, where: str, line: int) -> list[Part]:
    """A here-document's text with an unquoted delimiter (a ``doc`` part, lexed only where a
    command reads it) as the shell reads it: expansions and the ``\\$`` ``\\``` ``\\\\``
    escapes of double quotes, ``"`` literal, backslash-newline joined; nothing split."""
    inner = _Lexer(body, where)
    inner.in_doc, inner.line = True, line
    return inner.word(True) or [("lit", "", True)]


def default_word(arg: str) -> list[Part]:
    """The word after ``:-``/``:=`` in ``${VAR:-word}``, its own expansions kept."""
    found = commands(f'"{arg}"', "a default value")
    return found[0].words[0] if found else [("lit", "", True)]


def env_words(name: str, value: str) -> list[str]:
    """An array given with --env: its words, quoted as a shell would read them."""
    import shlex  # only here: a numeric query never loads it (tests/test_cli_startup)

    try:
        return shlex.split(value)
    except ValueError as exc:
        raise SpecError(f"--env {name}: {exc}; quote its words as a shell would") from None
