"""torch.distributed.pipelining's per-micro-batch stage buffers (``--pp-stage-buffers``,
rlmcost/parallel/framework_memory.py) and the last rank's head inputs under interleaving.

Independent checks: the closed form against a replay of torch's Schedule1F1B and
ScheduleGPipe action order (torch/distributed/pipelining/schedules.py, v2.6.0: warm-up
``min(m, p - s)`` forwards, then one backward and one forward, then the cool-down backwards)
counting the tensors stage.py keeps (every output in ``output_chunks`` until the next step, one
receive buffer per micro-batch and its ``.grad`` after its backward, one gradient buffer per
micro-batch); Llama-3.1-405B's bytes by hand from its published shapes (meta-llama/
Llama-3.1-405B config.json: d 16,384, vocab 128,256); the reference and compiled memory models
equal with the flag.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled.memory import memory_per_stage as fast
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.framework_memory import pp_stage_buffer_counts
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.memory import memory_per_stage as reference
from rlmcost.specs import get_model


def _replay(p: int, m: int, s: int, gpipe: bool) -> tuple[int, int]:
    """(hidden states, extra logits) stage ``s`` holds at its activation peak, counted from
    torch's action order: the last backward that runs with the most micro-batches in flight."""
    warm = m if gpipe else min(m, p - s)
    order = ["F"] * warm
    while len([a for a in order if a == "F"]) < m:
        order += ["B", "F"]
    order += ["B"] * (m - order.count("B"))
    first, last = s == 0, s == p - 1
    fwd = bwd = 0
    best = None
    for act in order:
        if act == "F":
            fwd += 1
            continue
        in_flight = fwd - bwd  # the backward about to run sees these saved
        outputs, grads = fwd, bwd  # kept outputs; input gradients of the backwards done
        recv_idle = 0 if first else m - in_flight  # receive buffers not holding a saved input
        hidden = (0 if last else outputs + m) + recv_idle + (0 if first else grads)
        logits = outputs - 1 if last else 0  # the running one is the loss term's
        if best is None or in_flight >= best[0]:
            best = (in_flight, hidden, logits)
        bwd += 1
    assert best is not None
    return best[1], best[2]


@pytest.mark.parametrize("gpipe", [False, True])
@pytest.mark.parametrize("p", [2, 3, 4, 8])
@pytest.mark.parametrize("m", [1, 2, 3, 8, 12])
def test_counts_replay_torch_schedules(p: int, m: int, gpipe: bool) -> None:
    for s in range(p):
        chunks = m if gpipe else min(m, p - s)
        assert pp_stage_buffer_counts(m, 1, chunks, s == 0, s == p - 1) == _replay(p, m, s, gpipe)


_L405 = ("-m llama-3.1-405b -H h100-hbm2e-500w --gpus 512 --tp 8 --pp 8 --sp --zero 3 --ckpt "
         "full --seq 8192 --micro-batch 4 --batch 256 --loss-logits upcast --pp-fsdp-gathered")


def _lay(**kw: object) -> Layout:
    return Layout(dp=8, tp=8, pp=8, sp=True, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.FULL,
                  micro_batch=4, loss_upcast=True, pp_fsdp_gathered=True, **kw)  # type: ignore[arg-type]


def test_405b_1f1b_by_hand() -> None:
    """Table 5's 1F1B run (8 micro-batches of 4 x 8,192 tokens): a hidden state is 32,768
    tokens x 16,384 / 8 in bf16 (128 MiB), a micro-batch's logits 32,768 x 128,256 / 8 in bf16;
    the first rank keeps 8 outputs and 8 gradient buffers, the second 1 idle receive buffer
    and 1 input gradient more, the last 7 idle receive buffers, 7 input gradients and the 7
    earlier micro-batches' logits."""
    arch = get_model("llama-3.1-405b").arch()
    lay = _lay(pp_first_layers=15, pp_last_layers=15)
    off = fast(arch, lay, Mode.TRAIN, 256, 8192)
    on = fast(arch, lay.with_(pp_stage_buffers=True), Mode.TRAIN, 256, 8192)
    hidden, logits = 32_768 * 16_384 // 8 * 2, 32_768 * 128_256 // 8 * 2
    for s, n in ((0, 16), (1, 18), (7, 14)):
        assert on[s].buffers - off[s].buffers == n * hidden
    assert on[7].logits - off[7].logits == 7 * logits
    assert (on[0].logits, on[0].activations) == (0, off[0].activations)
    assert max(b.total for b in on) == on[7].total  # the last rank is the peak now


