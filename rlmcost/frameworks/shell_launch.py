"""The launch command a launch script runs, as :mod:`rlmcost.frameworks.shell_script` reads it
(never run): its words after the entry point, those that kept a variable unexpanded, and the one
error naming every value the script does not give."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_arith import Unresolved

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Launch:
    """The launch command: the words after its entry point, the entry word, the words that
    kept a variable unexpanded (index -> the :class:`Unresolved`; ``many``: those that stand
    for an unknown number of words), the sourced files that were not there and the words
    before the entry point (its launcher: ``deepspeed --num_gpus 8 --module``)."""

    script: Path
    entry: str
    words: list[str]
    line: int
    unresolved: dict[int, Unresolved]
    notes: list[str]
    missing: list[str]
    many: set[int]
    launcher: list[str] = field(default_factory=list)

    def require(self, needed: list[int]) -> None:
        """SpecError, one line, naming every variable of the words ``needed`` (indices of
        :attr:`unresolved`) and the ``--env`` items that give them all."""
        if not needed:
            return
        first: dict[str, int] = {}
        for i in sorted(needed):
            first.setdefault(self.unresolved[i].var, i)
        causes = [f"${v} in {self.words[i]!r} {self.unresolved[i].why}" for v, i in first.items()]
        unset = [k for k, c in enumerate(causes) if c.endswith("is not set in the script")]
        if self.missing and unset:
            causes[unset[0]] += f" (it may come from {self.missing[0]}, which is not there to read)"
        names = [v for v in first if _NAME.fullmatch(v)]
        give = []
        if names:
            give.append(f"{'it' if len(names) == 1 else 'them'} with "
                        f"{' '.join(f'--env {v}=VALUE' for v in names)}")  # fmt: skip
        if len(names) < len(first):
            give.append("a copy of the script that writes the value of " +
                        ", ".join(f"${v}" for v in first if v not in names))  # fmt: skip
        raise SpecError(f"script {self.script.name} line {self.line}: {'; '.join(causes)}; give "
                        f"{' and '.join(give)}")  # fmt: skip
