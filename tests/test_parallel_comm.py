"""Communication volumes per strategy (rlmcost.parallel.comm), counted by hand."""

from fractions import Fraction

from rlmcost.parallel.comm import Collective, bytes_sent_per_rank, traffic_per_rank
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule
from rlmcost.specs import get_hardware, get_model

LLAMA8B = get_model("llama-3.1-8b").arch()  # 32 layers, d 4096, 8 kv heads of 128
MIXTRAL = get_model("mixtral-8x7b").arch()  # 32 MoE layers, 8 experts, top-2


def by(traffic, strategy, kind):
    (t,) = [x for x in traffic if x.strategy == strategy and x.collective is kind]
    return t


def test_ring_volumes():
    # Thakur et al. 2005 / NCCL: all-reduce 2(n-1)/n M, all-gather and reduce-scatter (n-1)/n M.
    assert bytes_sent_per_rank(Collective.ALL_REDUCE, 800, 4) == 1200
    assert bytes_sent_per_rank(Collective.ALL_GATHER, 800, 4) == 600
    assert bytes_sent_per_rank(Collective.REDUCE_SCATTER, 800, 4) == 600
    assert bytes_sent_per_rank(Collective.ALL_TO_ALL, 800, 4) == 600
    assert bytes_sent_per_rank(Collective.P2P, 800, 4) == 800


def test_sp_forward_moves_what_tp_forward_moves():
    # Korthikanti et al. 2022 §4.2.2: an all-reduce = reduce-scatter + all-gather, so SP's
    # forward communication volume equals TP's.
    tp = traffic_per_rank(LLAMA8B, Layout(tp=4), 1, 2048)
    sp = traffic_per_rank(LLAMA8B, Layout(tp=4, sp=True), 1, 2048)
    ar = by(tp, "tp", Collective.ALL_REDUCE)
    ag, rs = by(sp, "sp", Collective.ALL_GATHER), by(sp, "sp", Collective.REDUCE_SCATTER)
    per_call = Fraction(ar.bytes_per_rank, ar.calls)
    assert per_call == Fraction(ag.bytes_per_rank, ag.calls) + Fraction(rs.bytes_per_rank, rs.calls)
    # forward 2 + backward 2 per layer, + embedding and head: 4 L + 2 all-reduces
    assert ar.calls == 4 * 32 + 2
    # SP: forward 2 AG + 2 RS, backward 2 RS + 4 AG (re-gathered inputs for weight gradients)
    assert (ag.calls, rs.calls) == (6 * 32, 4 * 32 + 2)


def test_full_recomputation_repeats_forward_collectives():
    base = by(traffic_per_rank(LLAMA8B, Layout(tp=2), 1, 512), "tp", Collective.ALL_REDUCE)
    full = traffic_per_rank(LLAMA8B, Layout(tp=2, ckpt=Checkpointing.FULL), 1, 512)
    assert by(full, "tp", Collective.ALL_REDUCE).calls == base.calls + 2 * 32


def test_ring_attention_kv_hops():
    # Liu et al. 2023: each rank's K,V block travels P_c - 1 hops; backward sends K,V and dK,dV.
    cp = 4
    t = by(traffic_per_rank(LLAMA8B, Layout(cp=cp), 1, 8192), "cp", Collective.P2P)
    kv_block = (8192 // cp) * 2 * 8 * 128 * 2  # tokens x (K and V) x h_kv x d_h x bf16
    assert t.payload_bytes == kv_block
    assert t.calls == (cp - 1) * 32 * 3


def test_expert_parallel_dispatch_and_combine():
    # GShard: dispatch + combine all-to-all per MoE layer, forward and backward; EP 8 folded
    # inside DP 8 (Megatron-core's expert grid), one sequence per data rank.
    lay = Layout(dp=8, ep=8)
    t = by(traffic_per_rank(MIXTRAL, lay, 8, 1024), "ep", Collective.ALL_TO_ALL)
    assert t.calls == 32 * 4
    assert t.payload_bytes == 1024 * 2 * 4096 * 2  # tokens x top-2 x d x bf16
    assert t.bytes_per_rank == t.calls * 7 * t.payload_bytes // 8


def test_pipeline_sends_and_links():
    hw = get_hardware("h100-sxm")
    lay = Layout(pp=4, schedule=PipelineSchedule.ONE_F_ONE_B)
    stages = traffic_per_rank(LLAMA8B, lay, 8, 1024, hardware=hw)
    t = by(stages, "pp", Collective.P2P)
    # an interior stage sends every micro-batch's activations forward and gradients back
    assert t.calls == 2 * 8 and t.payload_bytes == 1024 * 4096 * 2
    assert t.intra_node and t.time_s == t.bytes_per_rank / hw.intra_node_bandwidth_bytes_per_s
