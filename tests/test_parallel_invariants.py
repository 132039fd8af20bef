"""Invariants of the parallel transforms (hypothesis) and exact identities of Tables V-VIII."""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import blocks as bl
from rlmcost import symbols as sy
from rlmcost.arch import CANONICAL, CANONICAL_MOE
from rlmcost.choices import Head
from rlmcost.logs import clog2
from rlmcost.parallel.activations import kappa_ckpt, work_recompute
from rlmcost.parallel.cost import Degrees, training_cost
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.memory import Mode, memory_per_rank, memory_per_stage
from rlmcost.parallel.zero import model_state_bytes_per_rank
from rlmcost.specs import get_model

small = st.integers(min_value=1, max_value=4)
SETTINGS = settings(max_examples=25, deadline=None)


def zero(expr) -> bool:
    return sp.simplify(expr) == 0


# --- every degree = 1 gives the baseline ----------------------------------------------------


@pytest.mark.parametrize("arch", [CANONICAL, CANONICAL_MOE])
def test_all_degrees_one_is_the_serial_baseline(arch):
    # Seed paper Table III/IV: training = 3 x forward, D_tr = D_f + D_b, memory 4|M| + B m L d.
    c = training_cost(arch, Degrees(), omit_router=False)
    assert zero(c.work_per_rank - bl.work_train(arch, sy.B, sy.m))
    assert zero(c.work_global - bl.work_train(arch, sy.B, sy.m))
    assert zero(c.depth_per_rank - bl.depth_train(arch, sy.m, sy.B * sy.m))
    assert zero(c.depth_global - c.depth_per_rank)
    memory = bl.memory_adam_states(bl.params(arch)) + bl.memory_activations_paper(arch, sy.B * sy.m)
    assert zero(c.memory_per_rank - memory)
    assert zero(c.memory_global - memory)


@pytest.mark.parametrize("degree", [sy.P_d, sy.P_t, sy.P_c])
def test_symbolic_rows_reduce_to_the_baseline_at_degree_one(degree):
    name = {sy.P_d: "dp", sy.P_t: "tp", sy.P_c: "cp"}[degree]
    c = training_cost(CANONICAL, Degrees(**{name: degree}))
    base = training_cost(CANONICAL)
    for q in ("work_per_rank", "memory_per_rank", "work_global", "memory_global"):
        assert zero(getattr(c, q).subs(degree, 1) - getattr(base, q)), q


@SETTINGS
@given(
    model=st.sampled_from(["llama-3.1-8b", "gpt-2", "mixtral-8x7b", "qwen2.5-7b"]),
    micro_batch=small,
    seq=st.sampled_from([128, 1000, 4096]),
)
def test_numeric_memory_with_default_layout_is_the_serial_footprint(model, micro_batch, seq):
    # Table III bytes on one device: 2|M| weights, 2|M| gradients, 12|M| Adam (ZeRO §3.1),
    # the faithful activations and fp32 logits of one micro-batch.
    arch = get_model(model).arch()
    mem = memory_per_rank(arch, Layout(micro_batch=micro_batch), Mode.TRAIN, micro_batch, seq)
    n = int(bl.params(arch))
    tokens = micro_batch * seq
    assert (mem.weights, mem.gradients, mem.optimizer) == (2 * n, 2 * n, 12 * n)
    assert mem.activations == int(bl.memory_activations_bytes(arch, tokens))
    assert mem.logits == int(bl.memory_logits_bytes(arch, tokens))
    assert mem.kv_cache == mem.buffers == 0
    gen = memory_per_rank(arch, Layout(), Mode.GENERATE, micro_batch, seq)
    assert gen.kv_cache == int(bl.memory_kv_cache_bytes(arch, micro_batch * seq))
    assert gen.gradients == gen.optimizer == 0 and gen.weights == 2 * n


# --- global work = sum over ranks of per-rank work (replication included) -------------------


