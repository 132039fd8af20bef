"""Multi-token prediction in `rlmcost train` (perf.mtp_pass; memory placement.mtp.block_bytes).

Sources: Megatron-core megatron/core/transformer/multi_token_prediction.py @d98e8a64 (each depth
an hnorm/enorm, the [2d -> d] eh_proj, one layer of the model's last layer's shape and the
shared head with a loss, on the last pipeline stage); DeepSeek-V3 report arXiv 2412.19437 §2.2.
FLOPs by hand: a GEMM [m, n, k] is 2 m n k forward and twice that backward."""

import pytest

from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import stages
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_options import StepOptions
from rlmcost.perf.step_pass import StepContext, stage_pass
from rlmcost.placement.mtp import block_bytes
from rlmcost.reports.train import train_report
from rlmcost.specs import Workload, get_hardware, get_model

SEQ, BATCH = 4096, 8


def _last_stage_flops(arch, layout: Layout, options: StepOptions) -> int:
    share = data_share(layout, BATCH, SEQ)
    c = StepContext.of(arch, layout, SEQ, share, Device(get_hardware("h100")), options,
                       Workload())  # fmt: skip
    return stage_pass(c, stages(arch, layout)[-1]).flops


def test_each_depth_adds_one_layer_the_projection_and_the_head_by_hand() -> None:
    arch = get_model("llama-3.1-8b").arch()
    layout = Layout(dp=8)
    base = _last_stage_flops(arch, layout, StepOptions())
    two = _last_stage_flops(arch, layout, StepOptions(mtp_layers=2))
    # one main-model layer's FLOPs on the rank: a two-layer model less a one-layer model
    layer = (_last_stage_flops(arch.with_(n_layers=2), layout, StepOptions())
             - _last_stage_flops(arch.with_(n_layers=1), layout, StepOptions()))  # fmt: skip
    tokens = data_share(layout, BATCH, SEQ).tokens_per_micro_batch
    d, v = 4096, 128256
    by_hand = 3 * 2 * tokens * d * 2 * d + 3 * 2 * tokens * v * d  # eh_proj, head
    assert two - base == 2 * (layer + by_hand)
    detached = _last_stage_flops(arch, layout, StepOptions(mtp_layers=2, mtp_detach_heads=True))
    assert two - detached == 2 * 2 * tokens * v * d  # no head weight gradient


def test_the_block_sits_on_the_last_stage_only() -> None:
    arch = get_model("llama-3.1-8b").arch()
    layout = Layout(dp=2, pp=4)
    share = data_share(layout, BATCH, SEQ)
    dev = Device(get_hardware("h100"))
    flops = {}
    for mtp in (0, 1):
        c = StepContext.of(arch, layout, SEQ, share, dev, StepOptions(mtp_layers=mtp),
                           Workload())  # fmt: skip
        flops[mtp] = [stage_pass(c, st).flops for st in stages(arch, layout)]
    assert flops[1][:-1] == flops[0][:-1] and flops[1][-1] > flops[0][-1]


def test_train_report_prices_time_and_last_stage_memory() -> None:
    from rlmcost.compiled.memory import memory_per_stage
    from rlmcost.parallel.breakdown import Mode

    model, layout = get_model("llama-3.1-8b"), Layout(dp=2, pp=4)
    base = train_report(model, layout, "h100", 8, SEQ, BATCH)
    mtp = train_report(model, layout, "h100", 8, SEQ, BATCH, options=StepOptions(mtp_layers=1))
    assert mtp.step.step_s > base.step.step_s
    assert any("multi-token prediction" in n for n in mtp.notes)
    added = block_bytes(model.arch(), layout, 1, False, True, BATCH, SEQ, Workload())
    last = memory_per_stage(model.arch(), layout, Mode.TRAIN, BATCH, SEQ, Workload())[-1]
    # the last stage gains exactly the block's bytes and becomes the peak
    assert mtp.memory_stage == 3
    assert mtp.memory.total == last.total + added.total
    assert added.weights > 0 and added.gradients > 0 and added.optimizer > 0


def test_repeated_holds_one_module_and_detached_heads_run_faster() -> None:
    arch, layout = get_model("llama-3.1-8b").arch(), Layout(dp=8)
    two = block_bytes(arch, layout, 2, False, True, BATCH, SEQ, Workload())
    rep = block_bytes(arch, layout, 2, True, True, BATCH, SEQ, Workload())
    assert rep.weights < two.weights and rep.activations == two.activations
    model = get_model("llama-3.1-8b")
    a = train_report(model, layout, "h100", 8, SEQ, BATCH, options=StepOptions(mtp_layers=1))
    b = train_report(model, layout, "h100", 8, SEQ, BATCH,
                     options=StepOptions(mtp_layers=1, mtp_detach_heads=True))  # fmt: skip
    assert b.step.step_s < a.step.step_s


def test_a_model_of_mixed_layers_is_refused_with_the_flag_named() -> None:
    with pytest.raises(SpecError, match="--mtp-layers"):
        train_report(get_model("gemma-2-2b"), Layout(dp=8), "h100", 8, SEQ, BATCH,
                     options=StepOptions(mtp_layers=1))  # fmt: skip


def test_the_cli_takes_the_flags() -> None:
    from typer.testing import CliRunner

    from rlmcost.cli import app

    args = ["train", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8", "--json"]
    out = CliRunner().invoke(app, [*args, "--mtp-layers", "1"])
    assert out.exit_code == 0, out.output
    assert "multi-token prediction" in out.output


def _tp_seconds(arch, layout: Layout, mtp: int) -> tuple[float, float]:
    """(forward, backward) TP (or SP) seconds of the last stage's micro-batch."""
    part = "sp" if layout.sp else "tp"
    c = StepContext.of(arch, layout, SEQ, data_share(layout, BATCH, SEQ),
                       Device(get_hardware("h100")), StepOptions(mtp_layers=mtp), Workload())
    p = stage_pass(c, stages(arch, layout)[-1])
    return p.fwd[part], p.bwd[part]


@pytest.mark.parametrize("sp", [False, True])
def test_under_tp_each_depth_adds_its_collectives(sp: bool) -> None:
    """multi_token_prediction.py _concat_embeddings @d98e8a64: eh_proj's output is gathered
    over TP; its input and the head's are column-parallel (SP: gathered forward,
    reduce-scattered backward), beyond the layer's own collectives."""
    arch, layout = get_model("llama-3.1-8b").arch(), Layout(dp=4, tp=2, sp=sp)
    base, mtp = _tp_seconds(arch, layout, 0), _tp_seconds(arch, layout, 1)
    two = _tp_seconds(arch.with_(n_layers=2), layout, 0)
    one = _tp_seconds(arch.with_(n_layers=1), layout, 0)
    for side in (0, 1):  # the depth's own: more than its layer's (two layers less one)
        assert mtp[side] - base[side] > two[side] - one[side] > 0
