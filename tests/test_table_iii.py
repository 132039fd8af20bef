"""Table III says what each row counts: its symbol matches its expression, its unit names
elements or bytes with the dtypes, and element counts (the paper's unit) sit beside bytes."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import sympy as sp

from rlmcost import symbols as sy
from rlmcost.logs import clog2

ROOT = Path(__file__).resolve().parents[1]
NAMES = {s.name: s for s in vars(sy).values() if isinstance(s, sp.Symbol)} | {"clog2": clog2}


def _rows() -> dict[str, dict[str, str]]:
    lines = (ROOT / "tables" / "table_03.csv").read_text().splitlines()
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    return {r["quantity"]: r for r in rows}


ROWS = _rows()


def _expr(key: str) -> sp.Expr:
    return sp.sympify(ROWS[key]["explicit"], locals=NAMES)


@pytest.mark.parametrize("key", list(ROWS))
def test_the_symbol_carries_the_batch_factor_iff_the_expression_does(key):
    symbol = ROWS[key]["symbol"]
    # a row counts B sequences exactly when its symbol says so (B C_prefill(S), B M_KV(c))
    assert (sy.B in _expr(key).free_symbols) == bool(re.search(r"\bB\b", symbol)), symbol


def test_per_sequence_rows_have_no_batch():
    for key in ("rollout_flops", "depth_generation", "depth_forward"):
        assert sy.B not in _expr(key).free_symbols, key


@pytest.mark.parametrize("key", list(ROWS))
def test_every_unit_is_a_count_or_bytes_with_dtypes(key):
    unit = ROWS[key]["unit"]
    if unit.startswith("bytes"):
        assert re.fullmatch(r"bytes \(.*\b(bf16|fp32|16-bit)\b.*\)", unit), unit
        assert key.endswith("_bytes"), key
    else:
        assert unit in ("FLOP", "reduction levels", "elements", "elements (parameters)"), unit


def test_element_counts_come_first_and_bytes_beside_them():
    keys = list(ROWS)
    pairs = {
        "params": "weight_bytes",
        "kv_cache_elements": "kv_cache_bytes",
        "inference_buffer_elements": "inference_buffer_bytes",
        "logits_elements": "logits_bytes",
        "adam_state_elements": "adam_state_bytes",
    }
    for elements, nbytes in pairs.items():
        assert ROWS[elements]["unit"].startswith("elements")
        assert keys.index(nbytes) in (keys.index(elements) + 1, keys.index(elements) + 2)
        assert ROWS[nbytes]["symbol"].startswith(f"bytes({ROWS[elements]['symbol']})")
    # the paper's activation count M_Act = B m L d comes before the saved-tensor bytes model
    assert keys.index("activation_elements_paper") + 1 == keys.index("activation_bytes")


def test_bytes_are_the_elements_times_the_stated_dtype():
    # hand: bf16 = 2 bytes per element, fp32 = 4; mixed-precision Adam keeps 2 (weight) +
    # 2 (gradient) + 4 + 4 + 4 (fp32 master, m, v) = 16 bytes per parameter, i.e. 4 bytes per
    # element of its 4|M| (Rajbhandari et al. 2020, §3.1)
    for elements, nbytes, per in (
        ("params", "weight_bytes", 2),
        ("kv_cache_elements", "kv_cache_bytes", 2),
        ("inference_buffer_elements", "inference_buffer_bytes", 2),
        ("logits_elements", "logits_bytes", 4),
        ("adam_state_elements", "adam_state_bytes", 4),
    ):
        assert sp.expand(_expr(nbytes) - per * _expr(elements)) == 0, nbytes
    assert "bf16" in ROWS["kv_cache_bytes"]["unit"] and "fp32" in ROWS["logits_bytes"]["unit"]


def test_element_counts_by_hand():
    B, L, d, m, c, V = sy.B, sy.L, sy.d, sy.m, sy.c, sy.V
    # K and V vectors (d each, MHA) per layer per cached token, B sequences of context c
    assert sp.expand(_expr("kv_cache_elements") - 2 * B * L * c * d) == 0
    # §III-G: training activations B (S + T) L d at m = S + T
    assert sp.expand(_expr("activation_elements_paper") - B * m * L * d) == 0
    # one fp32 logit per vocabulary entry per token
    assert sp.expand(_expr("logits_elements") - B * m * V) == 0
    # §III-G1: parameters, gradients, two moments
    assert sp.expand(_expr("adam_state_elements") - 4 * _expr("params")) == 0
