"""A step no faster than a framework's published achieved rate: the floor that DeepSpeed-Chat's
blog rate (:mod:`rlmcost.perf.deepspeed_chat`) and AReaL's measured realhf rate
(:mod:`rlmcost.perf.realhf_rate`) put under their trainers' steps.

    seconds = FLOPs / (GPUs x dense peak FLOP/s x achieved fraction of the peak)

with the FLOPs counted as the framework counts them (the fraction was measured in that count).
The interval's low time takes the fraction's high end and the high time its low end.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.perf.rl_constants import Constant


def measured_rate_s(flops: int, gpus: int, peak_flops_per_s: float, fraction: Constant,
                    end: str = "value") -> float:  # fmt: skip
    """Seconds of ``flops`` on ``gpus`` devices of dense peak ``peak_flops_per_s`` at the
    ``fraction`` of it a framework achieved (module docstring); ``end``: ``"low"``,
    ``"value"`` or ``"high"`` time.

    >>> round(measured_rate_s(10**15, 8, 312e12, Constant(0.32, 0.2, 0.354, "blog")), 3)
    1.252
    """
    if gpus < 1 or peak_flops_per_s <= 0:
        raise SpecError(f"a measured rate needs gpus >= 1 and a positive peak, got {gpus}, "
                        f"{peak_flops_per_s}")  # fmt: skip
    rate = fraction.at({"low": "high", "high": "low"}.get(end, end))  # low time, high rate
    return flops / (gpus * peak_flops_per_s * rate)
