"""verl's ``actor.megatron.override_transformer_config.bias_activation_fusion`` as
``--swiglu-fusion`` / ``--no-swiglu-fusion`` (the trainer layout's ``swiglu_fusion``).

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
