"""Collectives across nodes: a ring's node crossings spread over the NICs of the group's ranks
in a node, an all-to-all or a point-to-point send keeps to the rank's own NIC.

Independent figures: NCCL-tests all_reduce bus bandwidth across DGX H100 nodes (one 400 Gb/s
NIC per GPU) of 400-450 GB/s at large sizes (Saturn Cloud's multi-node NCCL validation table),
i.e. about eight NICs' 8 x 50 GB/s, not one NIC's 50 GB/s; the H100 datasheet's NVLink 900 GB/s
bidirectional = 450 GB/s per direction; 400 Gb/s = 50 GB/s per NIC."""

from __future__ import annotations

import pytest

from rlmcost.parallel.comm import Collective, group_ranks_per_node
from rlmcost.parallel.layout import Layout
from rlmcost.perf.collectives import inter_node_bytes_per_s, link
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_pass import StepContext
from rlmcost.perf.train_step import StepOptions
from rlmcost.specs import get_hardware

H100 = get_hardware("h100-sxm")
NIC = 50e9  # 400 Gb/s ConnectX-7 per GPU


def test_ranks_per_node_follow_megatron_rank_order() -> None:
    # tp fills each node: the DP group takes one rank per node (each on its own NIC)
    assert group_ranks_per_node(Layout(tp=8, dp=16), ("dp",), 8) == 1
    # tp 2: four DP ranks in each node
    assert group_ranks_per_node(Layout(tp=2, dp=16), ("dp",), 8) == 4
    # pure FSDP over 2 nodes: all eight
    assert group_ranks_per_node(Layout(dp=16), ("dp",), 8) == 8


def test_inter_node_bandwidth_scales_with_nics_up_to_nvlink() -> None:
    assert inter_node_bytes_per_s(H100, 1) == NIC
    assert inter_node_bytes_per_s(H100, 8) == 8 * NIC  # 400 GB/s < NVLink's 450
    assert link(H100, False, 4).bandwidth_bytes_per_s == 4 * NIC
    # never beyond NVLink, which carries the ring inside the node
    assert inter_node_bytes_per_s(H100, 64) <= H100.intra_node_bandwidth_bytes_per_s


@pytest.mark.parametrize(("kind", "faster"), [(Collective.ALL_GATHER, True),
                                              (Collective.ALL_TO_ALL, False)])  # fmt: skip
def test_only_ring_collectives_spread_over_nics(kind: Collective, faster: bool) -> None:
    from rlmcost.parallel.breakdown import data_share
    from rlmcost.specs import get_model
    from rlmcost.specs.workload import Workload

    arch = get_model("llama-3.1-8b").arch()
    device = Device(H100)

    def comm(layout: Layout, dims: tuple[str, ...]) -> float:
        share = data_share(layout, 16, 1024)
        c = StepContext.of(arch, layout, 1024, share, device, StepOptions(), Workload())
        return c.comm(kind, 1e9, 16, dims)

    spread = comm(Layout(dp=16), ("dp",))  # 8 ranks per node
    alone = comm(Layout(tp=8, dp=16), ("dp",))  # 1 rank per node
    assert (spread < alone / 4) is faster
