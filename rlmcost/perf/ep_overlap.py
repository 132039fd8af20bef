"""Megatron-core's expert-parallel communication overlap: one micro-batch's MoE all-to-alls
behind another's compute (``overlap_moe_expert_parallel_comm``; Megatron-Bridge's
``moe_a2a_overlap``, the ModelZoo's ``A2A_OVERLAP=1``; ``StepOptions.moe_ep_overlap``).

**The mechanism.** With the overlap on, Megatron-core's combined 1F1B schedule runs the forward
of one micro-batch beside the backward of another, layer by layer, its dispatch and combine on a
communication stream of their own, so that each side's all-to-alls run beside the other's
attention and expert GEMMs (megatron/core/transformer/transformer_config.py @cd4afffa6,
``overlap_moe_expert_parallel_comm``, and its checks: expert parallelism, the alltoall or flex
dispatcher, no full recomputation and no ``moe`` recompute module, an interleaved schedule
when PP > 1; :func:`check_ep_overlap`). ``delay_wgrad_compute``, which the recipes set with it,
is not priced apart.

**How much it hides** (:data:`EP_OVERLAP_HIDDEN_SHARE`): a share of the layer's all-to-all
seconds (:func:`~rlmcost.perf.moe_ffn.ep_comm_s`), forward and backward alike, measured on one
run and taken as global. NVIDIA-NeMo/Megatron-Bridge skills/nemo-mbridge-perf-expert-parallel-
overlap/SKILL.md @7ded17dae ("HybridEP Production-Shape Benchmark", PR 5094, 2026-07-25):
Qwen3-30B-A3B pre-training on 16 H100 (TP 1, PP 1, EP 16, MBS 1, GBS 1024, seq 4096, BF16,
forced balance, flex + HybridEP, TE CUDA graphs over moe_router and moe_preprocess, delayed
wgrad off), the overlap alone switched: 24.7138 s per step off, 20.9920 s on; in a matched
Nsight Systems comparison the communication running beside GEMMs and attention grew from 9.079
ms (0.11 % of the communication time) to 3,958.997 ms (36.55 %), so the rank's communication
took 3,958.997 / 0.3655 = 10.83 s a step. The step gained 3.72 s of those 10.83 s: 0.344 of the
communication time, net of the overlapped kernels' slowdown (rlmcost prices none apart here).
Assumptions: the share holds for other models, systems and dispatchers (the run's
communication is its EP all-to-all: PP 1, its DP gradient reduce overlapped in both cases);
the first forward and last backward of a step, which pair with nothing, are inside the measured
mean (64 micro-batches there).

Checked against the ModelZoo's pair (tests/test_ep_overlap.py): Qwen3-235B-A22B on 256 H100
with DeepEP, 19.7 s without and 17.6 s with ``A2A_OVERLAP`` (yanring/Megatron-MoE-ModelZoo
best_practice/qwen3/readme.md @e8650517d60d), 0.893 of the step; rlmcost's pair gives 0.905.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import EpDispatcher
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, PipelineSchedule
from rlmcost.perf.selective_ac import SelectiveRecompute

if TYPE_CHECKING:
    from rlmcost.parallel.layout import Layout
    from rlmcost.perf.step_options import StepOptions

_OFF_S, _ON_S = 24.7138, 20.9920
"""The Megatron-Bridge skill's Qwen3-30B-A3B step times without and with the overlap (module
docstring)."""

_OVERLAPPED_S, _OVERLAPPED_SHARE = 3.958997, 0.3655
"""Its Nsight communication beside GEMMs and attention with the overlap on, seconds and share of
the communication time (module docstring)."""

EP_OVERLAP_HIDDEN_SHARE = (_OFF_S - _ON_S) / (_OVERLAPPED_S / _OVERLAPPED_SHARE)
"""Share of a MoE layer's all-to-all seconds the overlap takes off the step: 0.344, the
measured step's gain over its communication time (module docstring)."""


def check_ep_overlap(layout: Layout, options: StepOptions) -> None:
    """A SpecError naming ``moe_ep_overlap`` where Megatron-core refuses the overlap (module
    docstring); nothing when it is off."""
    if not options.moe_ep_overlap:
        return
    why = ""
    if layout.ep < 2:
        why = "it needs expert parallelism (ep > 1)"
    elif options.ep_dispatcher is EpDispatcher.ALLGATHER:
        why = "it needs the alltoall or a flex (deepep) dispatcher, not allgather"
    elif layout.ckpt is Checkpointing.FULL:
        why = "it does not run under full recomputation (ckpt full)"
    elif "moe" in modules_recomputed(layout, options):
        why = "it does not run with 'moe' in recompute_modules"
    elif layout.pp > 1 and layout.schedule is not PipelineSchedule.INTERLEAVED:
        why = "with pp > 1 it needs the interleaved schedule (virtual stages)"
    if why:
        raise SpecError(
            f"option moe_ep_overlap: {why} (Megatron-core's checks of "
            "overlap_moe_expert_parallel_comm); drop the option or fix the layout"
        )


def modules_recomputed(layout: Layout, options: StepOptions) -> tuple[str, ...]:
    """Megatron-core's ``--recompute-modules`` the step runs: ``recompute_modules`` under
    ``--ckpt selective`` with ``selective`` 'modules', else none."""
    if layout.ckpt is Checkpointing.SELECTIVE and options.selective is SelectiveRecompute.MODULES:
        return options.recompute_modules
    return ()


def exposed_ep_s(options: StepOptions, a2a_s: float) -> float:
    """The seconds of a layer pass side's all-to-alls ``a2a_s`` left on the step: all of them,
    or 1 - :data:`EP_OVERLAP_HIDDEN_SHARE` of them under ``moe_ep_overlap``.

    >>> round(EP_OVERLAP_HIDDEN_SHARE, 4)
    0.3436
    """
    return a2a_s * (1 - EP_OVERLAP_HIDDEN_SHARE) if options.moe_ep_overlap else a2a_s
