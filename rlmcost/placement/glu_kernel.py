"""Whether a deployment's trainer runs its gated FFN as a fused SwiGLU, which keeps 3 d_ff
elements a token for the backward where the unfused MLP keeps 4
(``parallel.activations.saved_bytes_per_token_layer``'s ``fused_glu``).

* A Megatron-core trainer fuses it where its ``TransformerConfig.bias_activation_fusion`` is on
  (megatron/core/transformer/mlp.py ``bias_swiglu_impl``, moe/experts.py
  ``weighted_bias_swiglu_impl``; fusions/fused_bias_swiglu.py ``SwiGLUFunction`` /
  ``WeightedSwiGLUFunction`` save their input, and the routed copy's weight, alone;
  NVIDIA/Megatron-LM @core_v0.15.0, 0d7e02bd). The config's own default is off
  (transformer_config.py), so it is what each framework sets:

  - slime (and miles): Megatron-LM's command line, whose ``--no-bias-swiglu-fusion`` leaves
    ``bias_swiglu_fusion`` on by default (megatron/training/arguments.py), read through
    ``core_transformer_config_from_args`` (slime/backends/megatron_utils/model_provider.py
    @624b824a): on (a script's ``--no-bias-swiglu-fusion`` imports as ``--no-swiglu-fusion``:
    :mod:`rlmcost.frameworks.slime_layout`);
  - NeMo RL's Megatron worker: ``megatron_cfg.setdefault("bias_activation_fusion", True)``
    (nemo_rl/models/megatron/setup.py @7ea279ab; examples/configs/grpo_math_1B.yaml): on;
  - verl's Megatron workers: the model bridge's config (mbridge, verl's default
    ``use_mbridge``; ISEEKYAN/mbridge @10cb17f5): ``bias_activation_fusion=True`` for the
    MoE models (mbridge/models/qwen2moe.py, qwen3moe.py, deepseek_v3.py, glm4moe.py; verl's
    own verl/models/mcore/config_converter.py @b178a3cd alike), the config's default for the
    dense ones (llama.py, qwen2.py, qwen3.py): on for a MoE model only. (mbridge's Mixtral
    bridge leaves the default too; counted fused here with the other MoE models.)

* A Hugging Face model's trainer (``pass_options.runs_hf_model``) runs transformers' MLP,
  ``down_proj(act_fn(gate_proj(x)) * up_proj(x))`` (4 d_ff saved under autograd), unless
  Liger's model patch replaces it (``Behaviour.liger_logits`` with ``--logits fused``, or
  ``--trainer-kernels liger``: :func:`rlmcost.placement.pass_options.liger_layers`):
  ``LigerSwiGLUMLP``, whose ``LigerSiLUMulFunction`` saves gate and up alone
  (linkedin/Liger-Kernel src/liger_kernel/ops/swiglu.py @06e2af7d). verl's FSDP workers
  apply that patch with ``model.use_liger`` (``_apply_liger_kernel_to_instance``,
  verl/workers/fsdp_workers.py @b178a3cd; read by :mod:`rlmcost.frameworks.verl`).

* The paper's idealized run and a deployment without a framework preset: unfused.

``TrainLayout.swiglu_fusion`` (``--swiglu-fusion/--no-swiglu-fusion``), where given, is the
Megatron-core trainer's ``bias_activation_fusion`` over the framework's: verl's scripts set it
with ``actor.megatron.override_transformer_config.bias_activation_fusion``, which mbridge's
``set_extra_args`` lays over the bridge's own config (mbridge/core/llm_bridge.py
``_build_base_config``, ``base_config.update(self.extra_args)`` @10cb17f5), so it turns the
fusion on for a dense model and off for a MoE one (read by :mod:`rlmcost.frameworks.verl_glu`).
It is refused where the layout's trainer runs a Hugging Face model (no such config there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.frameworks.preset_model import Framework
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement.pass_options import check_swiglu_fusion, liger_layers, runs_hf_model

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.deployment.spec import Deployment, TrainLayout

#: Which models each framework's Megatron-core trainer runs with ``bias_activation_fusion``
#: (module docstring): ``"all"`` or ``"moe"`` (MoE models only).
MEGATRON_GLU_FUSION = {Framework.SLIME: "all", Framework.NEMO_RL: "all", Framework.VERL: "moe"}


def fused_glu(deployment: Deployment, train: TrainLayout, arch: Arch) -> bool:
    """Whether the trainer of ``deployment`` at layout ``train`` (the group's) runs ``arch``'s
    gated FFN as a fused SwiGLU (module docstring): ``train.swiglu_fusion`` where given, else
    the framework's."""
    if deployment.ideal:
        return False
    beh, given = behaviour(deployment.framework), train.swiglu_fusion
    hf = beh is not None and runs_hf_model(beh, train)
    if hf:
        check_swiglu_fusion(deployment, train, True)
    liger = liger_layers(deployment, train, hf)  # SpecError: liger without a Hugging Face model
    if hf:
        return liger
    if given is not None or beh is None:
        return bool(given)
    fusion = MEGATRON_GLU_FUSION.get(Framework(str(deployment.framework).lower()))
    return fusion == "all" or (fusion == "moe" and arch.is_moe)
