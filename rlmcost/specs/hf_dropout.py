"""A transformers config's dropout: ``ModelSpec.hidden_dropout`` and ``attention_dropout``.

Which keys, and the config class's default where a config.json leaves one out (transformers'
``configuration_*.py``; the modules each probability applies in, ``modeling_*.py``):

* ``gpt2``: ``resid_pdrop`` (0.1): ``GPT2Attention.resid_dropout`` after ``c_proj`` and
  ``GPT2MLP.dropout`` after its ``c_proj``, inside the two modules; ``attn_pdrop`` (0.1) on
  the attention probabilities; ``embd_pdrop`` (0.1) on the embeddings' sum, once per token
  (not a layer's: left out).
* ``seed_oss``: ``residual_dropout`` (0.1): ``SeedOssAttention.forward``'s dropout after
  ``o_proj`` and ``SeedOssMLP.forward``'s after ``down_proj``, inside the two modules;
  ``attention_dropout`` (0.1, not 0.0) on the probabilities.
* ``phi3``: ``resid_pdrop`` (0.0): ``Phi3DecoderLayer.resid_attn_dropout`` /
  ``resid_mlp_dropout`` after ``o_proj`` / ``down_proj``; ``attention_dropout`` (0.0).
* ``opt``: ``dropout`` (0.1): ``OPTDecoderLayer.forward``'s ``nn.functional.dropout`` after
  ``out_proj`` and after ``fc2``, outside the modules; ``attention_dropout`` (0.0) on the
  probabilities (``OPTAttention``); ``activation_dropout`` (0.0) between ``fc1`` and ``fc2`` and
  the decoder's embedding dropout not read (rlmcost reads OPT configs from ``rl_runs.json``'s
  ``model_config``: :func:`rlmcost.reports.rl_runs.model_spec`).
* every other supported type (Llama, Mistral, Qwen2/3, their MoE, Mixtral, Gemma 2/3,
  DeepSeek-V2/V3, GLM-4-MoE, Qwen3-Next): ``attention_dropout`` (0.0) alone; no hidden
  dropout.

A hidden dropout runs only in training mode (``nn.Dropout`` / ``F.dropout(training=...)``;
ATen's ``dropout`` returns its input at p = 0), so it matters to the training steps, never
to the forwards RL frameworks run in eval mode: :mod:`rlmcost.placement.model_dropout`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlmcost.errors import SpecError

HIDDEN_KEYS = {"gpt2": ("resid_pdrop", 0.1), "phi3": ("resid_pdrop", 0.0),
               "opt": ("dropout", 0.1), "seed_oss": ("residual_dropout", 0.1)}  # fmt: skip
"""model_type -> (key, the config class's default) of the dropout after the output
projections (module docstring); other types have none."""
INSIDE_MODULES = frozenset({"gpt2", "seed_oss"})
"""model_types whose hidden dropouts sit inside the attention and MLP modules (GPT-2's
``resid_dropout`` and ``GPT2MLP.dropout``, Seed-OSS's in ``SeedOssAttention`` and
``SeedOssMLP``), so a per-module checkpoint reruns them; the others'
are the decoder layer's own (Phi-3, OPT)."""
ATTENTION_KEYS = {"gpt2": ("attn_pdrop", 0.1), "seed_oss": ("attention_dropout", 0.1)}
"""model_type -> (key, default) of the attention dropout where it is not
``attention_dropout`` (default 0.0)."""


def dropout_fields(cfg: Mapping[str, Any], mt: str, path: str) -> dict[str, float]:
    """``hidden_dropout`` and ``attention_dropout`` of a config of ``model_type`` ``mt``
    (module docstring); SpecError for a probability outside [0, 1).

    >>> dropout_fields({}, "gpt2", "c.json")
    {'hidden_dropout': 0.1, 'attention_dropout': 0.1}
    >>> dropout_fields({"attention_dropout": 0.0}, "llama", "c.json")
    {'hidden_dropout': 0.0, 'attention_dropout': 0.0}
    """
    out = {}
    for field, key, default in (("hidden_dropout", *HIDDEN_KEYS.get(mt, ("", 0.0))),
                                ("attention_dropout",
                                 *ATTENTION_KEYS.get(mt, ("attention_dropout", 0.0)))):
        value = cfg.get(key, default) if key else 0.0
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not 0 <= value < 1:  # fmt: skip
            raise SpecError(f"{path}: {key} {value!r} is not a dropout probability in [0, 1)")
        out[field] = float(value)
    return out
