"""Algorithms as data (seed paper §II-D, §II-D1): catalog, derive(), options, Table IV identities.

Exact identities compare ``simplify(lhs - rhs) == 0``. Independent sides are written from the
Table III per-token blocks (``work_forward_per_token``), never from the algorithm machinery.
"""

from collections import Counter

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import blocks as bl
from rlmcost import symbols as sy
from rlmcost.algorithms.catalog import _BUILDERS, algorithms, get_algorithm
from rlmcost.algorithms.cost import (
    N_mini,
    N_step,
    T_j,
    algorithm_costs,
    invocation_cost,
    iteration_work,
    resolve_values,
    rho,
    role_arch,
    symbolic_archs,
    symbolic_costs,
)
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import NAMES, Invocation, derive
from rlmcost.algorithms.options import Options, configure
from rlmcost.arch import CANONICAL
from rlmcost.choices import Head
from rlmcost.errors import SpecError
from rlmcost.logs import clog2
from rlmcost.symbols import B, K, S, T, epochs

G, A, TR = Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING
m = S + T  # tokens of one teacher-forced sequence


def zero(expr: sp.Expr) -> bool:
    return sp.simplify(expr) == 0


def costs(name: str, distinct: bool = True, options: Options | None = None):
    return symbolic_costs(get_algorithm(name), options, distinct=distinct)


def work(name: str, distinct: bool = True, options: Options | None = None) -> sp.Expr:
    return iteration_work(costs(name, distinct, options))


# --------------------------------------------------------------------------------------------
# The catalog is data
# --------------------------------------------------------------------------------------------


def test_catalog_lists_the_issue_algorithms():
    # issue 3, items 1 and 2: PPO, GRPO, DPO and the §II-D1 variants
    expected = {
        "ppo",
        "grpo",
        "dpo",
        "rloo",
        "remax",
        "dapo",
        "vapo",
        "safe-rlhf",
        "prm",
        "rlvr",
        "d-rlaif",
        "opd",  # on-policy distillation (NeMo RL's, slime's): the teacher role
        "ipo",
        "orpo",
        "simpo",
        "kto",
    }
    assert set(algorithms()) == expected


@pytest.mark.parametrize("build", _BUILDERS, ids=lambda b: b.__name__)
def test_every_algorithm_cites_its_paper(build):
    alg = build()
    doc = build.__doc__ or ""
    assert "arXiv:" in doc and "arXiv:" in alg.citation, alg.name
    assert alg.summary and len(alg.summary) < 90


def test_the_three_bases_follow_section_II_D():
    ppo, grpo, dpo = (get_algorithm(n) for n in ("ppo", "grpo", "dpo"))
    # §II-D: PPO uses all four models, forward+backward for actor and critic
    assert set(ppo.model_roles) == {Role.ACTOR, Role.CRITIC, Role.REWARD, Role.REFERENCE}
    assert set(ppo.trained_roles) == {Role.ACTOR, Role.CRITIC}
    # GRPO omits the critic
    assert Role.CRITIC not in grpo.roles and grpo.trained_roles == (Role.ACTOR,)
    # DPO: only the actor and the reference, offline (no Generation, no reward model)
    assert set(dpo.model_roles) == {Role.ACTOR, Role.REFERENCE}
    assert dpo.offline and Stage.GENERATION not in dpo.stages
    # the reference never trains (never needs M_Act)
    for alg in algorithms().values():
        assert all(i.kind is not Kind.TRAIN for i in alg.invocations if i.role is Role.REFERENCE)


@pytest.mark.parametrize("name", [n for n, a in algorithms().items() if a.base])
def test_each_variant_differs_from_its_base_exactly_by_its_invocations(name):
    variant = get_algorithm(name)
    base = get_algorithm(variant.base)
    # as multisets: variant = base - removed + added
    assert Counter(base.invocations) - Counter(variant.removed) + Counter(variant.added) == Counter(
        variant.invocations
    )
    # and the work differs by exactly the work of those invocations (own symbolic model per role)
    archs = {**symbolic_archs(base, True), **symbolic_archs(variant, True)}
    values = resolve_values(variant)
    delta = sum((invocation_cost(i, archs.get(i.role), values).work for i in variant.added), 0)
    delta -= sum((invocation_cost(i, archs.get(i.role), values).work for i in variant.removed), 0)
    assert zero(work(name) - work(variant.base) - delta)


def test_derive_rejects_an_invocation_the_base_lacks():
    grpo = get_algorithm("grpo")
    critic_forward = get_algorithm("ppo").find(Role.CRITIC, A)
    with pytest.raises(SpecError, match="not an invocation of grpo"):
        derive(grpo, "x", "x", "x", remove=[critic_forward])


