"""A part's sustained GEMM efficiency at a board power limit below the one it was measured at
(:func:`power_capped`). Split from :mod:`rlmcost.perf.efficiency`, which reads it for the
power-limited H100 variant, by purpose."""

from __future__ import annotations

from rlmcost.errors import SpecError


def power_capped(efficiency: float, cap_w: float, rated_w: float) -> float:
    """Sustained large-GEMM efficiency of a part held to a board power limit ``cap_w`` below the
    ``rated_w`` its sustained rate was measured at: ``efficiency x cap_w / rated_w``.

    The MSMF is the power-saturated rate (module docstring; "matmuls on the H100 are primarily
    not compute or bandwidth limited, they are power limited": H. He, "Strangely, Matrix
    Multiplications on GPUs Run Faster When Given 'Predictable' Data", thonking.ai, 2024).
    Assumption: at a lower limit such a GEMM keeps its energy per FLOP, so its rate scales with
    the power. The one published pair of the same GEMM at two limits lies around it:
    facebookexperimental/triton PR 2023 (2026-07, denoise.sh) measured cuBLAS GEMMs on a GB300
    at ~617 TFLOP/s held to 500 W against ~1600-2174 at its rated 1400 W: 0.28-0.39 of the rate
    at 0.36 of the power. Lower voltage at lower clocks would lose less than this (the rule
    disfavours the part); static and HBM power, which do not scale, would lose more.

    >>> round(power_capped(702.9 / 989, 500, 700), 3)  # H200's MSMF carried to a 500 W H100
    0.508
    """
    if not 0 < cap_w <= rated_w:
        raise SpecError(f"power limit {cap_w} W must be in (0, {rated_w}] W (the rated power)")
    return efficiency * cap_w / rated_w
