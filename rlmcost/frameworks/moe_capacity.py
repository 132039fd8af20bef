"""A Megatron-core trainer's MoE expert capacity from a framework's config keys.

Megatron-core's ``moe_expert_capacity_factor`` (None: dropless) and
``moe_pad_expert_input_to_capacity`` (megatron/core/transformer/transformer_config.py
@d98e8a64dd, ``__post_init__``: a negative factor becomes None, dropless; padding without a
factor raises; padding with the flex dispatcher's DeepEP backend raises), priced in
:mod:`rlmcost.parallel.moe_capacity`. Who hands them through (:func:`import_capacity`):

* verl: ``actor.megatron.override_transformer_config`` keys of the same names, passed into
  ``TransformerConfig`` as they are (``override_transformer_config`` in verl's
  models/mcore/config_converter.py @b178a3cd);
* slime: Megatron-LM's own flags, ``--moe-expert-capacity-factor`` and
  ``--moe-pad-expert-input-to-capacity`` (megatron/training/arguments.py);
* NeMo RL (:func:`import_nemo_rl_capacity`): ``nemo_rl/models/megatron/setup.py`` copies named
  ``megatron_cfg`` keys onto the Megatron-Bridge model config and neither key is among them
  (tags v0.3.0-v0.7.0 and main 7ea279ab; the Qwen3 MoE providers leave Megatron-core's None),
  so ``policy.megatron_cfg.moe_expert_capacity_factor`` trains dropless: noted, priced dropless.
  After v0.7.0 (main 7ea279ab) ``policy.megatron_cfg.model_overrides`` is merged onto the
  provider (``_merge_model_overrides``), so ``model_overrides.moe_expert_capacity_factor`` and
  ``model_overrides.moe_pad_expert_input_to_capacity`` reach Megatron-core there; a key set both
  ways is refused, as ``_validate_model_override_conflicts`` refuses it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rlmcost.choices import EpDispatcher
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

NEMO_RL_UNREAD = ("NeMo RL does not hand it to Megatron-core (nemo_rl/models/megatron/setup.py "
                  "copies named megatron_cfg keys, not this one, v0.3.0-v0.7.0; main 7ea279ab "
                  "reads it under model_overrides): priced dropless "
                  "(rlmcost.frameworks.moe_capacity)")  # fmt: skip
_KEYS = ("moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity")


def read_capacity(r: Reader, factor_key: str, pad_key: str) -> tuple[float | None, bool]:
    """The (factor, pad) Megatron-core takes from keys ``factor_key`` and ``pad_key`` of ``r``
    (module docstring): a negative factor is None (dropless), 0 or a non-number is refused,
    padding without a factor is refused."""
    raw, pad = r.raw(factor_key, None), r.flag(pad_key, False)
    factor: float | None = None
    if raw is not None:
        try:
            factor = float(raw)
        except (TypeError, ValueError):
            factor = math.nan
        if isinstance(raw, bool) or not math.isfinite(factor) or factor == 0:
            raise SpecError(f"{r.where}: '{factor_key}' must be a number > 0 (or null / "
                            f"negative: dropless), got {raw!r}")  # fmt: skip
        factor = None if factor < 0 else factor  # Megatron-core's __post_init__
    if pad and factor is None:
        raise SpecError(f"{r.where}: '{pad_key}' needs '{factor_key}' > 0 (Megatron-core raises "
                        "without a capacity factor); set one or drop the padding")  # fmt: skip
    return factor, pad


def import_capacity(
    r: Reader, q: ImportedQuery, factor_key: str, pad_key: str,
    dispatcher: EpDispatcher = EpDispatcher.ALLTOALL, applied: bool = True,
) -> float | None:  # fmt: skip
    """Read the capacity keys into ``q`` (``--moe-capacity-factor``, ``--moe-pad-to-capacity``)
    and return the factor; ``applied`` False (NeMo RL's first-level keys): noted as given, not
    set and not checked by Megatron-core's rules, which never see them (a padding without a
    factor, or a factor of 0, trains dropless there as any other value does)."""
    if not applied:
        for key in (factor_key, pad_key):
            if r.raw(key, None) is not None:
                q.note(f"{key} {r.raw(key, None)}: {NEMO_RL_UNREAD}")
        return None
    factor, pad = read_capacity(r, factor_key, pad_key)
    if pad and dispatcher is EpDispatcher.DEEPEP:
        raise SpecError(f"{r.where}: '{pad_key}' with the flex dispatcher's DeepEP backend: "
                        "Megatron-core raises; drop the padding or use alltoall")  # fmt: skip
    if factor is not None:
        q.set("--moe-capacity-factor", factor)
    if pad:
        q.set("--moe-pad-to-capacity")
    return factor


def import_nemo_rl_capacity(r: Reader, q: ImportedQuery, c: str, how: EpDispatcher) -> None:
    """NeMo RL's keys under ``c`` (``policy.megatron_cfg``; module docstring): the
    ``model_overrides`` pair applied, the first-level pair noted, a key set both ways refused."""
    both = [k for k in _KEYS if r.raw(f"{c}.{k}", None) is not None
            and r.raw(f"{c}.model_overrides.{k}", None) is not None]  # fmt: skip
    if both:
        raise SpecError(f"{r.where}: {c}.model_overrides.{both[0]} conflicts with {c}.{both[0]} "
                        "(NeMo RL refuses both); set one")  # fmt: skip
    o = f"{c}.model_overrides."
    import_capacity(r, q, o + _KEYS[0], o + _KEYS[1], how)
    import_capacity(r, q, f"{c}.{_KEYS[0]}", f"{c}.{_KEYS[1]}", applied=False)
