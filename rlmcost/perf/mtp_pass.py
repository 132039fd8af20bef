"""Multi-token prediction in a training step's last pipeline stage (``StepOptions.mtp_layers``,
``rlmcost train --mtp-layers``).

Megatron-core builds D = ``mtp_num_layers`` MTP modules on the last pipeline stage
(``mtp_on_this_rank`` without a custom layout; megatron/core/transformer/
multi_token_prediction.py @d98e8a64; DeepSeek-V3 report, arXiv 2412.19437 §2.2). Each depth,
every micro-batch, on the rank's T tokens:

* ``hnorm`` and ``enorm`` (RMSNorm of the previous depth's hidden states and of the shifted
  tokens' embeddings; 2d bytes a token each, read and written, as the stage's norms), the
  concatenation (4d), and ``eh_proj``: a column-parallel [2d -> d] GEMM
  [T, d / P_t, 2d];
* one Transformer layer of the model's last layer's shape (:func:`~rlmcost.perf.speculative.
  mtp_arch`: MoE for DeepSeek-V3), priced as the stage's own layers are (the same kernels,
  collectives, recomputation under the same ``--ckpt``: ``MultiTokenPredictionLayer.
  _checkpointed_forward``, and a MoE layer's host floor) and its final norm;
* the shared output head [T, V / P_t, d] and the cross-entropy, as the main head's; under
  ``mtp_detach_heads`` (``process_mtp_loss`` detaches the output weight) no head weight
  gradient GEMM;
* under TP, the projection's output all-gather and the column-parallel inputs' collectives
  (:func:`_tp_comm_s`), exposed as the stage's own TP collectives are.

FLOPs exact ints, one add or one multiply = 1 FLOP, a GEMM [m, n, k] 2 m n k forward, twice that
backward (data and weight gradients). Memory: :func:`rlmcost.placement.mtp.block_bytes`, the
same function the RL trainers' use. The RL commands price their trainers' MTP block in
:mod:`rlmcost.placement.mtp` (``with_mtp``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.parallel.shard import tp_shard
from rlmcost.perf.moe_host import floor_host_bound
from rlmcost.perf.selective_ac import recompute
from rlmcost.perf.speculative import mtp_arch

if TYPE_CHECKING:
    from collections.abc import Callable

    from rlmcost.arch import Arch
    from rlmcost.perf.step_pass import StagePass, StepContext


def block_arch(arch: Arch) -> Arch:
    """The MTP module's layer as a one-layer model of ``arch``'s last layer's shape, with an
    error that names ``--mtp-layers`` where that shape is not known."""
    try:
        return mtp_arch(arch)
    except SpecError:
        raise SpecError(f"--mtp-layers on {arch.name}: its layers mix attention kinds and the "
                        "MTP layer's shape is not known; give --mtp-layers 0") from None


def add_mtp(c: StepContext, out: StagePass, layer: Callable[[StepContext, bool], StagePass]
            ) -> None:  # fmt: skip
    """Add ``c.options.mtp_layers`` depths of the MTP block to ``out``, one micro-batch of the
    last stage (module docstring); ``layer`` prices one layer as the stage's (step_pass)."""
    depths = c.options.mtp_layers
    if not depths:
        return
    from dataclasses import replace

    from rlmcost.perf.step_pass import gemm_fwd_bwd_s

    block = block_arch(c.arch)
    cb = replace(c, arch=block)
    moe = bool(block.is_moe)
    one = layer(cb, moe)
    rec_s, rec_flops = recompute(cb, one, moe)
    if moe:
        floor_host_bound(one, c.options.moe_layer_host_s, rec_s, c.layout.ckpt)
    dev, t, T = c.device, c.layout.tp, c.tokens
    d, x = int(c.arch.d_model), c.workload.activation_dtype.bytes
    v = int(tp_shard(c.arch, t).vocab)
    proj_f, proj_b = gemm_fwd_bwd_s(dev, T, -(-d // t), 2 * d)
    head_f = dev.gemm_s(T, v, d)
    head_b = dev.gemm_s(T, d, v) + (0.0 if c.options.mtp_detach_heads else dev.gemm_s(d, v, T))
    h, norm = c.options.logprob_head, T * (d // t if c.layout.sp else d) * x
    fwd_ew = dev.elementwise_s(T * v * h.fwd_bytes + 10 * norm, h.fwd_kernels + 4)
    bwd_ew = dev.elementwise_s(T * v * h.bwd_bytes + 20 * norm, h.bwd_kernels + 4)
    out.add(one, depths, rec_s, rec_flops)
    out.fwd["gemm"] += depths * (proj_f + head_f)
    out.bwd["gemm"] += depths * (proj_b + head_b)
    out.fwd["elementwise"] += depths * fwd_ew
    out.bwd["elementwise"] += depths * bwd_ew
    if t > 1:  # the projection's and the head's tensor-parallel collectives
        f_comm, b_comm = _tp_comm_s(c, T * d * x)
        part = "sp" if c.layout.sp else "tp"
        out.fwd[part] += depths * f_comm
        out.bwd[part] += depths * b_comm
    out.flops += depths * mtp_extra_flops(c)


def _tp_comm_s(c: StepContext, act: int) -> tuple[float, float]:
    """(forward, backward) seconds of one depth's tensor-parallel collectives beside its layer
    (``act``: the [T, d] activation's bytes). ``MultiTokenPredictionLayer._concat_embeddings``
    gathers the column-parallel ``eh_proj``'s output over TP (``gather_from_tensor_model_
    parallel_region``; its backward splits, no collective); under SP the projection and the head
    all-gather their sequence-split inputs ([T, 2d], [T, d]) and reduce-scatter those inputs'
    gradients, without SP the two inputs' gradients are all-reduced (column-parallel layers)."""
    from rlmcost.parallel.comm import Collective

    t = c.layout.tp
    fwd = c.comm(Collective.ALL_GATHER, act, t, ("tp",))
    if c.layout.sp:
        fwd += c.comm(Collective.ALL_GATHER, 2 * act, t, ("tp",))
        fwd += c.comm(Collective.ALL_GATHER, act, t, ("tp",))
        bwd = (c.comm(Collective.REDUCE_SCATTER, 2 * act, t, ("tp",))
               + c.comm(Collective.REDUCE_SCATTER, act, t, ("tp",)))  # fmt: skip
    else:
        bwd = (c.comm(Collective.ALL_REDUCE, 2 * act, t, ("tp",))
               + c.comm(Collective.ALL_REDUCE, act, t, ("tp",)))  # fmt: skip
    return fwd, bwd


def mtp_extra_flops(c: StepContext) -> int:
    """FLOPs of one depth beside its layer on a rank, one micro-batch, forward and backward:
    ``eh_proj`` (3 x 2 T (d / P_t) 2d) and the head (3 x 2 T (V / P_t) d; 2 x under
    ``mtp_detach_heads``).

    >>> from types import SimpleNamespace as NS
    >>> from rlmcost.specs import get_model
    >>> arch = get_model("llama-3.1-8b").arch()
    >>> opts = NS(mtp_detach_heads=False)
    >>> mtp_extra_flops(NS(arch=arch, layout=NS(tp=1), tokens=1, options=opts))  # 12 d^2 + 6 V d
    3353346048
    """
    d, t, T = int(c.arch.d_model), c.layout.tp, c.tokens
    v = int(tp_shard(c.arch, t).vocab)
    head = (2 if c.options.mtp_detach_heads else 3) * 2 * T * v * d
    return 3 * 2 * T * -(-d // t) * 2 * d + head
