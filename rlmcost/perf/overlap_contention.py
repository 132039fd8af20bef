"""Compute slowed by the NCCL collective that runs beside it (hidden communication is not free).

Where a framework overlaps a collective with compute (FSDP / ZeRO-3 prefetched gathers and
reduce-scatters, ZeRO-2 per-micro-batch reduce-scatters, DP gradient reduction overlapped with
the last backward, ZeRO-1 parameter gather behind the first forward), NCCL's kernel runs on
its own stream with one CTA per channel and streams its bytes through HBM: the compute
kernels beside it run on fewer SMs and with less memory bandwidth, so they take longer than
they would alone.

Source (the measured factor): Lee et al. 2025, "Characterizing Compute-Communication Overlap
in GPU-Accelerated Distributed Deep Learning: Performance and Power Implications", arXiv
2507.03114 (abstract): over GPT and LLaMA layers on 4 x A100, H100, MI250 and MI210,
compute that overlaps communication runs **18.9 % slower on average** (max 40.0 %) than the
same compute alone. Cross-check from the SM count: NCCL's ``ncclAllGather`` launched 24 CTAs
(one per channel) on a 132-SM H100 beside an FSDP-like GEMM (NVIDIA developer forum thread
337991, "Compute-Communication Overlap Causes Severe GEMM Performance Degradation because of
Tail Effect", nsys trace), i.e. the GEMM keeps 108 of 132 SMs: 132 / 108 - 1 = 22 %; NCCL's
maintainer attributes the remainder of such slowdowns to HBM traffic (NVIDIA/nccl#1428:
NVLink bytes cost 2-3 x in HBM, stored then read back).

Model. While a collective of ``comm_s`` seconds runs, the compute beside it advances at
1 / (1 + s) of its own rate (s = :data:`OVERLAP_COMPUTE_SLOWDOWN`); after the collective it runs
at full rate. A pass of ``compute_s`` seconds of compute hiding ``comm_s`` seconds of
communication then takes::

    max(comm_s, compute_s + comm_s * s / (1 + s))

so the time beyond the compute is ``max(comm_s - compute_s, comm_s * s / (1 + s))``: the old
exposed excess where the collective outlasts the compute, else a share s / (1 + s) = 15.9 % of
the hidden communication time. The collective itself is taken at its own speed (not slowed by
the compute); the contention is counted with the exposed communication of the strategy whose
collective causes it (``dp``).

Not applied: TransformerEngine's userbuffers overlap of the sequence-parallel collectives
(its kernels' own SM count, 16 of 132, prices that: :mod:`~rlmcost.perf.tp_overlap`), pipeline
sends, and expert all-to-alls (not overlapped in the model).
"""

from __future__ import annotations

OVERLAP_COMPUTE_SLOWDOWN = 0.189
"""Mean slowdown of compute kernels that run beside a collective (Lee et al. 2025, arXiv
2507.03114, abstract: 18.9 % mean, 40.0 % max, over A100, H100, MI250, MI210). Global."""


def overlapped_extra_s(comm_s: float, compute_s: float, slowdown: float) -> float:
    """Seconds a pass of ``compute_s`` takes beyond its compute when a collective of ``comm_s``
    runs beside it, the compute slowed by ``slowdown`` while they overlap (module docstring).

    >>> round(overlapped_extra_s(1.0, 10.0, 0.189), 4)  # hidden: 15.9 % of the collective
    0.159
    >>> overlapped_extra_s(12.0, 10.0, 0.189)  # the collective outlasts the compute
    2.0
    >>> overlapped_extra_s(1.0, 10.0, 0.0)  # no contention: fully hidden
    0.0
    """
    if comm_s <= 0.0:
        return 0.0
    return max(comm_s - compute_s, comm_s * slowdown / (1.0 + slowdown), 0.0)
