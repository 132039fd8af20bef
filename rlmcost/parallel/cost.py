"""Per-rank and global (work, depth, memory) of one training iteration under a parallel layout.

Seed paper §III-G, Tables V-VIII. One formula serves every row: a strategy divides what it
partitions, and the rows are its special cases (all degrees 1 gives the baseline; 3D and 5D
set several at once), so the strategies compose by construction:

* DP (P_d) and, in 5D, EP (P_e) split the sequences; CP (P_c) splits each sequence's query
  positions (each query still attends to all m keys);
* TP (P_t) splits every matrix product by heads, FFN width and vocabulary
  (:func:`~rlmcost.parallel.shard.tp_shard`); SP adds nothing to the idealized tables, whose TP
  activations are already fully sharded (Korthikanti et al. 2022 make this real);
* PP (P_p) gives each rank L/P_p layers; the first stage holds the embedding, the last the
  final norm and the LM head, so a boundary rank is the peak (Table V caption *);
* EP splits the routed experts; the isolated EP row replicates the dense path over the P_e
  ranks, while in 5D the EP ranks own disjoint token shards (Table V caption ‡, §III-G);
* ZeRO/FSDP shards the model states over P_z (§III-G1), checkpointing keeps kappa_ckpt of the
  activations and recomputes the body in the backward pass (§III-G2).

Work counts the rank's FLOPs (3x forward, plus recomputation); global work sums all N ranks,
replicated computation included. Memory is in the tables' element abstraction: Adam model
states 4|M| (ZeRO-refined) plus activations, the leading term B m L d of the tokens and layers
a rank holds (TP shards it by P_t). Depth: a rank's critical path is its stage's layers with
the reduction lengths it holds (a row-parallel product reduces over d/P_t on a rank, the
weight gradient over the rank's tokens); the global depth is that of the whole distributed
computation, the same DAG as the baseline's (the work-depth model already assumes unbounded
parallelism, and the levels that combine partial sums across ranks complete the same reduction
trees), plus recomputation. Suppressed, as the captions state: communication, bubbles and
micro-batching, router and load-balancing terms (``omit_router``), replicated token-wise
activations, norm and softmax reductions.
"""

from __future__ import annotations

from dataclasses import field

import sympy as sp

from rlmcost import blocks as bl
from rlmcost import symbols as sy
from rlmcost.arch import Arch, Size
from rlmcost.blocks.params import params_ffn_free_delta
from rlmcost.choices import AttnCounting, Head
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.logs import clog2
from rlmcost.parallel.activations import depth_recompute
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.parallel.shard import stages, tp_shard
from rlmcost.parallel.zero import model_state_elements_per_rank


@dataclass(frozen=True)
class Degrees:
    """Parallel degrees (symbols or integers, 1 = off) and the memory options of one step."""

    dp: Size = 1  # P_d
    tp: Size = 1  # P_t
    pp: Size = 1  # P_p
    cp: Size = 1  # P_c
    ep: Size = 1  # P_e
    zero: ZeroStage = ZeroStage.NONE
    zero_degree: Size | None = None  # P_z; None = the replicas of each parameter
    ckpt: Checkpointing = Checkpointing.NONE
    coupled_ep: bool = True  # EP ranks own disjoint tokens (5D); False = isolated EP row

    @property
    def n(self) -> sp.Expr:
        """N = P_d P_t P_p P_c P_e."""
        return sp.sympify(self.dp * self.tp * self.pp * self.cp * self.ep)


@dataclass(frozen=True)
class RankCost:
    """(work, depth, memory) of one rank; ``count`` ranks of the layout are like it."""

    role: str
    count: sp.Expr
    work: sp.Expr  # FLOPs
    depth: sp.Expr  # reduction levels
    memory: sp.Expr  # elements


@dataclass(frozen=True)
class Cost:
    """One invocation's cost per rank (the peak rank) and global (all N ranks)."""

    work_per_rank: sp.Expr
    depth_per_rank: sp.Expr
    memory_per_rank: sp.Expr
    work_global: sp.Expr
    depth_global: sp.Expr
    memory_global: sp.Expr
    ranks: tuple[RankCost, ...] = field(repr=False, default=())


def _gemm_levels(reduction: Size) -> sp.Expr:
    """A length-x dot product: one multiply level and a ceil(log2 x) add tree (Table III)."""
    return 1 + clog2(sp.sympify(reduction))


def _without_layers(arch: Arch) -> Arch:
    return arch.with_(n_layers=0, first_dense_layers=0)


def _router_work_per_token(arch: Arch) -> sp.Expr:
    """2 d E per MoE layer: the router's projection (omitted in the tables)."""
    return sp.sympify(2 * arch.n_moe_layers * arch.d_model * arch.n_experts) if arch.is_moe else 0


