"""Batch-unit arithmetic shared by the importers (prompts, samples, per-GPU micro-batches)."""

from __future__ import annotations

from rlmcost.errors import SpecError


def whole_steps(total: int, per_step: int, total_what: str, step_what: str, where: str) -> int:
    """How many optimizer steps of ``per_step`` make ``total`` (both in the same unit).

    SpecError when ``per_step`` exceeds ``total`` or does not divide it: the frameworks
    either refuse that (verl asserts train_batch_size >= ppo_mini_batch_size; TRL checks
    divisibility) or leave a short last step that rlmcost cannot express.
    """
    if per_step > total:
        raise SpecError(
            f"{where}: {step_what}={per_step:,} is larger than {total_what}={total:,}; "
            f"make the mini-batch at most the batch"
        )
    if total % per_step:
        raise SpecError(
            f"{where}: {step_what}={per_step:,} does not divide {total_what}={total:,}; "
            "give a divisor (rlmcost counts whole optimizer steps)"
        )
    return total // per_step
