"""Published arithmetic that rlmcost.parallel reproduces exactly (each test names its source)."""

from fractions import Fraction

import pytest
import sympy as sp

from rlmcost import blocks as bl
from rlmcost.arch import CANONICAL
from rlmcost.choices import AttnCounting, Dtype, FfnKind
from rlmcost.parallel.activations import (
    activation_memory_korthikanti2022,
    saved_bytes_per_token_layer,
    work_recompute,
)
from rlmcost.parallel.comm import Collective, traffic_per_rank
from rlmcost.parallel.cost import Degrees, training_cost
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.memory import Mode, memory_per_rank
from rlmcost.parallel.pipeline import bubble_fraction, in_flight_layer_microbatches
from rlmcost.parallel.zero import model_state_bytes_per_rank, model_state_elements_per_rank
from rlmcost.specs import get_model
from rlmcost.symbols import B, L, P_t, P_z, V, d, h, m

# --------------------------------------------------------------------------------------------
# ZeRO (Rajbhandari et al. 2020, SC'20), Table 1: per-device model-state memory [GB] of a
# Psi = 7.5B model with K = 12 over N_d data-parallel devices: baseline, P_os, P_os+g, P_os+g+p.
# --------------------------------------------------------------------------------------------
ZERO_TABLE1_7P5B = {
    1: (120, 120, 120, 120),
    4: (120, 52.5, 41.3, 30),
    16: (120, 35.6, 21.6, 7.5),
    64: (120, 31.4, 16.6, 1.9),
    256: (120, 30.4, 15.4, 0.47),
    1024: (120, 30.1, 15.1, 0.12),
}


@pytest.mark.parametrize("n_d", sorted(ZERO_TABLE1_7P5B))
def test_zero_table1_per_device_model_states(n_d):
    psi = 7_500_000_000
    got = [model_state_bytes_per_rank(psi, z, n_d).total / 1e9 for z in ZeroStage]
    # Rajbhandari et al. 2020, Table 1, row Psi = 7.5B: equal to within half a unit of the
    # last printed digit (one decimal, two below 1 GB)
    for ours, published in zip(got, ZERO_TABLE1_7P5B[n_d], strict=True):
        half_unit = 0.005 if published < 1 else 0.05
        assert abs(ours - published) <= half_unit + 1e-12, (n_d, got)


def test_zero_section_5_exact_bytes_at_64_devices():
    # ZeRO §5 / Figure 1: 2 Psi + 2 Psi + K Psi with K = 12; Psi = 7.5B, N_d = 64.
    psi, n_d = 7_500_000_000, 64
    totals = [model_state_bytes_per_rank(psi, z, n_d).total for z in ZeroStage]
    assert totals == [120_000_000_000, 31_406_250_000, 16_640_625_000, 1_875_000_000]


def test_zero_elements_match_seed_paper_section_iii_g1():
    # Seed paper §III-G1: 4P, P + P + 2P/P_z, P + 3P/P_z, 4P/P_z.
    p = sp.Symbol("P", positive=True)
    expected = [4 * p, 2 * p + 2 * p / P_z, p + 3 * p / P_z, 4 * p / P_z]
    for z, e in zip(ZeroStage, expected, strict=True):
        assert sp.simplify(model_state_elements_per_rank(p, z, P_z) - e) == 0


def test_memory_per_rank_model_states_equal_zero_formula_on_a_real_model():
    # ZeRO Table 1 arithmetic applied to Llama-3.1-8B's exact parameter count, dp = 8.
    arch = get_model("llama-3.1-8b").arch()
    n = int(bl.params(arch))
    for z in ZeroStage:
        mem = memory_per_rank(arch, Layout(dp=8, zero=z), Mode.TRAIN, 8, 1024)
        states = model_state_bytes_per_rank(n, z, 8)
        assert (mem.weights, mem.gradients, mem.optimizer) == (
            states.weights,
            states.gradients,
            states.optimizer,
        )


