"""verl's activation recomputation, as each of its backends reads it (``--ckpt``).

FSDP: ``actor_rollout_ref.model.enable_gradient_checkpointing`` (default True,
verl/trainer/config/model/hf_model.yaml; verl/workers/fsdp_workers.py calls
``gradient_checkpointing_enable``). Megatron: verl/workers/megatron_workers.py never reads that
key; it hands ``megatron.override_transformer_config`` to Megatron-core's ``TransformerConfig``
(verl/trainer/config/engine/megatron.yaml @b178a3cd: ``recompute_granularity`` null,
``recompute_method`` null, ``recompute_num_layers`` null, ``recompute_modules`` [core_attn]),
whose ``__post_init__`` checks them (megatron/core/transformer/transformer_config.py
@core_v0.15.0, the Megatron-core of verl's docker/Dockerfile.stable.vllm):

* null: no recomputation; the method, layer count and modules are not read;
* ``full``: ``recompute_method`` must be ``uniform`` or ``block`` and ``recompute_num_layers``
  given (else ValueError). ``uniform`` with 1 layer per chunk keeps each layer's input and
  reruns one layer at a time: rlmcost's ``--ckpt full``. ``uniform`` with N > 1 keeps one input
  per N layers and reruns N layers at once; ``block`` N reruns the first N layers of each
  pipeline stage and keeps every activation of the rest: neither is rlmcost's count, said in a
  note (rlmcost keeps one input per layer and reruns one);
* ``selective``: ``recompute_num_layers`` must be null (else ValueError); the modules are
  checked against Megatron-core's seven. rlmcost's ``--ckpt selective`` reruns the attention
  core (Korthikanti et al. 2022, §4.3), ``[core_attn]``; other modules (layernorm, moe_act, moe,
  mlp, shared_experts, mla_up_proj) are said in a note: their inputs stay counted as kept.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

ACTOR = "actor_rollout_ref.actor"
MODEL = "actor_rollout_ref.model"
MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")
"""``TransformerConfig.recompute_modules``' allowed choices (transformer_config.py
@core_v0.15.0)."""

_MCORE = "Megatron-core's TransformerConfig refuses it (transformer_config.py @core_v0.15.0)"


def verl_recompute(r: Reader, q: ImportedQuery, strategy: str) -> str:
    """``--ckpt`` of the actor as its ``strategy`` (fsdp, megatron) reads it (module
    docstring); notes where Megatron-core's method or modules differ from rlmcost's count,
    SpecError where Megatron-core refuses the combination."""
    if strategy != "megatron":
        return "full" if r.flag(f"{MODEL}.enable_gradient_checkpointing", True) else "none"
    key = f"{ACTOR}.megatron.override_transformer_config.recompute_granularity"
    granularity = r.text(key, None, ("full", "selective"))
    r.raw(f"{MODEL}.enable_gradient_checkpointing")  # read, but not by Megatron workers
    method_key, layers_key, modules_key = (
        key.replace("recompute_granularity", name)
        for name in ("recompute_method", "recompute_num_layers", "recompute_modules"))
    if granularity is None:
        for k in (method_key, layers_key, modules_key):
            r.raw(k)  # Megatron-core reads none of them without a granularity
        q.note(f"{key} null (verl's default): Megatron recomputes no activations "
               "(model.enable_gradient_checkpointing is FSDP-only)")  # fmt: skip
        return "none"
    method = r.text(method_key, None, ("uniform", "block"))
    layers = r.integer(layers_key, None)
    if granularity == "full":
        _full(q, method, layers, key)
        r.raw(modules_key)  # selective only
        return "full"
    if layers is not None:
        raise SpecError(f"{layers_key}={layers} with {key}=selective: {_MCORE} (it must be "
                        "null under selective); remove it")  # fmt: skip
    _selective(r, q, modules_key)
    return "selective"


def _full(q: ImportedQuery, method: str | None, layers: int | None, key: str) -> None:
    if method is None or layers is None:
        raise SpecError(f"{key}=full needs recompute_method (uniform or block) and "
                        f"recompute_num_layers: {_MCORE}")  # fmt: skip
    if method == "uniform" and layers == 1:
        return
    if method == "uniform":
        q.note(f"recompute_method uniform, recompute_num_layers {layers}: Megatron keeps one "
               f"input per {layers} layers and reruns {layers} layers at once; rlmcost keeps "
               "one input per layer and reruns one (--ckpt full): the activations of the rerun "
               "chunk are understated")  # fmt: skip
        return
    q.note(f"recompute_method block, recompute_num_layers {layers}: Megatron reruns only the "
           f"first {layers} layers of each pipeline stage and keeps every activation of the "
           "others; rlmcost reruns every layer (--ckpt full): understated where a stage holds "
           f"more than {layers} layers")  # fmt: skip


def _selective(r: Reader, q: ImportedQuery, modules_key: str) -> None:
    modules = r.words(modules_key, ["core_attn"]) or []
    unknown = sorted(set(modules) - set(MODULES))
    if unknown:
        raise SpecError(f"{modules_key}: {', '.join(unknown)} not among Megatron-core's "
                        f"modules ({', '.join(MODULES)}); {_MCORE}")  # fmt: skip
    others = [m for m in modules if m != "core_attn"]
    if others:
        q.note(f"recompute_modules {', '.join(modules)}: rlmcost's --ckpt selective reruns the "
               f"attention core alone; what {', '.join(others)} rerun is counted as kept and "
               "not rerun")  # fmt: skip
