"""Words the launch-script reader builds from text: a here-document's parts, a default value's
word, an array given with ``--env``, a word's text; the reader's limits and the placeholder
marks of values it does not know (:mod:`rlmcost.frameworks.shell_script`)."""

from __future__ import annotations

import re

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_lexer import Part, _Lexer, commands

MAX_SCRIPT_BYTES = 1 << 20
"""Largest script read (1 MiB; the frameworks' launch scripts are a few KiB)."""

MAX_SOURCE_DEPTH = 8
"""Deepest chain of ``source`` (or of function calls) followed (a script sourcing itself
would never end)."""

ONE, MANY = "\x00", "\x01"
"""Placeholder marks: ``ONE + var + ONE`` stands for one word's worth of an unknown value,
``MANY + var + MANY`` for an unknown number of words (an array, ``$@``)."""

MARK = re.compile("([\x00\x01])([^\x00\x01]*)\\1")


def word_text(word: list[Part]) -> str:
    """A word's literal text (expansions as written), for matching names and messages."""
    return "".join(t if k == "lit" else f"${{{t}}}" if k == "var" else f"$({t})"
                   for k, t, _ in word)  # fmt: skip


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


_BROKEN_CONTINUATION = re.compile(r"(?<=[ \t])\\[ \t]+(?:#[^\n]*)?\n(?=[ \t])")
"""A backslash that meant to continue the line but has blanks (and perhaps a comment) after
it: ``algorithm.pf_ppo.reweight_method=pow \\  # ["pow", ...]`` (verl examples/ppo_trainer/
run_deepseek7b_llm_pfppo.sh line 6 @b178a3cd), followed by an indented line."""


def broken_continuations(text: str, name: str) -> tuple[str, list[str]]:
    """``text`` with each :data:`_BROKEN_CONTINUATION` read as the continuation it means, and a
    note for them. bash reads ``\\`` + blank as an escaped blank, a word of its own, and the
    newline after the comment then ends the command: the script passes ``' '`` to its
    program and runs the next line as a command of its own (the launch fails there). Read as
    written, the launch would stop at that line with the rest of its options lost; the script
    states what it means by the indented lines that follow, and that is read, said in a note
    naming the lines."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in _BROKEN_CONTINUATION.finditer(text)]
    if not lines:
        return text, []
    where = ", ".join(map(str, lines))
    return _BROKEN_CONTINUATION.sub("\\\n", text), [
        f"{name} line{'s' if len(lines) > 1 else ''} {where}: a backslash with blanks (or a "
        "comment) after it does not continue a line in bash (it escapes the blank: the command "
        "ends there, passes ' ' and runs the next line on its own, so the launch fails as "
        "written); read as the continuation the indented lines after it mean"]
