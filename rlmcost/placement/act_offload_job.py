"""An update's activation-offload copies on its group (:mod:`rlmcost.perf.act_offload`): the
bytes of each micro-batch its layout sends to host memory and back, at the host link's rate,
beyond the compute they hide behind (job part ``activation_offload_s``), and the pinned host
memory they take."""

from __future__ import annotations

from typing import Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout
from rlmcost.perf.act_offload import exposed_s, offloaded_bytes
from rlmcost.placement.device_groups import Task
from rlmcost.placement.glu_kernel import fused_glu
from rlmcost.placement.group_train import kind_spec


def offloads(g: Any, task: Task) -> bool:
    """Training ``task``'s trainer layout on group ``g`` offloads its activations
    (``TrainLayout.activation_offload``; not in the ideal run), kept per group model and task."""
    key = ("activation offload", task.index)
    if key not in g.kept:
        dep = g.s.deployment
        spec = None if dep.ideal or task.kind is not Kind.TRAIN else kind_spec(
            dep, g.group.name, task.kind)  # fmt: skip
        g.kept[key] = spec is not None and spec.activation_offload
    return bool(g.kept[key])


def activation_offload_s(g: Any, task: Task, step: Any, per_step: Any, steps: int) -> float:
    """Exposed seconds of the copies of training ``task`` on group ``g`` (a ``GroupModel``) over
    its ``steps`` optimizer steps, each of ``step.micro_batches`` micro-batches of the packed
    ``per_step`` sequences (``group_passes.predict_train``); 0 where its trainer layout does
    not offload the activations (``TrainLayout.activation_offload``) or in the ideal run."""
    if not offloads(g, task):
        return 0.0
    layout, arch = g.layouts[task.index], g.s.arch(task.role)
    n = step.micro_batches  # the mean micro-batch times the copies; the fullest holds the host
    tokens = -(-per_step.sequences * per_step.seq_len // (layout.dp * layout.cp * n))
    glu = fused_glu(g.s.deployment, g.train_layout(), arch)
    sent = offloaded_bytes(arch, layout, tokens, g.workload(task).activation_dtype.bytes, glu)
    compute = sum(step.compute_s.values()) / n
    return steps * n * exposed_s(sent / g.s.host_bytes_per_s, compute)


def host_copy_bytes(arch: Any, layout: Layout, sequences: int, seq_len: int, dtype: Any,
                    glu: bool) -> int:  # fmt: skip
    """Pinned host bytes per device an update at memory layout ``layout`` holds for its
    offloaded activations (``Layout.act_offload``): one micro-batch's layers but the last
    (:func:`~rlmcost.perf.act_offload.offloaded_bytes`), which PyTorch's caching host
    allocator keeps for the next; 0 without."""
    if not layout.act_offload:
        return 0
    tokens = data_share(layout, sequences, seq_len).tokens_per_micro_batch
    return offloaded_bytes(arch, layout, tokens, dtype.bytes, glu)