def test_invocation_rejects_bad_data():
    with pytest.raises(SpecError, match="may use only"):
        Invocation(Role.ACTOR, G, Kind.GENERATE, "B*Q")
    with pytest.raises(SpecError, match="frozen"):
        Invocation(Role.REFERENCE, TR, Kind.TRAIN)
    with pytest.raises(SpecError, match="does not generate"):
        Invocation(Role.CRITIC, G, Kind.GENERATE)
    with pytest.raises(SpecError, match="verifier"):
        Invocation(Role.VERIFIER, A, Kind.FORWARD)
    assert {"B", "K", "S", "T"} <= set(NAMES)


def test_unknown_algorithm_suggests_close_names():
    with pytest.raises(SpecError, match="did you mean grpo"):
        get_algorithm("gpro")


def test_a_comma_list_of_algorithms_says_compare_takes_them_space_separated():
    # `rlmcost compare grpo,ppo`: the names are the catalog's, the list the mistake
    with pytest.raises(SpecError, match=r"compare` takes them space-separated \(grpo ppo\)"):
        get_algorithm("grpo,ppo")
    with pytest.raises(SpecError, match="did you mean"):
        get_algorithm("grpo,pop")  # not every part is an algorithm: the close names


# --------------------------------------------------------------------------------------------
# Table IV identities (seed paper §II-E, §II-F)
# --------------------------------------------------------------------------------------------


def test_ppo_minus_grpo_is_exactly_the_critics_terms():
    # §II-F: GRPO removes Theta(B K (S+T) [C_f(V) + C_b(V)]); exactly: the critic's
    # Assessment forward B K (S+T) C_f^tok(V) and its Training forward + backward,
    # E_ppo B K (S+T) (C_f^tok(V) + C_b^tok(V)) with C_b = 2 C_f (Table III), value head.
    critic = role_arch(Role.CRITIC)
    cf = bl.work_forward_per_token(critic, m, Head.VALUE)
    cb = bl.work_backward_per_token(critic, m, Head.VALUE)
    critic_terms = B * K * m * cf + epochs * B * K * m * (cf + cb)
    diff = work("ppo") - work("grpo")
    assert zero(diff - critic_terms)
    # ... and nothing of the other models is left in it
    critic_symbols = {s for s in critic_terms.free_symbols}
    assert diff.free_symbols <= critic_symbols | {B, K, S, T, epochs}
    # the same on one shared canonical model (Table IV as printed)
    same = bl.work_forward_per_token(CANONICAL, m, Head.VALUE)
    assert zero(work("ppo", False) - work("grpo", False) - B * K * m * same * (1 + 3 * epochs))


def test_ppo_minus_grpo_memory_is_the_critics_model_states():
    # §II-E: GRPO also drops the Theta(|V|) model-state memory: Training stage, 4|V| Adam
    # states (§III-G1) + the critic's M_Act over one step's B K (S+T) / N_mini tokens
    critic = role_arch(Role.CRITIC)
    states = 4 * bl.params(critic, Head.VALUE)
    act = bl.memory_activations_paper(critic, B * K * m / N_mini)
    ppo, grpo = costs("ppo")[TR], costs("grpo")[TR]
    assert zero(ppo.memory_disaggregated - grpo.memory_disaggregated - states - act)


def test_dpo_depth_has_no_T_step_generation_term():
    # §II-E: DPO has no T-step autoregressive term in its inner-loop depth: T appears only
    # inside ceil(log2(...)) (the attention reduction over S + T keys, the dW reduction).
    def outside_logs(expr: sp.Expr) -> set:
        return expr.replace(clog2, lambda *_: sp.Symbol("lg")).free_symbols

    for stage, c in costs("dpo").items():
        for depth in (c.depth_colocated, c.depth_bound):
            assert T not in outside_logs(depth), stage
    # whereas PPO's Generation depth grows linearly in T: D_gen = Theta(T D_f(S+T)) (§II-F)
    gen = costs("ppo")[G]
    assert T in outside_logs(gen.depth_colocated)
    assert sp.diff(gen.depth_bound, T) != 0


def test_training_work_is_three_forwards():
    # Table IV caption: C_tr = C_f + C_b = 3 C_f. In GRPO the actor and the reference share
    # the canonical model and the LM head: Training work = 3 E_ppo x the reference forward.
    c = costs("grpo", distinct=False)
    ref = B * K * m * bl.work_forward_per_token(CANONICAL, m)
    assert zero(c[TR].work - 3 * epochs * ref)


