"""Full recomputation as NeMo RL's DTensor (v1) worker runs it: each decoder layer's modules
checkpointed apart (``StepOptions.module_ckpt``), not the layer whole.

Source: ``_parallelize_model`` (``nemo_rl/models/dtensor/parallelize.py`` @7ea279abf, lines
722-743; the same at v0.4.0 through v0.7.0; v0.3.0 wraps the ``mlp`` alone), with
``policy.dtensor_cfg.activation_checkpointing: true``, replaces per decoder layer
``layers[i].mlp``, ``layers[i].self_attn``, ``input_layernorm`` and
``post_attention_layernorm`` by ``checkpoint_wrapper(module)`` of
``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``, whose default
``CheckpointImpl.NO_REENTRANT`` is torch's non-reentrant checkpoint with its early stop on
(:mod:`rlmcost.perf.ckpt_early_stop`). Consequences, each checked on a transformers
``LlamaDecoderLayer`` wrapped the same way (``tests/test_module_ckpt.py``: torch's FLOP
counter over the backward, and the bytes of the tensors the autograd graph keeps alive after
the forward):

* **Time.** Each wrapped module is rerun by itself before its backward, up to its own early
  stop: the attention's rerun ends before ``o_proj`` (whose input is the module's last saved
  tensor) and the MLP's before ``down_proj``, so per layer and token the two projections'
  ``2 d h d_v / P_t`` and ``2 d d_ff / P_t`` FLOPs and, with TP, their output all-reduces
  (reduce-scatters under SP) are not rerun; the two residual adds sit outside every wrapper
  and are never rerun. A MoE block (the ``mlp`` of a MoE layer) ends with its combine, which
  saves last: its rerun is whole, as under a whole-layer checkpoint. With the early stop off
  (``--no-recompute-early-stop``) every wrapped module is rerun whole, the adds still not. A
  hidden dropout inside a module (``StepOptions.hidden_dropout``) saves its mask after the
  projection, which then runs again; so does a LoRA adapter on ``o_proj`` or ``down_proj``
  (``StepOptions.peft_lora``: its ``lora_B`` saves after the base GEMM,
  :mod:`rlmcost.perf.ckpt_early_stop`), whose base GEMM is then rerun. The wrapped norms'
  last multiply (by the weight) is not rerun either; it is not priced apart (the norms are
  memory-bound kernels of the layer).
* **Memory.** A checkpointed module keeps its inputs for its rerun (the non-reentrant
  checkpoint's recompute closure holds them), so a layer keeps each wrapped norm's input (the
  residual stream before the attention and before the MLP) and each wrapped module's input
  (the attention's, the MLP's: the norms' outputs), and each unwrapped norm its own (Gemma 2/3's
  ``pre_feedforward_layernorm`` and ``post_feedforward_layernorm``, ``norms_per_layer`` 4):
  ``norms_per_layer + 2`` d-wide tensors per token in the activation dtype (d / P_t under SP)
  where a whole-layer checkpoint keeps one (measured: 4 x 2 d bytes a token for a bf16 Llama
  layer against 2 d). The position embeddings (cos, sin) every layer's attention receives are
  one pair shared by the layers, not counted. During the backward one module at a time is
  rebuilt, not the whole layer: the larger of the attention's and the FFN's saved tensors
  beyond their inputs (:mod:`rlmcost.placement.module_ckpt_memory`).

Not modelled: a hybrid layer with a linear-attention mixer (``Arch.linear_layers``; NeMo RL
wraps its ``mlp`` and norms but not the mixer, which has no ``self_attn``) is priced as a
whole-layer checkpoint with the early stop, and said so.

NeMo RL's DTensor v2 worker (``dtensor_cfg._v2: true``, the examples' setting from v0.4.0)
builds the model with NeMo Automodel, which checkpoints by model class from Automodel 92635e74
(NeMo RL v0.6.0's pin; 24b47e85 at v0.7.0 and @7ea279abf): a transformers
``GradientCheckpointingLayer`` class (every dense model, Llama and Qwen2 included: NeMo RL
turns their Automodel classes off by ``force_hf``) gets a reentrant whole-layer checkpoint (no
early stop), Automodel's MoE classes a non-reentrant whole-layer one (early stop on); before
v0.6.0 Automodel wraps per module as v1. rlmcost's NeMo RL preset is the v1 worker's (NeMo
RL's code default); ``rlmcost import nemo-rl`` reads ``_v2`` and sets
``TrainLayout.module_ckpt`` (``--no-module-ckpt``) as :mod:`rlmcost.frameworks.nemo_rl_worker`
states with its sources; ``--module-ckpt`` / ``--no-module-ckpt`` set it for any run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.shard import tp_shard
from rlmcost.perf.ckpt_early_stop import rerun_tail_skip

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.perf.step_pass import StepContext, StepOptions

MODULE_NOTE = (
    "full recomputation as NeMo RL's DTensor v1 worker runs it: each layer's self_attn, mlp and "
    "two norms in a checkpoint_wrapper apart (non-reentrant, early stop on), so the rerun "
    "skips the attention's output projection, the FFN's down projection (not a MoE block's) "
    "and the residual adds; each layer keeps its norms' and modules' inputs, norms + 2 "
    "d-wide tensors per token instead of one, and rebuilds one module at a time; a hybrid "
    "layer (linear-attention mixer) is priced as a whole-layer checkpoint stopped early "
    "(rlmcost.perf.module_ckpt)"
)
MODULE_WHOLE_NOTE = (
    "full recomputation as NeMo RL's DTensor v1 worker runs it: each layer's self_attn, mlp and "
    "two norms in a checkpoint_wrapper apart, the early stop off: each module rerun whole, "
    "the residual adds not; each layer keeps its norms' and modules' inputs, norms + 2 d-wide "
    "tensors per token instead of one, and rebuilds one module at a time; a hybrid layer "
    "(linear-attention mixer) is priced as a whole-layer checkpoint (rlmcost.perf.module_ckpt)"
)


def per_module(arch: Arch) -> bool:
    """Whether the per-module checkpoint is modelled for ``arch``'s layers: every layer has a
    ``self_attn`` (no linear-attention mixer; module docstring)."""
    return not int(arch.linear_layers)


def module_note(options: StepOptions) -> str:
    """The output's note on the per-module checkpoint (with or without the early stop)."""
    return MODULE_NOTE if options.recompute_early_stop else MODULE_WHOLE_NOTE


