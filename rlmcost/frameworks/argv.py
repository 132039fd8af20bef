"""A launch command's ``--name value`` arguments as data (OpenRLHF's and slime's argparse).

Only the token shapes are read, never run: ``--name value``, ``--name=value``, ``--switch``,
``--name v1 v2 ...`` (argparse ``nargs="+"``) and, for argparse's ``BooleanOptionalAction``,
``--no-name``. Each known name has a kind (:data:`SWITCH`, :data:`NEGATABLE`, ``int``,
``float``, ``str`` or ``("list", None)``); an unknown name keeps its following values (one
value as a string, several as a list, none as True) so that the importer can list it as
ignored. Every problem is a one-line :class:`~rlmcost.errors.SpecError` that names the
argument.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

SWITCH = "switch"
"""argparse ``store_true``: the name alone; a value after it is an error."""

NEGATABLE = "negatable"
"""argparse ``BooleanOptionalAction``: ``--name`` is True, ``--no-name`` False."""


def parse_argv(tokens: list[str], kinds: dict[str, Any], where: str) -> dict[str, Any]:
    """``--key value`` / ``--switch`` tokens into a mapping of raw values (strings, True,
    False, lists; numbers for ``int``/``float`` kinds); ``where`` names the command line in
    errors (``slime arguments``)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("--") or len(tok) < 3:
            raise SpecError(f"{where}: unexpected {tok!r}; give --name value pairs")
        name, eq, inline = tok[2:].partition("=")
        value_of_no = name.startswith("no-") and kinds.get(name[3:]) == NEGATABLE
        if value_of_no:
            name = name[3:]
        kind = kinds.get(name)
        values: list[str] = [inline] if eq else []
        j = i + 1
        while not eq and j < len(tokens) and not tokens[j].startswith("--"):
            values.append(tokens[j])
            j += 1
        if kind in (SWITCH, NEGATABLE):
            if values:
                raise SpecError(f"{where}: --{tok[2:].split('=')[0]} is a switch; it takes no "
                                f"value (got {values[0]!r})")  # fmt: skip
            out[name] = not value_of_no
        elif isinstance(kind, tuple):
            out[name] = values
        elif kind is not None and len(values) != 1:
            raise SpecError(f"{where}: --{name} takes one value, got {len(values)}")
        else:
            out[name] = values[0] if len(values) == 1 else (values or True)
        if kind in (int, float) and isinstance(out[name], str):
            out[name] = _number(name, out[name], kind, where)
        i = j
    return out


def _number(name: str, raw: str, kind: Any, where: str) -> Any:
    try:
        value = float(raw)
    except ValueError:
        raise SpecError(f"{where}: --{name} {raw!r} is not a number") from None
    if kind is int:
        if not value.is_integer():
            raise SpecError(f"{where}: --{name} {raw!r} is not a whole number")
        return int(value)
    return value


def word_list(argv: object, where: str) -> list[str]:
    """``argv`` when it is a list of words, else a SpecError naming ``where``: a command line
    given as one string had been read character by character (``unexpected '-'``)."""
    if not isinstance(argv, (list, tuple)) or not all(isinstance(w, str) for w in argv):
        raise SpecError(f"{where}: give the command line as a list of words, e.g. "
                        "shlex.split(text)")  # fmt: skip
    return list(argv)
