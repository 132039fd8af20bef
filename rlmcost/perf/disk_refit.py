"""The weight update through shared storage (AReaL): the trainer writes the updated parameters to
a shared file system, then every generation server reloads them from there.

AReaL v0.3 (inclusionAI/AReaL tag v0.3.0, e7eda163): after each ``train_step`` the model worker
saves the actor's parameters under ``constants.PARAM_REALLOC_PATH`` (``{fileroot}/.cache/...
/param_realloc``, realhf/system/model_worker.py, timed as ``param-sync-save``) and publishes the
version; the generation-server manager then has every SGLang server flush its requests and load
that directory with ``/update_weights_from_disk`` (realhf/system/gserver_manager.py
``flush_requests_and_update_weights``), the "Parameter Save/Load" arrow of arXiv 2505.24298
Figure 2 ("store the resulting parameters in distributed storage", §3.1). The trainer's save and
the servers' reload both sit on the update's critical path: the trainer does not return from the
step before the save, a server does not decode while it loads.

Time: ``model_bytes / DISK_REFIT_BYTES_PER_S`` over the full model in the weight dtype, the rate
of one measured save-and-reload. Not modelled: the storage's contention when many servers read
the same files at once (the measured figure had 4 servers), and page-cache effects.
"""

from __future__ import annotations

from rlmcost.perf.rl_constants import Constant

DISK_REFIT_BYTES_PER_S = Constant(1.02e9, 1.02e9, 2.03e9, "AReaL PR 324")
"""Full-model bytes per second of one weight update through shared storage (save + reload).

areal-project/AReaL pull request 324 (2025-09-11, "Add patch to accelerate SGLang weight
loading"): Qwen3-30B-A3B (30.5e9 parameters, 61.0 GB in bf16), allocation
``sglang:d4p1t4+megatron:(attn:d1p4t2c2|ffn:d1p4t2e2)``: "accelerates weight updating from ~60s
to ~30s". value (and low): 61.0 GB / 60 s = 1.02 GB/s, SGLang's own ``update_weights_from_disk``
load path, single-threaded, as SGLang v0.4.6 of AReaL v0.3 (arXiv 2505.24298 §5) runs it; high:
61.0 GB / 30 s = 2.03 GB/s with the PR's multi-threaded load (not in v0.3).
"""


def disk_refit_s(model_bytes: int, end: str = "value") -> float:
    """Seconds of one save-and-reload of ``model_bytes`` through shared storage (module
    docstring); ``end``: ``"low"``, ``"value"`` or ``"high"`` time.

    >>> round(disk_refit_s(61 * 10**9), 1)  # Qwen3-30B-A3B in bf16, AReaL PR 324
    59.8
    >>> round(disk_refit_s(61 * 10**9, "low"), 1)  # with the multi-threaded load
    30.0
    """
    if model_bytes <= 0:
        return 0.0
    rate_end = {"low": "high", "high": "low"}.get(end, end)  # the low time takes the high rate
    return model_bytes / DISK_REFIT_BYTES_PER_S.at(rate_end)
