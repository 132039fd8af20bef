"""A Megatron-core trainer's FP8 training from a framework's config keys (``--train-fp8``,
``--train-fp8-param``; priced in :mod:`rlmcost.perf.fp8_train`).

Megatron-core's ``TransformerConfig.fp8`` (the format, ``e4m3`` or ``hybrid``; None: no FP8),
``fp8_recipe`` (default ``delayed``; ``tensorwise``, ``mxfp8``, ``blockwise``, ``custom``) and
``fp8_param`` (megatron/core/transformer/transformer_config.py @d98e8a64dd). Who hands them
through (:func:`import_fp8`):

* NeMo RL: ``policy.megatron_cfg.fp8_cfg`` {enabled, fp8, fp8_recipe, fp8_param}, copied onto
  the model config when ``enabled`` (nemo_rl/models/megatron/setup.py @7ea279ab, "FP8
  configuration"); examples/configs/grpo_math_1B.yaml, which every recipe's defaults chain
  reaches, sets fp8 e4m3, fp8_recipe blockwise, fp8_param false, so a recipe that gives
  ``enabled`` alone trains blockwise;
* slime: Megatron-LM's ``--fp8-format``, ``--fp8-recipe`` and ``--fp8-param-gather``
  (megatron/training/arguments.py; slime's docs/en/advanced/low-precision.md @624b824a:
  ``--fp8-format e4m3 --fp8-recipe blockwise``);
* verl: ``actor.megatron.override_transformer_config`` keys ``fp8``, ``fp8_recipe`` and
  ``fp8_param``, passed into ``TransformerConfig`` as they are.

The FP8 format (e4m3 throughout, or hybrid's e5m2 gradients) changes no byte or FLOP: read,
not priced. The ``custom`` recipe (a user's quantizer factory) is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import Fp8Recipe
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

RECIPES = tuple(r.value for r in Fp8Recipe)


def import_fp8(r: Reader, q: ImportedQuery, keys: tuple[str, str, str], default: str,
               enabled: bool = True, fmt_default: str | None = None) -> None:  # fmt: skip
    """Read the (format, recipe, fp8_param) ``keys`` into ``q``: ``--train-fp8 RECIPE`` (and
    ``--train-fp8-param``) where the format is set (``fmt_default`` where absent) and
    ``enabled`` (NeMo RL's ``fp8_cfg.enabled``); ``default``: the recipe where its key is
    absent."""
    fmt_key, recipe_key, param_key = keys
    fmt = r.text(fmt_key, fmt_default, ("e4m3", "hybrid"))
    recipe = r.text(recipe_key, default)
    param = r.flag(param_key, False)
    if not enabled or fmt is None:
        return
    if recipe not in RECIPES:
        raise SpecError(f"{r.where}: '{recipe_key}' {recipe!r:.40}: rlmcost prices "
                        f"{', '.join(RECIPES)} (a custom recipe's quantizers are not known)")
    q.set("--train-fp8", recipe)
    if param:
        q.set("--train-fp8-param")
    given = "" if r.has(recipe_key) else f" ({recipe_key} absent: the default)"
    q.note(f"FP8 training: {fmt} {recipe}{given}{', fp8_param' if param else ''}: the Linear "
           "layers' GEMMs at the FP8 peak after Transformer Engine's quantizing kernels, "
           "attention, router and LM head in bf16 (rlmcost.perf.fp8_train)")  # fmt: skip


def import_nemo_rl_fp8(r: Reader, q: ImportedQuery, c: str) -> None:
    """NeMo RL's ``{c}.fp8_cfg`` (module docstring; absent keys: grpo_math_1B.yaml's)."""
    enabled = r.flag(f"{c}.fp8_cfg.enabled", False)
    keys = (f"{c}.fp8_cfg.fp8", f"{c}.fp8_cfg.fp8_recipe", f"{c}.fp8_cfg.fp8_param")
    import_fp8(r, q, keys, "blockwise", enabled, "e4m3")
