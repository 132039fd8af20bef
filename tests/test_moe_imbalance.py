"""The busiest expert-parallel rank's load (rlmcost.perf.moe_imbalance): the count, the layer's
expert GEMMs and all-to-all, where a deployment applies it, and its note."""

from __future__ import annotations

import dataclasses

import pytest

from rlmcost.arch import Arch
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import DataShare
from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import PipelineStage
from rlmcost.perf.efficiency import Device
from rlmcost.perf.moe_imbalance import (
    EP_RANK_IMBALANCE_RATIO,
    MOE_IMBALANCE_NOTE,
    busiest_rank_count,
)
from rlmcost.perf.step_pass import StagePass, StepContext, StepOptions, stage_pass
from rlmcost.placement.pass_options import expert_parallel, step_options, worker_notes
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload

FREE = StepOptions(moe_layer_host_s=0.0)  # no host floor: the GPU parts only


def test_the_ratio_is_the_published_range() -> None:
    # UltraEP, arXiv 2606.04101 v3 abstract: inter-rank imbalance without balancing 1.30-4.01
    assert (EP_RANK_IMBALANCE_RATIO.low, EP_RANK_IMBALANCE_RATIO.high) == (1.30, 4.01)
    assert EP_RANK_IMBALANCE_RATIO.value == EP_RANK_IMBALANCE_RATIO.low
    assert "2606.04101" in EP_RANK_IMBALANCE_RATIO.source


def test_busiest_rank_count() -> None:
    assert busiest_rank_count(4096, 1.3, 8) == 5325  # ceil(5324.8)
    assert busiest_rank_count(4096, 1.3, 1) == 4096  # one rank: nobody to wait for
    assert busiest_rank_count(4096, 1.0, 64) == 4096
    assert isinstance(busiest_rank_count(10**12, 1.3, 8), int)  # bytes stay exact ints
    with pytest.raises(SpecError, match="at least 1"):
        busiest_rank_count(4096, 0.9, 8)


def _moe_layer(options: StepOptions, layout: Layout) -> tuple[StagePass, StepContext]:
    arch: Arch = get_model("qwen3-30b-a3b").arch()
    share = DataShare(sequences=1, micro_batch=1, micro_batches=1, tokens_per_sequence=4096)
    c = StepContext.of(arch, layout, 4096, share, Device(get_hardware("h100-sxm")), options,
                       Workload())  # fmt: skip
    return stage_pass(c, PipelineStage(0, 1, 0, 1)), c  # one MoE layer, no head


def test_the_busiest_rank_sets_expert_gemms_and_all_to_all() -> None:
    # Qwen3-30B-A3B, 4096 tokens, EP 8: 4096 x 8 x 8 / 128 = 2048 rows per local expert and
    # 4096 x 8 x 2048 x 2 B = 134 MB per all-to-all on the mean rank; x 1.3 on the busiest
    lay = Layout(dp=8, ep=8, etp=1)
    even, c = _moe_layer(FREE, lay)
    busy, _ = _moe_layer(dataclasses.replace(FREE, moe_rank_imbalance=1.3), lay)
    sent = 4096 * 8 * 2048 * 2
    assert even.fwd["ep"] == pytest.approx(2 * c.comm(Collective.ALL_TO_ALL, sent, 8, ("ep",)))
    a2a = 2 * c.comm(Collective.ALL_TO_ALL, busiest_rank_count(sent, 1.3, 8), 8, ("ep",))
    assert busy.fwd["ep"] == pytest.approx(a2a)
    assert busy.bwd["ep"] == pytest.approx(a2a)
    assert busy.fwd["gemm"] > even.fwd["gemm"] and busy.bwd["gemm"] > even.bwd["gemm"]
    # the busiest rank runs 1.3 x the routed experts' FLOPs (6 x 3 x 2048 x 768 per row)
    rows = 16 * (busiest_rank_count(2048, 1.3, 8) - 2048)
    assert busy.flops - even.flops == 6 * 3 * 2048 * 768 * rows
    assert busy.fwd["attention"] == even.fwd["attention"]  # attention stays at the mean


def test_no_expert_parallelism_no_imbalance() -> None:
    lay = Layout(dp=8, ep=1)
    even, _ = _moe_layer(FREE, lay)
    busy, _ = _moe_layer(dataclasses.replace(FREE, moe_rank_imbalance=1.3), lay)
    assert busy.fwd == even.fwd and busy.bwd == even.bwd and busy.flops == even.flops


def test_a_framework_deployment_with_ep_applies_it() -> None:
    nemo = Deployment(framework="nemo-rl", train={"zero": "1", "ep": 8})
    assert expert_parallel(nemo)
    assert step_options(nemo).moe_rank_imbalance == EP_RANK_IMBALANCE_RATIO.value  # type: ignore[union-attr]
    assert MOE_IMBALANCE_NOTE in worker_notes(nemo, kl=False)
    plain = Deployment(framework="slime", train={"ep": 8})
    assert step_options(plain) == StepOptions(moe_rank_imbalance=EP_RANK_IMBALANCE_RATIO.value,
                                              linear_mixer_replicated=True,  # slime's GDN
                                              grad_reduce_bytes=4)  # its fp32 gradient buffer
    # the paper's idealized run routes evenly; no EP, nothing to apply
    ideal = Deployment(framework="nemo-rl", train={"ep": 8}, ideal=True)
    assert not expert_parallel(ideal) and step_options(ideal) is None
    assert step_options(Deployment(framework="slime")).moe_rank_imbalance == 1.0  # type: ignore[union-attr]
    assert MOE_IMBALANCE_NOTE not in worker_notes(Deployment(framework="nemo-rl"), kl=False)


def test_a_group_bracket_setting_counts() -> None:
    # --groups 'actor+reference=16[tp=2;ep=8]': the group's own EP degree, kept as its settings
    groups = [{"members": "actor+reference", "gpus": 16, "settings": "tp=2;ep=8"},
              {"members": "rollout", "gpus": 16}]  # fmt: skip
    assert expert_parallel(Deployment(framework="nemo-rl", groups=groups))
    groups[0]["settings"] = "tp=2;etp=1"
    assert not expert_parallel(Deployment(framework="nemo-rl", groups=groups))
