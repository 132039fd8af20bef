"""Checks of a framework's Megatron-core generation engine and trainer, read by the
deployment's validation (:mod:`rlmcost.deployment.megatron_engine`) and by
:meth:`~rlmcost.frameworks.preset_model.Preset.deployment_data`. Light to import."""

from __future__ import annotations

from typing import Any


def check_megatron_framework(framework: str | None) -> None:
    """SpecError where ``framework`` (a preset's name, None for rlmcost's bare layout) has no
    Megatron-core generation engine: of the frameworks with a preset only NeMo RL generates
    with it (``policy.generation.backend: megatron``, nemo_rl/models/generation/megatron/ at
    7ea279abf); verl, OpenRLHF, TRL and slime generate with vLLM, SGLang or HF."""
    from rlmcost.errors import SpecError

    if framework is not None and framework != "nemo-rl":
        raise SpecError(f"--engine megatron is NeMo RL's Megatron-core generation backend "
                        f"(policy.generation.backend: megatron); {framework} does not run it: "
                        "give --framework nemo-rl (or none), or another --engine")


def check_megatron_trainer(framework: str | None, layouts: list[Any]) -> None:
    """SpecError where a framework whose trainer is always Megatron-core (``Behaviour.
    hf_trainer`` empty: slime, which trains with Megatron-LM and turns its distributed
    optimizer on) is given ZeRO-3 (in one of ``layouts``, the trainer layouts): Megatron's
    distributed optimizer shards the optimizer states alone, and slime runs no FSDP."""
    from rlmcost.errors import SpecError
    from rlmcost.frameworks.presets import behaviour

    beh = behaviour(framework)
    if beh is not None and not beh.hf_trainer and any(str(t.zero) == "3" for t in layouts):
        raise SpecError(f"{framework} trains with Megatron-LM, whose distributed optimizer "
                        "shards the optimizer states alone (--zero 1); it has no ZeRO-3: give "
                        "--zero 1 or --zero 0")  # fmt: skip