def _stops_early(options: StepOptions) -> bool:
    """Whether each module's rerun ends before its output projection (module docstring)."""
    return options.recompute_early_stop and not options.hidden_dropout


def _skipped(options: StepOptions, moe: bool) -> tuple[str, ...]:
    """The output projections whose rerun the early stop skips: ``o`` and, but in a MoE block,
    ``down``, less those a LoRA adapter covers (its ``lora_B`` saves after the base GEMM:
    :mod:`rlmcost.perf.ckpt_early_stop`); none without the early stop."""
    if not _stops_early(options):
        return ()
    return tuple(p for p in ("o", "down")[:1 if moe else 2] if p not in options.peft_lora)


def module_skipped_flops_per_token(arch: Arch, options: StepOptions) -> int:
    """FLOPs per token of the whole model (no TP) that the per-module rerun leaves out: every
    layer's attention output projection and every dense layer's FFN down projection.

    >>> from rlmcost.perf.step_pass import StepOptions
    >>> from rlmcost.specs import get_model
    >>> a = get_model("llama-3.1-8b").arch()
    >>> on = StepOptions(module_ckpt=True, recompute_early_stop=True)
    >>> module_skipped_flops_per_token(a, on) == 32 * (2 * 4096 * 4096 + 2 * 4096 * 14336)
    True
    """
    skip, d = _skipped(options, False), int(arch.d_model)
    return 2 * d * (int(arch.n_layers) * int(arch.v_width) * ("o" in skip)
                    + int(arch.n_dense_layers) * int(arch.d_ff) * ("down" in skip))  # fmt: skip


def module_skip(c: StepContext, moe: bool) -> tuple[float, int]:
    """Seconds and FLOPs of one layer's forward that the per-module rerun does not run
    (module docstring): the two residual adds; with the early stop, the attention's output
    projection and, in a dense layer, the down projection, with their TP collectives."""
    sh = tp_shard(c.arch, c.layout.tp)
    widths = [int(sh.v_width) if p == "o" else int(sh.d_ff) for p in _skipped(c.options, moe)]
    return rerun_tail_skip(c, widths, 2)  # o_proj, down_proj; the adds
