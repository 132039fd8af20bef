"""Shell text as simple commands: the lexer of :mod:`rlmcost.frameworks.shell_script`.

Quoting as the shell does it (single quotes literal, double quotes with ``$`` expansions and
``\\`` escapes), backslash-newline continuations, comments, the separators ``;`` ``&&`` ``||``
``|`` ``&`` and newlines, redirections (``2>&1``, ``> file``, ``&>/dev/null``) dropped, a
command's input kept for ``read``: a here-string's word (``<<< WORD``) or a here-document's text
(``<<EOF``: its ``$`` expansions and ``\\`` escapes as in double quotes, ``"`` and ``'``
literal, backslash-newline joined; ``<<'EOF'``: literal; ``<<-EOF``: leading tabs cut), arrays
``NAME=( ... )`` kept whole. Each word is a list of :data:`Part`; nothing is expanded or
run here. The blocks ``for``/``while`` and ``{ ... }`` are followed so that a command inside
one is marked conditional; an ``if``'s arms (``then``/``elif``/``else``) and the commands of
each condition are marked for :mod:`.shell_test` to decide, and so are a ``case``'s arms, each
pattern a test ``case WORD PATTERN`` (quoted glob characters escaped). A function's body is
marked with its name (:attr:`Command.function`), conditional only within it (run where called).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlmcost.errors import SpecError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_BLANKS = re.compile(r"[ \t]*")
_OPEN = {"if", "for", "while", "until", "case", "select", "{"}
_CLOSE = {"fi", "done", "esac", "}"}
_LEAD = {"then", "do", "else", "elif", "!", "time"}

Part = tuple[str, str, bool]
"""A piece of a word: (kind, text, quoted); kind is ``lit``, ``var`` (the text inside
``${...}`` or after ``$``), ``cmd`` (``$(...)``/backquotes), ``arith`` (``$((...))``) or, as a
command's input, ``doc`` (a here-document's text to expand: :func:`doc_parts`)."""


@dataclass
class Command:
    """A simple command: its words (each a list of parts), line and whether it runs only
    under a condition (inside loops/``case``/functions, or after ``&&``/``||``); ``arms``: the
    ``(if, arm)`` of each ``if`` it sits in (arm 0 the ``then`` part, then each ``elif``/
    ``else``; a ``case``'s arms alike); ``test``: the ``(if, arm)`` whose condition it is part
    of (an ``else``: one word, ``else``), ``joined`` the operator before it (``&&``/``||``)."""

    words: list[list[Part]]
    line: int
    conditional: bool
    arrays: dict[int, list[list[Part]]] = field(default_factory=dict)  # word i: NAME=( ... )
    here: list[Part] | None = None  # its input: ``<<< WORD`` (with its newline) or ``<<EOF``
    arms: tuple[tuple[int, int], ...] = ()
    test: tuple[int, int] | None = None
    joined: str | None = None
    function: str | None = None  # the function whose body holds it (run where called)
    defines: str | None = None  # the function this command's ``NAME() {`` opens


def commands(text: str, where: str) -> list[Command]:
    """The simple commands of shell ``text`` (``where`` names it in errors)."""
    return _Lexer(text, where).commands()


class _Lexer:
    """Shell text -> :class:`Command` list (quoting, continuations, comments, operators)."""

    def __init__(self, text: str, where: str) -> None:
        self.s, self.i, self.line, self.where = text, 0, 1, where
        self.out: list[Command] = []
        self.frames: list[tuple[int, int] | None] = []  # open blocks: an if's (id, arm) or None
        self.testing: tuple[int, int] | None = None  # the if arm whose condition is being read
        self.ifs, self.pattern_next = 0, False  # ifs (and cases) so far; a case's patterns next
        self.heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, quoted, <<-) queued
        self.doc: list[Part] | None = None  # the last here-document's text, once read
        self.in_doc, self.emitted, self.doc_by = False, 0, -1  # doc_by: the command it feeds
        self.fn: list[tuple[str, int]] = []  # open function bodies: (name, index of its frame)
        self.cases: dict[int, list[Part]] = {}  # a case's if id -> its word

    def error(self, what: str) -> SpecError:
        return SpecError(f"{self.where} line {self.line}: {what}; rlmcost reads the script as "
                         "data and cannot follow it there")  # fmt: skip

    def commands(self) -> list[Command]:
        words: list[list[Part]] = []
        arrays: dict[int, list[list[Part]]] = {}
        here: list[Part] | None = None
        start, before = self.line, None
        while True:
            sep = self.skip_blank()
            if sep is not None or self.i >= len(self.s):
                if sep == ";;" and self.frames and self.frames[-1] is not None and \
                        self.frames[-1][0] in self.cases:  # fmt: skip
                    self.pattern_next = True
                if words:
                    doc = self.doc if sep == "\n" and self.doc_by == self.emitted else None
                    self.emit(words, arrays, start, before, doc or here)
                    self.emitted += 1
                words, arrays, here, self.doc = [], {}, None, None
                before = sep
                if self.i >= len(self.s):
                    return self.out
                start = self.line
                continue
            if not words:
                start = self.line
                if self.pattern_next and self.case_arm():
                    continue
            if self.s[self.i] in "<>" or (self.s.startswith("&>", self.i)):
                here = self.redirect() or here
                continue
            word = self.word(False)
            if self.s.startswith("(", self.i) and len(word) == 1 and word[0][0] == "lit" \
                    and ASSIGN.fullmatch(word[0][1]):  # fmt: skip
                self.i += 1
                arrays[len(words)] = self.array()
            elif self.s[self.i: self.i + 1] in ("<", ">") and len(word) == 1 \
                    and word[0][1].isdigit():  # fmt: skip
                continue  # a file descriptor: 2>&1
            words.append(word)
            if len(words) == 3 and _lit(words[0]) == "case" and _lit(words[2]) == "in":
                self.ifs, self.pattern_next = self.ifs + 1, True
                self.cases[self.ifs] = words[1]
                self.frames.append((self.ifs, -1))  # its arms: 0, 1, ... as patterns open them
                words, arrays = [], {}

    def add(self, cmd: Command) -> None:
        """Append ``cmd``, marked with the function whose body holds it."""
        cmd.function = self.fn[-1][0] if self.fn else None
        self.out.append(cmd)

    def cond(self) -> bool:
        """Whether a command here runs under a condition (in a block of its function's body)."""
        return None in self.frames[self.fn[-1][1] + 1 if self.fn else 0:]

    def case_arm(self) -> bool:
        """At a case arm: ``esac`` closes it; ``(P|Q)`` opens its next arm, tests ``case W P``."""
        at, line = self.i, self.line
        if _lit(self.word(False)) == "esac":
            self.frames.pop()
            self.pattern_next = False
            return True
        self.i, self.line = at, line
        case, arm = self.frames[-1] or (0, 0)
        self.i += self.s.startswith("(", self.i)
        outer, joined, c = tuple(f for f in self.frames[:-1] if f is not None), None, "|"
        while c == "|":
            self.i = _BLANKS.match(self.s, self.i).end()  # type: ignore[union-attr]
            pattern = [(k, _glob(t) if k == "lit" and q else t, q)
                       for k, t, q in self.word(False, True)]  # fmt: skip
            self.add(Command([[("lit", "case", False)], self.cases[case], pattern], self.line,
                             self.cond(), arms=outer, test=(case, arm + 1), joined=joined))
            self.i = _BLANKS.match(self.s, self.i).end()  # type: ignore[union-attr]
            self.i, c, joined = self.i + 1, self.s[self.i: self.i + 1], "||"
        if c != ")":
            raise self.error("a case pattern does not end with ')'")
        self.frames[-1], self.pattern_next = (case, arm + 1), False
        return True

    def emit(self, words: list[list[Part]], arrays: dict[int, list[list[Part]]], line: int,
             before: str | None, here: list[Part] | None) -> None:
        first = _lit(words[0])
        outer = tuple(f for f in self.frames[:-1] if f is not None)
        if first in ("elif", "else") and self.frames and self.frames[-1] is not None:
            arm = (self.frames[-1][0], self.frames[-1][1] + 1)
            self.frames[-1], self.testing = arm, arm if first == "elif" else None
            if first == "else":
                self.add(Command(words[:1], line, False, arms=outer, test=arm))
            if len(words) == 1:
                return
            words, arrays, first = words[1:], {i - 1: a for i, a in arrays.items()}, ""
            before = None
        elif first == "if" and len(words) > 1:
            self.ifs += 1
            outer = tuple(f for f in self.frames if f is not None)
            self.frames.append((self.ifs, 0))
            self.testing, before = (self.ifs, 0), None
            words, arrays, first = words[1:], {i - 1: a for i, a in arrays.items()}, ""
        if self.testing is not None and first != "then":  # (part of) an if's condition
            self.add(Command(words, line, self.cond(), arrays, here, outer, self.testing,
                             before))  # fmt: skip
            return
        while first in _LEAD and len(words) > 1:
            self.testing = None if first == "then" else self.testing
            words, arrays = words[1:], {i - 1: a for i, a in arrays.items()}
            first = _lit(words[0])
        if first in _CLOSE or first == "then":
            self.testing, self.pattern_next = None, self.pattern_next and first != "esac"
            if first != "then" and self.frames:
                self.frames.pop()
            if self.fn and self.fn[-1][1] >= len(self.frames):
                self.fn.pop()
            return
        k = 2 if first == "function" else 1  # f() { body; } on one line: the body apart
        if len(words) > k + 1 and _lit(words[k]) == "{" and (k == 2 or first[-2:] == "()"):
            self.emit(words[: k + 1], {}, line, before, None)
            self.emit(words[k + 1:], {i - k - 1: a for i, a in arrays.items()}, line, None, here)
            return
        function = len(words) >= 2 and words[-1] == [("lit", "{", False)] and (
            first == "function" or (len(words) == 2 and words[0][-1][1].endswith("()")))
        name = _lit(words[1] if first == "function" else words[0]).removesuffix("()")
        self.add(Command(words, line, self.cond() or before in ("&&", "||"), arrays, here,
                         tuple(f for f in self.frames if f is not None),
                         defines=name if function and name else None))  # fmt: skip
        if first in _OPEN or function:
            self.frames.append(None)
        if function and name:
            self.fn.append((name, len(self.frames) - 1))

    def skip_blank(self) -> str | None:
        """Skip blanks, comments and continuations; the separator met (``\\n``, ``;``, ``&&``,
        ``||``, ``|``, ``&``), if any."""
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i, self.line = self.i + 2, self.line + 1
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\n":
                self.i, self.line = self.i + 1, self.line + 1
                self.skip_heredocs()
                return "\n"
            elif c in ";|&" and not s.startswith("&>", self.i):
                op = s[self.i: self.i + 2] if s[self.i: self.i + 2] in ("&&", "||", ";;") else c
                self.i += len(op)
                return op
            else:
                return None
        return None

    def skip_heredocs(self) -> None:
        """Read the here-documents queued on the line just ended; the last one's text is the
        command's input (:attr:`doc`). One that never meets its delimiter line is an error."""
        for delim, quoted, tabs in self.heredocs:
            lines, first = [], self.line
            while True:
                if self.i >= len(self.s):
                    self.line = first
                    raise self.error(f"a here-document <<{delim} does not end (no line "
                                     f"{delim!r} before the end)")  # fmt: skip
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                text, self.i, self.line = self.s[self.i: end], end + 1, self.line + 1
                text = text.lstrip("\t") if tabs else text
                if text.rstrip("\r") == delim:
                    break
                lines.append(text + "\n")
            self.doc = [("lit" if quoted else "doc", "".join(lines), True)]  # doc: doc_parts
        self.heredocs = []

    def redirect(self) -> list[Part] | None:
        """Skip a redirection; the word of a here-string (``<<< WORD``), kept for ``read``."""
        m = re.compile(r"&>>?|<<<|<<-?|<>|[<>]>?&?").match(self.s, self.i)
        assert m is not None  # called at < or > or &>
        self.i = m.end()
        op = m.group()
        if op.endswith("&") and re.match(r"[0-9-]", self.s[self.i: self.i + 1]):
            self.i += 1
            return None
        self.skip_blank()
        target = self.word(False)
        if op == "<<<":  # the word and a newline: a command's input
            return [*target, ("lit", "\n", True)]
        if op.startswith("<<"):
            quoted = any(q for _, _, q in target) or "\\" in self.s[m.end(): self.i]
            self.heredocs.append(("".join(t for _, t, _ in target), quoted, op == "<<-"))
            self.doc_by = self.emitted
        return None

    def array(self) -> list[list[Part]]:
        items: list[list[Part]] = []
        while True:
            sep = self.skip_blank()
            while sep == "\n":  # blank and comment lines inside the array
                sep = self.skip_blank()
            if sep is not None:
                raise self.error(f"{sep!r} inside an array")
            if self.i >= len(self.s):
                raise self.error("an array ( ... ) does not close")
            if self.s[self.i] == ")":
                self.i += 1
                return items
            items.append(self.word(False, True))

    def word(self, in_dq: bool, in_array: bool = False) -> list[Part]:
        """One word (``in_dq``: the inside of a double-quoted string, up to its quote;
        ``in_array``: an element of ``NAME=( ... )``, up to its ``)``)."""
        parts: list[Part] = []
        buf: list[str] = []
        s = self.s

        def flush() -> None:
            if buf:
                parts.append(("lit", "".join(buf), in_dq))
                buf.clear()

        while self.i < len(s):
            c = s[self.i]
            if in_dq and c == '"' and not self.in_doc:
                break
            if not in_dq and (c in " \t\r\n;&|<>" or (c == ")" and in_array)):
                break
            if c == "(" and not in_dq and not parts and ASSIGN.fullmatch("".join(buf)):
                break  # NAME=( ... ): the array follows
            if c == "\\":
                nxt = s[self.i + 1: self.i + 2]
                if nxt == "\n":
                    self.i, self.line = self.i + 2, self.line + 1
                    continue
                if in_dq and (nxt not in ('"', "\\", "$", "`") or (nxt == '"' and self.in_doc)):
                    buf.append("\\")
                buf.append(nxt)
                self.i += 2
            elif c == "'" and not in_dq:
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise self.error("a ' quote does not close")
                flush()
                parts.append(("lit", s[self.i + 1: end], True))
                self.line += s.count("\n", self.i, end)
                self.i = end + 1
            elif c == '"' and not in_dq:
                flush()
                self.i += 1
                inner = self.word(True)
                if self.i >= len(s):
                    raise self.error('a " quote does not close')
                self.i += 1
                parts += inner or [("lit", "", True)]
            elif c == "$" and self.i + 1 < len(s) and (s[self.i + 1] in "({@*#?$!" or
                                                         _NAME.match(s, self.i + 1) or
                                                         s[self.i + 1].isdigit()):  # fmt: skip
                flush()
                parts.append(self.dollar(in_dq))
            elif c == "`":
                end = s.find("`", self.i + 1)
                if end < 0:
                    raise self.error("a ` quote does not close")
                flush()
                parts.append(("cmd", s[self.i + 1: end], in_dq))
                self.i = end + 1
            else:
                if c == "\n":
                    self.line += 1
                buf.append(c)
                self.i += 1
        flush()
        return parts

    def dollar(self, in_dq: bool) -> Part:
        s, i = self.s, self.i + 1
        if s.startswith("((", i):
            end = self.closing(i + 2, "(", ")", 2)
            self.i = end + 2
            return ("arith", s[i + 2: end], in_dq)
        if s[i] == "(":
            end = self.closing(i + 1, "(", ")", 1)
            self.i = end + 1
            return ("cmd", s[i + 1: end], in_dq)
        if s[i] == "{":
            end = self.closing(i + 1, "{", "}", 1)
            self.i = end + 1
            return ("var", s[i + 1: end], in_dq)
        m = _NAME.match(s, i)
        self.i = m.end() if m else i + 1
        return ("var", m.group() if m else s[i], in_dq)

    def closing(self, start: int, open_: str, close: str, width: int) -> int:
        """The index of the ``close`` (``width`` of them) that ends a nest opened before
        ``start``, quotes skipped."""
        depth, i, s = 1, start, self.s
        while i < len(s):
            c = s[i]
            if c == "'" and open_ == "(":
                i = s.find("'", i + 1)
                if i < 0:
                    break
            elif c == "\\":
                i += 1
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0 and s.startswith(close * width, i):
                    self.line += s.count("\n", start, i)
                    return i
                if depth == 0:
                    break
            i += 1
        raise self.error(f"a ${open_} does not close")


def _glob(text: str) -> str:
    """Quoted text of a case pattern: its glob characters matched literally (``[*]``)."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _lit(word: list[Part]) -> str:
    return word[0][1] if len(word) == 1 and word[0][0] == "lit" else ""
