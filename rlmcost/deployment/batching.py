"""How a deployment's forward layouts follow its trainer's batching (plain dicts of layout
fields, before a :class:`~rlmcost.deployment.spec.Deployment` is built)."""

from __future__ import annotations

from typing import Any

BATCHING = ("micro_batch", "max_tokens_per_gpu", "packing")
"""The fields of a layout that say how its micro-batches are formed."""


def following_batching(forward: dict[str, Any] | None,
                        train: dict[str, Any]) -> dict[str, Any] | None:  # fmt: skip
    """A forward layout's batching fields when it is the trainer's layout with only its own
    batching (and no offload): the part to keep when the trainer's layout changes; None for a
    forward layout of its own (or none)."""
    def rest(layout: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in layout.items() if k not in (*BATCHING, "offload")}

    if forward is None or rest(forward) != rest(train):
        return None
    return {k: forward.get(k, train.get(k)) for k in BATCHING}  # not given: the trainer's


def forwards_follow_trainer(data: dict[str, Any], batching: dict[str, Any] | None = None) -> None:
    """In deployment data, a forward layout given only by its batching (``batching``, else
    the ``micro_batch`` / ``max_tokens_per_gpu`` / ``packing`` that ``data["forward"]`` has)
    becomes the trainer's layout without offload with that batching, as frameworks run their
    log-prob forwards on the trainer's workers (NeMo RL ``logprob_batch_size``, verl
    ``log_prob_max_token_len_per_gpu``)."""
    own = dict(data.get("forward") or {})
    if own and set(own) - set(BATCHING):
        return  # a whole forward layout: its own
    own.update({k: v for k, v in (batching or {}).items() if v is not None})
    if own:
        data["forward"] = {**data.get("train", {}), "offload": [], **own}
