"""rlmcost/perf/rl_constants.py: every global RL step-time constant is sourced and has a spread.

The module is introspected, so a constant added later is checked without editing this file.
The few exact numbers are re-derived here from the figures their sources give.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.perf import rl_constants as rc

CONSTANTS = rc.constants()
DEFAULTS = rc.engine_defaults()


def test_module_has_constants_of_every_section():
    names = set(CONSTANTS)
    for needed in (
        "REFIT_IPC_BYTES_PER_S", "REFIT_NCCL_CROSS_NODE_BYTES_PER_S", "VLLM_WAKE_BYTES_PER_S",
        "VLLM_SLEEP_BYTES_PER_S", "SGLANG_RELEASE_RESUME_S", "RAY_ACTOR_CALL_S",
        "CPU_ADAM_HOST_S_PER_PARAM", "PCIE_GEN4_X16_PINNED_BYTES_PER_S",
        "VLLM_DECODE_STEP_OVERHEAD_S", "HF_GENERATE_SLOWDOWN_RATIO",
        "RESPONSE_LENGTH_LOG_SIGMA",
    ):  # fmt: skip
        assert needed in names
    assert len(DEFAULTS) >= 3


@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_constant_is_ordered_positive_and_sourced(name):
    c = CONSTANTS[name]
    assert 0 < c.low <= c.value <= c.high
    assert all(math.isfinite(x) for x in (c.low, c.value, c.high))
    assert len(c.source.strip()) >= 10  # a citation, not a placeholder
    assert len(_docstrings()[name]) > 150, f"{name}: the docstring gives no figures"
    assert name.endswith(rc.UNIT_SUFFIXES), f"{name} names no unit"


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_engine_default_is_sourced(name):
    d = DEFAULTS[name]
    assert "vllm/" in d.source or "vLLM" in d.source
    assert name.endswith(rc.DEFAULT_SUFFIXES)
    if not isinstance(d.value, bool):
        assert d.value > 0


def _docstrings() -> dict[str, str]:
    """Module-level ``NAME = ...`` assignments followed by a string literal."""
    body = ast.parse(Path(rc.__file__).read_text()).body
    found = {}
    for stmt, after in zip(body, body[1:], strict=False):
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[stmt.targets[0].id] = after.value.value
    return found


def test_every_constant_and_default_has_a_docstring():
    docs = _docstrings()
    for name in (*CONSTANTS, *DEFAULTS):
        assert docs.get(name, "").strip(), f"{name} has no docstring line"


def test_bad_bounds_and_empty_source_are_refused():
    with pytest.raises(SpecError, match="low <= value <= high"):
        rc.Constant(2.0, 3.0, 4.0, source="x")
    with pytest.raises(SpecError, match="low <= value <= high"):
        rc.Constant(0.0, 0.0, 1.0, source="x")
    with pytest.raises(SpecError, match="source"):
        rc.Constant(1.0, 1.0, 1.0, source="  ")
    with pytest.raises(SpecError, match="use 'low'"):
        rc.RAY_ACTOR_CALL_S.at("median")


def test_at_returns_each_end():
    c = rc.VLLM_WAKE_BYTES_PER_S
    assert (c.at("low"), c.at("value"), c.at("high")) == (c.low, c.value, c.high)


# Re-derivations from the figures quoted in the sources (bf16 bytes = 2 x parameters).


def test_refit_ipc_line_from_nemo_rl_v03_blog():
    # NeMo RL v0.3 (H100, Megatron): Llama-3.1-8B refit 5 s, Llama-3.1-70B 14 s (v0.3 blog step
    # tables), DeepSeek-V3 (671e9 parameters) 47.2 s (refit blog 2025-08-12 Table 1); the
    # least-squares line through the three.
    gb = [2 * 8.03, 2 * 70.55, 2 * 671.0]
    s = [5.0, 14.0, 47.2]
    mx, my = sum(gb) / 3, sum(s) / 3
    slope = sum((x - mx) * (y - my) for x, y in zip(gb, s, strict=True)) / sum(
        (x - mx) ** 2 for x in gb)  # fmt: skip
    assert 1e9 / slope == pytest.approx(rc.REFIT_IPC_BYTES_PER_S.value, rel=0.01)
    assert my - slope * mx == pytest.approx(rc.REFIT_IPC_FIXED_S.value, rel=0.02)
    # low: the 70B all-in rate; high: the marginal rate from 70B to DeepSeek-V3
    assert gb[1] * 1e9 / 14 == pytest.approx(rc.REFIT_IPC_BYTES_PER_S.low, rel=0.01)
    assert (gb[2] - gb[1]) * 1e9 / (47.2 - 14) == pytest.approx(rc.REFIT_IPC_BYTES_PER_S.high,
                                                                rel=0.01)  # fmt: skip
    # each published time is within its spread of the line
    for x, y in zip(gb, s, strict=True):
        assert abs(rc.REFIT_IPC_FIXED_S.value + x * 1e9 / rc.REFIT_IPC_BYTES_PER_S.value - y) < 3.0


def test_inprocess_refit_line_from_verl_pr_116():
    # verl PR 116 (8xL20, TP4): Qwen2.5-3B 0.236 s, Llama-3-8B 0.570 s.
    b3, b8 = 2 * 3.09e9, 2 * 8.03e9
    slope = (0.570 - 0.236) / (b8 - b3)
    assert 1 / slope == pytest.approx(rc.REFIT_INPROCESS_BYTES_PER_S.value, rel=0.01)
    assert 0.236 - b3 * slope == pytest.approx(rc.REFIT_INPROCESS_FIXED_S.value, rel=0.05)
    # The 7B point (Qwen2.5-7B, 0.547 s) lies on the same line within 2 %.
    on_line = 0.236 + (2 * 7.62e9 - b3) * slope
    assert on_line == pytest.approx(0.547, rel=0.02)


def test_wake_line_from_vllm_sleep_mode_blog():
    # vLLM sleep-mode blog, A100 level 1: Qwen3-0.6B 0.26 s, Phi-3-vision-128k 0.82 s.
    b06, bphi = 2 * 0.596e9, 2 * 4.15e9
    slope = (0.82 - 0.26) / (bphi - b06)
    assert 1 / slope == pytest.approx(rc.VLLM_WAKE_BYTES_PER_S.value, rel=0.01)
    assert 0.26 - b06 * slope == pytest.approx(rc.VLLM_WAKE_FIXED_S.value, rel=0.05)


def test_ray_constants_from_release_microbenchmarks():
    # ray-project/ray release/perf_metrics/microbenchmark.json
    assert 1 / 2011.916 == pytest.approx(rc.RAY_ACTOR_CALL_S.value, rel=0.001)
    low = rc.RAY_OBJECT_STORE_PUT_BYTES_PER_S.low
    assert (19.856 - 8.982) * 1e9 == pytest.approx(low, rel=0.001)
    # scalability/object_store.json: 1 GiB to 50 nodes in 16.938 s.
    assert 50 * 2**30 / 16.938 == pytest.approx(rc.RAY_CROSS_NODE_BYTES_PER_S.value, rel=0.01)


def test_cpu_adam_bytes_and_time():
    # DeepSpeed cpu_adam_impl.cpp Step_*: read param, grad, m, v; write param, m, v (fp32).
    assert rc.CPU_ADAM_BYTES_PER_PARAM.value == 4 * 4 + 3 * 4
    c = rc.CPU_ADAM_HOST_S_PER_PARAM
    assert rc.CPU_ADAM_BYTES_PER_PARAM.value / 200e9 == pytest.approx(c.value, rel=0.01)


def test_response_length_sigma_derivation():
    # verl issue 2060 step 1: max 963, min 87; DeepScaleR: wrong answers ~3x longer.
    base = math.log(963 / 87) / (2 * 3.2)
    assert base == pytest.approx(rc.RESPONSE_LENGTH_LOG_SIGMA.low, abs=0.01)
    mixed = math.sqrt(base**2 + (math.log(3) / 2) ** 2)
    assert mixed == pytest.approx(rc.RESPONSE_LENGTH_LOG_SIGMA.value, abs=0.01)


def test_decode_overhead_high_from_vllm_v060_profile():
    # v0.6.0 blog: scheduling 29 %, GPU 38 % of the time; V1 blog: ~5 ms GPU step.
    assert 5e-3 * 29 / 38 == pytest.approx(rc.VLLM_DECODE_STEP_OVERHEAD_S.high, rel=0.01)


def test_module_imports_nothing_heavy():
    tree = ast.parse(Path(rc.__file__).read_text())
    imported = {
        a.name if isinstance(n, ast.Import) else n.module
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    # rlmcost.frozen: the standard library only (inspect, reprlib, types)
    assert imported <= {"__future__", "dataclasses", "rlmcost.errors", "rlmcost.frozen"}
