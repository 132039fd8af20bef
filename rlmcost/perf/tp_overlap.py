"""Tensor-parallel communication overlapped with the GEMMs it feeds (``--tp-comm-overlap``).

Megatron-core's ``--tp-comm-overlap`` (``megatron/training/arguments.py``; it requires
``--sequence-parallel``) hands the sequence-parallel all-gather before the QKV and FC1 GEMMs
and the reduce-scatter after the projection and FC2 GEMMs, forward and backward, to
TransformerEngine's userbuffers (``transformer_engine/pytorch/module/base.py``
``initialize_ub``; ``ub_overlap_ag`` / ``ub_overlap_rs`` of ``LayerNormLinear`` and ``Linear``):
the GEMM is split into chunks and each chunk's exchange runs while the previous chunk
multiplies (collective matmul; Wang et al. 2023, "Overlap Communication with Dependent
Computation via Decomposition in Large Deep Learning Models", ASPLOS '23, §3).

Model: on each side of a micro-batch's pass (forward, backward) the stage's sequence-parallel
collectives hide behind that side's GEMMs; only the excess stays exposed::

    exposed_sp = max(0, sp - gemm)

plus what TransformerEngine's own methods cost, from its defaults (NVIDIA/TransformerEngine
v1.7, whose ``initialize_ub(shape, tp_size, ...)`` Megatron-LM @f2e5db402
``_initialize_tp_communicators`` calls with an empty ``ub_cfgs`` without
``--tp-comm-overlap-cfg``; the same defaults through v1.10): ``methods`` gives
``ring_exchange`` to qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad, ``pipeline`` to proj_fprop,
fc2_fprop and ``bulk`` to qkv/fc1 dgrad and wgrad; ``add_ub`` defaults ``num_sm=16``,
``set_sm_margin=0``, ``num_splits=4`` for ``pipeline`` (base.py); ``UbufP2PCommOverlap`` (ring
exchange) moves its chunks on the copy engines (``use_ce = 1``, csrc/comm_gemm_overlap.h),
``UbufCommOverlap`` (bulk, pipeline) runs userbuffers kernels on ``comm_sms = num_sm`` SMs
(``use_ce = 0``) beside a GEMM launched for every SM (``_math_sms`` = all of them without the
SM margin). Per GEMM pair of a layer (two per dense layer, as the SP collectives):

* the pipelined reduce-scatter (``split_overlap_rs``): the GEMM in ``num_splits`` chunks, each
  chunk's reduce-scatter behind the next chunk's GEMM; the last chunk's (``UB_MAX_SM``) runs
  after the last GEMM chunk and the main stream waits for it: 1 / ``num_splits`` of the
  reduce-scatter exposed in the forward;
* the SM-based kernels (forward: the two pipelined reduce-scatters; backward: the bulk
  re-gather of the layer input beside the data-gradient GEMM and the bulk reduce-scatter of
  that gradient beside the weight-gradient GEMM) hold 16 of the device's SMs while they run,
  so the GEMM beside them advances at (SMs - 16) / SMs of its rate: 16 / SMs of their time
  (12.1 % on a 132-SM H100) is added. The ring exchanges use copy engines: no SMs.

Left out: the HBM traffic of the copy engines, the vocabulary-parallel embedding's and head's
all-reduces (not overlapped by userbuffers; counted as exposed with the rest, as an upper
bound). Without sequence parallelism (plain TP all-reduces) nothing changes: Megatron-core
refuses the flag there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective

if TYPE_CHECKING:
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext

UB_COMM_SMS = 16
"""SMs a userbuffers bulk or pipeline kernel runs on: ``add_ub``'s ``num_sm`` default
(TransformerEngine v1.7 transformer_engine/pytorch/module/base.py ``initialize_ub``)."""
UB_PIPELINE_SPLITS = 4
"""Chunks of a pipelined reduce-scatter GEMM: ``num_splits=4 if method == "pipeline"`` (the
same)."""


def overlap_tp_comm(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """Hide each side's sequence-parallel collectives behind that side's GEMMs and add what
    TransformerEngine's userbuffers cost (module docstring) when the options say so
    (``StepOptions.tp_comm_overlap``) and the layout has SP over TP > 1."""
    lay = c.layout
    if not c.options.tp_comm_overlap or not lay.sp or lay.tp < 2:
        return
    act = c.tokens * int(c.arch.d_model) * c.workload.activation_dtype.bytes
    ag = c.comm(Collective.ALL_GATHER, act, lay.tp, ("tp",))
    rs = c.comm(Collective.REDUCE_SCATTER, act, lay.tp, ("tp",))
    moe_pairs = 1 if lay.expert_tp != lay.tp else 2  # step_pass: the attention's pair only
    pairs = 2 * stage.dense_layers + moe_pairs * stage.moe_layers
    share = UB_COMM_SMS / c.device.defaults.sms  # the GEMM's rate lost while they run
    tail = pairs * rs / UB_PIPELINE_SPLITS
    p.fwd["sp"] = max(0.0, p.fwd["sp"] - p.fwd["gemm"]) + tail + share * pairs * rs
    p.bwd["sp"] = max(0.0, p.bwd["sp"] - p.bwd["gemm"]) + share * pairs * (ag + rs)
