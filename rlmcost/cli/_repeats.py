"""An option given twice with different values is a usage error, not "the last one wins".

click keeps the last value of an option given twice (``--tp 2 --tp 4`` runs with TP 4), and
of a flag given under both its names (``--sleep --no-sleep`` runs with ``--no-sleep``), so a
command line that states two things silently means one. Here the words of a command line are
read against the command's options before click parses them: an option given twice with
different values (for a flag: under its two names) is an error that names the option and
both values. The same value given twice (``--json --json``, ``--tp 4 --tp 4``, ``-m 8b
--model 8b``) is accepted: it states one thing. Values compare as typed (``--tp 4 --tp 04``
differ). Options that take many values (``multiple=True``, e.g. `calibrate --kernel`) repeat
freely; positional arguments (`compare ppo ppo`) are the command's to judge. Words after
``--`` are arguments, as click reads them.
"""

from __future__ import annotations

from typing import Any


def _table(params: list[Any]) -> dict[str, tuple[Any, str]]:
    """Each option name -> (its option, the value the name states: "on" or "off" for a flag,
    "" for an option that takes a value); options that repeat by design left out."""
    names: dict[str, tuple[Any, str]] = {}
    for p in params:
        if getattr(p, "param_type_name", "") != "option" or p.multiple or p.count:
            continue
        for name in p.opts:
            names[name] = (p, "on" if p.is_flag else "")
        for name in p.secondary_opts:
            names[name] = (p, "off")
    return names


def _words(args: list[str], names: dict[str, tuple[Any, str]]) -> list[tuple[Any, str, str]]:
    """(option, the name used, its value) for each option on the command line ``args``."""
    out: list[tuple[Any, str, str]] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            break
        name, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        if not eq and word.startswith("-") and not word.startswith("--") and len(word) > 2:
            name, attached, eq = word[:2], word[2:], "="  # -m8b: click's attached short value
        if name not in names:
            continue
        param, flag_value = names[name]
        if flag_value:
            out.append((param, name, flag_value))
        elif eq:
            out.append((param, name, attached))
        elif i < len(args):
            out.append((param, name, args[i]))  # click takes the next word, whatever it is
            i += 1
    return out


def repeated_option(params: list[Any], args: list[str]) -> str | None:
    """The message for the first option of ``args`` given twice with different values (None:
    none is), e.g. ``--tp given twice with different values, '2' and '4'; give it once``."""
    names = _table(params)
    first: dict[int, tuple[str, str]] = {}
    for param, name, value in _words(args, names):
        seen_name, seen_value = first.setdefault(id(param), (name, value))
        if seen_value == value:
            continue
        if param.is_flag:
            both = "/".join(param.opts + param.secondary_opts)
            return f"{both} given as both {seen_name} and {name}; give one"
        label = max(param.opts, key=len)
        a, b = repr(seen_value), repr(value)
        if seen_name != name:
            a, b = f"{seen_name} {a}", f"{name} {b}"
        return f"{label} given twice with different values, {a} and {b}; give it once"
    return None