def _router_depth(arch: Arch) -> sp.Expr:
    """Router levels per MoE layer: d-reduction forward, E-reduction backward (omitted)."""
    if not arch.is_moe:
        return sp.Integer(0)
    return arch.n_moe_layers * (_gemm_levels(arch.d_model) + _gemm_levels(arch.n_experts))


def _expert_work_per_token(arch: Arch) -> sp.Expr:
    """Forward FLOPs of a token's k routed experts in every MoE layer."""
    if not arch.is_moe:
        return sp.Integer(0)
    return sp.sympify(2 * arch.n_moe_layers * arch.top_k * bl.params_routed_expert(arch))


def _attention_work(arch: Arch, seqs: Size, seq: Size, counting: AttnCounting) -> sp.Expr:
    """Score and value FLOPs of ``seqs`` teacher-forced sequences (all their queries)."""
    per_token = bl.work_linear_per_token(arch) + bl.work_head_per_token(arch)
    return sp.expand(bl.work_forward(arch, seqs, seq, counting) - seqs * seq * per_token)


@dataclass(frozen=True)
class _Role:
    name: str
    count: Size  # stages like this one
    layers: Size
    dense_layers: Size
    first: bool
    last: bool


def _roles(arch: Arch, pp: Size) -> list[_Role]:
    """Stage roles: exact stages for a numeric depth and degree, else first/interior/last."""
    if pp == 1:
        return [_Role("all", 1, arch.n_layers, arch.n_dense_layers, True, True)]
    if isinstance(arch.n_layers, int) and isinstance(pp, int):
        return [
            _Role(f"stage {s.index}", 1, s.layers, s.dense_layers, s.first, s.last)
            for s in stages(arch, pp)
        ]
    per = sp.sympify(arch.n_layers) / pp
    dense = sp.sympify(arch.n_dense_layers) / pp
    return [
        _Role("first stage", 1, per, dense, True, False),
        _Role("interior stage", pp - 2, per, dense, False, False),
        _Role("last stage", 1, per, dense, False, True),
    ]


@dataclass(frozen=True)
class _Split:
    """How one rank's share of the iteration is cut (symbols or numbers)."""

    seqs_rank: sp.Expr  # sequences whose dense path the rank runs
    tokens_rank: sp.Expr  # their query positions on the rank (after CP)
    tokens_expert: sp.Expr  # token copies' expert work per rank, never replicated
    seq: Size
    counting: AttnCounting
    omit_router: bool


def _rank_work(stage: Arch, role: _Role, split: _Split, ckpt: Checkpointing, cp: Size) -> sp.Expr:
    """3 x forward (+ recomputation) of the rank's layers, and the LM head on the last stage."""
    router = _router_work_per_token(stage) if split.omit_router else 0
    expert = _expert_work_per_token(stage)
    dense_per_token = bl.work_linear_per_token(stage) - expert - router
    attention = _attention_work(stage, split.seqs_rank, split.seq, split.counting) / cp
    body = split.tokens_rank * dense_per_token + attention + split.tokens_expert * expert
    head = split.tokens_rank * bl.work_head_per_token(stage) if role.last else 0
    recompute = {
        Checkpointing.NONE: 0,
        Checkpointing.SELECTIVE: attention,
        Checkpointing.FULL: body,
    }
    return sp.expand(3 * (body + head) + recompute[ckpt])


def _rank_depth(stage: Arch, role: _Role, split: _Split, ckpt: Checkpointing) -> sp.Expr:
    """The stage's layers forward and backward at the rank's reduction lengths, the head on
    the last stage, the weight-gradient reduction over the rank's tokens, recomputation."""
    bare = _without_layers(stage)
    tokens = split.tokens_rank
    layers = bl.depth_train(stage, split.seq, tokens) - bl.depth_train(bare, split.seq, tokens)
    if split.omit_router:
        layers -= _router_depth(stage)
    ends = bl.depth_train(bare, split.seq, tokens) if role.last else _gemm_levels(tokens)
    return sp.expand(layers + ends + depth_recompute(stage, split.seq, ckpt))


