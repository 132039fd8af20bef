"""A --price for an accelerator the run has none of prices nothing; the run says so rather
than ignore it in silence (the list prices of rlmcost.specs.prices still price the rest)."""

from __future__ import annotations

from rlmcost.specs.prices import missing_price


def test_unused_price_is_named():
    note = missing_price(["h100-sxm"], {"h20": 1.2})
    assert note == "--price h20: not used, the run has no such GPU (its GPUs: h100-sxm)"


def test_every_price_used_says_nothing_and_a_missing_one_still_shows():
    assert missing_price(["h100-sxm"], {"h100-sxm": 2.0}) is None
    assert missing_price(["h100-sxm"], None) is None  # its cited list price
    note = missing_price(["h20", "h100-sxm"], {"a100-80gb": 1.0})
    assert note is not None and note.startswith("no list price for h20")
    assert note.endswith("--price a100-80gb: not used, the run has no such GPU (its GPUs: h20, "
                         "h100-sxm)")
