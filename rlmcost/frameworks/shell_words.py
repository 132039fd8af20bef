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


_MISSING_CONTINUATION = re.compile(
    r"(?<=[^\\]\\\n)([^\n#]*[^\s\\#])(?=\n[ \t]+(?:-{1,2}[A-Za-z]|\"?\$\{[A-Za-z_]\w*\[@\]\}\"?)"
    r"[^\n]*[ \t]\\\n)")
"""A line inside a command (the line before it ends with a backslash) that lacks its own
backslash, where the next line is indented, starts with an option word (``--x``, ``-x``) or an
array expansion (``${NAME[@]}``), never a command of its own, and continues with a backslash:
``--update-weight-buffer-size $(( 4 * 512 * 1024 * 1024))`` followed by ``${MODEL_ARGS[@]} \\``
(slime scripts/run-kimi-k2-Instruct.sh lines 172-173 @624b824a)."""


def broken_continuations(text: str, name: str) -> tuple[str, list[str]]:
    """``text`` with each :data:`_BROKEN_CONTINUATION` and :data:`_MISSING_CONTINUATION` read
    as the continuation it means, and a note for each kind. bash reads ``\\`` + blank as an
    escaped blank, a word of its own, and the newline after the comment then ends the command:
    the script passes ``' '`` to its program and runs the next line as a command of its own
    (the launch fails there). A line without its backslash ends the command the same way, and
    the next line (``--x ...`` or ``${ARGS[@]} ...``) runs as a command, which fails. Read as
    written, the launch would stop at that line with the rest of its options lost; the script
    states what it means by the indented lines that follow, and that is read, said in a note
    naming the lines."""
    notes = []
    if lines := _lines(text, _BROKEN_CONTINUATION):
        text = _BROKEN_CONTINUATION.sub("\\\n", text)  # keeps every line where it was
        notes.append(
            f"{name} {lines}: a backslash with blanks (or a comment) after it does not continue "
            "a line in bash (it escapes the blank: the command ends there, passes ' ' and runs "
            "the next line on its own, so the launch fails as written); read as the "
            "continuation the indented lines after it mean")
    if lines := _lines(text, _MISSING_CONTINUATION):
        text = _MISSING_CONTINUATION.sub("\\1 \\\\", text)
        notes.append(
            f"{name} {lines}: the line has no backslash at its end, so bash ends the command "
            "there (without the options after it) and runs the indented option words that "
            "follow as a command of their own, which fails; read as the continuation those "
            "lines mean")
    return text, notes


def _lines(text: str, pattern: re.Pattern[str]) -> str:
    """``line N`` / ``lines N, M`` where ``pattern`` matches in ``text`` (empty: none)."""
    found = [str(text.count("\n", 0, m.start()) + 1) for m in pattern.finditer(text)]
    return f"line{'s' if len(found) > 1 else ''} {', '.join(found)}" if found else ""
