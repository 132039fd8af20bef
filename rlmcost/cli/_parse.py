"""Option parsers shared by the commands."""

from __future__ import annotations

from fractions import Fraction

import typer


def parse_fraction(text: str | None, param_hint: str = "--oversample") -> Fraction | None:
    """'3', '1.5' or '3/2' as an exact Fraction; None stays None; else a one-line error."""
    if text is None:
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise typer.BadParameter(
            f"{text!r} is not a number (e.g. 3, 1.5 or 3/2)", param_hint=param_hint
        ) from None


CALIBRATION_HELP = (
    "Calibration profile (JSON from `rlmcost calibrate --out FILE`) for the time model "
    "(default: the profile shipped for --hardware, else datasheet peaks: a true lower bound)."
)
"""One help text for every command's --calibration option."""
