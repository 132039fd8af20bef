"""Recomputation reruns a MoE layer's token dispatch once (rlmcost.perf.selective_ac.recompute,
rlmcost.perf.step_pass).

Source: Megatron-core at the commit Pai-Megatron-Patch 2b201af runs (its submodule
backends/megatron/Megatron-LM-250624 = NVIDIA/Megatron-LM @6a6cd47883). ``MoELayer.forward``
(megatron/core/transformer/moe/moe_layer.py) wraps router, dispatch (the all-to-all), experts
and combine in one ``custom_forward``; ``--recompute-modules moe`` checkpoints that function,
``--recompute-granularity full`` checkpoints whole layers (transformer_block.py
``_checkpointed_forward``), so either reruns the dispatch and combine all-to-alls once, in the
backward, before their gradients' all-to-alls; the dispatcher keeps no routing across the two
forwards (token_dispatcher.py keeps its maps only from dispatch to combine)."""

from __future__ import annotations

from typing import Any

import pytest

from rlmcost.parallel.layout import Checkpointing, Layout
from rlmcost.parallel.shard import PipelineStage

STAGE = PipelineStage(index=1, n_stages=3, dense_layers=0, moe_layers=3)  # a middle stage


def _pass(ckpt: Checkpointing, modules: tuple[str, ...] = ("core_attn",)) -> Any:
    from rlmcost.parallel.breakdown import DataShare
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.selective_ac import SelectiveRecompute
    from rlmcost.perf.step_pass import StepContext, StepOptions, stage_pass
    from rlmcost.specs import get_hardware, get_model
    from rlmcost.specs.workload import Workload

    arch = get_model("qwen3-235b-a22b").arch()  # Pai-Megatron-Patch issue 658's model
    layout = Layout(dp=8, ep=8, ckpt=ckpt, micro_batch=4)
    share = DataShare(sequences=4, micro_batch=4, micro_batches=1, tokens_per_sequence=4096)
    opt = StepOptions(moe_layer_host_s=0.0, moe_permute_fusion=False,
                      selective=SelectiveRecompute.MODULES, recompute_modules=modules)  # fmt: skip
    c = StepContext.of(arch, layout, 4096, share, Device(get_hardware("h800")), opt, Workload())
    return stage_pass(c, STAGE)


def test_full_recomputation_reruns_the_forward_and_its_all_to_alls_once() -> None:
    none, full = _pass(Checkpointing.NONE), _pass(Checkpointing.FULL)
    assert none.fwd["ep"] > 0
    # the forward and the backward's own all-to-alls (the gradients') are unchanged ...
    assert full.fwd == none.fwd
    assert full.bwd["ep"] == none.bwd["ep"] == pytest.approx(none.fwd["ep"])
    # ... and the recompute is the whole forward once, its dispatch and combine included
    assert full.bwd["recompute"] == pytest.approx(none.fwd_s)


def test_the_moe_module_recompute_reruns_the_dispatch_once_not_the_attention() -> None:
    none = _pass(Checkpointing.NONE)
    moe = _pass(Checkpointing.SELECTIVE, ("moe",))
    act = _pass(Checkpointing.SELECTIVE, ("moe_act",))
    assert moe.bwd["ep"] == none.bwd["ep"]
    # the MoE module's rerun holds the all-to-alls once; the activation's holds none of them
    assert moe.bwd["recompute"] - act.bwd["recompute"] > none.fwd["ep"]
    assert moe.bwd["recompute"] < none.fwd_s - none.fwd["attention"]
    assert act.bwd["recompute"] < none.fwd["ep"]
