"""A training rank's activations under NeMo RL's per-module checkpoint
(``Behaviour.hf_module_ckpt``; the source and the torch measurements are in
:mod:`rlmcost.perf.module_ckpt`): full recomputation with each layer's attention, MLP and two
norms checkpointed apart rather than the layer whole.

In the counting convention of :func:`rlmcost.compiled.memory.memory_per_stage` (per-token bytes
of ``parallel.activations.saved_bytes_per_token_layer``, activation dtype, d-wide tensors / P_t
under SP):

* **kept** per layer and token: ``norms_per_layer + 2`` d-wide tensors (each norm's input and
  the attention's and MLP's inputs, the norms' outputs), where a whole-layer checkpoint keeps
  the layer's input alone (:func:`kept_bytes_per_token_layer`);
* **rebuilt** during a layer's backward, for one micro-batch: one module's saved tensors beyond
  its input, the larger of the attention's and the FFN's (:func:`module_peak_bytes_per_token`;
  a MoE layer's FFN: its experts' tensors, the dispatched copies and the fp32 router logits),
  where the whole-layer rebuild holds the layer's.

The stage's activations are recounted with these in place of the whole-layer terms (the same
in-flight micro-batches and final-norm input, ``parallel.pipeline``); the paper's forms and
the other frameworks' trainers keep theirs.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING, Any

from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import saved_bytes, stage_layers
from rlmcost.parallel.breakdown import MemoryBreakdown, data_share
from rlmcost.parallel.layout import Checkpointing, Layout
from rlmcost.parallel.pipeline import in_flight_layer_microbatches
from rlmcost.perf.module_ckpt import per_module
from rlmcost.placement.breakdown_ops import with_terms
from rlmcost.placement.pass_options import module_ckpt_on

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout
    from rlmcost.specs.workload import Workload


def module_ckpt_applies(deployment: Deployment, train: TrainLayout, layout: Layout,
                        arch: Any) -> bool:  # fmt: skip
    """Whether a training task in ``layout`` keeps its activations per module: the trainer
    layout ``train`` (the group's, else the deployment's) wraps each layer's modules apart
    (:func:`~rlmcost.placement.pass_options.module_ckpt_on`), ``layout`` recomputes in full
    and the model's layers are all modelled so (``perf.module_ckpt.per_module``); never the
    paper's ideal run."""
    if deployment.ideal or layout.ckpt is not Checkpointing.FULL:
        return False
    return module_ckpt_on(deployment, train) and per_module(arch)


def kept_bytes_per_token_layer(a: Any, tp: int, sp: bool, act_bytes: int) -> Fraction:
    """Bytes one token's layer keeps between its forward and its backward on a TP rank: the
    inputs of its ``norms_per_layer`` norms and of its attention and MLP (module docstring).

    >>> from rlmcost.specs import get_model
    >>> a = arch_numbers(get_model("llama-3.1-8b").arch())
    >>> kept_bytes_per_token_layer(a, 1, False, 2) == 4 * 4096 * 2
    True
    """
    return Fraction((int(a.norms_per_layer) + 2) * int(a.d_model) * act_bytes, tp if sp else 1)


def module_peak_bytes_per_token(a: Any, tp: int, sp: bool, act_bytes: int,
                                moe: bool) -> Fraction:  # fmt: skip
    """Bytes per token of the larger module one layer's backward rebuilds: the attention's
    saved tensors beyond its input (q, k, v, the output, the fp32 log-sum-exp; MLA's latents)
    or the FFN's (a dense layer's inner activations; a MoE layer's experts, dispatched copies
    and router logits): the layer's saved bytes without checkpointing, split by an FFN of width
    0 (``saved_bytes_per_token_layer``'s own terms, so the three parts add up to it)."""
    none = Checkpointing.NONE
    no_ffn = saved_bytes(a._replace(d_ff=0), tp, sp, none, False, act_bytes)
    attention = Fraction(no_ffn) - kept_bytes_per_token_layer(a, tp, sp, act_bytes)
    ffn = Fraction(saved_bytes(a, tp, sp, none, moe, act_bytes)) - Fraction(no_ffn)
    return max(attention, ffn)


def per_module_stages(per_stage: list[MemoryBreakdown], arch: Any, layout: Layout,
                      sequences: int, seq_len: int,
                      workload: Workload) -> list[MemoryBreakdown]:  # fmt: skip
    """``per_stage`` (``memory_per_stage``'s stages of a training task) with each stage's
    activations recounted for the per-module checkpoint (module docstring), exact bytes
    rounded up as ``memory_per_stage`` rounds them."""
    a, share = arch_numbers(arch), data_share(layout, sequences, seq_len)
    x = workload.activation_dtype.bytes
    tp, sp, tokens = layout.tp, layout.sp, share.tokens_per_micro_batch
    kept = kept_bytes_per_token_layer(a, tp, sp, x)
    out = []
    for s, ((n_dense, n_moe), m) in enumerate(zip(stage_layers(a, layout), per_stage, strict=True)):
        in_flight = in_flight_layer_microbatches(layout.schedule, s, layout.pp,
                                                 share.micro_batches, layout.virtual_stages)
        held = (n_dense + n_moe) * kept
        if s == layout.pp - 1:  # the final norm's input
            held += Fraction(x * int(a.d_model), tp if sp else 1)
        peak = max((module_peak_bytes_per_token(a, tp, sp, x, moe)
                    for moe, n in ((False, n_dense), (True, n_moe)) if n), default=Fraction(0))
        out.append(with_terms(m, activations=ceil(in_flight * tokens * held + tokens * peak)))
    return out
