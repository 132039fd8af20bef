"""Calibration: PyTorch micro-kernels that check Table III's FLOPs and measure real throughput.

The harness (``rlmcost calibrate``, :func:`run_calibration`) runs the micro-kernels that the
building blocks describe (GEMM, attention, MLP, a Transformer block forward and
forward+backward, prefill, a decode step with a KV cache, an MoE expert FFN, a memory copy,
and collectives over ``torch.distributed``), asserts that the analytic FLOPs from
:mod:`rlmcost.blocks` equal what ``torch.utils.flop_counter.FlopCounterMode`` counts, and
measures achieved FLOP/s and bytes/s into a :class:`Profile` (JSON) that the time model
(:mod:`rlmcost.timing`) reads.

Importing this package never imports torch: profiles load and the time model runs without
it (the ``calibrate`` extra installs torch for the harness only). Names resolve lazily so
``import rlmcost.calibrate`` stays cheap.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.calibrate.profile import Profile
    from rlmcost.specs import HardwareSpec

PROFILES = Path(__file__).parent / "profiles"
"""The shipped profiles, ``<device>.json`` (package data, read beside this file:
``importlib.resources`` would add ~10 ms of imports to every query's start)."""


def resolve_profile(
    calibration: str | Path | None, hardware: HardwareSpec | None
) -> Profile | None:
    """What a query's ``--calibration`` option means: that file (checked against
    ``hardware``), else the built-in profile of ``hardware``, else None (roofline only).

    Every query asks; most hardware ships no profile, and then the answer (None) comes
    without loading :mod:`rlmcost.calibrate.profile` and building its pydantic model."""
    if calibration is not None:
        from rlmcost.calibrate.profile import load_profile

        return load_profile(calibration, hardware)
    if hardware is None or not (PROFILES / f"{hardware.name}.json").is_file():
        return None
    from rlmcost.calibrate.profile import builtin_profile

    return builtin_profile(hardware)


_EXPORTS = {
    "Profile": "rlmcost.calibrate.profile",
    "load_profile": "rlmcost.calibrate.profile",
    "builtin_profile": "rlmcost.calibrate.profile",
    "calibrated_seconds": "rlmcost.timing",
    "calibrated_time": "rlmcost.timing",
    "roofline_seconds": "rlmcost.timing",
    "CalibratedTime": "rlmcost.timing",
    "run_calibration": "rlmcost.calibrate.harness",
    "CalibrationReport": "rlmcost.calibrate.report",
    "KernelResult": "rlmcost.calibrate.report",
}

__all__ = sorted([*_EXPORTS, "PROFILES", "resolve_profile"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rlmcost.calibrate' has no attribute {name!r}")
