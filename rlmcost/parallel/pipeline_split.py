"""Transformer layers per pipeline rank: rlmcost's even split and Megatron-core's two uneven ones.

Plain integers, no sympy: the exact path (``parallel.shard.stages``, ``validate.check_layout``)
and the compiled one (``compiled.memory``) call the same functions, so they cannot disagree.

Megatron-core (NVIDIA/Megatron-LM @d98e8a64dd, ``megatron/core/transformer/transformer_block.py``
``get_num_layers_to_build``; the checks in ``transformer_config.py`` ``__post_init__``):

- ``num_layers_in_first_pipeline_stage`` / ``..._last_...`` (``--decoder-first-pipeline-num-layers``
  / ``--decoder-last-pipeline-num-layers``; :attr:`Layout.pp_first_layers`,
  :attr:`Layout.pp_last_layers`): the first (last) rank holds that many layers, the middle ranks
  share the rest evenly (it must divide; with no middle rank none may be left); each count
  positive and, with interleaving, divisible by the virtual stages v.
- ``account_for_embedding_in_pipeline_split`` / ``account_for_loss_in_pipeline_split``
  (:attr:`Layout.pp_embedding_slot`, :attr:`Layout.pp_loss_slot`): the embedding (the output
  layer and loss) counts as one layer: L + 1 (+ 1) slots split evenly over P_p ranks (P_p v
  model chunks), the first chunk of the first rank (the last chunk of the last rank) building one
  transformer layer fewer. So each rank holds (L + e + l) / P_p layers minus its slot, whatever v.
- The two kinds exclude each other (``ValueError`` in ``transformer_config.py``).

Whichever split, the embedding stays on the first rank and the output layer and loss on the last
(``is_pipeline_first_stage`` / ``is_pipeline_last_stage`` in ``gpt_model.py``). With P_p <= L
(``check_layout``) every rank keeps a transformer layer.
Without these options rlmcost's own split applies: L // P_p each, the first L mod P_p one more
(Megatron-core itself asserts P_p | L there), interleaving needing P_p v | L. Megatron's newest
form, ``--pipeline-model-parallel-layout`` (:attr:`Layout.pp_layout`, a string that places each
layer on a (rank, virtual stage)), excludes the other four (``transformer_config.py``); its
counts and checks: :mod:`rlmcost.parallel.pp_layout`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.layout import Layout

if TYPE_CHECKING:
    from rlmcost.parallel.pp_layout import PipelineLayout


def uses_megatron_split(layout: Layout) -> bool:
    """The layout sets one of Megatron-core's uneven split options."""
    return (layout.pp_first_layers is not None or layout.pp_last_layers is not None
            or layout.pp_embedding_slot or layout.pp_loss_slot
            or layout.pp_layout is not None)  # fmt: skip


