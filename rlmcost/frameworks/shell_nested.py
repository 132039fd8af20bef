"""Commands a launch script runs away from where they are written, as
:mod:`rlmcost.frameworks.shell_script` reads them (never run): ``bash -c STRING`` and shell
functions.

A function's body (``NAME() { ... }``, ``function NAME { ... }``) runs where the script calls
it, with the call's words as ``$1``, ``$2``, ``$@`` and ``$#``, under the call's condition; each
call decides the ``if``/``case`` arms of the body with its own values (miles'
examples/infra_features/p2p_weight_transfer/run-*-profile.sh @31f1ca961 build every argument
array inside ``run_mode() { local mode="$1" ... }`` and call ``run_mode "$MODE"``). Variables
are the script's (``local`` is not scoped). A function the script never calls is read as if it
ran once without arguments, under a condition, where no other command launches the run.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_lexer import Command, Part, commands
from rlmcost.frameworks.shell_words import MARK, MAX_SCRIPT_BYTES, MAX_SOURCE_DEPTH, word_text


class _Reader(Protocol):
    """What this module needs of :class:`rlmcost.frameworks.shell_script._Reader`."""

    script: Path
    extra: list[str]
    used_args: bool
    inlined: int

    def alias(self, mark: re.Match[str]) -> str: ...

    def expand(self, word: list[Part], path: Path, split: bool = True) -> list[str]: ...

    def command(self, cmd: Command, path: Path, entries: tuple[str, ...], depth: int) -> None: ...

_SHIFT = 64
"""A call's ifs are numbered from ``call << _SHIFT`` (``bash -c``'s from characters << 32)."""


def inline(reader: _Reader, word: list[Part], cmd: Command, path: Path,
           entries: tuple[str, ...], depth: int) -> None:  # fmt: skip
    """``bash -c STRING`` (``srun ... bash -c``): STRING's commands read as the script's, as
    the shell runs them: the outer shell expands a double-quoted STRING, the inner one reads
    the result (OpenRLHF's train_ppo_ray_slurm.sh launches so); its ifs numbered apart."""
    text = MARK.sub(reader.alias, "".join(reader.expand(word, path, split=False)))
    reader.inlined += len(text) + 1
    shift = reader.inlined << 32
    if depth >= MAX_SOURCE_DEPTH or reader.inlined > 8 * MAX_SCRIPT_BYTES:
        raise SpecError(f"script {path.name} line {cmd.line}: bash -c nested more than "
                        f"{MAX_SOURCE_DEPTH} deep or past {8 * MAX_SCRIPT_BYTES:,} "
                        "characters in all; give the launch command's words")  # fmt: skip
    for inner in commands(text, f"script {path.name} line {cmd.line} (bash -c)"):
        inner.line += cmd.line - 1
        inner.conditional = inner.conditional or cmd.conditional
        inner.arms = tuple((b + shift, a) for b, a in inner.arms)
        inner.test = inner.test and (inner.test[0] + shift, inner.test[1])
        reader.command(inner, path, entries, depth + 1)


class Functions:
    """The script's functions: each body's commands as written, and the calls read."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[Command]] = {}
        self.called: set[str] = set()
        self.calls = 0

    def keep(self, cmd: Command) -> bool:
        """Whether ``cmd`` belongs to a function's body (held for its calls, not run here);
        a definition starts its function's body afresh (a later one replaces it)."""
        if cmd.defines is not None:
            self.bodies[cmd.defines] = []
        if cmd.function is None:
            return False
        self.bodies.setdefault(cmd.function, []).append(cmd)
        return True

    def call(self, reader: _Reader, rest: list[list[Part]], cmd: Command, path: Path,
             entries: tuple[str, ...], depth: int) -> None:  # fmt: skip
        """The call ``rest`` (the function's name and its words) at ``cmd``: the body's
        commands read with the words as the positional parameters, then the script's back."""
        name = word_text(rest[0])
        if depth >= MAX_SOURCE_DEPTH:
            raise SpecError(f"script {path.name} line {cmd.line}: function {name} calls nest "
                            f"more than {MAX_SOURCE_DEPTH} deep; give the launch command's "
                            "words")  # fmt: skip
        args = [f for w in rest[1:] for f in reader.expand(w, path)]
        saved, reader.extra = (reader.extra, reader.used_args), args
        self.called.add(name)
        self.calls += 1
        body = self.bodies[name]
        ids, shift = {c.test[0] for c in body if c.test is not None}, self.calls << _SHIFT

        def moved(key: tuple[int, int]) -> tuple[int, int]:
            return (key[0] + shift, key[1]) if key[0] in ids else key

        try:
            for c in body:
                reader.command(replace(c, function=None, defines=None,
                                       conditional=c.conditional or cmd.conditional,
                                       arms=tuple(map(moved, c.arms)),
                                       test=c.test and moved(c.test)), path, entries, depth + 1)
        finally:
            reader.extra, reader.used_args = saved

    def uncalled(self, reader: _Reader, entries: tuple[str, ...]) -> None:
        """Each function never called, read once without arguments under a condition (a
        call the reader cannot see: ``"$@"``, a name in a variable)."""
        for name in [n for n in self.bodies if n not in self.called]:
            call = Command([[("lit", name, False)]], 0, True)
            self.call(reader, call.words, call, reader.script, entries, 0)
