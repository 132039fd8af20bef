"""Full recomputation under PyTorch's non-reentrant checkpoint: the early stop
(``StepOptions.recompute_early_stop``).

``torch.utils.checkpoint.checkpoint(fn, use_reentrant=False)`` (and ``checkpoint_wrapper`` of
``torch.distributed.algorithms._checkpoint`` with ``CheckpointImpl.NO_REENTRANT``) reruns ``fn``
when the backward first unpacks one of the region's saved tensors, and by default **stops the
rerun as soon as every tensor the backward needs has been saved again**: the recomputation's
pack hook counts the saved tensors and raises ``_StopRecomputationError`` at the last one
(``_CheckpointFrame.early_stop``, ``torch/utils/checkpoint.py``; on by default since
pytorch/pytorch PR 96866, "Make early stop the default for checkpoint and expose a way to
disable", merged 2023-03, so in torch 2.1; ``set_checkpoint_early_stop`` switches it off).
Autograd saves an op's inputs when it builds the op's node, before the kernel runs (inputs are
saved before the call, outputs after, ``tools/autograd/gen_variable_type.py``), so the op whose
inputs are the region's last saved tensors never runs again, nor do the ops after it.

For a dense Transformer layer checkpointed whole, the last saved tensors are the inputs of the
FFN's down projection (its activation's output and its weight); what follows saves nothing (the
residual add). So the recomputed forward stops before the down-projection GEMM: per token and
layer the GEMM's ``2 d d_ff / P_t`` FLOPs, the residual add's ``3 d`` bytes and, with TP, the
FFN's output all-reduce (reduce-scatter under SP) are not rerun: a third of an MPT layer's
forward GEMM FLOPs (``4 d^2`` of ``12 d^2``). Checked by
``tests/test_ckpt_early_stop.py``, which counts the backward's FLOPs
(``torch.utils.flop_counter``) of an MPT and a Llama block under the checkpoint with and without
the early stop. A MoE layer's last saved tensors are its combine's (routing weights and the
experts' outputs), after every expert GEMM: nothing priced is skipped there. Nor is the down
projection skipped where an op after it saves a tensor: the hidden dropout
(``StepOptions.hidden_dropout``: ``native_dropout`` saves its mask, an output, after its
kernel; the attention dropout, before the output projection, changes nothing here,
:mod:`rlmcost.perf.dropout`; on the RL side the trained model's config's,
:mod:`rlmcost.placement.model_dropout`) or a post-FFN norm (Gemma 2/3's
``post_feedforward_layernorm``, ``Arch.norms_per_layer`` 4: the norm saves its input, the down
projection's output); the rerun then ends at that op and only the residual add after it is not
rerun (torch's FLOP counter again, ``tests/test_ckpt_early_stop.py``). Nor under a LoRA adapter
on the down projection (``StepOptions.peft_lora``, the Hugging Face trainers' adapters): PEFT's
``lora.Linear.forward`` (``peft/tuners/lora/layer.py``; NeMo Automodel's ``LinearLoRA`` the same
order) runs the frozen ``base_layer(x)`` first and then ``lora_B(lora_A(dropout(x)))``, whose
``lora_B`` saves its input after the base GEMM, so the rerun runs that GEMM and ends before
``lora_B``: only the residual add (and the adapter's rank-r GEMM, not priced) is skipped (torch's
FLOP counter on such a layer, ``tests/test_rl_ckpt_early_stop.py``); likewise ``o_proj`` under a
per-module checkpoint (:mod:`rlmcost.perf.module_ckpt`).

Who runs it:

* llm-foundry's MPT benchmarks (the rows of ``llm_foundry_h100`` / ``llm_foundry_a100``):
  ``scripts/train/yamls/pretrain/mpt-*.yaml`` @061f2c7ce set ``activation_checkpointing_reentrant:
  false``; Composer's ``prepare_fsdp_module`` (``composer/trainer/dist_strategy.py`` @784f50be,
  the runs' Composer) wraps each ``MPTBlock`` (``activation_checkpointing_fn``,
  ``llmfoundry/models/mpt/modeling_mpt.py``) inside its FSDP unit with
  ``checkpoint_wrapper(..., checkpoint_impl=CheckpointImpl.NO_REENTRANT)``; ``MPTBlock.forward``
  (``llmfoundry/models/layers/blocks.py``) ends ``x + resid_ffn_dropout(ffn(norm_2(x)))`` with
  ``MPTMLP.forward`` = ``down_proj(act(up_proj(x)))``. The checkpoint sits inside the FSDP unit,
  whose pre-backward hook has gathered the parameters before the rerun: no second all-gather.
* RL trainers that run a Hugging Face model (``Behaviour.hf_ckpt_early_stop``; transformers'
  ``gradient_checkpointing_enable`` checkpoints each decoder layer whole, so the skip is the
  one above): verl's FSDP workers, ``actor_module.gradient_checkpointing_enable(
  gradient_checkpointing_kwargs={"use_reentrant": False})`` (``verl/workers/fsdp_workers.py``
  @b178a3cd, actor and critic; since PR 114, 5a94e14d of 2025-01-18, first in v0.2: v0.1
  called it without kwargs, transformers' reentrant default, which the importer's
  ``--verl-version`` keeps); OpenRLHF's actor and critic, ``{"use_reentrant":
  args.actor.gradient_checkpointing_reentrant}`` (``openrlhf/trainer/ray/ppo_actor.py``
  @3c3be623; the flag is ``store_true``, default False, ``openrlhf/cli/train_ppo_ray.py``; as
  ``--gradient_checkpointing_use_reentrant`` since ca5f3199 of 2024-02, which the importer
  reads); TRL's GRPOTrainer since PR 4811 (40d8759d, 2026-01-14, first in v0.27.0:
  ``GRPOConfig.__post_init__`` ``setdefault("use_reentrant", False)`` under transformers < 5),
  but reentrant for PEFT under DeepSpeed ZeRO-3 (PR 4951, f11b4c3f, v0.28.0); before PR 4811
  ``gradient_checkpointing_kwargs`` stayed None and transformers < 5 passes
  ``use_reentrant=True``, unless the recipe gives it (open-r1's give ``use_reentrant: false``;
  ``rlmcost import trl`` reads the key and ``--trl-version``). NeMo RL's DTensor worker
  runs it too, but wraps each layer's ``self_attn``, ``mlp`` and norms in ``checkpoint_wrapper``
  apart (``nemo_rl/models/dtensor/parallelize.py`` @7ea279abf): the early stop then skips
  ``o_proj`` as well as ``down_proj``, and no residual add is rerun (``Behaviour.hf_module_ckpt``,
  :mod:`rlmcost.perf.module_ckpt`). Not DeepSpeed-Chat (``gradient_checkpointing_enable()``,
  transformers' reentrant default).
  Nor AReaL v0.3's realhf ``ReaLModel`` (``--trainer-kernels realhf``; ``torch.utils.checkpoint
  .checkpoint(..., use_reentrant=True)``, ``realhf/impl/model/nn/real_llm_base.py`` @v0.3.0);
  AReaL's later FSDP engine passes ``use_reentrant=False`` (``areal/engine/fsdp_engine.py``
  @4aef98d8), but rlmcost has no AReaL preset: ``--recompute-early-stop`` states it.
  The trainer layout's ``recompute_early_stop`` (``--recompute-early-stop``) sets it for a run.
* Not Megatron-LM / Megatron-core (``tensor_parallel.checkpoint``, a reentrant
  ``torch.autograd.Function`` that reruns the whole forward) nor torch's reentrant checkpoint
  (Composer's default ``activation_checkpointing_reentrant: true``): the option stays off.
  Nor where the down projection is a custom ``torch.autograd.Function`` (TransformerEngine's or
  Megatron-core's linear layers, a ``torch.compile``'d block): a Function's saved tensors are
  packed when its forward has returned, so that GEMM (and a collective inside it) runs again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective
from rlmcost.parallel.shard import tp_shard

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rlmcost.arch import Arch
    from rlmcost.perf.step_pass import StepContext, StepOptions


EARLY_STOP_NOTE = (
    "full recomputation as PyTorch's non-reentrant checkpoint runs it (early stop, on by "
    "default): each dense layer's rerun ends before the FFN's down projection, which is not "
    "recomputed (rlmcost.perf.ckpt_early_stop)"
)
LATE_STOP_NOTE = (
    "full recomputation as PyTorch's non-reentrant checkpoint runs it (early stop, on by "
    "default): each dense layer's rerun ends at the op after the FFN's down projection that "
    "saves a tensor (the hidden dropout's mask or the post-FFN norm's input), so only the "
    "residual add is not recomputed (rlmcost.perf.ckpt_early_stop)"
)

LORA_STOP_NOTE = (
    "full recomputation as PyTorch's non-reentrant checkpoint runs it (early stop, on by "
    "default): a LoRA adapter on the FFN's down projection saves its lora_B input after the "
    "base GEMM (PEFT's lora.Linear), so each dense layer's rerun runs that GEMM and only the "
    "residual add is not recomputed (rlmcost.perf.ckpt_early_stop)"
)

PEFT_ZERO3_NOTE = (
    "adapters under ZeRO-3: {framework}'s trainer forces a reentrant checkpoint "
    "(use_reentrant=True; TRL PR 4951, 0.28.0), so full recomputation reruns the whole layer, "
    "no early stop (rlmcost.perf.ckpt_early_stop)"
)


def lora_rerun_note(projections: Sequence[str]) -> str:
    """The note that LoRA adapters keep these output ``projections`` (``o``, ``down``) in a
    per-module rerun (module docstring)."""
    names = " and ".join(p + "_proj" for p in projections)
    return (f"LoRA adapters on {names}: each lora_B saves its input after the base GEMM "
            "(PEFT's lora.Linear), so the modules' rerun runs those projections too "
            "(rlmcost.perf.ckpt_early_stop)")  # fmt: skip


NO_DENSE_NOTE = (
    "full recomputation as PyTorch's non-reentrant checkpoint runs it (early stop, on by "
    "default): the model has no dense layer, and a MoE layer's last saved tensors are its "
    "combine's, after every expert GEMM, so each layer's forward is priced as rerun whole (the "
    "residual add after the combine, not rerun, left in; rlmcost.perf.ckpt_early_stop)"
)


def post_ffn_saves(arch: Arch) -> bool:
    """Whether an op after a dense layer's FFN down projection saves a tensor of its own (Gemma
    2/3's post-FFN norm, ``norms_per_layer`` 4), so that the early stop's rerun ends after it."""
    return int(arch.norms_per_layer) > 2


def skips_down_projection(arch: Arch, options: StepOptions) -> bool:
    """Whether the early stop ends a dense layer's rerun before its down projection: the option
    is on and nothing after that GEMM saves a tensor (no hidden dropout, no post-FFN norm, no
    LoRA adapter on it; module docstring)."""
    return options.recompute_early_stop and not options.hidden_dropout \
        and not post_ffn_saves(arch) and "down" not in options.peft_lora  # fmt: skip


def stop_note(arch: Arch, dropout: bool = False) -> str:
    """The output's note on where the early stop ends ``arch``'s layers' rerun (with the hidden
    dropout where ``dropout``): nothing skipped without a dense layer, only the residual add
    where an op after the down projection saves a tensor, else from the down projection on."""
    if int(arch.n_dense_layers) == 0:
        return NO_DENSE_NOTE
    return LATE_STOP_NOTE if dropout or post_ffn_saves(arch) else EARLY_STOP_NOTE


def early_stop_note(arch: Arch, options: StepOptions) -> str:
    """The output's note on the early stop (where it ends the rerun, :func:`stop_note`; a LoRA
    adapter on the down projection ends it after that GEMM: :data:`LORA_STOP_NOTE`)."""
    note = stop_note(arch, options.hidden_dropout)
    return LORA_STOP_NOTE if note == EARLY_STOP_NOTE and "down" in options.peft_lora else note


def skipped_flops_per_token(arch: Arch, tp: int) -> int:
    """FLOPs per token and dense layer that the early stop does not rerun: the FFN's
    down-projection GEMM on a rank of TP degree ``tp`` (module docstring).

    >>> from rlmcost.perf.validate import gpt_arch
    >>> skipped_flops_per_token(gpt_arch(24, 2048, 16, 50368, 2048), 1) == 2 * 2048 * 8192
    True
    """
    return 2 * int(arch.d_model) * int(tp_shard(arch, tp).d_ff)


def early_stop_skip(c: StepContext, moe: bool) -> tuple[float, int]:
    """Seconds and FLOPs of one layer's forward that a full recomputation under the early stop
    does not rerun (module docstring): the residual add, and before it the down projection and
    its TP collective unless an op between saves a tensor; nothing for a MoE layer or with the
    option off."""
    if moe or not c.options.recompute_early_stop:
        return 0.0, 0
    down = [int(tp_shard(c.arch, c.layout.tp).d_ff)] if skips_down_projection(c.arch, c.options) \
        else []  # fmt: skip
    return rerun_tail_skip(c, down, 1)


def rerun_tail_skip(c: StepContext, widths: list[int], adds: int) -> tuple[float, int]:
    """Seconds and FLOPs a rerun leaves out of one layer's forward: ``adds`` residual adds (3 d
    bytes a token each, as ``step_pass`` prices them) and the output projections of the
    rank's input ``widths`` (d outputs each) with their TP all-reduces (reduce-scatters under
    SP); shared by the whole-layer early stop and the per-module checkpoint
    (:mod:`rlmcost.perf.module_ckpt`)."""
    lay, dev, T = c.layout, c.device, c.tokens
    x, d = c.workload.activation_dtype.bytes, int(c.arch.d_model)
    dd = d // lay.tp if lay.sp else d
    s = dev.elementwise_s(adds * T * 3 * dd * x, adds)
    s += sum(dev.gemm_s(T, d, w) for w in widths)
    if lay.tp > 1 and widths:
        kind = Collective.REDUCE_SCATTER if lay.sp else Collective.ALL_REDUCE
        s += len(widths) * c.comm(kind, T * d * x, lay.tp, ("tp",))
    return s, sum(2 * T * d * w for w in widths)
