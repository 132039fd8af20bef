"""One device group on real hardware: what its devices hold, and what each invocation reads.

Every invocation runs on its group's devices in the layout its kind gets there
(``inputs.layouts_for``). :class:`GroupModel` answers, per invocation (the memory side in
:mod:`rlmcost.placement.group_own`, its own bytes, and :mod:`rlmcost.placement.group_memory`,
what else the group holds; the read side here):

* memory per device (``parallel.memory.memory_per_rank``, compiled: bf16 weights, gradients,
  activations and KV cache, fp32 Adam states and logits), plus what else the group holds:
  every model placed there stays resident (weights; gradients and Adam states for the ones it
  trains), a trainable model read but not trained there keeps the bf16 shadow copy M_sh, and
  an invocation in a layout other than its model's training layout adds its own copy (the
  second layout of hybrid execution). With ``offload`` the idle models wait in host memory.
  Generation admits only as many sequences as the KV cache left on the device holds; the rest
  waits for free slots (waves). Under stage fusion the streamed assessment's buffer lives
  beside the KV cache and the interleaved training pipelines' activations beside each other;
* what a pass reads: the weights each device multiplies with (gathered under ZeRO-3), the
  busiest data rank's share, the link seconds of a parameter gather, and the roofline of the
  devices it runs on.

:mod:`rlmcost.placement.group_jobs` turns these into each invocation's work, depth, time and
prediction, and the group's transfers.
"""
from __future__ import annotations

from fractions import Fraction

from rlmcost.algorithms.kinds import Kind
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.parallel.comm import group_is_intra_node, group_ranks_per_node
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.perf.collectives import inter_node_bytes_per_s
from rlmcost.perf.fp4_gemm import w4a4_hardware
from rlmcost.placement.device_groups import Task
from rlmcost.placement.fp8_train import fp8_roofline_hardware
from rlmcost.placement.group_memory import GroupMemory
from rlmcost.placement.group_own import MODE
from rlmcost.placement.group_train import group_trainer
from rlmcost.timing import Roofline


class GroupModel(GroupMemory):
    """Evaluates the tasks of one group on ``gpus`` devices (memoized per call): what its
    devices hold (:class:`~rlmcost.placement.group_memory.GroupMemory`) and what each pass
    reads."""

    # -- time -----------------------------------------------------------------------------------

    def roofline(self, gpus: int, task: Task | None = None) -> Roofline:
        """The roofline of ``gpus`` devices computing in ``task``'s dtype (default the
        workload's); a W4A4 engine's at the FP4 peak where the part has one, so its bound
        stays below its FP4 GEMMs (:func:`~rlmcost.perf.fp4_gemm.w4a4_hardware`)."""
        wl = self.s.workload if task is None else self.workload(task)
        hw = w4a4_hardware(self.s.hardware, wl.compute_dtype, wl.packed_format)
        return Roofline(hw, gpus, wl.compute_dtype, self.s.efficiency)

    def pass_roofline(self, gpus: int) -> Roofline:
        """The roofline of ``gpus`` devices running a training step or forward of the group's
        trainer: the workload's (:meth:`roofline`), at the FP8 peak where the trainer runs
        FP8 (its Linear GEMMs' peak: :func:`~rlmcost.placement.fp8_train.
        fp8_roofline_hardware`), so the bound stays below the prediction."""
        wl, train = self.s.workload, group_trainer(self.s.deployment, self.group.name)
        hw = fp8_roofline_hardware(self.s.hardware, wl.compute_dtype, train)
        return Roofline(hw, gpus, wl.compute_dtype, self.s.efficiency)

    def weights_read(self, task: Task) -> int:
        """Weight bytes a device multiplies with in one pass: its TP/PP shard (a framework's
        TP-replicated Gated DeltaNet whole, :meth:`mixer_replicated`), gathered when
        ZeRO-3 shards it (the bytes the HBM streams). A decode step passes every pipeline
        stage in turn, so generation streams the whole TP shard however many stages hold it.
        Kept per task."""
        key = ("weights read", task.index)
        if key not in self.kept:
            layout = self.layouts[task.index].with_(zero=ZeroStage.NONE)
            if task.kind is Kind.GENERATE:
                layout = layout.one_stage()
            self.kept[key] = self._raw(task, layout).weights
        return self.kept[key]

    def _raw(self, task: Task, layout: Layout) -> MemoryBreakdown:
        """The paper's breakdown of the task in ``layout`` (no deployment terms; the
        framework's replicated mixers, :meth:`mixer_replicated`)."""
        return memory_per_rank(
            self.s.arch(task.role),
            layout,
            MODE[task.kind],
            self.batch(task),
            self.seq_len(task),
            self.workload(task),
            task.invocation.model_head,
            self.mixer_replicated(task),
        )

    def load_factor(self, task: Task) -> Fraction:
        """Busiest data rank's share over the even share: P_d ceil(n / P_d) / n, so
        data parallelism wider than the batch buys nothing."""
        layout = self.layouts[task.index]
        n = self.batch(task)
        shards = layout.dp
        return Fraction(shards * -(-n // shards), n)

    def gather_s(self, task: Task) -> float:
        """Link seconds of one ZeRO-3 parameter gather for a forward pass (0 without ZeRO-3)."""
        layout = self.layouts[task.index]
        z = layout.zero_group  # P_d P_c, or a hybrid shard's P_z (parallel.zero_groups)
        if layout.zero is not ZeroStage.OS_G_P or z == 1:
            return 0.0
        hw = self.s.hardware
        dims = ("zs",) if z < layout.dp * layout.cp else ("dp", "cp")
        intra = group_is_intra_node(layout, dims, hw.gpus_per_node)
        bw = hw.intra_node_bandwidth_bytes_per_s if intra else inter_node_bytes_per_s(
            hw, group_ranks_per_node(layout, dims, hw.gpus_per_node))  # fmt: skip
        return self.weights_read(task) * (z - 1) / z / bw
