"""Which hosts a parallel group's ranks land on when the framework orders them at random
(the Run's ``cluster.rank_order``, ``--rank-order``).

rlmcost lays ranks out in order (:mod:`rlmcost.parallel.comm`): a group whose ranks span no
more than a node (``HardwareSpec.gpus_per_node``: the NVLink domain, a DGX's 8 GPUs or a GB200
NVL72 rack's 72) talks over NVLink, as a launcher that orders ranks by NVLink domain places it
(``rank_order="topology"``, the default; NeMo RL with ``cluster.segment_size``, v0.7.0
docs/cluster.md 'Topology-Aware Placement for MoE').

``rank_order="random"``: the framework orders its hosts without regard to NVLink domains.
NeMo RL without ``cluster.segment_size`` (every version before v0.7.0, and v0.7.0 where a
recipe leaves it unset) sorts its placement group's bundles by (Ray node id, GPU id)
(``RayVirtualCluster._get_sorted_bundle_indices``, nemo_rl/distributed/virtual_cluster.py at
r0.5.0 and r0.6.0: "sort by node_id, then gpu_id"; the vLLM engines' tied groups the same way,
``_get_tied_worker_bundle_indices`` in nemo_rl/models/generation/vllm/vllm_generation.py at
r0.6.0: ``sorted_nodes = sorted(node_bundles)``), and a Ray node id is random
(``ray.NodeID.from_random().hex()`` in ``Node.__init__``, python/ray/_private/node.py,
ray-project/ray db0751709c). On an allocation of several NVLink domains (more GPUs than one
holds) the hosts of a group that spans several of them are then drawn from every domain: on
two racks a vLLM engine of two GB200 trays lands in both about half the time, an
expert-parallel group of four trays seven times in eight, and a synchronous step waits for its
slowest engine and its slowest group. NeMo
RL PR 2612 ('Topology aware placement', 2026-05-28, commit 688cfd08e) added
``cluster.segment_size`` so that "tensor-parallel and pipeline-parallel groups stay within the
same NVLink domain, so collective operations use NVLink instead of InfiniBand"; PR 2986
(2026-06-29) reports the expert-parallel all-to-all of a job spread over two NVL72 racks
crossing InfiniBand.

The rule: with ``rank_order="random"`` and more GPUs than one NVLink domain, a group's NVLink
reaches one host (``HardwareSpec.host_gpus``: a GB200 compute tray's 4 GPUs); a group spanning
more runs at the inter-node link, every byte at NIC rate (an upper bound for an all-to-all of
which about one rack's share of peers stays on NVLink). A run inside one NVLink domain is
taken to be allocated inside it (nothing changes: the scheduler's choice, not published), as
is every run on hardware whose NVLink domain is one host (DGX/HGX: ``host_gpus`` equals
``gpus_per_node``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import RankOrder
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec

RANK_ORDERS = tuple(str(o) for o in RankOrder)
"""The Run's ``cluster.rank_order`` values (module docstring)."""


def spans_domains(hw: HardwareSpec, rank_order: str, gpus: int | None) -> bool:
    """Whether a group spanning several hosts of ``hw`` crosses NVLink domains: ranks in
    random host order over more GPUs than one domain holds, on hardware whose domain holds
    several hosts. ``gpus`` None with ``rank_order="random"`` on such hardware: a SpecError."""
    if rank_order not in RANK_ORDERS:
        raise SpecError(f"rank order {rank_order!r}: use one of {', '.join(RANK_ORDERS)}")
    if rank_order == "topology" or hw.host_gpus >= hw.gpus_per_node:
        return False
    if gpus is None:
        raise SpecError("--rank-order random needs --gpus: whether the run spans "
                        f"several NVLink domains of {hw.gpus_per_node} GPUs depends on them")
    return gpus > hw.gpus_per_node


def nvlink_reach(hw: HardwareSpec, rank_order: str, gpus: int | None) -> HardwareSpec:
    """``hw`` as the run's groups see it: where :func:`spans_domains`, a node of one host
    (``gpus_per_node = host_gpus``: a group over more GPUs talks over the inter-node link),
    else ``hw`` itself.

    >>> from rlmcost.specs import get_hardware
    >>> gb200 = get_hardware("gb200")
    >>> [nvlink_reach(gb200, "random", n).gpus_per_node for n in (128, 64)]
    [4, 72]
    >>> nvlink_reach(get_hardware("h100"), "random", 256).gpus_per_node  # one host per domain
    8
    """
    if not spans_domains(hw, rank_order, gpus):
        return hw
    return hw.model_copy(update={"gpus_per_node": hw.host_gpus})
