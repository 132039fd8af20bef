"""verl's LoRA keys, read by :mod:`rlmcost.frameworks.verl`; each backend reads its own.

* FSDP workers: ``model.lora_rank`` (0: off) and ``model.target_modules`` (PEFT's
  ``LoraConfig``: ``all-linear`` or Hugging Face names; verl/workers/fsdp_workers.py
  @b178a3cd). ``model.lora.*`` is not read there.
* Megatron workers: ``model.lora.*`` (verl/workers/config/megatron_peft.py ``get_peft_cls``
  @b178a3cd, from PR 4063, 313dfdb21 of 2025-11-25, first released in v0.7.0; examples/
  grpo_trainer/run_qwen2-7b_math_megatron_lora.sh sets ``lora.rank=256 lora.alpha=512``):
  ``rank`` (0: off), ``type`` (``lora``, ``vlm_lora``, ``canonical_lora``, ``dora``) and
  ``target_modules`` / ``exclude_modules``, handed to Megatron-Bridge's ``LoRA`` (or
  ``CanonicalLoRA``, ``DoRA``, ``VLMLoRA``). verl's defaults (config/model/hf_model.yaml's
  ``lora`` block, ppo_megatron_trainer.yaml): ``linear_qkv, linear_proj, linear_fc1,
  linear_fc2`` (every projection), for ``canonical_lora`` the split names ``linear_q, linear_k,
  linear_v, linear_proj, linear_fc1_up, linear_fc1_gate, linear_fc2``. Megatron-Bridge's
  ``ModuleMatcher`` (src/megatron/bridge/peft/module_matcher.py @067f987df) applies
  ``target_modules`` where given, else every linear layer but ``exclude_modules``, and asserts
  that exclude_modules is empty when target_modules is set. The Megatron workers never read
  ``model.lora_rank`` (the rollout server falls back to it for vLLM's adapter only,
  vllm_async_server.py). Patterns match on the module's own name (the last dotted part, as
  :mod:`rlmcost.frameworks.nemo_rl_lora` does: a per-layer pattern counts for every layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl_lora import MEGATRON, matched_targets

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

CANONICAL = ("linear_q", "linear_k", "linear_v", "linear_proj", "linear_fc1_up",
             "linear_fc1_gate", "linear_fc2")  # fmt: skip
"""CanonicalLoRA's module names (Megatron-Bridge ``CanonicalLoRA``; verl's default for it)."""

MEGATRON_LORA_SINCE = "2025-11-25"
"""The day verl's Megatron workers first read ``model.lora`` (PR 4063, 313dfdb21; v0.7.0)."""

_SETTINGS = ("alpha", "dropout", "dropout_position", "lora_A_init_method", "lora_B_init_method",
             "a2a_experimental", "dtype", "merge", "adapter_path", "freeze_vision_model",
             "freeze_vision_projection", "freeze_language_model")  # fmt: skip
"""The adapter's scale, dropout, initialisation, dtype, weight sync and frozen towers: no
cost rlmcost prices (the adapter's FLOPs and states depend on its rank and modules)."""


