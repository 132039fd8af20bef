"""Work, depth and memory of an algorithm per stage (Table IV), from the Table III blocks.

Per invocation (``m`` = prompt + response tokens, ``n`` = sequences):

* generate: work n C_gen^roll(S, T); depth D_gen(S, T) (sequences run side by side);
  memory |M| + M_KV(n m).
* forward: work n m C_f^tok (teacher-forced); depth D_f(m); memory |M| + M_Inf (never M_Act:
  frozen models keep no activations, Table IV caption). With N prefixes (PRM per-step
  scoring), the sum of the N prefix passes, which run side by side.
* train: work E_ppo n m C_tr^tok with C_tr = C_f + C_b = 3 C_f (Table IV caption); depth
  E_ppo N_mini D_tr(m), the dW reduction over the n m / N_mini tokens of one step; memory
  4 |M| Adam model states (§III-G1) + M_Act of one step's tokens.
* verify: a CPU program, 0 for all three (not modelled).

Per stage (Table IV ‡): work adds up. Depth adds up when the stage's invocations run one
after another on the same devices (co-located) and is their max when each runs on its own
devices at the same time (disaggregated). Memory: each model's states once (a model that
trains in the stage counts 4 |M|, else |M|), plus the transients (KV cache, M_Inf, M_Act):
their max when co-located (freed between invocations), their sum when disaggregated (the
total over the stage's device groups). Memory is in elements, the paper's abstraction.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import cache

import sympy as sp

from rlmcost import blocks as bl
from rlmcost import symbols as sy
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.algorithms.options import Options, configure, resolve_values
from rlmcost.arch import CANONICAL, Arch
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

# The algorithm knobs are defined with the rest of the notation in symbols.py.
N_mini, rho, N_step, T_j = sy.N_mini, sy.rho, sy.N_step, sy.T_j

SYMBOLS: dict[str, sp.Expr] = {
    "B": sy.B,
    "K": sy.K,
    "S": sy.S,
    "T": sy.T,
    "E_ppo": sy.epochs,
    "N_mini": N_mini,
    "rho": rho,
    "N_step": N_step,
    "T_j": T_j,
}
"""Each workload name of ``model.NAMES`` as its sympy symbol (the symbolic values)."""

REGIME = {sy.d_ff: sy.d}
"""The paper's Big-O regime: d_ff = O(d)."""


@cache
def _parse(text: str) -> sp.Expr:
    return sp.sympify(text, locals=dict(SYMBOLS), rational=True)


def count(text: str, values: Mapping[str, object]) -> sp.Expr:
    """A token-count formula with ``values`` substituted (symbols where none is given)."""
    subs = {
        SYMBOLS[k]: sp.Rational(v) if isinstance(v, Fraction) else sp.sympify(v)
        for k, v in values.items()
    }
    return _parse(text).xreplace(subs)


@dataclass(frozen=True)
class InvocationCost:
    """Work [FLOP], depth [levels] and memory [elements] of one invocation.

    ``depth_bound``: the depth with D_gen replaced by its bound D_prefill(S) + T D_dec(S + T),
    the form Big-O uses (§II-F). ``state``: model elements that stay (|M| or 4 |M|);
    ``transient``: the elements alive only while it runs (KV cache, M_Inf, M_Act).
    """

    work: sp.Expr
    depth: sp.Expr
    depth_bound: sp.Expr
    state: sp.Expr
    transient: sp.Expr

    @property
    def memory(self) -> sp.Expr:
        return self.state + self.transient


def invocation_cost(
    inv: Invocation,
    arch: Arch | None,
    values: Mapping[str, object],
    counting: AttnCounting = AttnCounting.FULL,
) -> InvocationCost:
    """Cost of ``inv`` on model ``arch`` with the workload ``values`` (see module docstring).

    ``counting``: teacher-forced and prefill attention counted ``full`` (every query-key pair,
    as PyTorch's FlopCounterMode counts) or ``causal`` (the unmasked half, what causal
    FlashAttention-style kernels compute); decode steps are the same under both.
    """
    if inv.kind is Kind.VERIFY:
        zero = sp.Integer(0)
        return InvocationCost(zero, zero, zero, zero, zero)
    assert arch is not None, f"{inv.role} needs a model"
    n = count(inv.sequences, values)
    prompt, response = count(inv.prompt, values), count(inv.response, values)
    m = prompt + response
    head = inv.model_head
    params = bl.params(arch, head)
    if inv.kind is Kind.GENERATE:
        return InvocationCost(
            work=sp.expand(n * bl.work_rollout(arch, prompt, response, counting)),
            depth=bl.depth_generation(arch, prompt, response),
            depth_bound=bl.depth_generation(arch, prompt, response, closed_form=False),
            state=params,
            transient=bl.memory_kv_cache(arch, m, n),
        )
    if inv.kind is Kind.FORWARD:
        prefixes = count(inv.prefixes, values)
        if prefixes == 1:
            work, tokens = bl.work_forward(arch, n, m, counting, head), n * m
        else:
            j = sp.Dummy("j", integer=True, positive=True)
            length = prompt + j * response / prefixes
            work = sp.summation(bl.work_forward(arch, n, length, counting, head), (j, 1, prefixes))
            tokens = n * sp.summation(length, (j, 1, prefixes))
        depth = bl.depth_forward(arch, m, head)
        return InvocationCost(
            work=sp.expand(work),
            depth=depth,
            depth_bound=depth,
            state=params,
            transient=bl.memory_inference_buffer(arch, sp.expand(tokens)),
        )
    passes, steps = count(inv.passes, values), count(inv.steps, values)
    step_tokens = n * m / steps
    depth = sp.expand(passes * steps * bl.depth_train(arch, m, step_tokens, head))
    return InvocationCost(
        work=sp.expand(passes * bl.work_train(arch, n, m, counting, head)),
        depth=depth,
        depth_bound=depth,
        state=bl.memory_adam_states(params),
        transient=bl.memory_activations_paper(arch, step_tokens),
    )


