"""How a deployment's framework runs its teacher-forced passes: the
:class:`~rlmcost.perf.step_pass.StepOptions` its log-prob forwards and training steps are timed
with, from the framework's :class:`~rlmcost.frameworks.preset_model.Behaviour` (its source is
there): today the log-softmax its log-prob and loss heads run over fp32 logits
(``Behaviour.logprob_head``, :mod:`rlmcost.perf.logprob_head`), an FSDP2 trainer's reduce dtype
(``Behaviour.fsdp2_reduce_bytes``) and, where its trainer runs a Hugging Face model
(``Behaviour.hf_trainer``, :func:`runs_hf_model`), that model's attention kernel (``flash2``:
FlashAttention-2 or SDPA, a pre-FA3 kernel on Hopper; :mod:`rlmcost.perf.efficiency`) and its eager
layers (``Behaviour.hf_eager``, :mod:`rlmcost.perf.policy_worker`) unless Liger's patch fuses them
(``Behaviour.liger_logits`` with ``--logits fused``, or ``--trainer-kernels liger``), and a
Megatron trainer's MoE token dispatcher (``TrainLayout.ep_dispatcher``,
:mod:`rlmcost.perf.ep_dispatch`), whether it fuses the MoE permutation
(``TrainLayout.moe_permute_fusion``, :mod:`rlmcost.perf.moe_permute`), whether its interleaved
schedule overlaps the pipeline sends (``Behaviour.megatron_overlap_p2p``,
:mod:`rlmcost.perf.megatron_pipe`), the dtype its data-parallel reduce moves (Megatron-core's
gradient buffer, ``Behaviour.megatron_grad_reduce``: :mod:`rlmcost.placement.grad_buffer`), whether
its Hugging Face trainer's full recomputation stops early as torch's non-reentrant checkpoint does
(``Behaviour.hf_ckpt_early_stop``, :mod:`rlmcost.perf.ckpt_early_stop`; the trainer layout's
``recompute_early_stop`` where given) and whether it checkpoints each layer's modules apart
(``Behaviour.hf_module_ckpt``: NeMo RL's DTensor worker, :mod:`rlmcost.perf.module_ckpt`). Which
trainers, with the file that shows it (``Behaviour.hf_source``): NeMo RL's DTensor worker (ZeRO-3),
verl's FSDP workers (no TP/PP/EP), OpenRLHF and TRL; their Megatron-core trainers keep the cuDNN /
FA3-class ``flash``. The paper's idealized iteration and frameworks without a preset take rlmcost's
defaults (None), unless the deployment sets its trainer's layers (``TrainLayout.kernels``
``realhf``, :func:`realhf_kernels`: AReaL v0.3's realhf ``ReaLModel``, FlashAttention-2 and eager
norms with a fused RoPE).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rlmcost.choices import EpDispatcher
from rlmcost.deployment.kinds import LogitsMode, Offload, TrainerKernels
from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import behaviour
from rlmcost.memo import by_identities, table
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.parallel.moe_capacity import check_pad_dispatcher
from rlmcost.perf.ckpt_early_stop import (
    EARLY_STOP_NOTE,
    LORA_STOP_NOTE,
    PEFT_ZERO3_NOTE,
    lora_rerun_note,
)
from rlmcost.perf.ep_dispatch import DISPATCHER_NOTES
from rlmcost.perf.host_offload import PAGEABLE_OFFLOAD_BYTES_PER_S
from rlmcost.perf.logprob_head import FUSED, logprob_head
from rlmcost.perf.module_ckpt import module_note
from rlmcost.perf.moe_imbalance import EP_RANK_IMBALANCE_RATIO, MOE_IMBALANCE_NOTE
from rlmcost.perf.moe_notes import moe_notes
from rlmcost.perf.realhf_rate import REALHF_PEAK_FRACTION
from rlmcost.perf.step_options import kept_options
from rlmcost.perf.step_pass import AttentionKernel, StepOptions

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout
    from rlmcost.frameworks.preset_model import Behaviour


def runs_hf_model(beh: Behaviour, train: TrainLayout) -> bool:
    """Whether the framework's trainer at layout ``train`` runs a Hugging Face model
    (``Behaviour.hf_trainer``: ZeRO-3, no TP/PP/EP, always or never)."""
    if beh.hf_trainer == "zero3":
        return train.zero is ZeroStage.OS_G_P
    if beh.hf_trainer == "fsdp":
        return max(train.tp, train.pp, train.ep) == 1
    return beh.hf_trainer == "always"


def host_adam_impl(beh: Behaviour | None, train: TrainLayout) -> str:
    """The CPU Adam that the framework's optimizer offload runs at layout ``train``
    (:func:`rlmcost.perf.data_parallel.cpu_adam_s`): its Hugging Face trainer's
    (:func:`runs_hf_model`) ``Behaviour.host_adam``; a Megatron-core trainer's is torch's fused
    CPU AdamW whatever the framework (``HybridDeviceOptimizer``:
    :data:`~rlmcost.perf.data_parallel.TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED`); DeepSpeedCPUAdam
    without a framework."""
    if beh is None:
        return "deepspeed"
    return beh.host_adam if runs_hf_model(beh, train) else "torch-fused"


def peft_zero3_reentrant(deployment: Deployment, beh: Behaviour | None) -> bool:
    """Whether the framework's trainer forces a reentrant checkpoint because the run trains
    adapters under ZeRO-3 (``Behaviour.peft_zero3_reentrant``: TRL's GRPOTrainer from PR 4951,
    0.28.0, ``grpo_trainer.py`` @f2cd5771; the TRL importer's rule, ``frameworks.trl``)."""
    return (beh is not None and beh.peft_zero3_reentrant and deployment.lora is not None
            and deployment.train.zero is ZeroStage.OS_G_P)


def _early_stop(deployment: Deployment, beh: Behaviour | None, hf: bool) -> bool:
    """Whether full recomputation stops early (:mod:`rlmcost.perf.ckpt_early_stop`): the run's
    ``TrainLayout.recompute_early_stop`` where given, else the framework's Hugging Face trainer
    (``Behaviour.hf_ckpt_early_stop``) unless it forces a reentrant checkpoint
    (:func:`peft_zero3_reentrant`, verl's activation offload); on where a trainer layout is
    given ``module_ckpt``
    (NeMo RL's v1 worker wraps its modules in torch's non-reentrant ``checkpoint_wrapper``).
    Given true where no trainer layout recomputes in full, it is an error (it would change
    nothing)."""
    given = deployment.train.recompute_early_stop
    layouts = [deployment.train] + [g.train for g in deployment.groups if g.train]
    if given:
        if all(lay.ckpt is not Checkpointing.FULL for lay in layouts):
            raise SpecError("--recompute-early-stop is the early stop of full recomputation, "
                            f"but the trainer runs --ckpt {deployment.train.ckpt.value}: add "
                            "--ckpt full, or drop --recompute-early-stop")  # fmt: skip
    if given is not None:
        return given
    if any(lay.module_ckpt for lay in layouts):
        return True
    return hf and beh is not None and beh.hf_ckpt_early_stop and not deployment.train.\
        activation_offload and not peft_zero3_reentrant(deployment, beh)  # parallel.act_offload


def module_ckpt_on(deployment: Deployment, train: TrainLayout) -> bool:
    """Whether full recomputation checkpoints each layer's modules apart
    (:mod:`rlmcost.perf.module_ckpt`) at the trainer layout ``train`` (the group's, else the
    deployment's): its ``module_ckpt`` where given, else the framework's Hugging Face trainer's
    (``Behaviour.hf_module_ckpt``, NeMo RL's DTensor v1 worker); never in the paper's ideal
    run. Given true where no trainer layout recomputes in full, or where the framework's
    trainer runs Megatron-core at ``train``, it is an error (it would change nothing)."""
    given = train.module_ckpt
    beh = None if deployment.ideal else behaviour(deployment.framework)
    hf = beh is not None and runs_hf_model(beh, train)
    if given:
        layouts = [deployment.train] + [g.train for g in deployment.groups if g.train]
        if all(lay.ckpt is not Checkpointing.FULL for lay in layouts):
            raise SpecError("--module-ckpt is a form of full recomputation, but the trainer "
                            f"runs --ckpt {train.ckpt.value}: add --ckpt full, or drop "
                            "--module-ckpt")  # fmt: skip
        if beh is not None and not hf:
            raise SpecError(f"--module-ckpt wraps a Hugging Face model's modules, but "
                            f"{deployment.framework}'s trainer runs Megatron-core at this "
                            "layout (a whole-layer recomputation); drop --module-ckpt")
    if given is not None:
        return given and not deployment.ideal
    return hf and beh is not None and beh.hf_module_ckpt


def check_swiglu_fusion(deployment: Deployment, train: TrainLayout, hf: bool) -> None:
    """SpecError where ``train.swiglu_fusion`` is given to a trainer that runs a Hugging Face
    model (``hf``): it is a Megatron-core trainer's ``bias_activation_fusion``
    (:mod:`rlmcost.placement.glu_kernel`)."""
    given = train.swiglu_fusion
    if hf and given is not None:
        raise SpecError(
            f"--{'' if given else 'no-'}swiglu-fusion sets a Megatron-core trainer's "
            f"bias_activation_fusion, but {deployment.framework} trains this layout (TP, PP "
            "and EP 1, or ZeRO-3) as a Hugging Face model: drop it (Liger's fused SwiGLU "
            "comes with --logits fused where the framework applies it)")


def liger_layers(deployment: Deployment, train: TrainLayout, hf: bool) -> bool:
    """Whether the trainer at layout ``train`` runs Liger's fused RMSNorm, RoPE and SwiGLU:
    ``train.kernels`` liger (verl's ``model.use_liger``), or the preset's ``--logits fused``
    where that means Liger's patch (``Behaviour.liger_logits``). SpecError where liger is given
    to a trainer that runs no Hugging Face model (``hf``): Liger patches transformers' classes."""
    beh = None if deployment.ideal else behaviour(deployment.framework)
    given = train.kernels is TrainerKernels.LIGER
    if given and not hf and not deployment.ideal:
        raise SpecError(f"--trainer-kernels liger patches a Hugging Face model, but the "
                        f"{deployment.framework or 'bare'} trainer at this layout runs none "
                        "(Megatron-core or rlmcost's fused layers; verl's FSDP workers run one "
                        "at TP, PP and EP 1): drop it")  # fmt: skip
    fused = beh is not None and beh.liger_logits and deployment.logits is LogitsMode.FUSED
    return hf and (given or fused)


def step_options(deployment: Deployment) -> StepOptions | None:
    """The framework's pass options, None where they are rlmcost's defaults; kept by the
    deployment's identity (a frozen model: the group estimates of one deployment and its
    notes ask again; the planner's sweep of PPO 70B on 32 A100 asks 1,354 times of 408).

    >>> from rlmcost.deployment.spec import Deployment
    >>> step_options(Deployment(framework="nemo-rl")).logprob_head.name
    'nemo-rl-distributed-logprob'
    >>> step_options(Deployment(framework="verl")).attention.value  # its FSDP workers
    'flash2'
    >>> step_options(Deployment(framework="slime")).linear_mixer_replicated  # its Qwen3.5 spec
    True
    >>> step_options(Deployment()) is None
    True
    """
    return by_identities(_OPTIONS, (deployment,), lambda: _options_of(deployment), most=256)


_OPTIONS = table()  # step_options by the deployment's identity (its group models, its notes)


def _options_of(deployment: Deployment) -> StepOptions | None:
    beh = None if deployment.ideal else behaviour(deployment.framework)
    hf = beh is not None and runs_hf_model(beh, deployment.train)
    fp64 = _fp64_router(deployment, hf)
    imb = EP_RANK_IMBALANCE_RATIO.value if expert_parallel(deployment) else 1.0
    plain_hf = hf and deployment.train.ep == 1  # EP > 1: NeMo Automodel's (nemo_rl_automodel)
    disp = EpDispatcher.ALLTOALL if deployment.ideal or plain_hf else deployment.train.ep_dispatcher
    check_pad_dispatcher(deployment.train.moe_pad_to_capacity, disp)  # Megatron-core refuses
    check_swiglu_fusion(deployment, deployment.train, hf)  # first: as the memory model meets it
    liger = liger_layers(deployment, deployment.train, hf)  # (placement.glu_kernel)
    if hf and deployment.train.moe_capacity_factor is not None:
        raise SpecError(f"--moe-capacity-factor is Megatron-core's, but {deployment.framework}'s "
                        "trainer runs a Hugging Face model at this layout (no capacity); drop "
                        "it or choose its Megatron trainer (e.g. --zero 1)")  # fmt: skip
    overlap = deployment.train.pp_overlap_p2p  # given: the user's (--no-pp-overlap-p2p)
    if overlap is None:  # the framework's interleaved p2p (perf.megatron_pipe)
        overlap = beh is None or beh.megatron_overlap_p2p
    fused = deployment.ideal or hf or deployment.train.moe_permute_fusion  # (perf.moe_permute)
    rep = beh is not None and beh.linear_mixer_tp_replicated  # (perf.linear_mixer)
    from rlmcost.placement.grad_buffer import grad_reduce_bytes  # it imports runs_hf_model

    reduce = grad_reduce_bytes(deployment)  # Megatron-core's fp32 gradient buffer
    early = _early_stop(deployment, beh, hf)  # torch's checkpoint (perf.ckpt_early_stop)
    module = module_ckpt_on(deployment, deployment.train)  # NeMo RL's (perf.module_ckpt)
    moe = {"router_fp64": fp64, "moe_rank_imbalance": imb, "ep_dispatcher": disp,
           "pp_overlap_p2p": overlap, "moe_permute_fusion": fused, "linear_mixer_replicated": rep,
           "grad_reduce_bytes": reduce, "recompute_early_stop": early, "module_ckpt": module,
           "peft_lora": deployment.lora.targets if early and deployment.lora else ()}
    if realhf_kernels(deployment):  # one StepOptions per equal fields (kept_options)
        head = logprob_head(beh.logprob_head if beh else FUSED.name)
        return kept_options(**moe, logprob_head=head, attention=AttentionKernel.FLASH2,
                            hf_eager=True, fused_rope=True)
    if beh is None or (beh.logprob_head == FUSED.name and not beh.fsdp2_reduce_bytes and not hf):
        plain = (not fp64 and imb == 1.0 and disp is EpDispatcher.ALLTOALL and overlap and fused
                 and not rep and not reduce and not early and not module)  # fmt: skip
        return None if plain else kept_options(**moe)
    eager = hf and beh.hf_eager and not liger
    return kept_options(**moe, logprob_head=logprob_head(beh.logprob_head),
                        fsdp2_reduce_bytes=beh.fsdp2_reduce_bytes,
                        attention=AttentionKernel.FLASH2 if hf else AttentionKernel.FLASH,
                        hf_eager=eager, hf_output_cast=eager and beh.hf_output_cast)


def expert_parallel(deployment: Deployment) -> bool:
    """Whether a framework's deployment (not the paper's ideal run) runs a trainer's passes with
    experts over P_e > 1 ranks, whose busiest rank then sets each MoE layer's expert phase
    (:mod:`rlmcost.perf.moe_imbalance`; the layouts' EP degree, the run's and its groups')."""
    if deployment.ideal:
        return False
    layouts = [deployment.train, deployment.forward_layout()]
    layouts += [lay for g in deployment.groups for lay in (g.train, g.forward) if lay is not None]
    brackets = [m for g in deployment.groups for m in _EP_SETTING.findall(g.settings or "")]
    return any(lay.ep > 1 for lay in layouts) or any(int(m) > 1 for m in brackets)


_EP_SETTING = re.compile(r"(?:^|[;,\s])ep\s*=\s*(\d+)")
"""An ``ep=N`` among a group's bracket settings (``--groups 'actor=16[tp=2;ep=8]'``)."""


def realhf_kernels(deployment: Deployment) -> bool:
    """Whether the trainer is AReaL v0.3's realhf (``TrainLayout.kernels``, ``--trainer-kernels
    realhf``): its ``ReaLModel``'s FlashAttention-2 and eager layers
    (:mod:`rlmcost.perf.policy_worker`) and its measured rate (:mod:`rlmcost.perf.realhf_rate`);
    never in the paper's ideal run."""
    return not deployment.ideal and deployment.train.kernels is TrainerKernels.REALHF


def router_fp64(deployment: Deployment) -> bool:
    """Whether the trainer runs its MoE router in fp64 (``train.router_dtype``): a Megatron
    trainer's (``moe_router_dtype``), never a Hugging Face model's nor the paper's ideal run."""
    beh = None if deployment.ideal else behaviour(deployment.framework)
    return _fp64_router(deployment, beh is not None and runs_hf_model(beh, deployment.train))


def _fp64_router(deployment: Deployment, hf: bool) -> bool:
    return deployment.train.router_dtype == "fp64" and not deployment.ideal and not hf


def worker_notes(deployment: Deployment, kl: bool, moe: bool = True,
                 stops: tuple[str, ...] = (EARLY_STOP_NOTE,)) -> tuple[str, ...]:  # fmt: skip
    """The notes that state the framework's policy-worker terms a query is priced with
    (:mod:`rlmcost.perf.policy_worker`): the reference swap (with a reference forward, ``kl``),
    the per-sequence loss of packed training, the padding of packed micro-batches under
    pipeline parallelism (``Behaviour.pp_pads_packed_bins``), under ZeRO-3 FSDP2's copies, and
    the memory of its micro-batches (``Behaviour.budget_packs_lengths``:
    :mod:`rlmcost.placement.packed_lengths`, :mod:`rlmcost.placement.head_peak`), a Hugging
    Face trainer's attention kernel and eager layers, its optimizer offload through
    pageable memory (:mod:`rlmcost.perf.host_offload`), and with expert parallelism the busiest
    EP rank's load (:mod:`rlmcost.perf.moe_imbalance`). ``moe``: whether a model of the query
    has routed experts (without, the MoE fields are said to have no effect). ``stops``: for the
    query's models, the notes on where the checkpoint's early stop ends their rerun
    (``ckpt_early_stop.stop_note``), given where that early stop runs."""
    beh = None if deployment.ideal else behaviour(deployment.framework)
    out, realhf = [], realhf_kernels(deployment)
    if expert_parallel(deployment):
        out.append(MOE_IMBALANCE_NOTE)
        opt = step_options(deployment)
        if opt is not None and opt.ep_dispatcher is not EpDispatcher.ALLTOALL:
            out.append(DISPATCHER_NOTES[opt.ep_dispatcher])
    layouts = [deployment.train, deployment.forward_layout()]
    layouts += [lay for g in deployment.groups for lay in (g.train, g.forward) if lay is not None]
    unfused = not deployment.ideal and not deployment.train.moe_permute_fusion
    options = (step_options(deployment) or StepOptions()) if unfused else None
    out += moe_notes(layouts, options, moe=moe, unfused=unfused,
                     framework=deployment.framework)  # (perf.moe_notes)
    if realhf:
        out.append("trainer realhf (--trainer-kernels realhf): AReaL v0.3's ReaLModel, attention "
                   "by FlashAttention-2 (a pre-FlashAttention-3 kernel, 0.35 of peak on Hopper: "
                   "rlmcost.perf.efficiency), fp32-upcast RMSNorm and SiLU x up run eagerly, "
                   "RoPE fused (rlmcost.perf.policy_worker); a dense model's training steps and "
                   f"log-prob forwards no faster than {REALHF_PEAK_FRACTION.value} of the peak in "
                   "realhf's FLOP count, arXiv 2505.24298 Fig. 6a (rlmcost.perf.realhf_rate)")
    if not deployment.ideal and deployment.train.padded:
        out.append("padded sequences (--padded; verl use_remove_padding false): every sequence "
                   "of the training and forward passes at the batch's width, prompt + longest "
                   "response, in time and memory, attention included (an upper bound: "
                   "FlashAttention-2 unpads inside the attention; rlmcost.placement.dynamic_bsz)")
    from rlmcost.placement.trainer_notes import trainer_notes

    out += trainer_notes(deployment)  # the gradient buffer (or the flag's), FP8, MTP
    early = step_options(deployment)  # torch's checkpoint early stop (perf.ckpt_early_stop)
    full = deployment.train.ckpt is Checkpointing.FULL
    lora = [p for p in ("o", "down") if early and p in early.peft_lora]  # only under the stop
    if early and early.module_ckpt and full:
        out += [module_note(early)] + ([lora_rerun_note(lora)] if lora else [])
    elif early and early.recompute_early_stop and full:
        out += [LORA_STOP_NOTE if n == EARLY_STOP_NOTE and "down" in lora else n for n in stops]
    elif full and deployment.train.recompute_early_stop is None and \
            peft_zero3_reentrant(deployment, beh):  # fmt: skip
        out.append(PEFT_ZERO3_NOTE.format(framework=deployment.framework))
    if beh is None:
        return tuple(out)
    if beh.reference_swap and kl:
        out.append(f"reference forward: {deployment.framework} swaps the reference's weights "
                   "into the policy's model through host memory, 3 host-link copies of the "
                   "rank's model state per step (rlmcost.perf.policy_worker)")  # fmt: skip
    if beh.packed_loss_per_sequence and deployment.train.packing and \
            not deployment.train.fused_loss:  # fmt: skip
        out.append(f"packed training as {deployment.framework} runs it: the loss once per "
                   "packed sequence, a zero-filled fp32 logits gradient per sequence and "
                   "~132 host-serialized launches each (--fused-loss: one call per "
                   "micro-batch; rlmcost.perf.policy_worker)")  # fmt: skip
    if beh.pp_pads_packed_bins and any(t.packing and t.pp > 1 for t in
                                       (deployment.train, deployment.forward_layout())):
        out.append(f"packed passes under pipeline parallelism as {deployment.framework} runs "
                   "them: its packing replayed on the lengths (modified first fit decreasing, "
                   "bins dealt round robin over the DP ranks; training per mini-batch, the "
                   "length quantiles dealt to them by stride), every packed micro-batch padded "
                   "to the rank's largest and priced at that length, the padding attending as "
                   "part of the bin's last sequence (rlmcost.perf.nemo_rl_packing)")  # fmt: skip
    if deployment.train.zero is ZeroStage.OS_G_P and beh.fsdp2_reduce_bytes:
        out.append(f"ZeRO-3 trainer as {deployment.framework} runs it: FSDP2 with gradients "
                   f"reduced in {beh.fsdp2_reduce_bytes} B, its all-gather copy-out and "
                   "reduce-scatter copy-in every micro-batch (rlmcost.perf.policy_worker)")
    if beh.budget_packs_lengths:
        out.append(f"micro-batches as {deployment.framework} runs them: under a token "
                   "budget its dynamic batching replayed on the heaviest rank's share of the "
                   "length quantiles (choice: dealt by stride over mini-batches and ranks; a "
                   "mini-batch whose long responses cluster holds more), min(sequences, "
                   "ceil(tokens / (budget x cp))) Karmarkar-Karp micro-batches per mini-batch "
                   "(update) or batch (forward), their count and tokens timed, the largest "
                   "the memory peak (rlmcost.placement.dynamic_bsz); a fixed micro-batch's "
                   "sequences at the prompt + the mean response; the head's backward holding "
                   f"{beh.low_memory_train_copies} logits buffers"
                   + (", apart from the rebuilt layer" if beh.logits_freed_before_layers
                      else "")
                   + (", and no gradient shard where a rank's mini-batch is one micro-batch "
                      "(zero_grad to None at each mini-batch)" if beh.grads_freed_after_update
                      and deployment.train.zero is ZeroStage.OS_G_P else "")
                   + " (rlmcost.placement.packed_lengths, head_peak)")  # fmt: skip
    opt = step_options(deployment)
    if opt is not None and opt.attention is AttentionKernel.FLASH2 and not realhf:
        out.append(f"{deployment.framework}'s trainer runs the Hugging Face model: attention "
                   "by FlashAttention-2 / SDPA (a pre-FlashAttention-3 kernel, 0.35 of peak on "
                   "Hopper: rlmcost.perf.efficiency)"
                   + (", its layers eagerly (unfused fp32 RMSNorm, RoPE, SiLU x up"
                      + (", FSDP2's fp32 output casts" if opt.hf_output_cast else "")
                      + "; rlmcost.perf.policy_worker)" if opt.hf_eager else "")
                   + f" ({beh.hf_source})")  # fmt: skip
    if beh.optimizer_offload_pageable and Offload.OPTIMIZER_IDLE in deployment.train.offload:
        rate = PAGEABLE_OFFLOAD_BYTES_PER_S.value / 1e9
        out.append(f"optimizer offload as {deployment.framework} runs it: the Adam states "
                   "tensor by tensor into pageable host memory at each refit and back for the "
                   f"update, one round trip at {rate:.2f} GB/s per GPU (NeMo RL PR 1404's "
                   "measured saving) on PCIe hosts; a coherent NVLink-C2C host (GB200) keeps its "
                   "link's rate, unmeasured" + ("; gradient buffers freed, not copied"
                                         if beh.grads_offload_frees else "")
                   + " (rlmcost.perf.host_offload)")  # fmt: skip
    if beh.grads_offload_frees and Offload.GRADS_IDLE in deployment.train.offload and not \
            (beh.optimizer_offload_pageable and Offload.OPTIMIZER_IDLE in deployment.train.offload):
        out.append(f"gradient offload as {deployment.framework} runs it: the gradient buffers "
                   "released between phases and re-zeroed for the update, not copied: no host "
                   "traffic (rlmcost.perf.host_offload)")  # fmt: skip
    ways = param_pageable_directions(beh, deployment)
    if ways and Offload.PARAMS_IDLE in deployment.train.offload:
        rate = PAGEABLE_OFFLOAD_BYTES_PER_S.value / 1e9
        out.append(f"parameter offload as {deployment.framework} runs it: around each of the "
                   "model's phases the parameter shard goes through pageable host memory "
                   + ("both ways" if ways == 2 else "on the way out (back from a pinned copy)")
                   + f", at {rate:.2f} GB/s per GPU on PCIe hosts (rlmcost.perf.host_offload)")
    return tuple(out)


def param_pageable_directions(beh: Behaviour, deployment: Deployment) -> int:
    """The pageable directions of a parameter round trip (``Behaviour.param_offload_pageable``,
    its Megatron-core value where the trainer has tp, pp or ep > 1)."""
    t = deployment.train
    if beh.megatron_param_offload_pageable is not None and max(t.tp, t.pp, t.ep) > 1:
        return beh.megatron_param_offload_pageable
    return beh.param_offload_pageable
