"""The shell's ``read`` builtin over a command's input the script holds (a here-string or a
here-document), as bash 5 runs it at its default IFS: read by
:meth:`rlmcost.frameworks.shell_script._Reader.read` (never run).

``read [-r] [-a] [-d DELIM] NAME...`` takes its input up to the first DELIM (a newline by
default; ``-d ''`` the NUL byte, so the whole of a here-document: OpenRLHF's
``read -r -d '' training_commands <<EOF``, examples/scripts/train_dpo_llama.sh @3c3be623);
without ``-r`` a backslash-newline joins lines and a backslash keeps the next character. The
text is split at blanks: ``-a`` makes NAME the array of its words; else each NAME but the last
takes a word and the last the rest, leading and trailing blanks cut.
"""

from __future__ import annotations

import re

from rlmcost.frameworks.shell_lexer import Part
from rlmcost.frameworks.shell_words import doc_parts

_WORD = re.compile(r"(?:[\x00\x01][^\x00\x01]*[\x00\x01]|\S)+")
"""A blank-free run, each placeholder mark of :mod:`.shell_script` whole."""


def input_parts(here: list[Part] | None, where: str, line: int) -> list[Part] | None:
    """A command's input (:attr:`~rlmcost.frameworks.shell_lexer.Command.here`) as parts to
    expand: a here-document's text (first at ``line``) lexed as the shell reads it."""
    return doc_parts(here[0][1], where, line) if here and here[0][0] == "doc" else here


class ReadArgs:
    """A ``read`` command's options and names: ``array`` (``-a``), ``raw`` (``-r``),
    ``delim`` (``-d``; ``"\\n"`` by default, ``""`` for ``-d ''``), ``counted`` (``-n``/``-N``,
    a count of characters, which rlmcost does not follow)."""

    def __init__(self, args: list[str]) -> None:
        self.array = self.raw = self.counted = False
        self.delim, i = "\n", 0
        while i < len(args) and args[i].startswith("-") and len(args[i]) > 1:
            opts, value = args[i][1:], args[i + 1] if i + 1 < len(args) else ""
            self.array = self.array or "a" in opts
            self.raw = self.raw or "r" in opts
            self.counted = self.counted or opts[-1] in "nN"
            if opts[-1] == "d":
                self.delim = value[:1]
            i += 1 + (opts[-1] in "dnNptu")  # an option with its own value
        self.names = args[i:i + 1] if self.array else args[i:]


def line_of(text: str, how: ReadArgs) -> str:
    """The part of ``text`` that ``read`` takes: up to its delimiter (``""``: the NUL byte,
    never in a script's text), backslash escapes applied without ``-r``."""
    if how.raw:
        return text.split(how.delim, 1)[0] if how.delim else text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append("" if text[i + 1] == "\n" else text[i + 1])
            i += 2
            continue
        if how.delim and c == how.delim:
            break
        out.append(c)
        i += 1
    return "".join(out)


def read_fields(text: str, how: ReadArgs) -> dict[str, str | list[str]]:
    """Each name's value from the line ``text`` (:func:`line_of`): the array of its words
    (``-a``), else a word per name and the rest for the last."""
    if how.array:
        return {how.names[0]: _WORD.findall(text)} if how.names else {}
    out: dict[str, str | list[str]] = {}
    rest = text.strip(" \t\n")
    for k, name in enumerate(how.names):
        if k == len(how.names) - 1:
            out[name] = rest
            break
        m = _WORD.match(rest)
        out[name] = m.group() if m else ""
        rest = rest[m.end():].lstrip(" \t\n") if m else ""
    return out
