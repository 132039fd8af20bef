"""Activation offload (``Layout.act_offload``): the saved activations of every layer but the last
go to host memory as the forward passes them and come back before their backward, so the
device holds a pipeline stage's last two layers' (verl ``model.enable_activation_offload``).

verl's ``enable_activation_offloading`` (verl/utils/activation_offload.py @b178a3cd) groups the
saved tensors by FSDP unit (each decoder layer; an embedding wrapped alone is skipped) and
offloads all groups but the last (``num_offload_group = len(layers) - 1``) with
``AsyncDoubleBufferGroupOffloadHandler``: group i is copied to pinned host memory on a side
stream while group i + 1 computes and freed at group i + 1's commit (its ``layer_window_map``
is i + 1 for L - 1 groups of L layers), so at most two layers' saved tensors are on the device
("there are at most two activation groups in GPU memory"), the last layer's being one of them at
the forward's end; the backward reloads group i at group i + 1's backward commit, again two at
a time. Fewer than three units: verl does not enable it. Under full recomputation it checkpoints
each layer with its own reentrant ``torch.utils.checkpoint`` (the Hugging Face model's
checkpointing turned off), so the saved tensors are each layer's input, and a reentrant rerun
has no early stop (:mod:`rlmcost.perf.ckpt_early_stop`).

What rlmcost prices: the device keeps the saved activations of a stage's last two layers (a MoE
model's last layers are its MoE layers) in place of all of them; the one layer rebuilt for its
backward and the head's input as before. The copies' time and host memory:
:mod:`rlmcost.placement.act_offload_job`.
"""

from __future__ import annotations

OFFLOAD_MIN_LAYERS = 3
"""The fewest FSDP units with which verl enables it (``len(layers) < 3``: "not necessary")."""


def offload_kept(dense: int, moe: int) -> tuple[bool, ...]:
    """Whether each layer whose saved activations stay on the device is a MoE layer (a stage of
    ``dense`` dense layers then ``moe`` MoE layers: its last two).

    >>> offload_kept(3, 58), offload_kept(27, 1), offload_kept(28, 0)
    ((True, True), (False, True), (False, False))
    """
    return tuple([False] * max(0, 2 - moe) + [True] * min(2, moe))[-min(2, dense + moe):]