def stage_layer_counts(n_layers: int, layout: Layout) -> list[int]:
    """Transformer layers on each of the ``layout.pp`` ranks (module docstring); assumes
    :func:`split_problem` found none.

    >>> stage_layer_counts(126, Layout(pp=8))
    [16, 16, 16, 16, 16, 16, 15, 15]
    >>> stage_layer_counts(94, Layout(pp=8, pp_embedding_slot=True, pp_loss_slot=True))
    [11, 12, 12, 12, 12, 12, 12, 11]
    >>> stage_layer_counts(61, Layout(pp=16, pp_first_layers=3, pp_last_layers=2))
    [3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2]
    >>> stage_layer_counts(61, Layout(pp=4, virtual_stages=4, pp_layout="Et*4|(t*4|)*14tL"))
    [16, 16, 16, 13]
    """
    pp = layout.pp
    if layout.pp_layout is not None:
        return _parse(layout.pp_layout, pp).rank_layers()
    first, last = layout.pp_first_layers, layout.pp_last_layers
    if first is not None or last is not None:
        ends = [x for x in (first, last) if x is not None]
        middle = (n_layers - sum(ends)) // max(pp - len(ends), 1)
        counts = [middle] * pp
        if first is not None:
            counts[0] = first
        if last is not None:
            counts[-1] = last
        return counts
    if layout.pp_embedding_slot or layout.pp_loss_slot:
        counts = [_slots(n_layers, layout) // pp] * pp
        counts[0] -= int(layout.pp_embedding_slot)
        counts[-1] -= int(layout.pp_loss_slot)
        return counts
    base, extra = divmod(n_layers, pp)
    return [base + (1 if s < extra else 0) for s in range(pp)]


def stage_dense_moe(n_layers: int, n_dense: int, layout: Layout) -> list[tuple[int, int]]:
    """(dense, MoE) layers on each rank when the model's first ``n_dense`` layers are dense
    (a MoE model's ``first_dense_layers``; ``n_layers`` for a dense model): the ranks in
    order, each holding a run of consecutive layers, or, under a layout string, the layer ids
    Megatron-core gives each rank (``PipelineLayout.layer_ids``). ``parallel.shard.stages``
    and ``compiled.memory.stage_layers`` both read it."""
    if layout.pp_layout is not None:
        ids = _parse(layout.pp_layout, layout.pp).layer_ids()
        return [(sum(i < n_dense for i in r), sum(i >= n_dense for i in r)) for r in ids]
    out, start = [], 0
    for count in stage_layer_counts(n_layers, layout):
        dense = max(0, min(start + count, n_dense) - start)
        out.append((dense, count - dense))
        start += count
    return out


def layout_note(layout: Layout) -> str:
    """The layout string's part of the split note: the string, each rank's layers per
    virtual stage, and that its MTP layers (``m``) place nothing (``--mtp-layers`` prices the
    block, :mod:`rlmcost.perf.mtp_pass`); '' without a string."""
    if layout.pp_layout is None:
        return ""
    lay = _parse(layout.pp_layout, layout.pp)
    chunks = lay.chunk_layers()
    shown = f", per virtual stage {chunks}" if lay.virtual_stages > 1 else ""
    mtp = lay.positions("m")
    mtp_note = (f"; its {len(mtp)} MTP layer(s) 'm' (rank {mtp[0][0]}) place nothing: "
                "--mtp-layers prices the MTP block, on the last stage") if mtp else ""  # fmt: skip
    return f" (--pp-layout '{layout.pp_layout:.80}'{shown}{mtp_note})"


def _slots(n_layers: int, layout: Layout) -> int:
    return n_layers + int(layout.pp_embedding_slot) + int(layout.pp_loss_slot)


def split_problem(n_layers: int, layout: Layout) -> str | None:
    """Why Megatron-core's split options cannot place ``n_layers`` on ``layout`` (a one-line
    message with a fix), or None; None too when no option is set (``check_layout``'s own rules
    apply then). Interleaving (v > 1) needs the interleaved schedule, checked elsewhere."""
    if not uses_megatron_split(layout):
        return None
    pp, v = layout.pp, layout.virtual_stages
    first, last = layout.pp_first_layers, layout.pp_last_layers
    if layout.pp_layout is not None:
        if first is not None or last is not None or layout.pp_embedding_slot or \
                layout.pp_loss_slot:  # fmt: skip
            return ("--pp-layout excludes --pp-first-layers/--pp-last-layers/"
                    "--pp-embedding-slot/--pp-loss-slot (Megatron-core transformer_config.py)"
                    ": keep one")  # fmt: skip
        from rlmcost.parallel.pp_layout import layout_problem

        return layout_problem(layout.pp_layout, pp, n_layers, v)
    if (first is not None or last is not None) and (layout.pp_embedding_slot
                                                     or layout.pp_loss_slot):
        return ("--pp-first-layers/--pp-last-layers and --pp-embedding-slot/--pp-loss-slot "
                "exclude each other (Megatron-core transformer_config.py): keep one")  # fmt: skip
    if first is not None or last is not None:
        if pp < 2:
            return "--pp-first-layers/--pp-last-layers need pp >= 2; drop them"
        ends = {"first": first, "last": last}
        for name, n in ends.items():
            if n is not None and (not isinstance(n, int) or n < 1 or n % v):
                return (f"pp_{name}_layers={n} must be a positive multiple of the virtual "
                        f"stages v={v} (Megatron-core)")  # fmt: skip
        given = [n for n in ends.values() if n is not None]
        rest, ranks = n_layers - sum(given), pp - len(given)
        if rest < ranks or (ranks == 0 and rest) or (ranks and (rest % ranks or rest // ranks % v)):
            return (f"{n_layers} layers less the first/last stages' {sum(given)} leave {rest} "
                    f"for {ranks} middle stage(s): each needs the same positive multiple of "
                    f"v={v}; change --pp-first-layers/--pp-last-layers")  # fmt: skip
        return None
    slots = _slots(n_layers, layout)
    if slots % (pp * v):
        return (f"{n_layers} layers + embedding/loss slots = {slots} must be divisible by "
                f"pp*v = {pp}*{v} (Megatron-core account_for_*_in_pipeline_split); change pp "
                "or --virtual-stages")  # fmt: skip
    return None  # with P_p <= L (check_layout) each rank keeps (L + slots) / P_p - 1 >= 1 layers


def _parse(text: str, pp: int) -> PipelineLayout:
    """:func:`rlmcost.parallel.pp_layout.parse` (imported here: start-up stays light)."""
    from rlmcost.parallel.pp_layout import parse

    return parse(text, pp)
