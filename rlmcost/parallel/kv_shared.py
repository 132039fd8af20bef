"""The KV cache Gemma 4 E's KV-shared layers do not hold, on one rank of a pipeline stage.

The last ``Arch.kv_shared_layers`` layers (``kv_shared_full_layers`` of them full-attention)
reuse the keys and values of an earlier layer of their kind (transformers 5.24
``Gemma4TextAttention.is_kv_shared_layer``; vLLM's Gemma 4 attention passes
``kv_sharing_target_layer_name``, so the engine allocates no cache for them). Both memory
models (``parallel.memory`` and ``compiled.memory``) take this off a stage's cache with the
same integer arithmetic: a stage holds its share of the shared layers in proportion, as
``Arch.linear_layers_of`` counts linear ones.
"""

from __future__ import annotations

from typing import Any


def shared_kv_per_sequence(counts: tuple[int, int, int], stage_layers: int,
                           positions: tuple[Any, int], widths: tuple[Any, Any]) -> Any:  # fmt: skip
    """Cache (in the units of ``widths``, per token and layer) one sequence's shared layers on
    the stage would hold: ``counts`` = (n_layers, kv_shared_layers, kv_shared_full_layers);
    ``positions`` = (a sliding layer's kept positions as the engine keeps them, the sequence's
    tokens); ``widths`` = (a sliding layer's, a full layer's)."""
    n, shared, shared_full = counts
    if not shared:
        return 0
    here, full_here = shared * stage_layers // n, shared_full * stage_layers // n
    (sliding_pos, tokens), (sliding, full) = positions, widths
    return (here - full_here) * sliding_pos * sliding + full_here * tokens * full