def test_zero3_communication_is_1p5x_data_parallel():
    # ZeRO §7.2.2: ZeRO-3 moves 3 Psi per step (two parameter all-gathers and one gradient
    # reduce-scatter) against 2 Psi for the all-reduce of standard data parallelism.
    arch = get_model("llama-3.1-8b").arch()

    def dp_bytes(zero):
        traffic = traffic_per_rank(arch, Layout(dp=8, zero=zero), 8, 1024)
        return sum(t.bytes_per_rank for t in traffic if t.strategy == "dp")

    assert Fraction(dp_bytes(ZeroStage.OS_G_P), dp_bytes(ZeroStage.NONE)) == Fraction(3, 2)
    assert dp_bytes(ZeroStage.OS) == dp_bytes(ZeroStage.NONE)  # RS + AG = AR


# --------------------------------------------------------------------------------------------
# Korthikanti et al. 2022 (arXiv:2205.05198), Table 2 and §4: activation bytes per layer.
# --------------------------------------------------------------------------------------------
s, b, a, t = sp.symbols("s b a t", positive=True)


def test_korthikanti_table2_rows():
    k = activation_memory_korthikanti2022
    sbh = s * b * h
    rows = {
        "no parallelism": (k(s, b, h, a), sbh * (34 + 5 * a * s / h)),
        "tensor parallel": (k(s, b, h, a, t), sbh * (10 + 24 / t + 5 * a * s / (h * t))),
        "tensor + sequence parallel": (
            k(s, b, h, a, t, sequence_parallel=True),
            sbh / t * (34 + 5 * a * s / h),
        ),
        "tensor parallel + selective": (
            k(s, b, h, a, t, recompute=Checkpointing.SELECTIVE),
            sbh * (10 + 24 / t),
        ),
        "tensor + sequence parallel + selective": (
            k(s, b, h, a, t, True, Checkpointing.SELECTIVE),
            sbh * 34 / t,
        ),
        "full recomputation": (k(s, b, h, a, t, True, Checkpointing.FULL), 2 * sbh),
    }
    for name, (ours, published) in rows.items():
        assert sp.simplify(ours - published) == 0, name


def test_korthikanti_selective_saves_70_percent_for_gpt3_and_65_for_mt_nlg():
    # Korthikanti et al. 2022 §4.3: 5as/h = 80 for GPT-3 (a=96, s=2048, h=12288), and
    # selective recomputation cuts the (TP+SP) activations by 70% for GPT-3, 65% for MT-NLG
    # (a=128, h=20480).
    for heads, hidden, saved in ((96, 12288, 70), (128, 20480, 65)):
        full = activation_memory_korthikanti2022(2048, 1, hidden, heads, 8, True)
        sel = activation_memory_korthikanti2022(
            2048, 1, hidden, heads, 8, True, Checkpointing.SELECTIVE
        )
        assert round(100 * (1 - sel / full)) == saved
    assert 5 * 96 * 2048 / 12288 == 80


GPT = CANONICAL.with_(d_ff=4 * d)  # Korthikanti's layer: MHA, 4h FFN (GeLU), no GQA


@pytest.mark.parametrize("sequence_parallel", [False, True])
@pytest.mark.parametrize("ckpt", list(Checkpointing))
def test_faithful_model_is_korthikanti_without_dropout_and_softmax(sequence_parallel, ckpt):
    # Our per-layer bytes (fused attention, no dropout) = Korthikanti Table 2 less the two
    # 1-byte sbh dropout masks (replicated across TP unless SP), less the 5as^2b softmax and
    # attention-dropout terms, plus FlashAttention's fp32 log-sum-exp (4 bytes x a s b / t).
    tokens = s * b
    ours = tokens * saved_bytes_per_token_layer(GPT, P_t, sequence_parallel, ckpt)
    theirs = activation_memory_korthikanti2022(s, b, d, h, P_t, sequence_parallel, ckpt)
    if ckpt is Checkpointing.FULL:
        expected = theirs / P_t if sequence_parallel else theirs  # our SP stores input / t
    else:
        masks = 2 * tokens * d / (P_t if sequence_parallel else 1)
        softmax = 0 if ckpt is Checkpointing.SELECTIVE else 5 * h * s * tokens / P_t
        lse = 0 if ckpt is Checkpointing.SELECTIVE else 4 * h * tokens / P_t
        expected = theirs - masks - softmax + lse
    assert sp.simplify(ours - expected) == 0


