"""The command substitutions a launch script's folder idioms run, read as
:mod:`rlmcost.frameworks.shell_script` reads the rest (never run): ``$(dirname WORD)`` and
``$(cd DIR && pwd)`` (``cd -- DIR &>/dev/null && pwd`` too), DIR an absolute path once expanded
(``$(dirname "${BASH_SOURCE[0]}")/../..``: the script's folder, up two), its ``..`` taken as
text (:func:`os.path.normpath`; a symbolic link on the way is not followed). The frameworks'
scripts find their repository so: slime's ``SLIME_DIR``, miles' ``MILES_ROOT``, OpenRLHF's
``WORK_DIR=$(cd "$SCRIPT_DIR/../.." && pwd)``. Any other command (``$(pwd)``: the folder it
is started from) has no value, but for miles' model arguments, ``$(python3
.../miles/utils/external_utils/model_args_utils.py MODEL)``, read from the checkout's model file
(:mod:`rlmcost.frameworks.miles_model_args`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frameworks.shell_arith import Unresolved

if TYPE_CHECKING:
    from collections.abc import Callable

    from rlmcost.frameworks.shell_lexer import Part


def path_output(text: str, expand: Callable[[list[Part]], str], notes: list[str]) -> str:
    """The output of the command ``text`` (``expand``: a word's value, an unknown part kept as
    a mark containing ``\\x00`` or ``\\x01``; ``notes`` takes a note on what was read);
    :class:`Unresolved` where it is not one of the idioms or its folder is not known."""
    from rlmcost.frameworks.shell_lexer import commands

    unknown = Unresolved(f"({text.strip()[:100]})", "is a command's output",
                         text.strip() == "pwd")  # fmt: skip
    try:
        cmds = commands(text, "a command substitution")
    except SpecError:
        raise unknown from None
    words = [[w for w in c.words if w != [("lit", "--", False)]] for c in cmds]
    lead = [_lit(w[0]) for w in words if w]
    if lead == ["dirname"] and len(words[0]) == 2:
        value = expand(words[0][1])
        if "\x00" not in value and "\x01" not in value:
            return os.path.dirname(value.rstrip("/")) or "."
    elif lead == ["cd", "pwd"] and len(words[0]) == 2 and len(words[1]) == 1:
        value = expand(words[0][1])
        if os.path.isabs(value) and "\x00" not in value and "\x01" not in value:
            return os.path.normpath(value)
    elif len(words) == 1 and "model_args_utils" in text:  # miles' model arguments
        from rlmcost.frameworks.miles_model_args import helper_output

        values = [expand(w) for w in words[0]]
        line = None if any("\x00" in v or "\x01" in v for v in values) else \
            helper_output(values, notes)  # fmt: skip
        if line is not None:
            return line
    raise unknown


def _lit(word: list[Part]) -> str:
    return word[0][1] if len(word) == 1 and word[0][0] == "lit" else ""
