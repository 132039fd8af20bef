"""The copies of activation offload (:mod:`rlmcost.parallel.act_offload`): what they cost an
update beyond the compute they hide behind.

Each micro-batch sends the saved activations of every layer but the last to pinned host memory
during its forward (verl ``AsyncDoubleBufferGroupOffloadHandler``: a side stream, ``copy_`` of
``non_blocking=True`` into ``pin_memory=True`` buffers; verl/utils/activation_offload.py
@b178a3cd) and brings them back during its backward, each direction at the host link's rate.
rlmcost takes the forward as a third of the micro-batch's compute and the backward (its rerun
under full recomputation included) as the rest (the 1 : 2 of their FLOPs), and prices what each
direction's copies take beyond its window: exposed only, as the handler overlaps them.
"""

from __future__ import annotations

from typing import Any

from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import saved_bytes
from rlmcost.parallel.layout import Layout


def offloaded_bytes(arch: Any, layout: Layout, tokens: int, act_bytes: int,
                    fused_glu: bool = False) -> int:  # fmt: skip
    """Bytes one micro-batch of ``tokens`` tokens per GPU sends to host memory each way: the
    saved activations of every layer but the last (its model's layers; exact ints).

    >>> from rlmcost.specs import get_model
    >>> from rlmcost.parallel.layout import Checkpointing
    >>> offloaded_bytes(get_model("qwen2.5-7b").arch(), Layout(ckpt=Checkpointing.FULL), 8192, 2)
    1585446912
    """
    a = arch_numbers(arch)
    n_moe = a.n_layers - a.first_dense_layers if a.moe else 0
    per = {m: saved_bytes(a, layout.tp, layout.sp, layout.ckpt, m, act_bytes, fused_glu)
           for m in (False, True)}  # fmt: skip
    total = (a.n_layers - n_moe) * per[False] + n_moe * per[True] - per[n_moe > 0]
    return int(tokens * total)


def exposed_s(copy_s: float, compute_s: float) -> float:
    """Seconds the copies of one micro-batch (``copy_s`` each way) take beyond its compute of
    ``compute_s`` (module docstring: a third forward, the rest backward).

    >>> exposed_s(0.3, 0.6), exposed_s(0.1, 0.6)
    (0.1, 0.0)
    """
    return max(0.0, copy_s - compute_s / 3) + max(0.0, copy_s - 2 * compute_s / 3)
