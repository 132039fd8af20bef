"""Megatron's interleaved schedule overlaps its pipeline sends with compute (``overlap_p2p_comm``).

:mod:`~rlmcost.perf.step_pass` prices one forward and one backward transfer of the boundary
activations per model chunk and micro-batch (``pp`` of a pass), and :mod:`~rlmcost.perf.train_step`
stretches the pass by the bubble, so a step without overlap carries ``(m v + p - 1)`` forward and
as many backward transfers on its critical path (``p`` stages, ``v`` chunks per rank, ``m``
micro-batches). Megatron-LM's interleaved 1F1B (``forward_backward_pipelining_with_interleaving``,
megatron/core/pipeline_parallel/schedules.py) overlaps them instead when ``overlap_p2p_comm``:

* **steady 1F1B** (NVIDIA/Megatron-LM core_v0.8.0, 2024-08-12, schedules.py lines 931-1015;
  1e05700595, 2025-05-24, lines 1287-1420, the Megatron-MoE-ModelZoo's code; 3cbe5c68a4,
  2025-11-11, Megatron-Bridge 25.11's pin): after a chunk's forward the schedule posts its send and
  the next receive
  asynchronously (``send_forward_recv_forward(..., overlap_p2p_comm=True)``) and runs the
  backward before it waits on them; after the backward it posts the gradient's send and receive
  and runs the next forward before waiting. Each transfer hides behind the opposite pass;
  only ``max(0, c - t)`` shows, ``c`` the transfer and ``t`` the shorter chunk pass.
* **warm-up and flush**: without ``overlap_p2p_comm_warmup_flush`` (off by default,
  model_parallel_config.py @d98e8a64dd; the option since 4295be1a6c, 2024-11-01) the warm-up's
  forwards send and receive blocking (core_v0.8.0 lines 880-911 post and wait before the next
  forward; 1e05700595 line 1210 blocks), the first ``recv_forward`` blocks (core_v0.8.0 line 812),
  and the cool-down's ``send_backward_recv_backward`` blocks (core_v0.8.0 lines 1095-1118).

An exact replay of that instruction stream with rendezvous transfers
(tests/test_megatron_pipe.py, every rank's posts and waits as core_v0.8.0 and 1e05700595 issue
them) ends at ``(m v + p - 1)(t_f + t_b) + 2 (p v - 1) c`` while ``c <= min(t_f, t_b)``: what
stays exposed is the first micro-batch's forward through the ``p v - 1`` chunk boundaries and
the last one's backward back, independent of ``m``. Beyond that the ``m v - (v - 1) p - 1`` steady
iterations of the last rank add ``c - min(t_f, t_b)`` each (the replay within one iteration).
:func:`overlapped_p2p_s` prices exactly this, with ``c`` the larger of the forward and the
backward transfer.

Where: Megatron-LM's ``--no-overlap-p2p-communication`` is ``store_false``, so its training
scripts overlap by default (arguments.py; default since 4eeff55d1f, 2023-10-12; the option since
f9283c5a8a, 2023-05-31, so Narayanan et al. 2021 and Korthikanti et al. 2022 did not); it is
forced off without interleaving (arguments.py, "non-interleaved schedule does not support
overlapping p2p communication"). Megatron-core's own ``ModelParallelConfig.overlap_p2p_comm`` is
False: a framework that builds the config sets it. Megatron-Bridge's ``CommOverlapConfig`` turns
it on with VP > 1 (training/comm_overlap.py lines 450-457 @7e8111c23); verl sets it where VPP > 1
(verl/models/mcore/config_converter.py line 49 @b178a3cd); slime runs Megatron-LM's arguments;
NeMo RL builds its ``ConfigContainer`` without a ``comm_overlap`` (nemo_rl/models/megatron/
setup.py @7ea279abf), so Megatron-core's False (``Behaviour.megatron_overlap_p2p``); no release
from v0.3.0 to v0.7.0 sets it, nor a VP > 1 (:mod:`rlmcost.frameworks.p2p_overlap`, which also
reads the keys that set it explicitly: ``--pp-overlap-p2p`` / ``--no-pp-overlap-p2p``).

Known deviation, not priced: from 260cba7133 (2026-04-16) Megatron-core waits on a forward send
at once when ``deallocate_pipeline_outputs`` (Megatron-LM and Megatron-Bridge set it), which the
replay puts about one forward transfer per steady iteration back on the critical path; no run
rlmcost validates uses that code (slime's pin 1dcf0dafa, 2026-02-14, predates it; NeMo RL
never interleaves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.layout import PipelineSchedule

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext


def overlaps_p2p(c: StepContext) -> bool:
    """Whether the step runs Megatron's interleaved schedule with ``overlap_p2p_comm``
    (``StepOptions.pp_overlap_p2p``, interleaved with v > 1 chunks per rank)."""
    lay = c.layout
    return (
        c.options.pp_overlap_p2p
        and lay.pp > 1
        and lay.schedule is PipelineSchedule.INTERLEAVED
        and lay.virtual_stages > 1
    )


def exposed_transfers(pp: int, virtual_stages: int) -> int:
    """Transfers of each kind (activation, gradient) on the critical path under overlap: the
    ``p v - 1`` chunk boundaries of the warm-up's first forward and the flush's last backward
    (module doc).

    >>> exposed_transfers(8, 4)
    31
    """
    return pp * virtual_stages - 1


def steady_iterations(pp: int, virtual_stages: int, micro_batches: int) -> int:
    """Steady 1F1B iterations whose excess transfer time (beyond the pass it hides behind)
    lands on the critical path: the last rank's ``m v - (v - 1) p``, less one (module doc).

    >>> steady_iterations(8, 3, 32)
    79
    """
    p, v, m = pp, virtual_stages, micro_batches
    return max(0, m * v - (v - 1) * p - 1)


def overlapped_p2p_s(c: StepContext, p: StagePass, micro_batches: int) -> float:
    """Seconds the overlapped sends add to the step (module doc): ``(p v - 1)(c_f + c_b) +
    n_steady max(0, max(c_f, c_b) - min(t_f, t_b))`` from one micro-batch's pass ``p`` of the
    slowest stage (its ``pp`` part is the ``v`` chunks' transfers, the rest their passes)."""
    v = c.layout.virtual_stages
    c_f, c_b = p.fwd["pp"] / v, p.bwd["pp"] / v
    t_f, t_b = (p.fwd_s - p.fwd["pp"]) / v, (p.bwd_s - p.bwd["pp"]) / v
    excess = max(0.0, max(c_f, c_b) - min(t_f, t_b))
    hops = exposed_transfers(c.layout.pp, v)
    return hops * (c_f + c_b) + steady_iterations(c.layout.pp, v, micro_batches) * excess
