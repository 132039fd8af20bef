"""Prices of accelerators per GPU-hour: cited on-demand list prices, and the user's own.

The defaults (``data/prices.json``) are on-demand list prices of one GPU as a public cloud
price page listed them, each with its offer, page URL and date (``price_sources``): Lambda's
on-demand page (https://lambda.ai/pricing) as of 2026-05-07 for H100 SXM ($3.78), H100 PCIe
($2.86) and A100 40GB ($1.48), as a price survey verified against that page on that date
reported them (the JSON's ``reported_by``: techbytes.app, "Serverless GPU Pricing Matrix
2026"). List prices change: ``--price`` states yours. An accelerator the table does not list
(the H20, sold in China without a public on-demand list price found; the others whose list
prices were not collected) has none: give it with ``--price h20=1.2`` or a JSON file
``{"h20": 1.2}``. Prices are USD per GPU-hour (floats: a price is a rate, not a count).

Light to import (json only).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError

_DATA = Path(__file__).parent / "data" / "prices.json"


@cache
def price_sources() -> tuple[dict[str, Any], ...]:
    """Every default price with its offer, URL and date (``data/prices.json``)."""
    return tuple(json.loads(_DATA.read_text())["prices"])


def list_prices() -> dict[str, float]:
    """Hardware canonical name -> USD per GPU-hour (the cited defaults)."""
    return {p["hardware"]: float(p["usd_per_gpu_hour"]) for p in price_sources()}


def check_prices(prices: dict[str, float] | None) -> dict[str, float]:
    """``prices`` keyed by canonical hardware names (``h100`` -> ``h100-sxm``), each a finite
    positive number; SpecError naming the bad entry and the known hardware otherwise."""
    from rlmcost.specs.registry import hardware_name

    if prices is not None and not isinstance(prices, dict):
        raise SpecError(f"prices {prices!r:.60}: give a mapping hardware -> USD per GPU-hour, "
                        "e.g. {'h20': 1.2}, or the text h20=1.2")  # fmt: skip
    out: dict[str, float] = {}
    for name, value in (prices or {}).items():
        try:
            canonical = hardware_name(str(name))
        except SpecError as exc:
            raise SpecError(f"price for {exc}") from None
        if canonical in out:
            raise SpecError(f"price for {canonical} given twice ({name}={value!r}); give it once")
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value) or value <= 0:  # fmt: skip
            raise SpecError(
                f"price {name}={value!r} must be a positive number of USD per GPU-hour, "
                "e.g. h100=2.5"
            )
        out[canonical] = float(value)
    return out


def parse_prices(text: str | None) -> dict[str, float]:
    """``--price`` text: ``h100=2.5,h20=1.2`` or the path of a JSON file ``{"h100": 2.5}``
    (USD per GPU-hour); SpecError for anything else."""
    if text is None or not str(text).strip():
        return {}
    s = str(text).strip()
    if s.endswith(".json") or (Path(s).is_file() and "=" not in s):
        try:
            data = json.loads(Path(s).read_text())
        except OSError as exc:
            raise SpecError(f"cannot read price file {s}: {exc.strerror}; check the path") from None
        except ValueError:
            raise SpecError(f"price file {s} is not JSON; write {{\"h100\": 2.5}}") from None
        if not isinstance(data, dict):
            raise SpecError(f"price file {s} must hold a mapping hardware -> USD per GPU-hour")
        return check_prices(data)
    out: dict[str, Any] = {}
    for item in s.split(","):
        name, eq, value = item.partition("=")
        if name.strip() in out:
            raise SpecError(f"--price {text!r}: {name.strip()} given twice; give it once")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            out[name.strip()] = None
        if not eq or not name.strip() or out[name.strip()] is None:
            raise SpecError(
                f"--price {text!r}: {item.strip()!r} is not HARDWARE=USD; write "
                "h100=2.5,h20=1.2 (USD per GPU-hour) or a JSON file"
            )
    return check_prices(out)


def prices_for(names: list[str] | tuple[str, ...], given: dict[str, float] | None) -> dict[
        str, float]:  # fmt: skip
    """USD per GPU-hour of each accelerator in ``names`` that has one: ``given`` over the
    cited defaults."""
    table = {**list_prices(), **check_prices(given)}
    return {n: table[n] for n in names if n in table}


def missing_price(names: list[str] | tuple[str, ...], given: dict[str, float] | None) -> str | None:
    """A one-line note for the first accelerator in ``names`` without a price, and for the
    ``given`` prices of accelerators the run has none of, which price nothing (None: every
    accelerator has a price and every given one is used)."""
    have = prices_for(names, given)
    out = []
    for n in names:
        if n not in have:
            out.append(f"no list price for {n} in rlmcost.specs.prices; give --price {n}=USD "
                       "(per GPU-hour) to get the cost")  # fmt: skip
            break
    unused = [n for n in check_prices(given) if n not in names]
    if unused:
        out.append(f"--price {', '.join(unused)}: not used, the run has no such GPU (its GPUs: "
                   f"{', '.join(names)})")
    return "; ".join(out) or None