def verl_lora(r: Reader, q: ImportedQuery, model: str, megatron: bool,
              day: str | None) -> None:
    """``--lora-rank``/``--lora-targets`` from the LoRA keys under ``model`` (the actor's
    ``actor_rollout_ref.model``) that the backend (``megatron`` or FSDP) reads under the verl
    of ``day`` (ISO; None: the current)."""
    block = f"{model}.lora"
    if not megatron:
        _unread(r, q, block, f"{block}.rank is the Megatron workers' LoRA; verl's FSDP workers "
                f"read {model}.lora_rank")  # fmt: skip
        rank = r.integer(f"{model}.lora_rank", 0, lo=0, hi=65536)
        layered = r.flag("actor_rollout_ref.rollout.layered_summon", False)
        if rank:
            q.set("--lora-rank", rank)
            q.set("--lora-targets", ",".join(r.words(f"{model}.target_modules", "all-linear")))
            _gather(r, q, layered)
        return
    if r.integer(f"{model}.lora_rank", 0, lo=0, hi=65536):
        q.note(f"{model}.lora_rank: verl's Megatron workers do not read it ({block}.rank sets "
               "their LoRA); not priced")  # fmt: skip
    if day is not None and day < MEGATRON_LORA_SINCE:
        _unread(r, q, block, f"{block}.*: verl's Megatron workers read it from PR 4063 "
                "(2025-11-25, v0.7.0); the verl given trains every weight")  # fmt: skip
        return
    rank = r.integer(f"{block}.rank", 0, lo=0, hi=65536)
    kind = r.text(f"{block}.type", "lora", ("lora", "vlm_lora", "canonical_lora", "dora"))
    for key in _SETTINGS:
        r.raw(f"{block}.{key}")
    if not rank:
        r.raw(f"{block}.target_modules")
        r.raw(f"{block}.exclude_modules")
        return
    names = CANONICAL if kind == "canonical_lora" else MEGATRON
    targets = r.words(f"{block}.target_modules", list(names)) or []
    exclude = r.words(f"{block}.exclude_modules", None) or []
    if targets and exclude:
        raise SpecError(f"{r.where}: {block}.exclude_modules with target_modules set (verl "
                        f"passes its default {', '.join(names)}): Megatron-Bridge asserts "
                        "exclude_modules is empty then; also give target_modules=[]")
    out = matched_targets(names, targets, exclude, f"{r.where}: {block}.rank {rank}, but")
    q.set("--lora-rank", rank)
    q.set("--lora-targets", "all-linear" if len(out) == 7 else ",".join(out))
    if kind == "dora":
        q.note(f"{block}.type dora: DoRA's magnitude vector and weight norm are not priced; "
               "rlmcost prices a LoRA of the same rank and modules (the nearest)")
    elif kind == "vlm_lora":
        q.note(f"{block}.type vlm_lora: priced as the adapters on the language model's "
               "projections (a vision tower freeze_vision_model false trains is not)")


def _gather(r: Reader, q: ImportedQuery, layered: bool) -> None:
    """``--lora-gather`` as verl's FSDP worker collects the weights for its engine
    (verl/utils/fsdp_utils.py ``collect_lora_params`` @b178a3cd; rlmcost.placement.lora_gather):
    FSDP1 (``actor.strategy: fsdp``) summons the whole model, or one unit at a time under
    ``rollout.layered_summon``; FSDP2 gathers the adapters alone."""
    fsdp2 = r.text("actor_rollout_ref.actor.strategy", "fsdp", ("fsdp", "fsdp2")) == "fsdp2"
    how = "adapters" if fsdp2 else "layers" if layered else "model"
    q.set("--lora-gather", how)
    q.note("LoRA refit: " + {
        "adapters": "FSDP2 gathers the adapters' tensors alone (FSDP1's summon_full_params "
                    "finds no unit to unshard)",
        "layers": "layered_summon: FSDP1 unshards one unit at a time, the largest (a layer or "
                  "the embedding) in the parameters' stored dtype beside the shard",
        "model": "FSDP1 summon_full_params unshards the whole model on every GPU in its stored "
                 "dtype beside the shard, before the engine wakes (rollout.layered_summon "
                 "lowers it to one unit)",
    }[how] + " (verl/utils/fsdp_utils.py collect_lora_params; --lora-gather " + how + ")")


def _unread(r: Reader, q: ImportedQuery, block: str, why: str) -> None:
    """Mark the keys under ``block`` read; a note where they would turn LoRA on."""
    keys = [k for k in r.flat if k.startswith(f"{block}.")]
    for key in keys:
        r.raw(key)
    if r.flat.get(f"{block}.rank") not in (None, 0, "0"):
        q.note(f"{why}; not priced")
