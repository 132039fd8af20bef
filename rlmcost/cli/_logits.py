"""The log-prob head's options of the RL commands: how a pass turns its logits into
log-probs (``Deployment.logits``) and the chunk of the fused and chunked modes
(``Deployment.logits_chunk_tokens``; priced in :func:`rlmcost.deployment.terms.
logits_peak_bytes`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.cli._parse import framework_default
from rlmcost.deployment.kinds import LogitsMode

LOGITS_OPTIONS = ("logits", "logits_chunk_tokens")


def logits_options(p: str | None = None) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``."""
    return {
        "logits": (Annotated[LogitsMode | None, typer.Option(
            help="Log-prob logits: materialized (bf16 logits, fp32 upcast and log-softmax), "
            "low-memory (row-by-row / fused cross-entropy: the logits only, as verl, TRL, "
            "OpenRLHF), fused (chunked linear + cross-entropy) or chunked (bf16 logits, fp32 "
            "log-softmax per --logits-chunk-tokens positions: NeMo RL "
            "policy.logprob_chunk_size; rlmcost.deployment.terms). "
            + framework_default("materialized"), rich_help_panel=p)], None),
        "logits_chunk_tokens": (Annotated[int | None, typer.Option(
            min=1, rich_help_panel=p, help="Positions per chunk of --logits fused and "
            "chunked (NeMo RL policy.logprob_chunk_size). Default: 1024.")], None),
    }  # fmt: skip