def test_generation_work_is_B_K_rollouts():
    # Table IV: Generation work = B K C_gen^roll(pi_theta)
    actor = role_arch(Role.ACTOR)
    assert zero(costs("ppo")[G].work - B * K * bl.work_rollout(actor, S, T))


def test_depth_max_when_disaggregated_sum_when_colocated():
    # Table IV ‡: PPO Assessment = three forwards over S + T (reward, reference, critic)
    c = costs("ppo")[A]
    depths = [bl.depth_forward(role_arch(r), m, r.head) for r in (Role.REWARD, Role.REFERENCE)]
    depths.append(bl.depth_forward(role_arch(Role.CRITIC), m, Head.VALUE))
    assert zero(c.depth_colocated - sum(depths))
    assert c.depth_disaggregated == sp.Max(*depths)


def test_memory_per_stage_follows_table_iv():
    # generation: actor weights + KV cache; assessment: weights + M_Inf (never M_Act);
    # training: 4|M| Adam states + M_Act (elements, §III-G)
    a = CANONICAL
    c = costs("grpo", distinct=False)
    p_lm, p_v = bl.params(a), bl.params(a, Head.VALUE)
    assert zero(c[G].memory_colocated - p_lm - bl.memory_kv_cache(a, B * K * m))
    inf = bl.memory_inference_buffer(a, B * K * m)
    assert zero(c[A].memory_disaggregated - (p_v + p_lm + 2 * inf))
    assert zero(c[A].memory_colocated - (p_v + p_lm + inf))
    act = bl.memory_activations_paper(a, B * K * m / N_mini)
    assert zero(c[TR].memory_colocated - 4 * p_lm - act)


def test_big_o_of_table_iv():
    # §II-F: D_gen = Theta(T D_f(pi; S+T)), D_f = Theta(L log d + L log(S+T)) on the canonical
    # model; work Theta(B K (S+T) C_f^tok) with C_f^tok = Theta(L d^2 + L d (S+T) + V d).
    L, d, V = sy.L, sy.d, sy.V
    o = costs("grpo", distinct=False)[G].big_o()
    assert o["depth"] == L * T * sp.log(d) + L * T * sp.log(S + T) + L * sp.log(S)
    o = costs("grpo", distinct=False)[A].big_o()
    expected = sp.expand(B * K * (S + T) * (L * d**2 + L * d * (S + T) + V * d))
    assert o["work"] == sp.Add(*(t.as_coeff_Mul()[1] for t in sp.Add.make_args(expected)))


# --------------------------------------------------------------------------------------------
# Variants and options
# --------------------------------------------------------------------------------------------


def test_dapo_generates_rho_times_the_rollouts_it_trains_on():
    # DAPO dynamic sampling: rho B K rollouts, B K trained; no reward model, no reference
    dapo, grpo = costs("dapo"), costs("grpo")
    assert zero(dapo[G].work - rho * grpo[G].work)
    assert zero(dapo[TR].work - grpo[TR].work)
    assert dapo[A].work == 0  # the verifier is a CPU program


def test_prm_with_one_step_is_the_outcome_reward_model():
    # N_step = 1: one prefix, the full sequence: exactly GRPO's reward forward
    one = costs("prm", False, Options(prm_steps=1))[A].work
    assert zero(one - costs("grpo", False)[A].work)


def test_prm_prefix_passes_sum_by_hand():
    # N_step = 4 prefixes of S + j T / 4 tokens, j = 1..4, each a forward of B K sequences
    a = CANONICAL
    ref = B * K * m * bl.work_forward_per_token(a, m)
    by_hand = sum(bl.work_forward(a, B * K, S + j * T / 4, head=Head.VALUE) for j in range(1, 5))
    assert zero(costs("prm", False, Options(prm_steps=4))[A].work - ref - by_hand)
    # symbolic N_step: the sum in closed form, linear in N_step for the weight term
    c = costs("prm", False)[A].work
    assert N_step in c.free_symbols


def test_judge_generates_T_j_tokens_after_reading_S_plus_T():
    judge = role_arch(Role.JUDGE)
    ref = role_arch(Role.REFERENCE)
    expected = B * K * bl.work_rollout(judge, S + T, T_j) + B * K * m * bl.work_forward_per_token(
        ref, m
    )
    assert zero(costs("d-rlaif")[A].work - expected)
    # the judge adds a T_j-step chain to Assessment
    assert sp.diff(costs("d-rlaif")[A].depth_bound, T_j) != 0


