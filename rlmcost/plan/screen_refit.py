"""The screen's helpers (:mod:`rlmcost.plan.screen`): the seconds of the actor's weight sync
into engines apart, which a synchronous iteration waits for, and the distinct keys of a large
candidate array."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from rlmcost.plan.screen import Query


LARGE_SCREEN = 100_000
"""Candidates from which :func:`distinct` hashes (pandas) rather than sorts (numpy)."""


def distinct(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For integer keys (1-D): each key's index among the distinct keys, and a position of
    each distinct key (hashing, one pass, for large screens; a sort for small ones, which
    keeps pandas out of the queries that size a few configurations)."""
    import numpy as np

    if key.size < LARGE_SCREEN:
        uniq, index, back = np.unique(key, return_index=True, return_inverse=True)
        return np.asarray(back).reshape(-1), np.asarray(index, dtype=np.int64)
    import pandas as pd

    back, uniq = pd.factorize(key)
    first = np.empty(len(uniq), dtype=np.int64)
    first[back] = np.arange(key.size)  # the last of each: all of them alike
    return np.asarray(back), first


def refit_apart_s(q: Query, gpus: np.ndarray, train: np.ndarray, rollout: np.ndarray,
                  etp: np.ndarray) -> np.ndarray:  # fmt: skip
    """Predicted seconds of the actor's weight sync into engines on R GPUs of their own
    (``placement/weight_syncs.py`` ``weight_syncs``: ``perf/refit.py`` ``refit_s`` of the
    model's bytes over the sending nodes' lanes, each engine rank loading its TP shard), which
    a synchronous iteration waits for before the next generation; 0 without such a refit."""
    import numpy as np

    from rlmcost.choices import Dtype
    from rlmcost.perf.packed_refit import fp8_requant_s
    from rlmcost.perf.refit import Refit, refit_s

    if q.refit_apart is None:
        return np.zeros(gpus.shape)
    nbytes = int(q.refit_bytes)
    gpn = q.hardware.gpus_per_node
    cross = gpus > gpn
    # each host sends its own part over its own NICs (a GB200 NVL72 rack is 18 hosts of 4
    # GPUs, HardwareSpec.host_gpus, as weight_syncs counts them); a pool's smallest host
    # gives the most lanes, the shortest sync, as a lower bound must
    host = min(h.host_gpus for h in (q.hardware, *q.pool))
    lanes = np.where(cross, np.minimum(-(-train // host), -(-np.maximum(rollout, 1) // host)), 1)
    mech = Refit(q.refit_apart)
    # through shared storage the full model is saved once and reloaded by every server;
    # NeMo RL's packed broadcast pipelines the full model through one group (packed_refit)
    whole = mech in (Refit.DISK, Refit.PACKED_NCCL)
    part = np.full(lanes.shape, nbytes) if whole else -(-nbytes // lanes)
    shard = -(-nbytes // etp)
    # few distinct (lanes, engine TP, cross-node): the exact function once for each
    key = (lanes.astype(np.int64) * 4096 + etp.astype(np.int64)) * 2 + cross
    back, first = distinct(key)
    p, sh, cr = part.ravel()[first], shard.ravel()[first], cross.ravel()[first]
    each = np.array([refit_s(mech, int(p[i]), engine_shard_bytes=int(sh[i]),
                             cross_node=bool(cr[i])) for i in range(len(first))])  # fmt: skip
    if mech is Refit.PACKED_NCCL and q.engine_dtype is Dtype.FP8:  # every rank re-quantizes
        each = each + fp8_requant_s(nbytes // q.dtypes.weight_dtype.bytes, q.hardware)
    return each[back]
