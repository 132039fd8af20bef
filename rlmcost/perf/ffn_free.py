"""A training step's pass without the FFN of the layers that hold none (Nemotron-H's
mixer-only blocks): what :func:`rlmcost.perf.step_pass.stage_pass` takes off a stage."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Checkpointing

if TYPE_CHECKING:
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext


def take_off_free_ffns(c: StepContext, stage: PipelineStage, out: StagePass,
                       layer_of: Callable[[StepContext, bool], StagePass]) -> None:  # fmt: skip
    """Takes the FFN of the stage's FFN-free layers (Nemotron-H's mixer-only blocks,
    ``Arch.ffn_free_layers_of``) off ``out``. Megatron-Core builds each pattern letter as a
    layer of its own (megatron/core/models/hybrid/hybrid_model.py @d98e8a64dd: a Mamba or
    attention layer holds no MLP, no MoE), so such a layer runs none of the FFN's work: its
    forward and backward GEMMs, its activation, permutation and EP dispatch (Megatron's
    "mlp"/"moe" module; ``layer_of``: :mod:`rlmcost.perf.step_pass`'s one layer), the TP/SP
    collective pair the FFN adds (when its tokens do not move by the EP dispatcher instead),
    and under full recomputation the FFN's forward again; its FLOPs."""
    free = int(c.arch.ffn_free_layers_of(stage.layers))
    if not free:
        return
    moe, lay = bool(stage.moe_layers), c.layout
    layer, name = layer_of(c, moe), "moe" if moe else "mlp"
    m = layer.modules
    gemm_f, gemm_b, ep = m["ffn_gemm"], m["ffn_gemm_bwd"], m.get("ffn_ep", 0.0)
    elem_f = m.get(name, 0.0) - gemm_f - ep  # activation, permutation (fwd; bwd twice)
    out.fwd["gemm"] -= free * gemm_f
    out.bwd["gemm"] -= free * gemm_b
    out.fwd["elementwise"] -= free * elem_f
    out.bwd["elementwise"] -= free * 2 * elem_f
    out.fwd["ep"] -= free * ep
    out.fp8_weights_fwd_s -= free * m.get("fp8_ffn_w", 0.0)  # no FFN weights to cast (fp8_train)
    out.fp8_weights_s -= free * m.get("fp8_ffn_wt", 0.0)
    out.bwd["ep"] -= free * ep
    pair, t = 0.0, lay.tp  # the FFN's own TP/SP collective pair, forward and backward alike
    if t > 1 and not (moe and lay.expert_tp != t):
        act = c.tokens * int(c.arch.d_model) * c.workload.activation_dtype.bytes
        pair = (c.comm(Collective.ALL_GATHER, act, t, ("tp",))
                + c.comm(Collective.REDUCE_SCATTER, act, t, ("tp",))) if lay.sp \
            else c.comm(Collective.ALL_REDUCE, act, t, ("tp",))  # fmt: skip
        out.fwd["sp" if lay.sp else "tp"] -= free * pair
        out.bwd["sp" if lay.sp else "tp"] -= free * pair
    full = lay.ckpt is Checkpointing.FULL  # the recomputed forward held the FFN too
    out.bwd["recompute"] -= free * (gemm_f + elem_f + ep + pair) if full else 0.0
    out.flops -= free * (4 if full else 3) * layer.module_flops.get(name, 0)