def _rank_params(stage: Arch, role: _Role, ep: Size, omit_router: bool) -> tuple[sp.Expr, sp.Expr]:
    """(dense, routed-expert) parameters on the rank: its layers' TP shards, 1/P_e of the
    experts, the embedding on the first stage, final norm and LM head on the last."""
    moe_layers = role.layers - role.dense_layers if stage.is_moe else 0
    dense = (role.layers - moe_layers) * bl.params_layer_dense(stage)
    expert = sp.Integer(0)
    if moe_layers:
        routed = stage.n_experts * bl.params_routed_expert(stage)
        shared = bl.params_layer_moe(stage) - routed
        if omit_router:
            shared -= stage.d_model * stage.n_experts
        dense += moe_layers * shared
        expert = moe_layers * routed / ep
    dense += stage.n_linear_layers * bl.params_linear_mixer_delta(stage)
    if moe_layers:  # FFN-free layers (Nemotron-H): the delta less their experts, off the rank's
        routed = stage.n_experts * bl.params_routed_expert(stage)
        router = stage.d_model * stage.n_experts if omit_router else 0  # omitted already
        dense += stage.n_ffn_free_layers * (params_ffn_free_delta(stage) + routed + router)
        expert -= stage.n_ffn_free_layers * routed / ep
    else:
        dense += stage.n_ffn_free_layers * params_ffn_free_delta(stage)
    if role.first:  # the embedding, and an encoder (vision tower) whole
        dense += bl.params_embedding(stage) + stage.encoder_params
    if role.last:
        dense += bl.params_norm(stage) + bl.params_head(stage, Head.LM)
    return sp.sympify(dense), sp.sympify(expert)


def training_cost(
    arch: Arch,
    degrees: Degrees = Degrees(),
    seqs: Size = sy.B,
    seq: Size = sy.m,
    counting: AttnCounting = AttnCounting.FULL,
    omit_router: bool = True,
    kappa: Size | None = None,
) -> Cost:
    """Work, depth and memory of one training iteration (forward + backward) of ``seqs``
    sequences of ``seq`` tokens, per rank and global (Tables V-VIII).

    ``kappa``: the kept activation fraction under checkpointing (default the symbol
    kappa_ckpt of §III-G2); ``omit_router`` drops router terms, as the captions do.

    >>> from rlmcost.arch import CANONICAL
    >>> c = training_cost(CANONICAL, Degrees(tp=sy.P_t))
    >>> sp.simplify(c.work_per_rank - training_cost(CANONICAL).work_per_rank / sy.P_t)
    0
    """
    g = degrees
    t, c, e = g.tp, g.cp, g.ep
    if e != 1 and not arch.is_moe:
        raise SpecError(f"ep={e} needs a MoE model, {arch.name} is dense; use ep=1")
    seqs_rank = sp.sympify(seqs) / (g.dp * (e if g.coupled_ep else 1))
    split = _Split(
        seqs_rank=seqs_rank,
        tokens_rank=seqs_rank * seq / c,
        tokens_expert=sp.sympify(seqs) * seq / (g.dp * c * e),
        seq=seq,
        counting=counting,
        omit_router=omit_router,
    )
    keep = 1 if g.ckpt is Checkpointing.NONE else (sy.kappa_ckpt if kappa is None else kappa)
    z_dense = g.zero_degree or g.dp * c * e  # the ranks holding a replica of each parameter
    z_expert = g.zero_degree or g.dp * c

    out: list[RankCost] = []
    for role in _roles(arch, g.pp):
        stage = tp_shard(arch, t).with_(
            n_layers=role.layers,
            first_dense_layers=role.dense_layers if arch.is_moe else 0,
            linear_layers=arch.linear_layers_of(role.layers),
            ffn_free_layers=arch.ffn_free_layers_of(role.layers),
        )
        dense, expert = _rank_params(stage, role, e, omit_router)
        states = model_state_elements_per_rank(dense, g.zero, z_dense)
        if arch.is_moe:
            states += model_state_elements_per_rank(expert, g.zero, z_expert)
        activations = keep * bl.memory_activations_paper(stage, split.tokens_rank) / t
        out.append(
            RankCost(
                role=role.name,
                count=sp.sympify(role.count * g.dp * t * c * e),
                work=_rank_work(stage, role, split, g.ckpt, c),
                depth=_rank_depth(stage, role, split, g.ckpt),
                memory=sp.expand(states + activations),
            )
        )

    depth_global = bl.depth_train(arch, seq, sp.sympify(seqs) * seq)
    depth_global += depth_recompute(arch, seq, g.ckpt)
    if omit_router:
        depth_global -= _router_depth(arch)
    return Cost(
        work_per_rank=_peak([r.work for r in out]),
        depth_per_rank=_peak([r.depth for r in out]),
        memory_per_rank=_peak([r.memory for r in out]),
        work_global=sp.expand(sum(r.count * r.work for r in out)),
        depth_global=sp.expand(depth_global),
        memory_global=sp.expand(sum(r.count * r.memory for r in out)),
        ranks=tuple(out),
    )


def _peak(values: list[sp.Expr]) -> sp.Expr:
    """The most loaded rank: the maximum when the values are numbers, else the last stage's
    (LM head work and memory on top of an interior stage's, the boundary peak of Table V)."""
    if all(v.is_number for v in values):
        return max(values)
    return values[-1]
