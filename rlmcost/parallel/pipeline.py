"""Pipeline schedules: bubble fraction and activations in flight per stage (§III-E).

Bubble fraction = pipeline idle time / ideal compute time of one iteration, with equal forward
and backward times per stage (Narayanan et al. 2021, §2.2): GPipe/AFAB and 1F1B (p - 1)/m,
interleaved 1F1B with v model chunks per rank (p - 1)/(v m), where m is the micro-batches per
iteration and p the stages. Zero bubble (Qi et al. 2023, ZB-H2: backward split into input- and
weight-gradient steps that fill the drain) reaches 0 when F, B and W take equal time.

Micro-batches whose activations a stage holds at its peak:

* GPipe: all m (every forward runs before any backward);
* 1F1B: min(p - s, m) on stage s (p on the first stage; Narayanan et al. 2021);
* interleaved: Megatron-LM's warm-up of 2 (p - s - 1) + (v - 1) p chunk-forwards, plus the one
  in its steady state, each over L/(p v) layers; on stage 0 this is p (1 + (p - 1)/(p v))
  micro-batches of L/p layers (Korthikanti et al. 2022, §4.2.3);
* zero bubble (ZB-H2): min(2 (p - s) - 1, m), Qi et al. 2023 Table 1 ((2p - 1) M_B peak).
"""

from __future__ import annotations

from fractions import Fraction

from rlmcost.parallel.layout import PipelineSchedule


def bubble_fraction(
    schedule: PipelineSchedule, stages: int, micro_batches: int, virtual_stages: int = 1
) -> Fraction:
    """Idle / ideal compute time of one pipeline flush (exact fraction).

    >>> bubble_fraction(PipelineSchedule.ONE_F_ONE_B, 8, 32)
    Fraction(7, 32)
    >>> bubble_fraction(PipelineSchedule.INTERLEAVED, 8, 32, 4)
    Fraction(7, 128)
    """
    p, m = stages, micro_batches
    if p == 1 or schedule is PipelineSchedule.ZERO_BUBBLE:
        return Fraction(0)
    if schedule is PipelineSchedule.INTERLEAVED:
        return Fraction(p - 1, virtual_stages * m)
    return Fraction(p - 1, m)


def in_flight_layer_microbatches(
    schedule: PipelineSchedule,
    stage: int,
    stages: int,
    micro_batches: int,
    virtual_stages: int = 1,
) -> Fraction:
    """Micro-batches whose activations stage ``stage`` holds at its peak, in units of "one
    micro-batch through all the stage's layers" (a fraction under interleaving).

    >>> in_flight_layer_microbatches(PipelineSchedule.ONE_F_ONE_B, 0, 8, 32)
    Fraction(8, 1)
    >>> in_flight_layer_microbatches(PipelineSchedule.INTERLEAVED, 0, 8, 32, 2)  # 8 (1 + 7/16)
    Fraction(23, 2)
    """
    p, s, m = stages, stage, micro_batches
    if p == 1:  # no pipeline: micro-batches are gradient-accumulation steps, one at a time
        return Fraction(1)
    if schedule is PipelineSchedule.GPIPE:
        return Fraction(m)
    if schedule is PipelineSchedule.ZERO_BUBBLE:
        return Fraction(min(2 * (p - s) - 1, m))
    if schedule is PipelineSchedule.INTERLEAVED and virtual_stages > 1:
        v = virtual_stages
        chunks = min(2 * (p - s - 1) + (v - 1) * p + 1, m * v)
        return Fraction(chunks, v)
    return Fraction(min(p - s, m))


def head_in_flight(schedule: PipelineSchedule, in_flight: Fraction, virtual_stages: int = 1
                   ) -> Fraction:  # fmt: skip
    """Micro-batches whose final-norm and head inputs the last stage holds at its peak, of its
    ``in_flight`` (:func:`in_flight_layer_microbatches`): all of them, but one under
    interleaving, where the last rank runs each micro-batch's forward and backward of its last
    model chunk back to back, after the warm-up forwards of its other chunks (Megatron-LM
    megatron/core/pipeline_parallel/schedules.py @core_v0.15.0: (p - r - 1) 2 + (v - 1) p
    warm-up forwards, ``get_model_chunk_id``; torch's ``ScheduleInterleaved1F1B``, v2.6.0 alike).

    >>> head_in_flight(PipelineSchedule.INTERLEAVED, Fraction(9, 2), 2)
    Fraction(1, 1)
    """
    if schedule is PipelineSchedule.INTERLEAVED and virtual_stages > 1:
        return min(Fraction(1), in_flight)
    return in_flight
