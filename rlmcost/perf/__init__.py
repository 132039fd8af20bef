"""Predicted times (not bounds): efficiency by kernel shape, collectives, training step time.

:mod:`rlmcost.timing` gives roofline lower bounds at datasheet peaks. This package predicts
what a run takes: GEMMs at an efficiency that depends on their shape
(:mod:`~rlmcost.perf.efficiency`), collectives with latency and algorithm bandwidth
(:mod:`~rlmcost.perf.collectives`), and one training step of a parallel layout with exposed
communication, pipeline bubbles, the optimizer step and offload
(:mod:`~rlmcost.perf.train_step`: one stage's micro-batch in :mod:`~rlmcost.perf.step_pass`,
DP, ZeRO and the optimizer in :mod:`~rlmcost.perf.data_parallel`), checked against published
measurements (:mod:`~rlmcost.perf.validate`, ``rlmcost validate``).

No sympy, numpy or pandas here: every function is plain arithmetic, fast enough for sweeps.
"""