# --------------------------------------------------------------------------------------------
# Narayanan et al. 2021 (Megatron-LM, SC'21), §5.1 eq. (3): FLOPs per iteration with full
# activation recomputation, F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
# Their assumptions: MHA, FFN width 4h, no biases/norms counted, a matmul A(mxk) X(kxn) = 2mkn
# FLOPs, full (not causal) s x s attention, the body run 4 times (forward, backward = 2x,
# recomputed forward) and the logit layer 3 times (no recomputation); embeddings are lookups.
# --------------------------------------------------------------------------------------------


def test_narayanan2021_flops_per_iteration_with_recomputation():
    s_ = sp.Symbol("s", positive=True)
    arch = CANONICAL.with_(d_ff=4 * d)
    ours = bl.work_train(arch, B, s_, AttnCounting.FULL) + work_recompute(
        arch, B, s_, Checkpointing.FULL
    )
    published = 96 * B * s_ * L * d**2 * (1 + s_ / (6 * d) + V / (16 * L * d))
    assert sp.simplify(ours - published) == 0
    # and training_cost's per-rank work with full checkpointing is the same expression
    cost = training_cost(arch, Degrees(ckpt=Checkpointing.FULL), B, s_, omit_router=False)
    assert sp.simplify(cost.work_per_rank - published) == 0


def test_narayanan2021_gpt3_175b_iteration_flops():
    # The same formula at GPT-3 175B (l=96, h=12288, V=51200 as in Narayanan et al. Table 1,
    # s=2048, B=1536): exact integer agreement.
    arch = CANONICAL.with_(d_ff=4 * d)
    vals = {L: 96, d: 12288, h: 96, V: 51200}
    ours = bl.work_train(arch, 1536, 2048) + work_recompute(arch, 1536, 2048, Checkpointing.FULL)
    published = Fraction(96 * 1536 * 2048 * 96 * 12288**2) * (
        1 + Fraction(2048, 6 * 12288) + Fraction(51200, 16 * 96 * 12288)
    )
    assert int(ours.xreplace(vals)) == published


def test_narayanan2021_bubble_fractions():
    # Narayanan et al. 2021 §2.2: (p-1)/m for GPipe and 1F1B, (p-1)/(v m) interleaved.
    assert bubble_fraction(PipelineSchedule.GPIPE, 8, 64) == Fraction(7, 64)
    assert bubble_fraction(PipelineSchedule.ONE_F_ONE_B, 8, 64) == Fraction(7, 64)
    assert bubble_fraction(PipelineSchedule.INTERLEAVED, 8, 64, 4) == Fraction(7, 256)
    assert bubble_fraction(PipelineSchedule.ZERO_BUBBLE, 8, 64) == 0


@pytest.mark.parametrize("p,v", [(2, 2), (4, 2), (8, 3), (16, 4)])
def test_korthikanti_interleaved_first_stage_memory_factor(p, v):
    # Korthikanti et al. 2022 §4.2.3: with interleaving the first stage stores p micro-batches'
    # activations times (1 + (p - 1)/(p v)); 1F1B stores p (PipeDream-Flush).
    got = in_flight_layer_microbatches(PipelineSchedule.INTERLEAVED, 0, p, 4 * p, v)
    assert got == p * (1 + Fraction(p - 1, p * v))
    assert in_flight_layer_microbatches(PipelineSchedule.ONE_F_ONE_B, 0, p, 4 * p) == p


def test_megatron_tp_two_all_reduces_per_layer_forward_and_backward():
    # Shoeybi et al. 2019 §3 (seed paper §III-B1): 2 all-reduces per block forward, 4 per
    # training step; plus the vocab-parallel embedding (forward) and LM head (backward).
    arch = get_model("llama-3.1-8b").arch()
    (ar,) = [
        t
        for t in traffic_per_rank(arch, Layout(tp=8), 1, 1024)
        if t.collective is Collective.ALL_REDUCE and t.strategy == "tp"
    ]
    assert ar.calls == 4 * 32 + 2
    assert ar.payload_bytes == 1024 * 4096 * Dtype.BF16.bytes
    assert ar.bytes_per_rank == ar.calls * 2 * 7 * ar.payload_bytes // 8
    assert arch.ffn_kind is FfnKind.GATED and m is not None