@SETTINGS
@given(dp=small, tp=small, pp=small, cp=small, ep=small, coupled=st.booleans(), full=st.booleans())
def test_global_work_is_the_sum_over_ranks(dp, tp, pp, cp, ep, coupled, full):
    ckpt = Checkpointing.FULL if full else Checkpointing.NONE
    for arch in (CANONICAL, CANONICAL_MOE):
        e = ep if arch.is_moe else 1
        g = Degrees(dp=dp, tp=tp, pp=pp, cp=cp, ep=e, ckpt=ckpt, coupled_ep=coupled)
        c = training_cost(arch, g, omit_router=False)
        assert sum(r.count for r in c.ranks) == dp * tp * pp * cp * e
        summed = sum(r.count * r.work for r in c.ranks)
        serial = bl.work_train(arch, sy.B, sy.m) + work_recompute(arch, sy.B, sy.m, ckpt)
        passes = 4 if full else 3  # forward, backward (2x), recomputed forward
        # Replication, counted: the d x E router runs on every TP rank, and isolated EP runs
        # the whole dense path (router included) on each of its P_e ranks.
        experts = router = 0
        if arch.is_moe:
            tokens = sy.B * sy.m
            experts = passes * 2 * sy.L * sy.k * bl.params_ffn(arch, sy.d_e) * tokens
            router = passes * 2 * sy.L * sy.d * sy.E * tokens
        copies = 1 if coupled else e
        expected = experts + copies * (serial - experts - router) + copies * tp * router
        assert zero(summed - expected)


@SETTINGS
@given(pp=st.integers(min_value=1, max_value=32), dp=small, tp=st.sampled_from([1, 2, 4, 8]))
def test_numeric_stages_sum_to_the_model(pp, dp, tp):
    # Uneven PP splits (126 layers over pp) still add up to the whole model's work.
    arch = get_model("llama-3.1-405b").arch()
    batch = 4 * dp
    c = training_cost(arch, Degrees(dp=dp, tp=tp, pp=pp), batch, 512, omit_router=False)
    assert sum(r.count * r.work for r in c.ranks) == bl.work_train(arch, batch, 512)


# --- idealized TP per-rank work = baseline / P_t --------------------------------------------


def test_tp_per_rank_work_is_baseline_over_pt():
    base = training_cost(CANONICAL)
    tp = training_cost(CANONICAL, Degrees(tp=sy.P_t))
    assert zero(tp.work_per_rank - base.work_per_rank / sy.P_t)
    assert zero(tp.work_global - base.work_global)


@SETTINGS
@given(t=st.sampled_from([1, 2, 3, 4, 6, 8]), seqs=small, seq=st.integers(1, 64))
def test_tp_per_rank_work_numeric(t, seqs, seq):
    base = training_cost(CANONICAL, Degrees(), seqs, seq)
    tp = training_cost(CANONICAL, Degrees(tp=t), seqs, seq)
    assert zero(tp.work_per_rank - base.work_per_rank / t)


# --- ZeRO: per-rank model states never grow -------------------------------------------------


@SETTINGS
@given(n=st.integers(1, 10**12), pz=st.integers(1, 4096), extra=st.integers(1, 64))
def test_model_states_never_grow_with_stage_or_pz(n, pz, extra):
    totals = [model_state_bytes_per_rank(n, z, pz).total for z in ZeroStage]
    assert totals == sorted(totals, reverse=True)
    for z in ZeroStage:
        assert (
            model_state_bytes_per_rank(n, z, pz * extra).total
            <= model_state_bytes_per_rank(n, z, pz).total
        )


@SETTINGS
@given(
    dp=st.sampled_from([1, 2, 4, 8, 16]),
    model=st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b"]),
)
def test_memory_per_rank_states_never_grow_from_zero0_to_zero3(dp, model):
    arch = get_model(model).arch()
    ep = 2 if arch.is_moe else 1
    states = []
    for z in ZeroStage:
        lay = Layout(dp=dp * ep, ep=ep, zero=z)  # EP folded inside DP (Megatron-core)
        m = memory_per_rank(arch, lay, Mode.TRAIN, dp * ep, 256)
        states.append(m.weights + m.gradients + m.optimizer)
    assert states == sorted(states, reverse=True)


