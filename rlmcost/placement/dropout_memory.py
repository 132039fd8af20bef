"""The saved masks of a trained model's hidden dropout on the RL side
(:mod:`rlmcost.placement.model_dropout` says where its training steps run it).

ATen's ``native_dropout`` saves a ``bool`` mask of its input's shape for its backward
(:mod:`rlmcost.perf.dropout`: 1 byte per element), so a layer's two hidden dropouts keep
``2 d`` bytes per token (``d / P_t`` under SP) until that layer's backward: counted here for
every layer and in-flight micro-batch of a stage (the in-flight count of
:func:`rlmcost.compiled.memory.memory_per_stage`) without recomputation or under selective
recomputation (which reruns the attention core alone), and for one layer of one micro-batch,
the one its backward rebuilds, under full recomputation. Under NeMo RL's per-module checkpoint
a dropout outside the wrapped modules (Phi-3's ``resid_attn_dropout`` / ``resid_mlp_dropout``,
OPT's ``dropout`` calls in the decoder layer: :data:`rlmcost.specs.hf_dropout.INSIDE_MODULES`
says which sit inside) is not rerun, so its masks are kept for every layer as without
recomputation. An attention dropout saves no mask in the fused kernels the memory model assumes
(FlashAttention keeps its Philox seed and offset): none counted. The paper's convention
(:mod:`rlmcost.parallel.activations`, the training rows) leaves masks out; these are the RL
trainers' Hugging Face models' own, added to the training task's activations
(:mod:`rlmcost.placement.group_own`).
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING

from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import stage_layers
from rlmcost.parallel.breakdown import MemoryBreakdown, data_share
from rlmcost.parallel.layout import Checkpointing, Layout
from rlmcost.parallel.pipeline import in_flight_layer_microbatches
from rlmcost.perf.dropout import HIDDEN_DROPOUTS_PER_LAYER, MASK_BYTES
from rlmcost.placement.breakdown_ops import with_terms
from rlmcost.placement.group_train import group_deployment
from rlmcost.placement.model_dropout import train_dropout
from rlmcost.placement.module_ckpt_memory import module_ckpt_applies
from rlmcost.specs.hf_dropout import INSIDE_MODULES

if TYPE_CHECKING:
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_own import GroupTasks
    from rlmcost.specs.model import ModelSpec


def hidden_mask_bytes(spec: ModelSpec, layout: Layout, sequences: int, seq_len: int,
                      module_ckpt: bool) -> list[int]:  # fmt: skip
    """Bytes of hidden-dropout masks a rank of each pipeline stage holds at its peak while
    training ``sequences`` x ``seq_len`` in ``layout`` (``module_ckpt``: NeMo RL's per-module
    checkpoint; module docstring).

    >>> from rlmcost.specs import get_model
    >>> gpt2 = get_model("gpt-2")  # 12 layers, d 768: 2 x 768 bytes per token and layer
    >>> hidden_mask_bytes(gpt2, Layout(micro_batch=1), 1, 1024, False)
    [18874368]
    >>> hidden_mask_bytes(gpt2, Layout(micro_batch=1, ckpt=Checkpointing.FULL), 1, 1024, False)
    [1572864]
    """
    a = arch_numbers(spec.arch())
    share = data_share(layout, sequences, seq_len)
    width = a.d_model // layout.tp if layout.sp else a.d_model
    per = HIDDEN_DROPOUTS_PER_LAYER * MASK_BYTES * width * share.tokens_per_micro_batch
    full = layout.ckpt is Checkpointing.FULL
    kept_all = not full or (module_ckpt and spec.model_type not in INSIDE_MODULES)
    out = []
    for s, (n_dense, n_moe) in enumerate(stage_layers(a, layout)):
        in_flight = in_flight_layer_microbatches(
            layout.schedule, s, layout.pp, share.micro_batches, layout.virtual_stages
        )
        total = in_flight * (n_dense + n_moe) * per if kept_all else Fraction(per)
        out.append(ceil(total))
    return out


def with_dropout_masks(g: GroupTasks, task: Task, per_stage: list[MemoryBreakdown],
                       layout: Layout, sequences: int, seq_len: int,
                       ) -> list[MemoryBreakdown]:  # fmt: skip
    """``per_stage`` (a training task's memory per stage) with the trained model's hidden
    dropout masks in its activations, where its training steps run that dropout
    (:func:`~rlmcost.placement.model_dropout.train_dropout`, the group's view)."""
    spec = g.s.specs[task.role]
    if not spec.hidden_dropout or \
            not train_dropout(group_deployment(g.s.deployment, g.group.name), spec)[0]:  # fmt: skip
        return per_stage
    module = module_ckpt_applies(g.s.deployment, g.train_layout(), layout, spec.arch())
    masks = hidden_mask_bytes(spec, layout, sequences, seq_len, module)
    return [with_terms(m, activations=m.activations + b) for m, b in zip(per_stage, masks,
                                                                          strict=True)]
