"""Tensor-parallel communication overlapped with the GEMMs it feeds (``--tp-comm-overlap``).

Megatron-core's ``--tp-comm-overlap`` (``megatron/training/arguments.py``; it requires
``--sequence-parallel``) hands the sequence-parallel all-gather before the QKV and FC1 GEMMs
and the reduce-scatter after the projection and FC2 GEMMs, forward and backward, to
TransformerEngine's userbuffers (``transformer_engine/pytorch/module/base.py``
``initialize_ub``; ``ub_overlap_ag`` / ``ub_overlap_rs`` of ``LayerNormLinear`` and ``Linear``):
the GEMM is split into chunks and each chunk's exchange runs on a few SMs while the previous
chunk multiplies (collective matmul; Wang et al. 2023, "Overlap Communication with Dependent
Computation via Decomposition in Large Deep Learning Models", ASPLOS '23, §3).

Model: on each side of a micro-batch's pass (forward, backward) the stage's sequence-parallel
collectives hide behind that side's GEMMs; only the excess stays exposed::

    exposed_sp = max(0, sp - gemm)

Left out: the SMs the exchange takes from the GEMMs (TE gives userbuffers 2-16 SMs of 132
on H100, its ``num_sm`` defaults), the first chunk's exchange that nothing hides, and the
vocabulary-parallel embedding's and head's all-reduces (not overlapped by userbuffers;
counted as exposed with the rest, as an upper bound). Without sequence parallelism
(plain TP all-reduces) nothing changes: Megatron-core refuses the flag there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext


def overlap_tp_comm(c: StepContext, p: StagePass) -> None:
    """Hide each side's sequence-parallel collectives behind that side's GEMMs when the
    options say so (``StepOptions.tp_comm_overlap``) and the layout has SP over TP > 1."""
    if not c.options.tp_comm_overlap or not c.layout.sp or c.layout.tp < 2:
        return
    for side in (p.fwd, p.bwd):
        side["sp"] = max(0.0, side["sp"] - side["gemm"])