def test_interleaved_last_rank_keeps_one_micro_batchs_head_inputs() -> None:
    """Interleaved, 2 stages a rank (7 + 8 x 14 + 7 layers): rank 7 holds 9 chunk-forwards
    (4.5 micro-batches of its 15 layers' inputs, 4,096 B a token and layer) but the final norm's
    input (4,096 B a token) and the head's gathered input (32,768 B) of one micro-batch."""
    arch = get_model("llama-3.1-405b").arch()
    lay = _lay(schedule=PipelineSchedule.INTERLEAVED, virtual_stages=2,
               pp_layout="Et*7|(t*8|)*14t*7L")  # fmt: skip
    one_f1b = fast(arch, _lay(pp_first_layers=15, pp_last_layers=15), Mode.TRAIN, 256, 8192)[7]
    rank7 = fast(arch, lay, Mode.TRAIN, 256, 8192)[7]
    tokens = 32_768  # both: 15 layers, one rebuilt for one micro-batch, the head once
    assert rank7.activations - one_f1b.activations == tokens * (9 * 15 * 4_096 // 2 - 15 * 4_096)


@pytest.mark.parametrize("lay", [
    Layout(dp=2, pp=2, zero=ZeroStage.OS_G_P, pp_fsdp_gathered=True, pp_stage_buffers=True,
           loss_upcast=True, micro_batch=2),
    Layout(dp=2, pp=4, tp=2, sp=True, ckpt=Checkpointing.FULL, pp_stage_buffers=True,
           micro_batch=1),
    Layout(dp=1, pp=4, tp=2, schedule=PipelineSchedule.INTERLEAVED, virtual_stages=2,
           pp_stage_buffers=True, ckpt=Checkpointing.FULL, loss_upcast=True),
    Layout(dp=2, pp=4, schedule=PipelineSchedule.GPIPE, pp_stage_buffers=True),
    Layout(dp=2, pp=4, schedule=PipelineSchedule.ZERO_BUBBLE, pp_stage_buffers=True, cp=2),
])  # fmt: skip
def test_reference_and_compiled_agree(lay: Layout) -> None:
    arch = get_model("llama-3.1-8b").arch()
    assert reference(arch, lay, Mode.TRAIN, 16, 4096) == fast(arch, lay, Mode.TRAIN, 16, 4096)


def test_refusals() -> None:
    arch = get_model("llama-3.1-8b").arch()
    with pytest.raises(SpecError, match="--pp-stage-buffers .* --pp > 1"):
        fast(arch, Layout(dp=2, pp_stage_buffers=True), Mode.TRAIN, 2, 1024)
    res = CliRunner().invoke(app, ["train", "-m", "llama-3.1-8b", "--pp-stage-buffers"])
    assert res.exit_code == 2 and "--pp > 1" in res.output and "Traceback" not in res.output


def test_the_rows_flag_reaches_the_cli() -> None:
    """The 405B rows' command with the flag prices what the library does."""
    import json
    import shlex

    res = CliRunner().invoke(app, ["train", *shlex.split(_L405), "--pp-first-layers", "15",
                                   "--pp-last-layers", "15", "--pp-stage-buffers", "--json"])
    assert res.exit_code == 0, res.output
    arch = get_model("llama-3.1-405b").arch()
    lay = _lay(pp_first_layers=15, pp_last_layers=15, pp_stage_buffers=True)
    want = fast(arch, lay, Mode.TRAIN, 256, 8192)[7]
    assert json.loads(res.output)["memory_per_rank_bytes"]["total"] == want.total
