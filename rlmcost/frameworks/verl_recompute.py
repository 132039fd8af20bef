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

The critic's own keys (``critic.megatron.override_transformer_config``, read by verl's Megatron
``CriticWorker``; ``critic.model.enable_gradient_checkpointing`` by its FSDP ``CriticWorker``,
verl/workers/megatron_workers.py and fsdp_workers.py @b178a3cd) are checked as Megatron-core
checks them, but rlmcost has no layout of the critic's own: verl places actor and critic in one
resource pool (``global_pool``, verl/trainer/main_ppo.py), an rlmcost group has one trainer
layout, so the critic trains at the actor's and a note names each value that differs
(:func:`critic_notes`).
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
    o = f"{ACTOR}.megatron.override_transformer_config."
    r.raw(f"{MODEL}.enable_gradient_checkpointing")  # read, but not by Megatron workers
    got = megatron_recompute(r, o)
    if got[0] is None:
        q.note(f"{o}recompute_granularity null (verl's default): Megatron recomputes no "
               "activations (model.enable_gradient_checkpointing is FSDP-only)")  # fmt: skip
        return "none"
    if got[0] == "full":
        _full(q, got[1], got[2])
        return "full"
    others = [m for m in got[1] if m != "core_attn"]
    if others:
        q.note(f"recompute_modules {', '.join(got[1])}: rlmcost's --ckpt selective reruns the "
               f"attention core alone; what {', '.join(others)} rerun is counted as kept and "
               "not rerun")  # fmt: skip
    return "selective"


def megatron_recompute(r: Reader, o: str) -> tuple:
    """The recomputation ``TransformerConfig`` runs from the ``{o}recompute_*`` keys: (None,),
    ("full", method, layers) or ("selective", modules); SpecError where Megatron-core's
    ``__post_init__`` refuses them (module docstring). Every key is marked read."""
    key = f"{o}recompute_granularity"
    granularity = r.text(key, None, ("full", "selective"))
    method_key, layers_key, modules_key = (f"{o}{name}" for name in
                                           ("recompute_method", "recompute_num_layers",
                                            "recompute_modules"))  # fmt: skip
    if granularity is None:
        for k in (method_key, layers_key, modules_key):
            r.raw(k)  # Megatron-core reads none of them without a granularity
        return (None,)
    method = r.text(method_key, None, ("uniform", "block"))
    layers = r.integer(layers_key, None)
    if granularity == "full":
        r.raw(modules_key)  # selective only
        if method is None or layers is None:
            raise SpecError(f"{key}=full needs recompute_method (uniform or block) and "
                            f"recompute_num_layers: {_MCORE}")  # fmt: skip
        return ("full", method, layers)
    if layers is not None:
        raise SpecError(f"{layers_key}={layers} with {key}=selective: {_MCORE} (it must be "
                        "null under selective); remove it")  # fmt: skip
    modules = r.words(modules_key, ["core_attn"]) or []
    unknown = sorted(set(modules) - set(MODULES))
    if unknown:
        raise SpecError(f"{modules_key}: {', '.join(unknown)} not among Megatron-core's "
                        f"modules ({', '.join(MODULES)}); {_MCORE}")  # fmt: skip
    return ("selective", tuple(modules))


def _full(q: ImportedQuery, method: str, layers: int) -> None:
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


_SHARED = ("rlmcost trains the critic at the actor's layout (verl places both in one resource "
           "pool; a group has one trainer layout): the critic is priced with the actor's value")


def critic_notes(r: Reader, q: ImportedQuery, strategy: str, critic: bool) -> None:
    """Where the critic's own recomputation and SwiGLU keys differ from the actor's, a note
    (module docstring); the critic's Megatron keys checked as Megatron-core checks them. Without
    a critic (``critic`` false: verl builds none) the keys cost nothing and are only read."""
    o, mine = "critic.megatron.override_transformer_config.", f"{ACTOR}.megatron."
    if not critic:
        for k in ("recompute_granularity", "recompute_method", "recompute_num_layers",
                  "recompute_modules", "bias_activation_fusion"):
            r.raw(f"{o}{k}")
        for k in ("critic.model.enable_gradient_checkpointing", "critic.strategy"):
            r.raw(k)
        return
    own = r.text("critic.strategy", strategy, ("fsdp", "fsdp2", "megatron"))
    if (own == "megatron") != (strategy == "megatron"):
        q.note(f"critic.strategy {own} against the actor's {strategy}: {_SHARED}")
        return
    if own != "megatron":
        key = "critic.model.enable_gradient_checkpointing"
        given, actor = r.flag(key, True), r.flag(f"{MODEL}.enable_gradient_checkpointing", True)
        if given != actor:
            q.note(f"{key}={str(given).lower()} against the actor's {str(actor).lower()}: "
                   f"{_SHARED}")  # fmt: skip
        return
    ours = f"{mine}override_transformer_config."
    got, actor_got = megatron_recompute(r, o), megatron_recompute(r, ours)
    if got != actor_got:
        q.note(f"{o}recompute_granularity {_said(got)} against the actor's {_said(actor_got)}: "
               f"{_SHARED}")  # fmt: skip
    fusion = [None if r.raw(f"{p}bias_activation_fusion") is None else
              r.flag(f"{p}bias_activation_fusion", False) for p in (o, ours)]  # fmt: skip
    if fusion[0] != fusion[1]:
        said = ["unset (the bridge's)" if f is None else str(f).lower() for f in fusion]
        q.note(f"{o}bias_activation_fusion {said[0]} against the actor's {said[1]}: {_SHARED}")


def _said(got: tuple) -> str:
    if got[0] is None:
        return "null (no recomputation)"
    if got[0] == "full":
        return f"full (recompute_method {got[1]}, recompute_num_layers {got[2]})"
    return f"selective (recompute_modules {', '.join(got[1])})"
