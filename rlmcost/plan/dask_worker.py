"""Preloaded into each worker process of the local Dask cluster that `--workers N` starts
(:class:`rlmcost.plan.distributed.DaskRunner`; Dask's ``preload``: it calls
:func:`dask_setup` as the worker starts).

A terminal's Ctrl-C goes to its whole foreground process group, the local cluster's worker
processes included; a worker killed by it leaves the search nothing to finish with. The
workers ignore SIGINT, so Ctrl-C reaches the search alone, which keeps the rows found so
far and closes the cluster (``rlmcost.plan.rl_search``).
"""

from __future__ import annotations

from typing import Any


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (from its main thread, where Python allows
    ``signal.signal``; elsewhere nothing is changed)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
