"""The MoE dispatch (and combine) all-to-all of one rank over an expert-parallel group.

A rank sends each of its tokens to the ranks holding its top-k experts (dispatch) and gets the
expert outputs back (combine: the same bytes the other way); :mod:`~rlmcost.perf.step_pass`
prices two per MoE layer forward and two backward. Inside one node (NVLink) the all-to-all is
the alpha-beta collective of :mod:`~rlmcost.perf.collectives`, whatever the dispatcher. Across
nodes the two dispatchers of Megatron-core differ in what crosses the NIC
(:class:`EpDispatcher`, ``StepOptions.ep_dispatcher``):

* ``alltoall`` (``--moe-token-dispatcher-type alltoall``, ``MoEAlltoAllTokenDispatcher``,
  megatron/core/transformer/moe/token_dispatcher.py @d98e8a64dd): ``all_to_all`` with
  per-peer split sizes, i.e. NCCL send/recv pairs to every peer of the group at once
  (torch.distributed ``all_to_all_single`` -> ``ncclGroupStart``, ``ncclSend`` /
  ``ncclRecv`` per peer): every token copy travels once, over the rank's NIC to a peer in
  another node and over NVLink to a peer in its own node (NCCL picks the P2P transport inside
  a node and the network transport across nodes, NCCL User Guide, "Environment Variables",
  NCCL_P2P_LEVEL / NCCL_NET). Of ``k`` copies spread evenly over the ``P_e`` ranks, ``(P_e -
  r) / P_e`` leave the node (``r`` = EP ranks per node) and ``(r - 1) / P_e`` stay; the two
  links run at once, so the call takes the longer of the two. (rlmcost priced every copy at
  the NIC's rate before: ``(P_e - 1) / P_e`` of the bytes, 1.29 x the NIC's share at EP 32
  over 4 nodes of 8.)
* ``deepep`` (``--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep``,
  DeepEP's normal kernels): "asymmetric-domain bandwidth forwarding, such as forwarding data
  from NVLink domain to RDMA domain" (deepseek-ai/DeepEP docs/legacy.md, the V1 README @0297fc8;
  DeepSeek-V3 report arXiv 2412.19437 §3.2.2: a token goes over IB once to the GPU of the same
  in-node index on each target node and is forwarded over NVLink to the GPUs there that hold
  its experts). A token crosses the NIC once per *remote node* that holds one of its experts,
  not once per expert copy (csrc/kernels/internode.cu: one RDMA token carries the bitmask of
  the NVLink peers it is for, ``SourceMeta::is_token_in_nvl_rank_bits``;
  ``get_dispatch_layout`` counts ``num_tokens_per_rdma_rank``). The NVLink forward carries the
  copies on to their GPUs, ``(r - 1) / r`` of them; the RDMA and NVLink stages are pipelined,
  so the call takes the longer of the two.

**Which nodes a token hits** (:func:`remote_nodes_per_token`): with ``E`` experts spread
evenly over the ``N`` nodes of the group and top-k choices uniform over the experts (forced
load balancing: Megatron-core's ``--moe-router-force-load-balancing`` draws the router's logits
at random, megatron/core/transformer/moe/router.py @d98e8a64dd; an assumption for real
routing, whose correlated choices hit fewer nodes), a node holds none of a token's k experts
with probability C(E - E/N, k) / C(E, k), so (N - 1)(1 - C(E - E/N, k) / C(E, k)) of the other
nodes receive it: 2.72 of 3 for Qwen3-235B-A22B's 8 of 128 experts at EP 32 over 4 nodes,
against 6 of the 8 copies an all-to-all sends across. DeepSeek-V3's node-limited routing (at
most 4 nodes per token) is not modelled.

The busiest rank's share (:mod:`~rlmcost.perf.moe_imbalance`) scales both links' bytes.
HybridEP (GB200 NVL72) and DeepEP inside one node are the NVLink all-to-all.

* ``allgather`` (``--moe-token-dispatcher-type allgather``, Megatron-core's default,
  transformer_config.py:891 @d98e8a64dd; ``MoEAllGatherTokenDispatcher``, token_dispatcher.py
  @d98e8a64dd): no all-to-all. Every rank all-gathers the hidden states, the routing map (bool)
  and the dense probabilities ``[tokens, E]`` of every rank of its expert-TP x EP group
  (``tp_ep_group``, ``gather_from_sequence_parallel_region``), keeps the rows of its local
  experts, and returns the outputs by a reduce-scatter over the same group
  (``reduce_scatter_to_sequence_parallel_region``) in the probabilities' dtype
  (``hidden_states.to(self.local_probs.dtype)``): the router's (moe_utils.py
  ``topk_routing_with_score_function``: "The final probs are casted to the same dtype as the
  logits"), 8 B under ``moe_router_dtype: fp64``, 4 B otherwise (choice: rlmcost's fp32 router,
  whose Megatron ``None`` would be the model's 2 B). Its volume does not depend on the routing
  (the busiest rank gathers what every rank does); it replaces the expert-TP gather of the
  all-to-all path (:func:`allgather_comm_s`).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import TYPE_CHECKING

from rlmcost.choices import EpDispatcher
from rlmcost.parallel.comm import Collective, group_is_intra_node, group_ranks_per_node
from rlmcost.perf.collectives import link

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StepContext

__all__ = ["EpDispatcher", "allgather_comm_s", "ep_all_to_all_s", "remote_nodes_per_token"]


def remote_nodes_per_token(experts: int, top_k: int, nodes: int) -> Fraction:
    """Expected other nodes of an EP group of ``nodes`` nodes that hold at least one of a
    token's ``top_k`` experts, the ``experts`` spread evenly and the choices uniform (module
    docstring). Exact.

    >>> round(float(remote_nodes_per_token(128, 8, 4)), 4)  # Qwen3-235B-A22B, EP 32 on 4 nodes
    2.7218
    >>> remote_nodes_per_token(128, 8, 1)
    Fraction(0, 1)
    """
    if nodes < 2:
        return Fraction(0)
    per_node = experts // nodes
    miss = Fraction(comb(experts - per_node, top_k), comb(experts, top_k))
    return (nodes - 1) * (1 - miss)


def ep_all_to_all_s(c: StepContext, sent_bytes: int, token_bytes: int) -> float:
    """Seconds of one dispatch (or combine) of a rank that sends ``sent_bytes`` (its token
    copies, the busiest rank's where routing is uneven) for ``token_bytes`` of distinct tokens
    over the EP group of ``c``'s layout (module docstring)."""
    lay, hw = c.layout, c.device.hardware
    ep = lay.ep
    if group_is_intra_node(lay, ("ep",), c.gpus_per_node):
        return c.comm(Collective.ALL_TO_ALL, sent_bytes, ep, ("ep",))
    r = group_ranks_per_node(lay, ("ep",), c.gpus_per_node)
    nic, nvl = link(hw, False, 1), link(hw, True)
    if c.options.ep_dispatcher is EpDispatcher.DEEPEP:
        arch = c.arch
        nodes, k = ep // r, int(arch.top_k)
        hits = remote_nodes_per_token(int(arch.n_experts), k, nodes)
        share = sent_bytes / (token_bytes * k) if token_bytes else 1.0  # the busiest's / mean
        remote = float(token_bytes * hits) * share
        local = sent_bytes * (r - 1) / r
        steps_net, steps_nvl = nodes - 1, r - 1
    else:
        remote = sent_bytes * (ep - r) / ep
        local = sent_bytes * (r - 1) / ep
        steps_net, steps_nvl = ep - r, r - 1
    net_s = steps_net * nic.latency_s + remote / nic.bus_bytes_per_s
    nvl_s = steps_nvl * nvl.latency_s + local / nvl.bus_bytes_per_s if r > 1 else 0.0
    return max(net_s, nvl_s)


def allgather_comm_s(c: StepContext, tok: int, probs_bytes: int) -> float:
    """Seconds of one pass side's dispatch (all-gather) and combine (reduce-scatter) of
    Megatron-core's allgather dispatcher for a rank holding ``tok`` bytes of distinct tokens,
    each with ``E`` routing-map bytes and ``E`` probabilities of ``probs_bytes`` (module
    docstring): the group is the expert-TP x EP ranks; the backward moves the same bytes the
    other way (an all-gather's gradient is a reduce-scatter and back)."""
    lay, arch = c.layout, c.arch
    group = lay.expert_tp * lay.ep
    if group == 1:
        return 0.0
    x = c.workload.activation_dtype.bytes
    rows = tok // (int(arch.expert_width) * x)  # the rank's tokens (l wide: latent MoE)
    e = int(arch.n_experts)
    gathered = group * (tok + rows * e * (1 + probs_bytes))
    out = group * rows * int(arch.expert_width) * probs_bytes
    dims = ("etp", "ep")
    return (c.comm(Collective.ALL_GATHER, gathered, group, dims)
            + c.comm(Collective.REDUCE_SCATTER, out, group, dims))  # fmt: skip


DISPATCHER_NOTES = {
    EpDispatcher.DEEPEP: "MoE token dispatcher deepep (flex + DeepEP normal kernels): across "
    "nodes a token crosses the NIC once per remote node holding one of its experts, then "
    "NVLink forwarding; inside a node the NVLink all-to-all (rlmcost.perf.ep_dispatch)",
    EpDispatcher.ALLGATHER: "MoE token dispatcher allgather (Megatron-core's default): every "
    "rank all-gathers the tokens, routing map and probabilities of its expert-TP x EP group "
    "and reduce-scatters the outputs back in the router's dtype (8 B under fp64, else 4 B), "
    "whatever the routing (rlmcost.perf.ep_dispatch)",
}
"""The note of a trainer's non-default dispatcher (``TrainLayout.ep_dispatcher``)."""
