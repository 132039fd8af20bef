"""What one rank holds: the tensor-parallel shard of an ``Arch`` and the pipeline stage split.

TP follows Megatron-LM (Shoeybi et al. 2019, §3): the q/k/v projections and the FFN's first
projection(s) are split column-wise (by heads, by inner width), the output projection and the
FFN's last projection row-wise; the vocabulary-parallel embedding and LM head split V. Norms,
the router and biases of row-parallel layers are replicated. A rank's shard is therefore the
same ``Arch`` with h, h_kv, d_ff, d_e, d_shared_expert and V divided by P_t (d_h and d stay),
so every Table III building block applies to it unchanged.

PP assigns contiguous layers to stages; when P_p does not divide L, the first L mod P_p stages
take one layer more, unless the layout sets Megatron-core's split options
(:mod:`rlmcost.parallel.pipeline_split`). The first stage holds the embedding, the last the
final norm and LM head.
"""

from __future__ import annotations

from rlmcost.arch import Arch, Size
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.pipeline_split import stage_dense_moe


def _ratio(x: Size, parts: Size) -> Size:
    """x / parts as a sympy expression (symbolic sizes only: numeric paths load no sympy)."""
    import sympy as sp

    return sp.sympify(x) / parts


LINEAR_HEADS = (
    "{x} linear-attention key heads (Mamba-2 groups, Gated DeltaNet key heads; vLLM "
    "replicates Mamba-2 groups over a larger TP, vllm/model_executor/layers/mamba/"
    "mamba_mixer2.py extra_groups_for_head_shards @004d4e4c, which rlmcost does not model)")
"""What a TP degree that does not divide a hybrid model's linear-attention heads is told:
Megatron-core's mixers split them over TP, vLLM's Mamba-2 mixer replicates groups instead."""


def split(x: Size, parts: Size, what: str = "") -> Size:
    """x / parts: exact integer division for numbers (validated to divide), a ratio for symbols.
    ``what``: the count's name (``{x}``: its value) in the error of a degree that does not
    divide it."""
    if isinstance(x, int) and isinstance(parts, int):
        if x % parts:
            named = f" the {what.format(x=x)}" if what else f" {x}"
            ok = ", ".join(str(d) for d in range(1, x + 1) if x % d == 0)
            raise SpecError(f"{parts} does not divide{named}; choose a degree that divides {x} "
                            f"({ok})")  # fmt: skip
        return x // parts
    return _ratio(x, parts)


def split_up(x: Size, parts: Size) -> Size:
    """ceil(x / parts) for numbers (a padded shard, as vocab-parallel layers pad V), x / parts
    for symbols."""
    if isinstance(x, int) and isinstance(parts, int):
        return -(-x // parts)
    return _ratio(x, parts)


def tp_shard(arch: Arch, tp: Size) -> Arch:
    """The slice of every layer one of ``tp`` tensor-parallel ranks holds and computes. With
    more ranks than KV heads (an inference engine; ``check_layout(replicate_kv=True)``) each
    rank holds one KV head, its k/v projections and cache replicated.

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import P_t
    >>> a = tp_shard(CANONICAL, P_t)
    >>> a.q_width, a.d_ff, a.vocab, a.d_model
    (d/P_t, d_ff/P_t, V/P_t, d)
    """
    if tp == 1:
        return arch
    if type(arch) is not Arch:  # the code generator's traced subclass: its hash reads (and
        return _shard(arch, tp)  # traces) every field; no memo there (10x slower)
    return _tp_shard(arch, tp)


def _shard(arch: Arch, tp: Size) -> Arch:
    """:func:`tp_shard` for ``tp`` > 1, kept per model and degree (``rlmcost.memo``: the
    passes and engines of a query's deployments shard the same few models the same few ways,
    and a new ``Arch`` walks its forty fields)."""
    return arch.with_(
        n_heads=split(arch.n_heads, tp),
        n_kv_heads=_kv_split(arch.n_kv_heads, tp),
        full_kv_heads=_kv_split(arch.full_kv_heads, tp) if arch.has_full_shape else 0,
        d_ff=split(arch.d_ff, tp),
        d_expert=split(arch.d_expert, tp) if arch.is_moe else arch.d_expert,
        d_shared_expert=split(arch.d_shared_expert, tp),
        vocab=split_up(arch.vocab, tp),
        ple_vocab=split_up(arch.ple_vocab, tp),  # Gemma 4 E's per-layer table, as the embedding
        linear_key_heads=split(arch.linear_key_heads, tp, LINEAR_HEADS),  # Gated DeltaNet's too
        linear_value_heads=split(arch.linear_value_heads, tp, "{x} linear-attention value heads"),
    )


def _kv_split(kv: Size, tp: Size) -> Size:
    """KV heads per rank: kv / tp, or one (replicated) with more ranks than heads (an engine:
    vLLM replicates them; Gemma 4's full layers, 4 or 2 heads, under TP 8)."""
    if isinstance(kv, int) and isinstance(tp, int) and tp > kv and tp % kv == 0:
        return 1
    return split(kv, tp)


_tp_shard = memoized()(_shard)


@dataclass(frozen=True)
class PipelineStage:
    """One pipeline stage: its index, its dense and MoE layer counts, and its boundary roles."""

    index: int
    n_stages: int
    dense_layers: int
    moe_layers: int

    @property
    def layers(self) -> int:
        return self.dense_layers + self.moe_layers

    @property
    def first(self) -> bool:
        """Holds the token (and position) embedding."""
        return self.index == 0

    @property
    def last(self) -> bool:
        """Holds the final norm, the LM head and the logits."""
        return self.index == self.n_stages - 1


def stages(arch: Arch, layout: Layout | int) -> list[PipelineStage]:
    """The ``layout.pp`` stages of a numeric ``arch`` (layers per rank:
    ``parallel.pipeline_split.stage_dense_moe``; an int is P_p with rlmcost's even split),
    with the dense layers of a MoE model (its first ``first_dense_layers``) counted on the
    stages that hold them."""
    layout = Layout(pp=layout) if isinstance(layout, int) else layout
    n_dense_first = int(arch.first_dense_layers) if arch.is_moe else int(arch.n_layers)
    split = stage_dense_moe(int(arch.n_layers), n_dense_first, layout)
    return [PipelineStage(s, layout.pp, dense, moe) for s, (dense, moe) in enumerate(split)]
