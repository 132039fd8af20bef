"""Collective time by the alpha-beta model, ring and tree algorithms (NCCL conventions).

A collective over n ranks on a buffer of M bytes takes (Hockney's alpha-beta model; Thakur,
Rabenseifner and Gropp 2005, "Optimization of collective communication operations in MPICH",
IJHPCA 19(1), §4; NCCL-tests doc/PERFORMANCE.md for the bus-bandwidth factors):

* ring all-reduce: 2 (n - 1) steps, each alpha + (M / n) / B:
  ``2 (n - 1) alpha + 2 (n - 1)/n x M / B``;
* tree all-reduce (NCCL's double binary tree, Sanders, Speck and Träff 2009): a pipelined
  reduce up and broadcast down, each half of the buffer on one of two complementary trees, in
  which a rank is interior in one (sends M/2 up and M/2 to each of two children) and a leaf
  in the other (M/2 up): 2 M per direction, ``2 ceil(log2 n) alpha + 2 M / B`` (the ring's
  bandwidth term up to (n-1)/n, with logarithmic instead of linear latency);
* ring all-gather / reduce-scatter (M = the gathered buffer): ``(n - 1) alpha +
  (n - 1)/n x M / B``;
* all-to-all (pairwise exchange, M = one rank's send buffer): ``(n - 1) alpha +
  (n - 1)/n x M / B``;
* point-to-point: ``alpha + M / B``.

``B`` is the per-direction link bandwidth of a rank (NVLink inside a node, the rank's NIC
across nodes, :class:`~rlmcost.specs.HardwareSpec`) times the achievable bus-bandwidth
fraction of NCCL on it; the "bus bytes" ``2 (n-1)/n M`` and ``(n-1)/n M`` are what NCCL-tests
divides by time to report bus bandwidth. ``auto`` takes the faster of ring and tree, as NCCL's
tuner does.

Link defaults (:func:`link`): alpha 5 us per step across nodes and 2 us inside; achieved
bus bandwidth 0.8 of NVLink (NCCL-tests all_reduce on DGX A100 reaches about 230-240 GB/s of
300 GB/s) and 0.9 of the NIC line rate (about 23 of 25 GB/s per HDR port). A calibration
profile's ``link`` table replaces the bandwidth fraction when it has one.

The 5 us across nodes, checked against published NCCL all-reduce times
(:mod:`rlmcost.perf.nccl_measured`): with the tree a TP group that fills 8-GPU nodes is charged
40 us on two nodes and 50 us on four for a message up to 64 KiB (a decode step's), against
35.9-55.5 us measured on InfiniBand (MSCCL++ NDmv4 tables, mscclpp issue 531's SGLang pynccl
in a CUDA graph, mscclpp PR 794 on four H200 nodes): charged / measured 0.83-1.12. The 2 us
inside a node is an assumption of the order of NCCL-tests' single-node rows (16.96 us for
1 KiB on 8 A100 is charged 12 us; engines use their own all-reduce kernels there).
"""

from __future__ import annotations

from enum import StrEnum
from math import ceil, log2
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.parallel.comm import Collective

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec

INTRA_NODE_LATENCY_S = 2e-6
INTER_NODE_LATENCY_S = 5e-6
INTRA_NODE_BUS_EFFICIENCY = 0.8
INTER_NODE_BUS_EFFICIENCY = 0.9
DEFAULT_HOST_LINK_BYTES_PER_S = 25e9
"""Host link per GPU and direction when the hardware spec names none: PCIe Gen4 x16 is 32 GB/s
raw per direction, about 25 GB/s achieved for pinned copies (A100 systems); PCIe Gen5 doubles it."""


class Algorithm(StrEnum):
    RING = "ring"
    TREE = "tree"
    AUTO = "auto"  # the faster of ring and tree


@dataclass(frozen=True)
class Link:
    """A rank's link: per-direction bandwidth, achievable bus fraction, latency per step."""

    bandwidth_bytes_per_s: float
    latency_s: float
    efficiency: float = 1.0

    def __post_init__(self) -> None:
        if not self.bandwidth_bytes_per_s > 0:
            raise SpecError(f"link bandwidth {self.bandwidth_bytes_per_s} B/s must be positive")
        if self.latency_s < 0:
            raise SpecError(f"link latency {self.latency_s} s must be non-negative")
        if not 0 < self.efficiency <= 1:
            raise SpecError(f"link efficiency {self.efficiency} must be in (0, 1]")

    @property
    def bus_bytes_per_s(self) -> float:
        return self.bandwidth_bytes_per_s * self.efficiency