@dataclass(frozen=True)
class StageCost:
    """One stage: work [FLOP], depth [levels] and memory [elements], both placements."""

    work: sp.Expr
    depth_colocated: sp.Expr
    depth_disaggregated: sp.Expr
    memory_colocated: sp.Expr
    memory_disaggregated: sp.Expr
    depth_bound: sp.Expr  # additive, with D_gen's bound: the Big-O argument

    def big_o(self) -> dict[str, sp.Expr]:
        """Big-O forms (d_ff = O(d)); max and sum of a fixed number of terms agree."""
        return {
            "work": bl.big_o(self.work, REGIME),
            "depth": bl.big_o(self.depth_bound, REGIME),
            "memory": bl.big_o(_max_as_sum(self.memory_colocated), REGIME),
        }


def _max_as_sum(expr: sp.Expr) -> sp.Expr:
    return sp.sympify(expr).replace(sp.Max, lambda *a: sp.Add(*a))


def _max(terms: list[sp.Expr]) -> sp.Expr:
    return sp.Max(*terms) if terms else sp.Integer(0)


def stage_cost(
    alg: Algorithm,
    stage: Stage,
    archs: Mapping[Role, Arch],
    values: Mapping[str, object],
    counting: AttnCounting = AttnCounting.FULL,
) -> StageCost:
    """Work, depth and memory of one stage of ``alg`` (module docstring: the rules)."""
    invs = alg.stage(stage)
    costs = [invocation_cost(i, archs.get(i.role), values, counting) for i in invs]
    states: dict[Role, sp.Expr] = {}
    for inv, c in zip(invs, costs, strict=True):
        if inv.kind is Kind.TRAIN or inv.role not in states:
            states[inv.role] = c.state
    resident = sp.Add(*states.values())
    transients = [c.transient for c in costs if c.transient != 0]
    return StageCost(
        work=sp.expand(sp.Add(*(c.work for c in costs))),
        depth_colocated=sp.expand(sp.Add(*(c.depth for c in costs))),
        depth_disaggregated=_max([c.depth for c in costs]),
        memory_colocated=resident + _max(transients),
        memory_disaggregated=sp.expand(resident + sp.Add(*transients)),
        depth_bound=sp.expand(sp.Add(*(c.depth_bound for c in costs))),
    )


def role_arch(role: Role) -> Arch:
    """A symbolic model of its own for ``role``: CANONICAL with subscripted L, d, d_ff, h.

    The vocabulary V is shared (the models read the actor's tokens). Used to show |pi|,
    |V|, |R| apart and to check that a difference involves only one model's symbols.
    """
    tag = {
        Role.ACTOR: "pi",
        Role.CRITIC: "V",
        Role.REWARD: "R",
        Role.REFERENCE: "ref",
        Role.COST: "C",
        Role.COST_CRITIC: "Vc",
        Role.PRM: "P",
        Role.JUDGE: "J",
        Role.TEACHER: "T",
    }[role]
    d = sy._pos_int(f"d_{tag}")
    h = sy._pos_int(f"h_{tag}")
    return CANONICAL.with_(
        name=f"canonical-{role}",
        n_layers=sy._pos_int(f"L_{tag}"),
        d_model=d,
        d_ff=sy._pos_int(f"d_ff_{tag}"),
        n_heads=h,
        n_kv_heads=h,
        head_dim=d / h,
    )


def symbolic_archs(alg: Algorithm, distinct: bool = False) -> dict[Role, Arch]:
    """CANONICAL for every model role of ``alg`` (Table IV), or one per role (``distinct``)."""
    return {r: role_arch(r) if distinct else CANONICAL for r in alg.model_roles}


def algorithm_costs(
    alg: Algorithm,
    archs: Mapping[Role, Arch],
    values: Mapping[str, object],
    counting: AttnCounting = AttnCounting.FULL,
) -> dict[Stage, StageCost]:
    """Every stage's cost, in iteration order."""
    missing = [r for r in alg.model_roles if r not in archs]
    if missing:
        raise SpecError(f"{alg.name}: no model for {', '.join(missing)}")
    return {s: stage_cost(alg, s, archs, values, counting) for s in alg.stages}


def symbolic_costs(
    alg: Algorithm, options: Options | None = None, distinct: bool = False
) -> dict[Stage, StageCost]:
    """Table IV for ``alg``: every stage on the canonical model(s), all workload symbolic."""
    alg = configure(alg, options or Options())
    return algorithm_costs(alg, symbolic_archs(alg, distinct), resolve_values(alg, None, options))


def iteration_work(costs: Mapping[Stage, StageCost]) -> sp.Expr:
    """W: work of one iteration, the sum over its stages."""
    return sp.expand(sp.Add(*(c.work for c in costs.values())))


__all__ = [
    "InvocationCost",
    "StageCost",
    "algorithm_costs",
    "invocation_cost",
    "iteration_work",
    "resolve_values",
    "role_arch",
    "stage_cost",
    "symbolic_archs",
    "symbolic_costs",
]
