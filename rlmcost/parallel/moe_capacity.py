"""Megatron-core's MoE expert capacity: token dropping and pad-to-capacity.

**Mechanism** (NVIDIA/Megatron-LM @d98e8a64dd). ``--moe-expert-capacity-factor CF``
(``TransformerConfig.moe_expert_capacity_factor``, None = dropless) makes the router cap each
expert's tokens from each rank's input: ``apply_router_token_dropping``
(megatron/core/transformer/moe/moe_utils.py, called by ``TopKRouter.routing``, router.py, in
training and in forward-only passes alike) computes ``get_capacity(num_tokens x topk,
num_experts, CF) = ceil(num_tokens x topk / num_experts x CF)`` over the rank's local tokens
and keeps, per expert, at most that many of them (the highest probabilities,
``--moe-token-drop-policy probs``, or the first, ``position``); a dropped copy is masked out of
the routing map and its probability zeroed, so it is neither sent, computed nor combined. An
expert of the expert-TP x EP group then receives at most ``capacity`` copies from each of the
group's ETP x P_e source ranks (``MoEAlltoAllTokenDispatcher.preprocess``, token_dispatcher.py:
``capacity x tp_size x ep_size`` rows per local expert, ``tp_size`` the expert-TP size), i.e.
at most CF times the balanced mean, and an EP rank at most CF times its mean load.

With ``--moe-pad-expert-input-to-capacity`` (``moe_pad_expert_input_to_capacity``; Megatron-core
raises without a capacity factor, transformer_config.py ``__post_init__``, and with the flex
dispatcher's DeepEP backend) the router's map becomes the capacity mask itself
(``pad_to_capacity``: every expert takes exactly ``capacity`` rows from each source rank, the
empty ones padding), the all-to-all dispatcher sends ``capacity x num_experts`` rows per rank
and every local expert's grouped GEMM runs ``capacity x tp_size x ep_size`` rows
(``drop_and_pad``): the load is CF x the mean on every rank, whatever the routing. Its token
counts are then known on the host, so ``_maybe_dtoh_and_synchronize`` skips its device-to-host
copy and ``d2h_event.synchronize()`` (the per-layer host sync that :mod:`rlmcost.perf.moe_host`
names as the reason a MoE layer's pass is floored at its host time).

**Priced** (:func:`capped_count`, read by :mod:`rlmcost.perf.moe_ffn`): the busiest rank's rows
per local expert, its dispatch and combine bytes and its expert-TP gather are ``min(busiest,
cap)`` with a capacity factor (the EP-rank imbalance of :mod:`rlmcost.perf.moe_imbalance` capped
at CF; a choice: the cap is taken evenly over the rank's experts, so the rank's load is
``min(imbalance, CF)`` x the mean, an upper bound where single experts overflow) and exactly
``cap`` with padding, ``cap`` = ETP x P_e x ``get_capacity`` of the rank's ``ceil(T / P_t)``
tokens (bytes scale alike); the rank's permuted copies, fused or not, by the same ratio
(:func:`rlmcost.perf.moe_ffn.permuted_rows`: Megatron-core permutes the kept copies, or
``capacity x num_experts`` rows padded), as is the experts' activation. Dropped copies cost
nothing downstream. Left as they are: the router, the attention, the allgather dispatcher's
volume (routing-independent) and the host floor (:mod:`rlmcost.perf.moe_host`): it is a measured
launch-bound time per layer; without the sync the host may run ahead across layers, which for a
stage of identical MoE layers gives the same max(GPU, host) per pass as per layer (a choice,
stated in :func:`capacity_note`). Memory (:mod:`rlmcost.parallel.activations` and its compiled
twin) keeps the balanced load's activations, dropless or not: padded rows are not counted, an
underestimate of up to (CF - 1) x the experts' share (a choice, stated in the note).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.parallel.layout import Layout


def expert_capacity(tokens: int, top_k: int, experts: int, factor: float) -> int:
    """Megatron-core's ``get_capacity(num_tokens=tokens x top_k, num_experts, factor)``: the
    copies one expert keeps of one rank's ``tokens`` (moe_utils.py @d98e8a64dd; float
    arithmetic as there).

    >>> expert_capacity(4096, 8, 128, 1.0)  # Qwen3-30B-A3B, 4096 tokens on the rank
    256
    >>> expert_capacity(4095, 8, 128, 1.25)
    320
    """
    return math.ceil((tokens * top_k / experts) * factor)


def capped_count(busiest: int, mean: int, mean_rows: int, cap_rows: int | None,
                 pad: bool) -> int:  # fmt: skip
    """The busiest rank's count (rows or bytes) under a capacity (module docstring):
    ``busiest`` (dropless, ``cap_rows`` None), else ``cap`` = ``mean x cap_rows / mean_rows``
    (rounded up; ``mean`` is the balanced count of the same quantity, ``mean_rows`` and
    ``cap_rows`` the rows per local expert balanced and at capacity), exactly with ``pad``,
    at most otherwise. Exact ints.

    >>> capped_count(2663, 2048, 2048, 2048, False)  # imbalance 1.3 capped at CF 1.0
    2048
    >>> capped_count(2048, 2048, 2048, 2560, True)  # padded to CF 1.25
    2560
    >>> capped_count(2663, 2048, 2048, None, False)  # dropless
    2663
    """
    if cap_rows is None:
        return busiest
    cap = -(-mean * cap_rows // mean_rows)
    return cap if pad else min(busiest, cap)


def capacity_rows(layout: Layout, tokens: int, top_k: int, experts: int) -> int | None:
    """Rows per local expert at capacity for ``tokens`` on the rank (T, split over P_t):
    ETP x P_e x :func:`expert_capacity`; None without a capacity factor."""
    factor = layout.moe_capacity_factor
    if factor is None:
        return None
    local = -(-tokens // layout.tp)
    return layout.expert_tp * layout.ep * expert_capacity(local, top_k, experts, factor)


def check_capacity(layout: Layout) -> None:
    """Refuse what Megatron-core refuses (module docstring), in one line each. A dense
    model ignores the fields (a deployment's layout may serve a MoE actor and a dense critic)."""
    factor, pad = layout.moe_capacity_factor, layout.moe_pad_to_capacity
    if factor is not None and not (isinstance(factor, int | float) and factor > 0
                                   and math.isfinite(factor)):  # fmt: skip
        raise SpecError(f"moe capacity factor {factor} must be a number > 0 (e.g. 1.0); "
                        "leave it unset for dropless MoE")  # fmt: skip
    if pad and factor is None:
        raise SpecError("--moe-pad-to-capacity needs --moe-capacity-factor (Megatron-core "
                        "raises without moe_expert_capacity_factor); set one, e.g. 1.0")


def capacity_note(factor: float | None, pad: bool) -> str | None:
    """The output's note on a capacity factor (None: dropless)."""
    if factor is None:
        return None
    if pad:
        return (f"MoE capacity factor {factor:g}, padded (Megatron-core --moe-expert-capacity-"
                "factor, --moe-pad-expert-input-to-capacity): every expert computes exactly "
                "its capacity, ceil(tokens x top_k / experts x CF) rows from each source rank, "
                "padding included, whatever the routing; no host sync for the token counts, "
                "the host floor kept per layer; memory holds the balanced load's activations, "
                "not the padded rows (rlmcost.parallel.moe_capacity)")
    return (f"MoE capacity factor {factor:g} (Megatron-core --moe-expert-capacity-factor): "
            "tokens over an expert's capacity are dropped, so the busiest EP rank computes at "
            "most CF x the mean (the EP-rank imbalance capped at CF); dropped tokens cost "
            "nothing downstream; memory holds the balanced load's activations "
            "(rlmcost.parallel.moe_capacity)")


def check_pad_dispatcher(pad: bool, dispatcher: str) -> None:
    """Refuse padding under the flex dispatcher's DeepEP backend, as Megatron-core does
    (transformer_config.py ``__post_init__``, module docstring)."""
    if pad and dispatcher == "deepep":
        raise SpecError("--moe-pad-to-capacity with the deepep dispatcher: Megatron-core refuses "
                        "it (flex + DeepEP); drop the padding or use --ep-dispatcher alltoall")