@memoized()
def link(hardware: HardwareSpec, intra_node: bool, ranks_per_node: int = 1) -> Link:
    """The default link of ``hardware`` inside a node (NVLink/xGMI) or across nodes (NIC).

    Across nodes, a collective whose group has ``ranks_per_node`` members in each node moves
    its node-crossing traffic over that many NICs at once (:func:`inter_node_bytes_per_s`);
    one member per node (a DP group of TP-filled nodes) has its own NIC only. Memoized (a
    frozen Link per distinct arguments: the planner's sweep of PPO 70B on 32 A100 asks 3,724
    links of 14)."""
    if intra_node:
        return Link(
            hardware.intra_node_bandwidth_bytes_per_s,
            INTRA_NODE_LATENCY_S,
            INTRA_NODE_BUS_EFFICIENCY,
        )
    return Link(
        inter_node_bytes_per_s(hardware, ranks_per_node), INTER_NODE_LATENCY_S,
        INTER_NODE_BUS_EFFICIENCY,
    )  # fmt: skip


def inter_node_bytes_per_s(hardware: HardwareSpec, ranks_per_node: int = 1) -> float:
    """Per-direction bandwidth of a rank's share of a collective across nodes: NCCL lays one
    ring channel per NIC, and a ring crosses a node boundary once per node per channel, so a
    group with ``r`` members per node spreads its node-crossing bytes over ``r`` NICs (one per
    GPU on DGX-class nodes: the spec's ``inter_node_bandwidth_bytes_per_s`` is per GPU), up to
    the NVLink that carries the rest of the ring. NCCL-tests on 2+ DGX H100 nodes with one
    400 Gb/s NIC per GPU report all_reduce bus bandwidth of 400-450 GB/s per rank at large
    sizes (Saturn Cloud, "Validating multi-node GPU clusters with NCCL tests", expected bus
    bandwidth table: H100 SXM, NVLink + IB NDR), eight NICs' 8 x 50 GB/s, not one's 50.

    >>> from rlmcost.specs import get_hardware
    >>> h = get_hardware("h100-sxm")
    >>> inter_node_bytes_per_s(h, 8) == 8 * h.inter_node_bandwidth_bytes_per_s
    True
    """
    r = max(1, min(int(ranks_per_node), int(hardware.gpus_per_node)))
    return float(min(hardware.inter_node_bandwidth_bytes_per_s * r,
                     hardware.intra_node_bandwidth_bytes_per_s))  # fmt: skip


def host_link_bytes_per_s(hardware: HardwareSpec, override: float | None = None) -> float:
    """Host <-> device bandwidth per GPU and direction: ``override``, else the hardware spec's
    ``host_link_bandwidth_bytes_per_s`` when it has one, else
    :data:`DEFAULT_HOST_LINK_BYTES_PER_S`."""
    if override is not None:
        if not override > 0:
            raise SpecError(f"host link bandwidth {override} B/s must be positive")
        return float(override)
    spec = getattr(hardware, "host_link_bandwidth_bytes_per_s", None)
    return float(spec) if spec else DEFAULT_HOST_LINK_BYTES_PER_S


def bus_bytes(kind: Collective, payload_bytes: float, ranks: int) -> float:
    """NCCL-tests bus bytes of one collective (ring factors); M for point-to-point.

    >>> bus_bytes(Collective.ALL_REDUCE, 1000, 8)
    1750.0
    """
    if kind is Collective.P2P:
        return float(payload_bytes)
    factor = 2 if kind is Collective.ALL_REDUCE else 1
    return factor * (ranks - 1) / ranks * payload_bytes


def collective_time_s(
    kind: Collective,
    payload_bytes: float,
    ranks: int,
    link: Link,
    algorithm: Algorithm = Algorithm.RING,
) -> float:
    """Seconds of one collective on ``payload_bytes`` over ``ranks`` ranks (module docstring).

    One rank or no bytes take no time.

    >>> lk = Link(100e9, 1e-6)
    >>> collective_time_s(Collective.ALL_REDUCE, 8e9, 8, lk)  # 2*7 steps; 2*7/8 * 8e9 / 1e11
    0.140014
    """
    if ranks < 1:
        raise SpecError(f"ranks={ranks} must be a positive integer")
    if payload_bytes < 0:
        raise SpecError(f"payload {payload_bytes} bytes must be non-negative")
    if payload_bytes == 0 or (ranks == 1 and kind is not Collective.P2P):
        return 0.0
    bw, alpha = link.bus_bytes_per_s, link.latency_s
    if kind is Collective.P2P:
        return alpha + payload_bytes / bw
    n = ranks
    ring_steps = 2 * (n - 1) if kind is Collective.ALL_REDUCE else n - 1
    ring = ring_steps * alpha + bus_bytes(kind, payload_bytes, n) / bw
    if kind is not Collective.ALL_REDUCE or algorithm is Algorithm.RING:
        return ring
    tree = 2 * ceil(log2(n)) * alpha + 2 * payload_bytes / bw
    return tree if algorithm is Algorithm.TREE else min(ring, tree)
