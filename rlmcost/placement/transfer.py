"""Bytes that move between layouts, groups and host memory, and their time at link bandwidth.

* Weight synchronization (§IV-B, §IV-E): after training, a trainable model read on another
  group (the rollout engines, an inference copy of the critic) receives one full copy of its
  weights in the weight dtype, |M| x bytes. The sending group's GPUs push disjoint shards in
  parallel, each over its own link, so the time is bytes / (min(sender, receiver GPUs) x
  link bandwidth); the fan-out to the receiving group's replicas runs inside that group and
  is pipelined (not counted). The link is NVLink when the whole job fits in one node, else the
  inter-node NIC per GPU (OpenRLHF and verl broadcast over NCCL; Hu et al. 2024,
  arXiv:2405.11143; Sheng et al. 2024, arXiv:2409.19256). Groups on different accelerators
  (``rollout=16@h20,actor=8@h100``) sit in different nodes: the copy crosses the NICs at the
  slower side's rate (a transfer runs at its slowest hop).
* Resharding (§IV-D, hybrid): before an invocation whose layout differs from its model's
  training layout on the same group, each device gathers its shard of the new layout. With a
  zero-redundancy alignment (verl's 3D-HybridEngine) the part it already holds is its training
  shard, so it receives (destination shard - training shard) bytes, all devices at once, at
  the group's link bandwidth. Switching back costs nothing: the training shards were kept.
* Offload (§IV-B, "offloading, loading and unloading idle models"): a group that offloads
  keeps only the running model's states on the devices; switching models loads the next one's
  states from host memory and writes the previous one's trained states back, over the
  host link (PCIe), the two directions at once.

Host link bandwidth: the device's ``host_link_bandwidth_bytes_per_s`` (per direction, from its
spec, with a ``host_link_source``: PCIe Gen4 x16 32 GB/s on A100/A800/L40S, PCIe Gen5 x16
64 GB/s on H100/H200/H20/B200/MI300X, NVLink-C2C 450 GB/s on GB200). Pass
``host_bandwidth_bytes_per_s`` to override it.
"""

from __future__ import annotations

from rlmcost.specs.hardware import HardwareSpec


def host_bandwidth_bytes_per_s(hardware: HardwareSpec) -> int:
    """Device <-> host bandwidth per direction: the spec's ``host_link_bandwidth_bytes_per_s``.

    >>> from rlmcost.specs import get_hardware
    >>> host_bandwidth_bytes_per_s(get_hardware("a100-80gb")), host_bandwidth_bytes_per_s(
    ...     get_hardware("h100"))
    (32000000000, 64000000000)
    """
    return hardware.host_link_bandwidth_bytes_per_s


def group_link_bytes_per_s(hardware: HardwareSpec, gpus: int, collective: bool = False) -> int:
    """Per-GPU bandwidth inside a group: NVLink within one node, the NIC beyond it; a
    ``collective`` over the group's whole nodes (an all-gather of a reshard) spreads its
    node-crossing bytes over every GPU's NIC of a node
    (:func:`~rlmcost.perf.collectives.inter_node_bytes_per_s`), a copy from one GPU to
    another keeps to its own NIC."""
    if gpus <= hardware.gpus_per_node:
        return hardware.intra_node_bandwidth_bytes_per_s
    if collective:
        from rlmcost.perf.collectives import inter_node_bytes_per_s

        return int(inter_node_bytes_per_s(hardware, hardware.gpus_per_node))
    return hardware.inter_node_bandwidth_bytes_per_s


def sync_span_gpus(total_gpus: int, sender: HardwareSpec, receiver: HardwareSpec) -> int:
    """The GPU span a copy between two groups crosses, as the link rules read it: the job's
    GPUs on one accelerator; past any one node when the two accelerators differ (they never
    share a node)."""
    if sender.name == receiver.name:
        return total_gpus
    return max(total_gpus, sender.gpus_per_node + 1, receiver.gpus_per_node + 1)


def sync_link_bytes_per_s(sender: HardwareSpec, receiver: HardwareSpec, total_gpus: int) -> int:
    """Per-GPU bandwidth of a copy between two groups: the slower side's link over the span
    (:func:`sync_span_gpus`).

    >>> from rlmcost.specs import get_hardware
    >>> sync_link_bytes_per_s(get_hardware("h100"), get_hardware("a100-80gb"), 8)
    25000000000
    """
    span = sync_span_gpus(total_gpus, sender, receiver)
    return min(group_link_bytes_per_s(sender, span), group_link_bytes_per_s(receiver, span))


def weight_sync_time_s(
    weight_bytes: int, sender_gpus: int, receiver_gpus: int, total_gpus: int, hw: HardwareSpec,
    receiver_hw: HardwareSpec | None = None,
) -> float:
    """Seconds to move one copy of ``weight_bytes`` from one group (on ``hw``) to another (on
    ``receiver_hw``, default the same), at the slower side's link."""
    link = sync_link_bytes_per_s(hw, receiver_hw or hw, total_gpus)
    return weight_bytes / (min(sender_gpus, receiver_gpus) * link)


def reshard_bytes_per_device(destination_weight_bytes: int, training_weight_bytes: int) -> int:
    """What one device receives to build its shard of the new layout (module docstring)."""
    return max(0, destination_weight_bytes - training_weight_bytes)


def offload_switch_time_s(load_bytes: int, writeback_bytes: int, host_bytes_per_s: float) -> float:
    """One model switch on a device: load the next, write back the last, full duplex."""
    return max(load_bytes, writeback_bytes) / host_bytes_per_s
