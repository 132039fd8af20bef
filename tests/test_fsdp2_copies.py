"""PyTorch FSDP2's copies on the compute stream (perf/data_parallel.py, ``fsdp2_reduce_bytes``).

Source: pytorch/pytorch torch/distributed/_composable/fsdp/_fsdp_collectives.py @01d66d21f:
``foreach_all_gather_copy_out`` (``torch.split_with_sizes_copy`` of the gathered buffer into the
unsharded parameters, on the current stream) and ``foreach_reduce_scatter_copy_in`` (the
unsharded gradients concatenated into the reduce-scatter input, which the current stream waits
for). NeMo AutoModel's ``FSDP2Manager`` reduces in bf16 (nemo_automodel/components/distributed/
fsdp2.py @05656796c)."""

from __future__ import annotations

import copy

import pytest

from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.shard import stages
from rlmcost.perf.data_parallel import zero_per_micro_batch
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_pass import StepContext, StepOptions, stage_param_counts, stage_pass
from rlmcost.perf.validate import gpt_arch, load_table, predict_row
from rlmcost.specs import get_hardware
from rlmcost.specs.workload import Workload


def _pass(options: StepOptions, zero: ZeroStage, dp: int = 8):
    arch = gpt_arch(8, 4096, 32, 51200, 2048)
    layout = Layout(dp=dp, zero=zero, micro_batch=1, ckpt=Checkpointing.FULL)
    share = data_share(layout, 4 * dp, 2048)
    c = StepContext.of(
        arch, layout, 2048, share, Device(get_hardware("h100-sxm")), options, Workload()
    )
    st = stages(arch, 1)[0]
    p = stage_pass(c, st)
    zero_per_micro_batch(c, st, p)
    return c, st, p


def test_copy_out_per_gather_and_copy_in_per_reduce_scatter() -> None:
    c, st, plain = _pass(StepOptions(), ZeroStage.OS_G_P)
    _, _, fsdp2 = _pass(StepOptions(fsdp2_reduce_bytes=2), ZeroStage.OS_G_P)
    n, w, dev = sum(stage_param_counts(c.arch, c.layout, st)), 2, c.device  # bf16 parameters
    # forward: one gather, its copy-out reads the gathered buffer and writes the parameters
    assert fsdp2.fwd["elementwise"] == pytest.approx(
        plain.fwd["elementwise"] + dev.elementwise_s(2 * n * w, st.layers)
    )
    # backward: the gather again (resharded after forward), then the reduce-scatter's copy-in
    # (read the bf16 gradients, write the bf16 reduce-scatter input)
    assert fsdp2.bwd["elementwise"] == pytest.approx(
        plain.bwd["elementwise"] + dev.elementwise_s(4 * n * w, 2 * st.layers)
    )
    assert fsdp2.total_s > plain.total_s


@pytest.mark.parametrize(
    ("zero", "dp"), [(ZeroStage.OS, 8), (ZeroStage.OS_G, 8), (ZeroStage.OS_G_P, 1)]
)
def test_no_copies_without_fsdp_gathers(zero: ZeroStage, dp: int) -> None:
    # ZeRO-1/2 keep whole parameters; one rank gathers nothing
    _, _, plain = _pass(StepOptions(), zero, dp)
    _, _, fsdp2 = _pass(StepOptions(fsdp2_reduce_bytes=2), zero, dp)
    assert fsdp2.total_s == plain.total_s


def test_automodel_rows_use_fsdp2_and_others_do_not() -> None:
    table = load_table()
    for row in table["rows"]:
        assert (row["options"].get("fsdp2_reduce_bytes", 0) == 2) is \
            (row["source"] == "nemo_automodel")  # fmt: skip
    row = next(r for r in table["rows"] if r["id"] == "nemo-automodel-llama3-70b-64gpu")
    plain = copy.deepcopy(row)
    del plain["options"]["fsdp2_reduce_bytes"]
    # Llama-3.1-70B, 4 micro-batches, bf16: 12 B per parameter and micro-batch, > 0.5 s a step
    extra = predict_row(row).step.step_s - predict_row(plain).step.step_s
    assert 0.5 < extra < 2.0
