"""Human formatting of numbers with units: one formatter per unit. FLOPs in base 1000, bytes
in base 1024 (KiB, MiB, GiB), seconds scaled to ms / s / min / h."""

from __future__ import annotations

import math

from rlmcost.errors import SpecError

_FLOP_PREFIXES = ("", "k", "M", "G", "T", "P", "E", "Z", "Y")
_BYTE_PREFIXES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def format_flops(value: float | int, unit: str = "FLOP") -> str:
    """1.23e15 -> '1.23 PFLOP' (base 1000).

    >>> format_flops(1_230_000_000_000_000)
    '1.23 PFLOP'
    >>> format_flops(989_400_000_000_000, "FLOP/s")
    '989 TFLOP/s'
    """
    v = _number(value, "format_flops")
    i = 0
    while math.isfinite(v) and abs(v) >= 1000 and i < len(_FLOP_PREFIXES) - 1:
        v /= 1000
        i += 1
    return f"{_three(v)} {_FLOP_PREFIXES[i]}{unit}"


def format_bytes(value: float | int) -> str:
    """Bytes in base 1024: 41231686041 -> '38.4 GiB'.

    >>> format_bytes(41_231_686_041)
    '38.4 GiB'
    >>> format_bytes(512)
    '512 B'
    """
    v = _number(value, "format_bytes")
    i = 0
    while math.isfinite(v) and abs(v) >= 1024 and i < len(_BYTE_PREFIXES) - 1:
        v /= 1024
        i += 1
    if not math.isfinite(v):  # nan, inf: said as they are, not an int() error
        return f"{v:g} B"
    return f"{_three(v)} {_BYTE_PREFIXES[i]}" if i else f"{int(v)} B"


def format_bandwidth(value: float | int) -> str:
    """Bytes per second in base 1000, as datasheets print links: 4.5e11 -> '450 GB/s'."""
    return format_flops(value, "B/s").replace("kB", "KB")


def format_seconds(value: float) -> str:
    """Seconds with a sensible unit: 0.0021 -> '2.10 ms', 5400 -> '1.50 h'.

    >>> format_seconds(0.0021), format_seconds(2.1), format_seconds(5400)
    ('2.10 ms', '2.10 s', '1.50 h')
    """
    v = _number(value, "format_seconds")
    if v == 0 or not math.isfinite(v):
        return f"{v:g} s"
    for scale, unit in _SECOND_UNITS:
        if abs(v) >= scale:
            return f"{v / scale:.2f} {unit}"
    return f"{v * 1e9:.2f} ns"


_SECOND_UNITS = ((3600, "h"), (60, "min"), (1, "s"), (1e-3, "ms"), (1e-6, "us"))
"""The units :func:`format_seconds` writes seconds in, the largest first (below: ns)."""


def format_span(start: float, end: float) -> str:
    """An interval of seconds in one unit, the end's: 62.9, 129.6 -> '1.05-2.16 min' (not
    '62.9-2.16 min', whose ends read in different units).

    >>> format_span(0, 25.14), format_span(62.9, 129.6), format_span(129.6, 195.6)
    ('0-25.14 s', '1.05-2.16 min', '2.16-3.26 min')
    """
    v = float(end)
    scale, unit = next(((k, u) for k, u in _SECOND_UNITS if abs(v) >= k), (1e-9, "ns"))
    if v == 0:
        return "0-0 s"
    first = "0" if start == 0 else f"{float(start) / scale:.2f}"
    return f"{first}-{v / scale:.2f} {unit}"


def format_count(value: int) -> str:
    """Large counts with base-1000 suffixes: 70553706496 -> '70.6 B' (parameters)."""
    v = _number(value, "format_count")
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if math.isfinite(v) and abs(v) >= scale:
            return f"{_three(v / scale)} {unit}"
    return str(int(v)) if math.isfinite(v) else str(v)


def _number(value: object, where: str) -> float:
    """``value`` as a float, or a SpecError naming ``where`` for what is not a number
    (``format_bytes("x")`` had been a ValueError from float())."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SpecError(f"{where}({value!r:.40}): give a number (an int or a float)") from None


def _three(v: float) -> str:
    """Three significant digits without scientific notation."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"
