"""Table IX identities, exact with sympy (seed paper §IV and the Table IX caption)."""

from functools import cache

import pytest
import sympy as sp

from rlmcost import blocks as bl
from rlmcost import symbols as sy
from rlmcost.algorithms.cost import role_arch
from rlmcost.algorithms.kinds import Role, Stage
from rlmcost.arch import CANONICAL
from rlmcost.choices import Head
from rlmcost.placement.kinds import Config
from rlmcost.placement.symbolic import placement_rows, table_ix
from rlmcost.symbols import N_mini

PPO = "ppo"
ROLES = (Role.ACTOR, Role.CRITIC, Role.REWARD, Role.REFERENCE)
WORKLOAD = {sy.B, sy.K, sy.S, sy.T, sy.epochs, N_mini, sy.V}


@cache
def rows(config: Config, distinct: bool = False, staleness: int | None = None) -> dict:
    out = placement_rows(config, PPO, distinct=distinct, staleness=staleness)
    return {r.stage: r for r in out}


def zero(expr) -> bool:
    return sp.expand(expr) == 0


def arg_set(expr) -> set:
    """The arguments of a Max as a set of expanded expressions (a lone term: itself)."""
    args = expr.args if isinstance(expr, sp.Max) else (expr,)
    return {sp.expand(a) for a in args}


def test_baseline_iteration_depth_is_the_sum_of_the_stages():
    # Table IX caption: the baseline executes all components sequentially -> additive depths
    r = rows(Config.BASELINE)
    stages = r[Stage.GENERATION].depth.expr + r[Stage.ASSESSMENT].depth.expr
    assert zero(r[None].depth.expr - stages - r[Stage.TRAINING].depth.expr)


def test_async_iteration_depth_is_the_max_of_the_overlapped_stages():
    # Table IX caption: asynchronous execution overlaps Generation + Assessment with Training
    base, asyn = rows(Config.BASELINE), rows(Config.ASYNC)
    rollout = base[Stage.GENERATION].depth.expr + base[Stage.ASSESSMENT].depth.expr
    training = base[Stage.TRAINING].depth.expr
    assert arg_set(asyn[None].depth.expr) == {sp.expand(rollout), sp.expand(training)}
    # and it is strictly shorter than the sum: check one numeric point of the canonical model
    point = {sy.L: 32, sy.d: 4096, sy.d_ff: 16384, sy.h: 32, sy.V: 32000, sy.B: 64, sy.K: 4,
             sy.S: 512, sy.T: 1024, sy.epochs: 2, N_mini: 4}  # fmt: skip
    assert asyn[None].depth.expr.subs(point) < base[None].depth.expr.subs(point)


def test_staleness_zero_disaggregated_depth_sums_the_stage_maxima():
    r = rows(Config.DISAGGREGATED)
    spans = sum(r[s].depth.expr for s in (Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING))
    assert zero(r[None].depth.expr - spans)
    assert r[Stage.ASSESSMENT].depth.text.startswith("max(")


def test_disaggregated_group_memory_holds_only_its_own_roles():
    # §IV-B: "a reward-model GPU no longer needs actor or critic weights"
    r = rows(Config.DISAGGREGATED, distinct=True)
    tags = {role: role_arch(role) for role in ROLES}
    own = {
        role: {a.n_layers, a.d_model, a.d_ff, a.n_heads} | WORKLOAD
        for role, a in ((role, tags[role]) for role in ROLES)
    }
    seen = set()
    for stage in (Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING):
        for group, piece in r[stage].groups.items():
            role = Role(group)
            assert piece.expr.free_symbols <= own[role], (stage, group)
            seen.add(role)
    assert seen == set(ROLES)
    # while the baseline's one group holds everybody's state in every stage
    base = rows(Config.BASELINE, distinct=True)
    gen = base[Stage.GENERATION].memory.expr.free_symbols
    assert all(tags[role].d_model in gen for role in ROLES)


def test_ac_shared_removes_one_backbone_state_and_the_critic_forward():
    # §IV-A: one shared backbone instead of two, one backbone pass and two small heads
    base, shared = rows(Config.BASELINE), rows(Config.AC_SHARED)
    backbone = bl.params(CANONICAL, Head.VALUE) - bl.params_head(CANONICAL, Head.VALUE)
    for stage in (Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING):
        states = base[stage].memory.expr - shared[stage].memory.expr
        if stage is Stage.TRAINING:
            # the shared network trains once: same activations (one backbone), one 4|M| less
            assert zero(states - 4 * backbone)
        elif stage is Stage.GENERATION:
            assert zero(states - 4 * backbone)
    forward = bl.work_forward(CANONICAL, sy.B * sy.K, sy.S + sy.T, head=Head.VALUE)
    assessment = base[Stage.ASSESSMENT].work.expr - shared[Stage.ASSESSMENT].work.expr
    assert zero(assessment - forward)
    value_head = 2 * sy.d  # C_f^tok(h_V): a d x 1 head
    generation = shared[Stage.GENERATION].work.expr - base[Stage.GENERATION].work.expr
    assert zero(generation - sy.B * sy.K * sy.T * value_head)
    critic_train = bl.work_train(CANONICAL, sy.B * sy.K, sy.S + sy.T, head=Head.VALUE)
    training = base[Stage.TRAINING].work.expr - shared[Stage.TRAINING].work.expr
    tokens = sy.epochs * sy.B * sy.K * (sy.S + sy.T)
    assert zero(training - (sy.epochs * critic_train - tokens * 3 * value_head))