# --- the tables' structural claims (§III-G) --------------------------------------------------


def test_global_depth_is_unchanged_by_pp_cp_dp_tp():
    # §III-G: PP keeps all L layers on the global path; CP keeps the m-long key reduction.
    base = training_cost(CANONICAL).depth_global
    for g in (Degrees(pp=sy.P_p), Degrees(cp=sy.P_c), Degrees(dp=sy.P_d), Degrees(tp=sy.P_t)):
        assert zero(training_cost(CANONICAL, g).depth_global - base)


def test_tp_depth_per_rank_has_hidden_terms_over_pt():
    # §III-G: TP replaces hidden-dimension depth terms by log(d/P_t).
    depth = training_cost(CANONICAL, Degrees(tp=sy.P_t)).depth_per_rank
    assert depth.coeff(clog2(sy.d / sy.P_t)) == sy.L
    assert depth.coeff(clog2(sy.d_ff / sy.P_t)) == 2 * sy.L


def test_pp_per_rank_layers_over_pp_and_boundary_vd():
    # Table V caption *: the V d state sits on a boundary rank, not divided by P_p.
    c = training_cost(CANONICAL, Degrees(pp=sy.P_p))
    first, interior, last = c.ranks
    assert zero(last.memory - interior.memory - 4 * (sy.V * sy.d + 2 * sy.d))
    assert zero(first.memory - interior.memory - 4 * sy.V * sy.d)
    assert zero(c.memory_global - training_cost(CANONICAL).memory_global)


def test_isolated_ep_replicates_dense_and_5d_does_not():
    iso = training_cost(CANONICAL_MOE, Degrees(ep=sy.P_e, coupled_ep=False))
    coupled = training_cost(CANONICAL_MOE, Degrees(ep=sy.P_e))
    base = training_cost(CANONICAL_MOE)
    assert zero(coupled.work_global - base.work_global)
    assert zero(coupled.work_per_rank - base.work_per_rank / sy.P_e)
    assert not zero(iso.work_global - base.work_global)


def test_checkpointing_kappa_between_zero_and_one():
    arch = get_model("llama-3.1-70b").arch()
    for ckpt in Checkpointing:
        k = kappa_ckpt(arch, ckpt)
        assert 0 < k <= 1
    assert kappa_ckpt(arch, Checkpointing.NONE) == 1


# --- pipeline memory: the first 1F1B stage holds p micro-batches ------------------------------


def test_first_1f1b_stage_holds_pp_microbatches():
    arch = get_model("llama-3.1-8b").arch()  # 32 layers
    p, seq = 4, 512
    lay = Layout(pp=p, schedule=PipelineSchedule.ONE_F_ONE_B)
    first = memory_per_stage(arch, lay, Mode.TRAIN, 16, seq)[0]
    per_layer_token = bl.activation_bytes_per_token_layer(arch)
    assert first.activations == p * seq * (32 // p) * per_layer_token
    gpipe = memory_per_stage(arch, lay.with_(schedule=PipelineSchedule.GPIPE), Mode.TRAIN, 16, seq)
    assert gpipe[0].activations == 16 * seq * (32 // p) * per_layer_token
    assert memory_per_rank(arch, lay, Mode.TRAIN, 16, seq).total == max(
        s.total for s in memory_per_stage(arch, lay, Mode.TRAIN, 16, seq)
    )


def test_tp_shards_kv_cache_by_kv_heads_and_logits_by_vocab():
    arch = get_model("llama-3.1-70b").arch()  # 8 kv heads
    one = memory_per_rank(arch, Layout(), Mode.GENERATE, 8, 2048)
    eight = memory_per_rank(arch, Layout(tp=8), Mode.GENERATE, 8, 2048)
    assert eight.kv_cache * 8 == one.kv_cache
    assert eight.logits * 8 == one.logits  # 128256 = 8 x 16032
    # a value head's "logits" are one fp32 scalar per position of the micro-batch (1 x 2048)
    value = memory_per_rank(arch, Layout(), Mode.FORWARD, 8, 2048, head=Head.VALUE)
    assert value.logits == 2048 * 4
