"""The groups a rank's ZeRO / FSDP collectives run over, under full or hybrid sharding.

Full sharding (ZeRO, Rajbhandari et al. 2020; FSDP ``FULL_SHARD``): the states of a dense
parameter are sharded over the P_d P_c ranks that replicate it, the routed experts' over
Megatron-core's expert-DP group (``Layout.expert_dp``); gradients are reduce-scattered and
parameters all-gathered over that group (or the gradients all-reduced under ZeRO 0).

Hybrid sharding (``Layout.zero_shard`` = P_z < P_d P_c): the states are sharded over P_z
consecutive ranks and replicated over the P_d P_c / P_z shard groups. The parameter
all-gathers and the gradient reduce-scatters stay inside the shard group; each rank then
all-reduces its gradient shard (1 / P_z of the gradients) with the ranks that hold the same
shard in the other groups. Sources:

* PyTorch FSDP ``ShardingStrategy.HYBRID_SHARD`` (torch/distributed/fsdp/api.py: "Apply
  FULL_SHARD within a node, and replicate parameters across nodes";
  torch/distributed/fsdp/_init_utils.py ``_init_process_group_state_for_hybrid_shard``
  builds the intra-node shard group and the inter-node replicate group;
  ``_runtime_utils._reduce_grad`` reduce-scatters in the shard group, then all-reduces the
  shard in the replicate group);
* FSDP2 ``fully_shard(mesh=2-D DeviceMesh)`` (torch/distributed/fsdp/_fully_shard/
  _fully_shard.py: "a 2D mesh ... HSDP with replication on the 0th dim and sharding on the 1st
  dim"; _fsdp_collectives.py ``foreach_reduce``: reduce-scatter over the shard dim, then
  all-reduce over the replicate dim, on every backward);
* verl ``create_device_mesh`` (verl/workers/fsdp_workers.py @b25bb7d4f): ``fsdp_size`` < 0
  or >= world size gives the 1-D mesh (world,), else the 2-D mesh (world / fsdp_size,
  fsdp_size) named ("ddp", "fsdp") and HYBRID_SHARD / FSDP2 HSDP;
* DeepSpeed ZeRO++ hpZ (Wang et al. 2023, arXiv:2306.10209, §3.2): the all-gathers within a
  secondary partition group (``zero_hpz_partition_size``), the same within-group gather.

Under ZeRO 1 the all-reduce of the shard runs once per step (after the accumulated
reduce-scatter), under ZeRO 2/3 after every micro-batch's reduce-scatter, as FSDP does.
A routed expert under hybrid sharding shards over its expert-DP group / (P_d P_c / P_z)
ranks (``Layout.expert_zero_group``); its link is judged by the whole expert-DP group (an
upper bound on its span).
"""

from __future__ import annotations

from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Layout, ZeroStage


@dataclass(frozen=True)
class ZeroGroup:
    """One kind of parameter and the groups its ZeRO collectives run over: the shard group
    (``dims``, ``ranks``) and the replicas of each shard (``replica_dims``, ``replicas``;
    1 without hybrid sharding)."""

    name: str  # "dense" or "expert"
    dims: tuple[str, ...]  # parallel.comm group dims of the shard group
    ranks: int
    replica_dims: tuple[str, ...] = ()
    replicas: int = 1


def hybrid(layout: Layout) -> bool:
    """Whether ``layout`` shards its ZeRO states over fewer ranks than replicate them."""
    return layout.zero is not ZeroStage.NONE and layout.zero_replicas > 1


def zero_groups(layout: Layout, experts: bool = False) -> list[ZeroGroup]:
    """The dense group, then (with EP or a separate expert TP, or ``experts``) the expert
    group.

    >>> full = Layout(dp=8, zero=ZeroStage.OS_G_P)
    >>> [(g.dims, g.ranks, g.replicas) for g in zero_groups(full)]
    [(('dp', 'cp'), 8, 1)]
    >>> [(g.dims, g.ranks, g.replicas) for g in zero_groups(full.with_(zero_shard=2))]
    [(('zs',), 2, 4)]
    """
    from rlmcost.parallel.comm import group_ranks

    split = experts or layout.ep > 1 or layout.expert_tp != layout.tp
    if not hybrid(layout):
        out = [ZeroGroup("dense", ("dp", "cp"), group_ranks(layout, ("dp", "cp")))]
        if split:
            out.append(ZeroGroup("expert", ("edp",), layout.expert_dp))
        return out
    r = layout.zero_replicas
    out = [ZeroGroup("dense", ("zs",), layout.zero_group, ("zr",), r)]
    if split:
        out.append(ZeroGroup("expert", ("edp",), layout.expert_zero_group, ("zr",), r))
    return out


def hybrid_note(layout: Layout) -> str:
    """The modelling choice of a hybrid-sharded layout, in words, for a report's notes.

    >>> print(hybrid_note(Layout(dp=8, zero=ZeroStage.OS_G_P, zero_shard=2)))
    hybrid sharding: ZeRO-3 states over 2 ranks, 4 replicas; gathers and reduce-scatters \
within the 2, the 1/2 gradient shard all-reduced across the 4 (FSDP HYBRID_SHARD)
    """
    z, r = layout.zero_group, layout.zero_replicas
    return (
        f"hybrid sharding: ZeRO-{layout.zero} states over {z} ranks, {r} replicas; gathers "
        f"and reduce-scatters within the {z}, the 1/{z} gradient shard all-reduced across the "
        f"{r} (FSDP HYBRID_SHARD)"
    )
