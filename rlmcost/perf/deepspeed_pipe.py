"""DeepSpeed's 2021 pipeline engine: what it runs beyond Megatron-LM's own 1F1B.

The MT-NLG 530B runs (Smith et al. 2022, arXiv 2201.11990, §2.3) train Megatron-DeepSpeed's
``GPTModelPipe`` on DeepSpeed's ``PipelineEngine`` (microsoft/DeepSpeed before e2fdd254e,
2021-09-29, after the runs). :mod:`~rlmcost.perf.step_pass` and :mod:`~rlmcost.perf.train_step`
time it with three options:

* ``pp_grad_scatter_gather`` off: ``deepspeed/runtime/pipe/engine.py`` sends activations split
  over the TP ranks, gradients whole (``is_grad_partitioned = False``) after an all-gather
  restoring the stage's output (``_exec_recv_grads``). Its ``TrainSchedule``
  (``deepspeed/runtime/pipe/schedule.py``) runs each stage in 1F1B order; with free transfers
  its blocking send/recv keep 1F1B's makespan (tests/test_deepspeed_pipeline_engine.py), so the
  bubble is 1F1B's (p - 1) / m.
* ``pp_serial_p2p``: every p2p is a blocking call of its own. ``p2p.send`` / ``p2p.recv``
  (``deepspeed/runtime/pipe/p2p.py`` @cd7967d6b, lines 48-86: ``assert async_op == False``, then
  ``dist.send`` / ``dist.recv``, or ``dist.broadcast`` over the pair's group before torch 1.8)
  return only once the transfer is done, and ``TrainSchedule.steps`` (schedule.py @cd7967d6b,
  lines 205-219) yields a forward step as ``RecvActivation`` then ``SendGrad`` and a backward
  step as ``SendActivation`` then ``RecvGrad``, which ``_exec_schedule`` runs in order. A middle
  stage therefore waits out its incoming and its outgoing transfers one after the other, where
  Megatron-LM's 1F1B batches a send with the opposite receive (``send_forward_recv_backward``)
  and the passes price one send each. An exact replay of the instruction stream with
  rendezvous transfers (tests/test_deepspeed_pipeline_engine.py) puts ``2 m + p - 4``
  activation and as many gradient transfers on the critical path for p >= 3 and m >= 2 (p - 1
  for m = 1; m for p = 2), against the ``m + p - 1`` of each that the passes price:
  :func:`serial_p2p_s` adds the difference. Fill and drain stay 1F1B's: the extra grows with m,
  it is no 2 (p - 1) bubble. The replay's count holds for equal stages (the step prices every
  slot at the slowest stage's) and one model chunk per stage (``TrainSchedule`` has no
  interleaving).
* ``checkpoint_embeddings``: ``PipelineModule.forward`` wraps every layer for which
  ``_is_checkpointable`` holds in ``deepspeed.checkpointing.checkpoint``; for any class not named
  ``GPT2ModelPipe`` that is every layer with parameters (``deepspeed/runtime/pipe/module.py``
  @4ad8019cd, 2021-09-18). Megatron-DeepSpeed's class is ``GPTModelPipe``
  (``megatron/model/gpt_model.py`` @8a132ced, 2021-06-06: ``TiedLayerSpec('embed', ...)``, the
  transformer layers, ``LayerSpec(LayerNorm, ...)``, the tied embedding again with
  ``_logits_helper``; ``activation_checkpoint_interval = checkpoint_num_layers``). So under full
  recomputation the first stage reruns the word-embedding lookup and its TP all-reduce, and the
  last stage the final norm and the [T, V / P_t, d] logits GEMM, before their backward. The
  loss (``loss_fn``) and the dtype casts have no parameters and are not rerun. Megatron-LM's own
  ``--checkpoint-activations`` recomputes the transformer layers only (Narayanan et al. 2021
  rows leave the option off).

Not modelled (host-side, no measured figure): the ``torch.cuda.synchronize()`` of
``ThroughputTimer.start`` at every forward pass (``_exec_forward_pass`` calls
``self.tput_timer.start()``; ``deepspeed/utils/timer.py`` @4ad8019cd) and the host reads of
``PartitionedTensor.from_meta`` (``meta.tolist()``) before each partitioned receive: the GPU waits
for the host to launch the next pass, a launch latency per pass.

What remains of the MT-NLG rows' error (+16.1 / +17.1 / +21.6 % with the serial p2p; +18.4 /
+19.3 / +23.9 % without) is not in this engine as far as its code shows: Megatron-LM's own 530B
row (Narayanan et al. 2021 Table 1, the same model on Selene, 163 TFLOP/s) takes 0.186 s per
micro-batch and stage slot, which over MT-NLG's m + p - 1 = 274 / 226 / 194 slots gives 50.9 /
42.0 / 36.0 s against the published 60.1 / 50.2 / 44.4 s; the published times fit 0.195 s x (m +
2 (p - 1)) within 1 %, or 0.196 s x (m + p - 1) + 6.4 s. All three rows run p = 35, so the
intercept is a constant per iteration: nothing in them tells a 2 (p - 1) fill and drain from any
other fixed ~6.4 s. Least squares over m = 240 / 192 / 160: published 0.1970 s x m + 12.7 s,
predicted 0.1876 s x m + 6.6 s (0.1834 s x m + 6.6 s without the serial p2p, which adds to
the slope only). The exact replay of ``TrainSchedule`` (tests/test_deepspeed_pipeline_
engine.py) rules out the schedule as the intercept's source: with free transfers it ends at
1F1B's (m + p - 1)(t_f + t_b) for any t_f / t_b, the even/odd alternation costing no extra slot.

Issue 18's candidates for the missing ~8.5 s per iteration, sized with this model (fp16, one
A100 rank of the 2240-GPU run; tests/test_mtnlg_fixed_terms.py), none of them near it:

* stage imbalance: ``partition_method='type:transformer'`` (GPTModelPipe @8a132ced) gives
  ``partition_balanced`` (deepspeed/runtime/utils.py @cd7967d6b) binary weights, which it
  cuts into 3 transformer layers on every one of the 35 stages; the embedding (first stage)
  and the norm + LM head (last) sit beside them and are priced: the last stage is the
  slowest, 0.1836 s per micro-batch against 0.1723 s for a middle stage;
* the tied-embedding gradient all-reduce between the first and last stage
  (``PipelineModule.allreduce_tied_weight_gradients``, ``_exec_reduce_tied_grads``):
  V / P_t x d = 131 M fp16 elements between two nodes, 0.012 s (not priced);
* the data-parallel all-reduce after the flush (``_exec_reduce_grads``,
  ``buffered_allreduce_fallback``): 1.9 B fp16 gradients per rank, 0.32 s, priced exposed;
* the optimizer step: Adam over 1.9 B parameters, 0.034 s as priced; DeepSpeed's fp16
  ``FP16_Optimizer`` also flattens the gradients to fp32 and copies the fp16 weights back,
  at most about 60 bytes per parameter, 0.062 s;
* the global gradient norm and the overflow check: scalar all-reduces over the 280-rank
  model-parallel group with a host read each, under 0.1 ms of transfer.

What does fit is a bubble of 2 (p - 1) micro-batch slots: the three rows' errors fall with
DP under micro-batch 1 (+18.4 / +19.3 / +23.9 %) and are flat under micro-batch 2 (+7.7 /
+6.2 / +7.9 %: the bubble (p - 1) / m doubles). Micro-batch 2 is not adopted: the paper does
not print it, Megatron-LM's own 530B script (examples/sc21, t 8 p 35) runs micro-batch 1,
and choosing it from these three rows would be a fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Checkpointing

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StepContext


def recomputes_embeddings(c: StepContext) -> bool:
    """Whether full recomputation also reruns the embedding and the LM head (module doc)."""
    return c.options.checkpoint_embeddings and c.layout.ckpt is Checkpointing.FULL


def serial_transfers_extra(pp: int, micro_batches: int) -> int:
    """Transfers of each kind (activation, gradient) that DeepSpeed's blocking p2p puts on the
    critical path beyond the ``m + p - 1`` the passes price (module doc; negative where the
    replay has fewer)."""
    p, m = pp, micro_batches
    critical = m if p == 2 else (p - 1 if m == 1 else 2 * m + p - 4)
    return critical - (m + p - 1)


def serial_p2p_s(c: StepContext, micro_batches: int) -> float:
    """Seconds the serial blocking sends and receives add to the step (module doc): the extra
    transfers times one activation p2p (1 / P_t of the [T, d] output when partitioned) plus one
    gradient p2p (whole unless ``pp_grad_scatter_gather``); 0 without ``pp_serial_p2p``."""
    lay = c.layout
    if not c.options.pp_serial_p2p or lay.pp < 2:
        return 0.0
    act = c.tokens * int(c.arch.d_model) * c.workload.activation_dtype.bytes
    split = lay.tp if (lay.tp > 1 and (lay.sp or c.options.pp_scatter_gather)) else 1
    grad_split = split if (lay.sp or c.options.pp_grad_scatter_gather) else 1
    each = c.comm(Collective.P2P, act / split, 2, ("pp",))
    each += c.comm(Collective.P2P, act / grad_split, 2, ("pp",))
    return serial_transfers_extra(lay.pp, micro_batches) * each
