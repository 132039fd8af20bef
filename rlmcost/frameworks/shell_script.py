"""A framework's launch script read as data: the command it launches, its words expanded.

The script is never run. Its text is split into simple commands (backslash-newline
continuations, comments, quoting as the shell does it, ``;``/``&&``/``||``/``|``/``&``,
redirections and here-documents dropped); assignments (``VAR=value``, ``export VAR=value``,
``VAR+=value``, arrays ``NAME=( ... )``) are kept in order and expanded when made: ``$VAR``,
``${VAR}``, ``${VAR:-default}``, ``${VAR:=default}`` (with and without the colon),
``"${NAME[@]}"``, ``${#NAME[@]}``, ``$((a*b))`` integer arithmetic (+ - * / % ** and parentheses
over numbers and known variables; no eval) and ``$@``/``${@:N}`` (the words given after the
script). An ``if`` whose condition, or a ``case`` whose word, the script's values decide takes
one arm (:mod:`.shell_test`); a function's body runs where the script calls it, ``$1``... the
call's words (:mod:`.shell_nested`). ``source FILE`` / ``. FILE`` reads FILE (relative to the
script's folder; a path of the framework's container that is not there, in the checkout holding
the script: :mod:`.shell_checkout`) the same way; ``bash -c STRING`` (``srun ... bash -c
"..."``) reads STRING's commands as the script's own; ``read -a NAME <<< WORD`` makes NAME
WORD's words. The command substitutions read are the folder idioms ``$(cd "$(dirname
"${BASH_SOURCE[0]}")/.." && pwd)`` (:mod:`.shell_paths`); any other ``$(...)`` or backquote, an
assignment under an undecided ``if`` or ``case``, ``for``/``while``/``&&``/``||``, a positional
``$1`` not given and an unset variable have no value: where the launch command needs such
values, one error names them all (:meth:`Launch.require`), and ``--env VAR=VALUE`` gives each (a
variable given so keeps that value throughout; the script's own assignments of it are skipped).
The launch is the last command that names one of the framework's entry points.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_arith import Unresolved, integer, whole
from rlmcost.frameworks.shell_checkout import container_path, read_text
from rlmcost.frameworks.shell_launch import Launch
from rlmcost.frameworks.shell_lexer import ASSIGN, Command, Part, commands
from rlmcost.frameworks.shell_nested import Functions, inline
from rlmcost.frameworks.shell_paths import path_output
from rlmcost.frameworks.shell_read import ReadArgs, input_parts, line_of, read_fields
from rlmcost.frameworks.shell_test import Branches, condition
from rlmcost.frameworks.shell_words import (
    MANY,
    MAX_SCRIPT_BYTES,
    MAX_SOURCE_DEPTH,
    ONE,
    broken_continuations,
    default_word,
    env_words,
)
from rlmcost.frameworks.shell_words import MARK as _MARK
from rlmcost.frameworks.shell_words import word_text as _text

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACE = re.compile(r"(#?)([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$])(\[([^\]]*)\])?(?:(:?)([-=+?])(.*))?",
                    re.S)  # fmt: skip
_SOURCE = ("source", ".")
_DECLARE = ("export", "declare", "typeset", "local", "readonly")
_SAY = ("echo", "printf")  # print the words, launch nothing (train_nonrl_slurm.sh logs its command)


def read_launch(path: str | Path, entries: tuple[str, ...], extra: list[str],
                env: dict[str, str]) -> Launch:
    """The last command of the script at ``path`` that names one of ``entries`` (a word
    equal to one, or whose file name is one), expanded with ``extra`` as ``$@`` and ``env``
    fixed. SpecError where there is none or its words cannot be read."""
    reader = _Reader(Path(path), extra, env)
    try:
        reader.run(reader.script, entries, 0)
    except RecursionError:  # ${A:-${A:-...}} thousands deep
        raise SpecError(f"script {reader.script.name}: expansions nested too deep to read; "
                        "give the launch command's words") from None
    if reader.launch is None:
        reader.functions.uncalled(reader, entries)
    if reader.launch is None and reader.exited:
        at, test = reader.exited
        raise SpecError(f"script {reader.script.name} exits at line {at} before it launches" + (
            f" (the if at line {test} holds with {len(extra)} argument(s) given and the "
            "environment's variables unset)" if test else "") + "; give the arguments it expects "
            "after it, or --env VAR=VALUE for a variable it checks")  # fmt: skip
    if reader.launch is None:
        raise SpecError(f"script {reader.script.name}: no command runs {' or '.join(entries)}; "
                        "give the framework's launch script")  # fmt: skip
    launch = reader.launch
    if reader.launches > 1:
        launch.notes.append(f"the script launches {reader.launches} times; the last, line "
                            f"{launch.line}, is read")  # fmt: skip
    if extra and not reader.used_args:
        launch.words += extra
        launch.notes.append(f"the script does not pass $@; {' '.join(extra)} appended to its "
                            "command")  # fmt: skip
    return launch


Value = str | list[str]
"""A variable's value: text or an array (unknown parts held as placeholder marks)."""


