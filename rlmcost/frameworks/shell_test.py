"""Which arm of an ``if`` a launch script takes, as :mod:`rlmcost.frameworks.shell_script`
reads it (never run): a condition made of ``[ ... ]``, ``[[ ... ]]`` or ``test`` over values
the script gives (``-z``/``-n``, ``=``/``==``/``!=``, ``-eq``/``-ne``/``-lt``/``-le``/``-gt``/
``-ge``, ``!``, ``true``/``false``), joined by ``&&``/``||``, is decided as bash's ``test``
builtin decides it; the first arm whose condition holds is taken (an ``else`` holds), the
others are skipped. A ``case`` arm is taken where its word matches one of its patterns
(``fnmatch``'s globs ``*``, ``?``, ``[...]``: bash's, without extglob), the first that
matches. A condition with a value the script does not give (a command's status, a file test,
a variable set outside it, a glob pattern in ``[[ ]]``) leaves every arm of that ``if`` (or
``case``) from there on as before: each runs only under a condition, its values unknown. verl's
``if [[ $backend == "megatron" ]]`` (examples/gspo_trainer/run_qwen30b_gspo.sh @b178a3cd) and
miles' ``if [ "$MODE" = "pure" ]`` with ``MODE=${MODE:-pure}`` are decided so."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.frameworks.shell_lexer import Command

_INT = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
        "-gt": int.__gt__, "-ge": int.__ge__}  # fmt: skip
_UNKNOWN = ("\x00", "\x01")  # the placeholder marks of a value the script does not give


def condition(words: list[str]) -> bool | None:
    """Whether the test command of expanded ``words`` succeeds; None where it is not one
    decided here or a word holds an unknown value."""
    negate = False
    while words and words[0] == "!":
        negate, words = not negate, words[1:]
    if not words or any(m in w for w in words for m in _UNKNOWN):
        return None
    if words[0] == "case" and len(words) == 3:  # a case arm's pattern (shell_lexer)
        return fnmatchcase(words[1], words[2]) != negate
    if words[0] in ("true", ":", "false") and len(words) == 1:
        return (words[0] != "false") != negate
    if words[0] == "[" and words[-1] == "]":
        value = _test(words[1:-1], False)
    elif words[0] == "[[" and words[-1] == "]]":
        value = _test(words[1:-1], True)
    elif words[0] == "test":
        value = _test(words[1:], False)
    else:
        return None
    return None if value is None else value != negate


def _test(args: list[str], double: bool) -> bool | None:
    if args and args[0] == "!" and len(args) > 1:
        value = _test(args[1:], double)
        return None if value is None else not value
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2 and args[0] in ("-z", "-n"):
        return (args[1] == "") == (args[0] == "-z")
    if len(args) != 3:
        return None
    left, op, right = args
    if op in ("=", "==", "!="):
        if double and any(c in right for c in "*?["):  # a pattern, unless it was quoted
            return None
        return (left == right) == (op != "!=")
    if op in _INT:
        try:
            return bool(_INT[op](int(left.strip()), int(right.strip())))
        except ValueError:  # bash: "integer expression expected", the test fails
            return None
    return None


class Branches:
    """The ``if`` arms of a script: their conditions as read, and each ``if``'s arm taken."""

    def __init__(self) -> None:
        self.conditions: dict[tuple[int, int], bool | None] = {}
        self.taken: dict[int, int | None] = {}  # if -> its arm taken (None: not known)
        self.lines: dict[int, int] = {}  # if -> the line of its condition

    def notes(self) -> list[str]:
        """A note naming the lines of the ``if`` conditions decided, if any."""
        lines = sorted(self.lines[b] for b, arm in self.taken.items() if arm is not None)
        return [f"the if at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}: "
                "the arm taken decided with the script's values, as bash's test decides it"
                ] if lines else []  # fmt: skip

    def state(self, arms: tuple[tuple[int, int], ...]) -> bool | None:
        """True where every arm in ``arms`` is taken, False where one is not, else None."""
        known = True
        for key in arms:
            taken = self.arm(*key)
            if taken is False:
                return False
            known = known and taken is True
        return True if known else None

    def arm(self, branch: int, arm: int) -> bool | None:
        if branch not in self.taken:
            for k in range(arm + 1):
                value = self.conditions.get((branch, k), False)
                if value is not False:
                    self.taken[branch] = k if value else None
                    break
        if branch not in self.taken:
            return False
        taken = self.taken[branch]
        return None if taken is None else taken == arm

    def read(self, cmd: Command, value: bool | None) -> None:
        """One command of a condition (``cmd.test``), its value given, folded in as
        ``&&``/``||`` join it (a pipeline's status is not known)."""
        assert cmd.test is not None
        self.lines.setdefault(cmd.test[0], cmd.line)
        if cmd.words[0] == [("lit", "else", False)] and len(cmd.words) == 1:
            value = True
        before = self.conditions.get(cmd.test)
        if cmd.joined == "&&":
            value = False if before is False or value is False else \
                None if before is None or value is None else True  # fmt: skip
        elif cmd.joined == "||":
            value = True if before is True or value is True else \
                None if before is None or value is None else False  # fmt: skip
        elif cmd.joined is not None:
            value = None
        self.conditions[cmd.test] = value
