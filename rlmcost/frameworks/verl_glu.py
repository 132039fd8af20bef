"""verl's ``actor.megatron.override_transformer_config.bias_activation_fusion`` as
``--swiglu-fusion`` / ``--no-swiglu-fusion`` (the trainer layout's ``swiglu_fusion``), and the
FSDP workers' ``actor_rollout_ref.model.use_liger`` as ``--trainer-kernels liger``
(:func:`import_liger`).

verl hands every ``override_transformer_config`` key to Megatron-core's ``TransformerConfig``
over the model's own config: on its default path through mbridge's ``set_extra_args``
(verl/workers/megatron_workers.py @b178a3cd, ``bridge.set_extra_args(**override_transformer_
config)``; ISEEKYAN/mbridge mbridge/core/llm_bridge.py ``_build_base_config``,
``base_config.update(self.extra_args)`` last, @10cb17f5), through Megatron-Bridge's provider
(``setattr(provider, key, value)``, ``vanilla_mbridge`` false) or verl's own converter
(verl/models/mcore/config_converter.py ``args.update(override_transformer_config_kwargs)``).
``bias_activation_fusion`` is the field (megatron/core/transformer/transformer_config.py
@core_v0.15.0, default False; ``bias_swiglu_fusion`` is Megatron-LM's command-line name, not a
``TransformerConfig`` field): true fuses the SwiGLU (``bias_swiglu_impl``, mlp.py; its MoE
experts' ``weighted_bias_swiglu_impl``), false keeps the unfused ``act(gate) * up``, whatever
the bridge sets (its MoE bridges set it on: :mod:`rlmcost.placement.glu_kernel`). verl's
scripts that set it at b178a3cd all set it true on a MoE model
(examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh, run_qwen3moe-30b_megatron_96gb.sh,
examples/router_replay/run_qwen30_a3b_megatron_{sglang,vllm}.sh,
verl/experimental/fully_async_policy/shell/grpo_30b_a3b_base_math_megatron_96_32{,_mis}.sh),
which the bridge's default already gives; a dense model's script turns it on the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery


def import_glu_fusion(r: Reader, q: ImportedQuery, key: str, degrees: tuple[int, ...]) -> None:
    """``--swiglu-fusion`` or ``--no-swiglu-fusion`` where ``r`` gives ``key`` (module
    docstring); nothing where unset (the bridge's choice, the verl preset's). At ``degrees``
    (TP, PP, EP) all 1 rlmcost's verl preset prices its FSDP worker, which has no
    ``TransformerConfig``: a note says the key is not priced."""
    if r.raw(key, None) is None:
        return
    on = r.flag(key, False)
    if max(degrees) == 1:
        q.note(f"{key}={str(on).lower()}: with tensor, pipeline and expert parallel sizes 1 "
               "rlmcost's verl preset runs its FSDP worker (Behaviour.hf_trainer), whose "
               "Hugging Face MLP has no bias_activation_fusion; not priced")  # fmt: skip
        return
    kept = "fused: 3 d_ff a token kept for the backward, not 4" if on else \
        "unfused act(gate) * up: 4 d_ff a token kept for the backward, not 3"
    q.convert(f"{key}={str(on).lower()}", "--swiglu-fusion" if on else "--no-swiglu-fusion",
              None, f"Megatron-core's SwiGLU {kept} (TransformerConfig.bias_activation_fusion "
              "over the model bridge's; rlmcost.placement.glu_kernel)", default=False)


def import_liger(r: Reader, q: ImportedQuery, model: str, strategy: str,
                 critic: bool) -> None:  # fmt: skip
    """``{model}.use_liger`` (verl/trainer/config/model/hf_model.yaml, default False) as
    ``--trainer-kernels liger`` under the FSDP workers. They patch the actor's and the
    reference's Hugging Face model with Liger's defaults after ``from_pretrained``
    (``_apply_liger_kernel_to_instance(model=...)``, verl/workers/fsdp_workers.py
    ``_build_model_optimizer`` and verl/workers/engine/fsdp/transformer_impl.py @b178a3cd):
    ``LigerRMSNorm``, Liger's RoPE, ``LigerSwiGLUMLP`` (3 d_ff a token kept for the backward, not
    4: :mod:`rlmcost.placement.glu_kernel`) and ``lce_forward`` as the model's forward
    (linkedin/Liger-Kernel src/liger_kernel/transformers/monkey_patch.py
    ``apply_liger_kernel_to_llama`` @ead96b61). That forward skips the logits only in training
    with labels (``skip_logits = self.training and (labels is not None or ...)``,
    transformers/model/llama.py); verl's actor passes none (verl/workers/actor/dp_actor.py
    ``_forward_micro_batch`` calls the model with input_ids and position_ids, then
    ``logprobs_from_logits`` on ``output.logits``), so the logits stay materialized and
    ``--logits`` stays as ``use_fused_kernels`` sets it. verl's critic carries no such key
    (``FSDPCriticModelCfg``, verl/workers/config/critic.py) and its ``CriticWorker`` applies no
    Liger; its Megatron workers read none (verl/workers/megatron_workers.py)."""
    key = f"{model}.use_liger"
    if not r.flag(key, False):
        return
    if strategy == "megatron":
        q.note(f"{key}=true: verl's Megatron workers do not read it (no Liger patch on a "
               "Megatron-core model); not priced")  # fmt: skip
        return
    q.convert(f"{key}=true", "--trainer-kernels", "liger", "Liger's patch on the FSDP actor "
              "and reference: fused RMSNorm, RoPE and SwiGLU (3 d_ff a token kept, not 4), no "
              "eager layers; verl's actor passes no labels, so Liger's forward still "
              "materializes the logits (--logits unchanged)")  # fmt: skip
    if critic:
        q.note(f"{key}: verl's critic is built without Liger (CriticWorker, fsdp_workers.py), "
               "but rlmcost trains every model at the one trainer layout: the critic's "
               "passes are priced with Liger's layers too (understated)")  # fmt: skip