def test_remax_adds_a_greedy_rollout_and_its_score():
    actor, reward = role_arch(Role.ACTOR), role_arch(Role.REWARD)
    extra = B * bl.work_rollout(actor, S, T) + B * m * bl.work_forward_per_token(
        reward, m, Head.VALUE
    )
    k1 = {K: 1}
    assert zero((work("remax") - work("grpo")).xreplace(k1) - extra)


def test_recomputed_logprobs_add_one_actor_forward():
    # verl / OpenRLHF: old log-probs from an extra actor forward instead of from generation
    actor = role_arch(Role.ACTOR)
    extra = B * K * m * bl.work_forward_per_token(actor, m)
    for name in ("ppo", "grpo"):
        again = work(name, options=Options(recompute_logprobs=True))
        assert zero(again - work(name) - extra), name


def test_no_kl_and_precomputed_reference_remove_the_reference():
    ref = role_arch(Role.REFERENCE)
    assert zero(
        work("grpo")
        - work("grpo", options=Options(kl=False))
        - B * K * m * bl.work_forward_per_token(ref, m)
    )
    pairs = 2 * B * m * bl.work_forward_per_token(ref, m)
    assert zero(work("dpo") - work("dpo", options=Options(ref_precomputed=True)) - pairs)


def test_simpo_and_orpo_drop_the_reference_ipo_keeps_dpos_cost():
    assert zero(work("ipo") - work("dpo"))
    for name in ("simpo", "orpo"):
        assert Role.REFERENCE not in get_algorithm(name).roles
        assert zero(work(name) - costs("dpo")[TR].work)


def test_kto_scores_B_examples_and_B_mismatched_pairs():
    # unpaired: B examples (not 2B); the KL estimate adds a reference and a no-grad actor
    # forward over B mismatched pairs; in total the same reference work as DPO's 2B
    actor, ref = role_arch(Role.ACTOR), role_arch(Role.REFERENCE)
    cf_a, cf_r = (bl.work_forward_per_token(x, m) for x in (actor, ref))
    c = costs("kto")
    assert zero(c[A].work - 2 * B * m * cf_r)
    assert zero(c[TR].work - 3 * B * m * cf_a - B * m * cf_a)


def test_safe_rlhf_adds_cost_model_and_cost_critic():
    cost, cc = role_arch(Role.COST), role_arch(Role.COST_CRITIC)
    extra = (
        B
        * K
        * m
        * (
            bl.work_forward_per_token(cost, m, Head.VALUE)
            + bl.work_forward_per_token(cc, m, Head.VALUE) * (1 + 3 * epochs)
        )
    )
    assert zero(work("safe-rlhf") - work("ppo") - extra)


def test_options_that_do_not_apply_are_errors():
    with pytest.raises(SpecError, match="--oversample applies to dapo"):
        configure(get_algorithm("ppo"), Options(oversample=2))
    with pytest.raises(SpecError, match="cannot be precomputed"):
        configure(get_algorithm("grpo"), Options(ref_precomputed=True))
    with pytest.raises(SpecError, match="no reference"):
        configure(get_algorithm("simpo"), Options(kl=False))
    with pytest.raises(SpecError, match="no old log-probs"):
        configure(get_algorithm("dpo"), Options(recompute_logprobs=True))
    with pytest.raises(SpecError, match="--epochs applies to"):
        configure(get_algorithm("dpo"), Options(epochs=2))
    with pytest.raises(SpecError, match="must be in 1..1000"):
        configure(get_algorithm("dapo"), Options(oversample=0.5))


@settings(max_examples=25, deadline=None)
@given(
    b=st.integers(1, 8),
    k=st.integers(1, 4),
    s=st.integers(1, 64),
    t=st.integers(1, 64),
    e=st.integers(1, 3),
    name=st.sampled_from(["ppo", "grpo", "dpo", "remax", "kto"]),
)
def test_doubling_B_doubles_work_and_disaggregated_depth_is_at_most_colocated(b, k, s, t, e, name):
    # the same expressions on a small numeric model (exact integers)
    from rlmcost.specs import get_model

    alg = get_algorithm(name)
    arch = get_model("gpt-2").arch().with_(n_layers=2)
    archs = {r: arch for r in alg.model_roles}

    def at(batch: int) -> dict:
        v = {"B": batch, "K": k, "S": s, "T": t, "E_ppo": e, "N_mini": 1}
        return {n: x for n, x in v.items() if n in alg.names}

    one, two = algorithm_costs(alg, archs, at(b)), algorithm_costs(alg, archs, at(2 * b))
    assert iteration_work(two) == 2 * iteration_work(one)
    for c in one.values():
        assert c.depth_disaggregated <= c.depth_colocated
        assert c.work >= 0 and c.memory_colocated <= c.memory_disaggregated