class _Reader:
    """The script's variables as its commands set them, in order, and its launch command."""

    def __init__(self, script: Path, extra: list[str], env: dict[str, str]) -> None:
        self.script = script.resolve() if script.exists() else script
        self.extra, self.env = extra, env
        self.vars: dict[str, Value] = dict(env)
        self.failures: dict[str, Unresolved] = {}  # a placeholder's variable -> why
        self.launch: Launch | None = None
        self.launches, self.used_args = 0, False
        self.missing: list[str] = []  # sourced files that are not there
        self.read_notes: list[str] = []  # what a command substitution read (miles' model)
        self.branches, self.functions = Branches(), Functions()
        self.inlined = 0  # characters read by bash -c
        self.exited: tuple[int, int] | None = None  # an exit reached: its line, its if's line

    def run(self, path: Path, entries: tuple[str, ...], depth: int) -> None:
        text, notes = broken_continuations(read_text(path, "script", MAX_SCRIPT_BYTES), path.name)
        self.read_notes += notes
        for cmd in commands(text, f"script {path.name}"):
            self.command(cmd, path, entries, depth)

    def command(self, cmd: Command, path: Path, entries: tuple[str, ...], depth: int) -> None:
        if self.exited or self.functions.keep(cmd):
            return  # past an exit, or a function's body: read where called (.shell_nested)
        if (state := self.branches.state(cmd.arms)) is False:
            return  # an arm of an if that the script does not take (rlmcost.frameworks.shell_test)
        cmd.conditional = cmd.conditional or state is None
        if cmd.test is not None:  # [[ ]] does not split its words
            self.branches.read(cmd, None if cmd.conditional else condition([f for w in cmd.words
                               for f in self.expand(w, path, _text(cmd.words[0]) not in
                               ("[[", "case"))]))  # fmt: skip
        words, i = cmd.words, 0
        lead = _text(words[0])
        if lead in _DECLARE:
            i = 1
            while i < len(words) and _text(words[i]).startswith("-"):
                i += 1
        assigns = []
        while i < len(words) and words[i][0][0] == "lit" and \
                (m := ASSIGN.match(words[i][0][1])):  # fmt: skip
            assigns.append((m, i))
            i += 1
        rest = words[i:]
        if not rest or lead in _DECLARE:  # `VAR=1 cmd`: VAR is cmd's environment only
            for m, k in assigns:
                self.assign(m, words[k], cmd.arrays.get(k), cmd, path)
        if not rest or lead in _DECLARE:
            return
        name = _text(rest[0])
        if name == "exit" and not cmd.conditional:  # bash stops here: nothing after it runs
            self.exited = (cmd.line, self.branches.lines.get(cmd.arms[-1][0], 0) if cmd.arms else 0)
        elif name == "unset" and not cmd.conditional:
            for w in rest[1:]:
                if _text(w) not in self.env:
                    self.vars.pop(_text(w), None)
        elif name == "read":
            self.read([_text(w) for w in rest[1:]], cmd, path)
        elif name in _SOURCE and len(rest) > 1:
            self.source(rest[1], cmd, path, entries, depth)
        elif (inner := _shell_c(rest)) is not None:
            inline(self, rest[inner], cmd, path, entries, depth)
        elif name in self.functions.bodies:
            self.functions.call(self, rest, cmd, path, entries, depth)
        elif name not in _SAY and any(e in t for t in self.mentions(rest) for e in entries):
            self.candidate(rest, cmd, path, entries)

    def mentions(self, rest: list[list[Part]]) -> list[str]:
        """The words' text and the values of the variables they name: an entry point may sit
        in one (OpenRLHF's ``deepspeed --module $training_commands``)."""
        named = [self.vars.get(m.group(2), "") for w in rest for k, t, _ in w if k == "var"
                 and (m := _BRACE.fullmatch(t.strip()))]  # fmt: skip
        return [*map(_text, rest), *(v if isinstance(v, str) else " ".join(v) for v in named)]

    def alias(self, mark: re.Match[str]) -> str:
        """A placeholder mark as a name the inner shell's lexer keeps in one word."""
        var = mark.group(2)
        name = var if _NAME.fullmatch(var) else "cmd_" + re.sub(r"\W", "_", var).strip("_")
        self.failures.setdefault(name, self.failures[var])
        return mark.group(1) + name + mark.group(1)

    def assign(self, m: re.Match[str], word: list[Part], array: list[list[Part]] | None,
               cmd: Command, path: Path) -> None:
        name, append = m.group(1), bool(m.group(2))
        if name in self.env:
            return
        value: Value
        if cmd.conditional:
            self.failures[name] = Unresolved(name, f"is set under a condition (line {cmd.line})")
            value = [MANY + name + MANY] if array is not None else ONE + name + ONE
        elif array is not None:
            value = [f for w in array for f in self.expand(w, path)]
        else:
            first = ("lit", word[0][1][m.end():], word[0][2])
            value = "".join(self.expand([first, *word[1:]], path, split=False))
            mark = _MARK.search(value)
            if mark is not None and not _NAME.fullmatch(mark.group(2)):  # a command's output
                start = mark.group() == value and self.failures[mark.group(2)].start
                self.failures[name] = Unresolved(name, f"is set from {_shown(mark.group())} "
                                                 f"(line {cmd.line})", start)  # fmt: skip
                value = ONE + name + ONE
        old = self.vars.get(name) if append else None
        if isinstance(old, list):
            value = old + (value if isinstance(value, list) else [value])
        elif isinstance(old, str):
            value = old + value if isinstance(value, str) else [old, *value]
        if len(value) + sum(map(len, value if isinstance(value, list) else [])) > MAX_SCRIPT_BYTES:
            raise SpecError(f"script {path.name}: ${name} grows past {MAX_SCRIPT_BYTES:,} "
                            f"characters (line {cmd.line}); launch scripts hold a few KiB")
        self.vars[name] = value

    def read(self, args: list[str], cmd: Command, path: Path) -> None:
        """``read`` (:mod:`.shell_read`) of the input the command gives: a here-string (miles:
        ``read -ra MODEL_ARGS <<< "${MODEL_ARGS_LINE}"``) or a here-document (OpenRLHF:
        ``read -r -d '' training_commands <<EOF``). A ``read`` of the script's own input, or
        under a condition, leaves its names without a value; an array read from an unknown
        value too (a scalar keeps the unknown part, as an assignment does)."""
        how, here = ReadArgs(args), input_parts(cmd.here, f"script {path.name}", cmd.line + 1)
        text = line_of("".join(self.expand(here, path, split=False)), how) \
            if here and not how.counted else None  # fmt: skip
        what = f"is read (read{' -a' if how.array else ''}, line {cmd.line})"
        why = f"{what} under a condition" if cmd.conditional else \
            f"{what} from the script's input" if text is None else None  # fmt: skip
        if why is None and how.array and (mark := _MARK.search(text or "")) is not None:
            cause = self.failures.get(mark.group(2))
            why = f"{what} from {_shown(text or '')}{f', which {cause.why}' if cause else ''}"
        values = read_fields(text or "", how) if why is None else {}
        for name in (n for n in how.names if _NAME.fullmatch(n) and n not in self.env):
            if name in values:
                self.vars[name] = values[name]
                continue
            self.failures[name] = Unresolved(name, why or what)
            self.vars[name] = [MANY + name + MANY] if how.array else ONE + name + ONE

    def source(self, word: list[Part], cmd: Command, path: Path, entries: tuple[str, ...],
               depth: int) -> None:
        target = Path("".join(self.expand(word, path, split=False)))
        if _MARK.search(str(target)):
            self.missing.append(f"{_shown(str(target))} (line {cmd.line})")
            return
        if not target.is_absolute():
            target = path.parent / target
        if not target.is_file() and (found := container_path(target, path)) is not None:
            self.read_notes.append(f"source {target} (line {cmd.line}, not there) read as "
                                   f"{found}, the same file of the checkout holding the script")
            target = found
        if not target.is_file() or depth >= MAX_SOURCE_DEPTH:
            self.missing.append(f"{target} (line {cmd.line})")
            return
        self.run(target, entries, depth + 1)

    def candidate(self, rest: list[list[Part]], cmd: Command, path: Path,
                  entries: tuple[str, ...]) -> None:
        """A command naming an entry point: expanded now, read if it is the last."""
        words = [f for w in rest for f in self.expand(w, path)]
        at = next((k for k, w in enumerate(words) if w in entries or Path(w).name in entries),
                  None)  # fmt: skip
        if at is None:
            return
        self.launches += 1
        unresolved: dict[int, Unresolved] = {}
        many: set[int] = set()  # several words, or none: the words after have no known place
        for k, w in enumerate(words[at + 1:]):
            for mark, var in _MARK.findall(w):
                unresolved.setdefault(k, self.failures[var])
                if mark == MANY:
                    many.add(k)
        notes = [f"read {path.name} line {cmd.line} as data, never run: the command it launches"
                 f" ({words[at]}) with its variables expanded", *self.read_notes,
                 *self.branches.notes()]  # fmt: skip
        if cmd.conditional:
            notes.append(f"the launch at line {cmd.line} runs under a condition; read as if it "
                         "runs")  # fmt: skip
        self.launch = Launch(self.script, words[at], [_shown(w) for w in words[at + 1:]],
                             cmd.line, unresolved, notes, self.missing, many,
                             [_shown(w) for w in words[:at]])

    def expand(self, word: list[Part], path: Path, split: bool = True) -> list[str]:
        """The fields of ``word`` (``split``: unquoted expansions split on blanks, as in a
        command's words; an assignment's value is one string)."""
        fields: list[str] = []
        cur: list[str] = []
        started, size = False, 0
        for kind, text, quoted in word:
            if kind == "lit":
                cur.append(text)
                started = True
                continue
            value: str | list[str]
            try:
                value = self.value(kind, text, path)
            except Unresolved as exc:
                self.failures.setdefault(exc.var, exc)
                many = kind == "var" and re.search(r"\[[@*]\]$|^[@*]$", text.strip())
                value = [MANY + exc.var + MANY] if many else ONE + exc.var + ONE
            size += len(value) if isinstance(value, str) else sum(map(len, value))
            if size > MAX_SCRIPT_BYTES:  # "$A$A$A..." (a here-document of them)
                raise SpecError(f"script {path.name}: a word's expansion grows past "
                                f"{MAX_SCRIPT_BYTES:,} characters; launch scripts hold a few KiB")
            if isinstance(value, list):  # ${NAME[@]}: one field each when quoted
                pieces = value if quoted else [p for v in value for p in _split(v)]
            elif quoted or not split:
                pieces = [value]
            else:
                pieces = _split(value)
                if value[:1].isspace() and cur:
                    fields.append("".join(cur))
                    cur = []
            if not pieces:  # "$@" with no words is no word; "$EMPTY" is one
                started = started or (quoted and not isinstance(value, list))
                continue
            cur.append(pieces[0])
            if len(pieces) > 1:
                fields.append("".join(cur))
                fields += pieces[1:-1]
                cur = [pieces[-1]]
            started = True
        if cur or started:
            fields.append("".join(cur))
        return fields

    def value(self, kind: str, text: str, path: Path) -> str | list[str]:
        if kind == "cmd":  # the folder idioms (rlmcost.frameworks.shell_paths) or unknown
            return path_output(text, lambda w: "".join(self.expand(w, path, split=False)),
                               self.read_notes)  # fmt: skip
        if kind == "arith":
            return str(self.arith(text, path))
        m = _BRACE.fullmatch(text.strip())
        if (at := re.fullmatch(r"[@*]:(\d+)(?::(\d+))?", text.strip())) is not None:
            self.used_args, first = True, max(int(at.group(1)) - 1, 0)  # ${@:2}: $2 on
            return self.extra[first:first + int(at.group(2)) if at.group(2) else None]
        if m is None:
            raise Unresolved(f"{{{text}}}", "is an expansion rlmcost does not read")
        length, name, index, colon, op, arg = m.group(1), m.group(2), m.group(4), m.group(5), \
            m.group(6), m.group(7)  # fmt: skip
        if name in ("@", "*"):
            self.used_args = True
            return list(self.extra)
        if name == "BASH_SOURCE" or name == "0":
            return str(path)
        if name in "?$!":
            raise Unresolved(name, "is a special parameter of the running shell")
        current: Value | None = self.vars.get(name)
        if name.isdigit() or name == "#":  # the script's arguments: the words given for $@
            self.used_args = True
            n = int(name) if name != "#" else 0
            current = str(len(self.extra)) if name == "#" else \
                self.extra[n - 1] if n <= len(self.extra) else None  # fmt: skip
        unset = current is None or (colon and current in ("", []))
        if op in ("-", "=") and unset:
            current = "".join(self.expand(default_word(arg), path, split=False))
            if op == "=" and name not in self.env:
                self.vars[name] = current
        elif op == "+":
            current = "" if unset else "".join(self.expand(default_word(arg), path, False))
        elif op == "?":  # ${VAR:-d} / ${VAR:=d} of a set VAR: its value
            raise Unresolved(name, f"is read with ${{{name}{colon}{op}...}}, which rlmcost does "
                             "not follow")  # fmt: skip
        if current is None:
            raise Unresolved(name, "is not set in the script" if not name.isdigit() else
                             f"is the script's argument {name}, not given", name == "PWD")
        if index in ("@", "*"):
            out = current if isinstance(current, list) else env_words(name, current)
            return [str(len(out))] if length else out
        if isinstance(current, list):  # $NAME / ${NAME[0]}: an element
            k = int(index) if index and index.isdigit() else 0
            current = current[k] if k < len(current) else ""
        elif index not in (None, "0"):
            raise Unresolved(f"{name}[{index}]", "is not an array element the script sets")
        return str(len(current)) if length else current

    def arith(self, text: str, path: Path) -> int:
        """``$((text))``: the shell's integer arithmetic over numbers and variables."""
        from rlmcost.frameworks.shell_lexer import commands as lex

        inner = lex(f'"{text}"', "arithmetic") if "$" in text else []
        expr = "".join(self.expand(inner[0].words[0], path, False)) if inner else text
        if (mark := _MARK.search(expr)) is not None:
            raise self.failures[mark.group(2)]
        expr = _NAME.sub(lambda m: whole(m.group(), self.vars.get(m.group()), self.failures),
                         expr)  # fmt: skip
        return integer(expr, text)


def _split(value: str) -> list[str]:
    """Unquoted ``value`` split on blanks, each placeholder mark whole."""
    return re.findall(r"(?:[\x00\x01][^\x00\x01]*[\x00\x01]|\S)+", value)


def _shown(word: str) -> str:
    """``word`` with each placeholder mark written as the shell's ``$VAR`` / ``$(cmd)``."""
    return _MARK.sub(lambda m: "$" + m.group(2), word)


def _shell_c(rest: list[list[Part]]) -> int | None:
    """The index of the string a ``bash -c STRING`` (``sh``, ``-lc``) in ``rest`` runs."""
    for k, w in enumerate(rest[:-2]):
        if Path(_text(w)).name in ("bash", "sh") and re.fullmatch(r"-[a-z]*c", _text(rest[k + 1])):
            return k + 2
    return None