def test_shadow_copy_appears_only_under_asynchrony():
    # §IV-E: a persistent inference-side copy M_sh whenever trainable models are read by
    # stale readers on another group
    for cfg, stage_rows in table_ix(PPO).items():
        texts = " ".join(r.memory.text for r in stage_rows) + " ".join(
            p.text for r in stage_rows for p in r.groups.values()
        )
        assert ("M_sh(" in texts) == (cfg in (Config.ASYNC, Config.COMBINED)), cfg
    r = rows(Config.ASYNC)
    lm, value = bl.params(CANONICAL, Head.LM), bl.params(CANONICAL, Head.VALUE)
    kv = bl.memory_kv_cache(CANONICAL, sy.B * sy.K * (sy.S + sy.T))
    # rollout group: shadows of actor and critic (weights only), reward and reference, KV cache
    assert zero(r[Stage.GENERATION].memory.expr - (lm + value + value + lm + kv))


@pytest.mark.parametrize("cfg", [c for c in Config if c is not Config.AC_SHARED])
def test_placement_fusion_and_asynchrony_never_change_work(cfg):
    # §IV-C: "fusion does not reduce total work"; placement and asynchrony neither
    base, other = rows(Config.BASELINE), rows(cfg)
    for stage in (Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING, None):
        assert zero(base[stage].work.expr - other[stage].work.expr), (cfg, stage)


def test_fusion_interleaves_training_and_keeps_both_activations_live():
    base, fused = rows(Config.BASELINE), rows(Config.FUSION)
    actor = (
        sy.epochs
        * N_mini
        * bl.depth_train(CANONICAL, sy.S + sy.T, sy.B * sy.K * (sy.S + sy.T) / N_mini)
    )
    critic = (
        sy.epochs
        * N_mini
        * bl.depth_train(CANONICAL, sy.S + sy.T, sy.B * sy.K * (sy.S + sy.T) / N_mini, Head.VALUE)
    )
    assert zero(base[Stage.TRAINING].depth.expr - actor - critic)
    assert arg_set(fused[Stage.TRAINING].depth.expr) == {sp.expand(actor), sp.expand(critic)}
    act = bl.memory_activations_paper(CANONICAL, sy.B * sy.K * (sy.S + sy.T) / N_mini)
    lm, value = bl.params(CANONICAL, Head.LM), bl.params(CANONICAL, Head.VALUE)
    states = 4 * lm + value + lm + 4 * value  # 4|pi| + |R| + |ref| + 4|V| (Adam, §III-G1)
    assert zero(fused[Stage.TRAINING].memory.expr - states - 2 * act)  # both pipelines live
    baseline_peak = base[Stage.TRAINING].memory.expr - states
    assert arg_set(baseline_peak) == {sp.expand(act)}  # one at a time: max(M_Act, M_Act)
    # with fixed lengths, streaming finished samples shortens nothing
    for stage in (Stage.GENERATION, Stage.ASSESSMENT):
        assert zero(base[stage].depth.expr - fused[stage].depth.expr)


def test_hybrid_adds_the_second_layout_and_changes_no_work_or_depth():
    # §IV-D: extra memory while both layouts exist; layouts change no global work or depth
    base, hyb = rows(Config.BASELINE), rows(Config.HYBRID)
    lm, value = bl.params(CANONICAL, Head.LM), bl.params(CANONICAL, Head.VALUE)
    assert zero(hyb[Stage.GENERATION].memory.expr - base[Stage.GENERATION].memory.expr - lm)
    assert "|pi_theta^TP|" in hyb[Stage.GENERATION].memory.text
    # assessment: the critic's TP/PP copy joins its forward's buffer
    assert "|V_psi^TP,PP| + M_Inf^TP,PP(V_psi)" in hyb[Stage.ASSESSMENT].memory.text
    peak = hyb[Stage.ASSESSMENT].memory.expr - (4 * lm + value + lm + 4 * value)
    m_inf = bl.memory_inference_buffer(CANONICAL, sy.B * sy.K * (sy.S + sy.T))
    assert sp.expand(value + m_inf) in arg_set(peak)
    for stage in (Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING, None):
        assert zero(base[stage].work.expr - hyb[stage].work.expr)
        assert zero(base[stage].depth.expr - hyb[stage].depth.expr)


def test_combined_period_depends_on_staleness():
    one, two = rows(Config.COMBINED, staleness=1)[None], rows(Config.COMBINED, staleness=2)[None]
    assert "/2" in one.depth.text and "/3" in two.depth.text
    point = {sy.L: 32, sy.d: 4096, sy.d_ff: 16384, sy.h: 32, sy.V: 32000, sy.B: 64, sy.K: 4,
             sy.S: 512, sy.T: 1024, sy.epochs: 2, N_mini: 4}  # fmt: skip
    assert two.depth.expr.subs(point) <= one.depth.expr.subs(point)


def test_big_o_of_each_row_is_dominated_by_the_explicit_form():
    # each O(.) term, divided by the explicit expression, stays bounded as the sizes grow
    r = rows(Config.ASYNC)[Stage.GENERATION]
    o = r.big_o()
    assert o["work"].free_symbols <= {sy.B, sy.K, sy.L, sy.S, sy.T, sy.d, sy.V}
    n = sp.Symbol("n", positive=True)
    scale = {s: n for s in (sy.B, sy.K, sy.L, sy.S, sy.T, sy.d, sy.V, sy.d_ff, sy.h)}
    ratio = (r.work.expr / o["work"]).subs(scale)
    assert sp.limit(ratio, n, sp.oo).is_finite
