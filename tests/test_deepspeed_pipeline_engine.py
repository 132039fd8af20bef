"""DeepSpeed's 2021 pipeline engine as the MT-NLG 530B rows run it (Smith et al. 2022).

Sources: deepspeedai/DeepSpeed ``deepspeed/runtime/pipe/schedule.py`` (``TrainSchedule``) and
``deepspeed/runtime/pipe/engine.py`` at commit cd7967d6b (2021-10-09); commit e2fdd254e
(2021-09-29, "Big science related changes") changed ``is_grad_partitioned = False`` to
``self.is_model_parallel``, so the engine of the MT-NLG runs (blog 2021-10-11) sent gradients
whole. Smith et al. 2022 (arXiv 2201.11990) §2.3 for the published iteration times."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule
from rlmcost.parallel.pipeline import in_flight_layer_microbatches
from rlmcost.parallel.shard import stages
from rlmcost.perf.deepspeed_pipe import serial_p2p_s, serial_transfers_extra
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_pass import StepContext, StepOptions, stage_param_counts, stage_pass
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch, load_table, predict_row
from rlmcost.specs import get_hardware
from rlmcost.specs.workload import Workload


def _ds_train_step(step: int, stage: int, stages_: int) -> tuple[int, bool]:
    """``TrainSchedule._step_to_micro_batch`` of schedule.py at cd7967d6b, transcribed:
    (micro-batch id, is_forward) of ``stage`` at ``step``."""
    even_step, even_stage = step % 2 == 0, stage % 2 == 0
    if even_step and even_stage:
        return step // 2 - stage // 2, True
    if not even_step and not even_stage:
        return (step - 1) // 2 - stage // 2, True
    if even_step and not even_stage:
        return step // 2 - stages_ + (stage + 1) // 2, False
    return (step - 1) // 2 - stages_ + 1 + stage // 2, False


@pytest.mark.parametrize(("p", "m"), [(35, 240), (4, 8), (4, 2), (5, 5)])
def test_deepspeed_train_schedule_is_1f1b(p: int, m: int) -> None:
    """DeepSpeed's schedule runs each stage's passes in 1F1B order: min(p - s, m) forwards before
    the first backward (what ``in_flight_layer_microbatches`` says for 1F1B), then strictly
    alternating until the forwards run out, every micro-batch once each way, in
    ``2 (m + p - 1)`` steps (``total_steps`` in ``TrainSchedule.steps``)."""
    for s in range(p):
        ops = []
        for k in range(2 * (m + p - 1)):
            mb, fwd = _ds_train_step(k, s, p)
            if 0 <= mb < m:
                ops.append((mb, fwd))
        assert sorted(ops) == sorted([(i, True) for i in range(m)] + [(i, False) for i in range(m)])
        warm = next(i for i, (_, fwd) in enumerate(ops) if not fwd)
        assert warm == in_flight_layer_microbatches(PipelineSchedule.ONE_F_ONE_B, s, p, m)
        steady = ops[warm - 1 : warm - 1 + 2 * (m - warm + 1)]
        assert [fwd for _, fwd in steady] == [True, False] * (m - warm + 1)


def _ds_commands(s: int, p: int, m: int) -> list[tuple[str, int, int]]:
    """``TrainSchedule.steps`` of stage ``s`` at cd7967d6b: (op, peer stage, micro-batch) in
    order; the p2p ops in the order the schedule yields them."""
    ops: list[tuple[str, int, int]] = []
    prev = -1
    for k in range(2 * (m + p - 1)):
        mb, fwd = _ds_train_step(k, s, p)
        if fwd and s > 0:
            ops += [("recv_act", s - 1, mb)] if 0 <= mb < m else []
            ops += [("send_grad", s - 1, prev)] if 0 <= prev < m else []
        elif not fwd and s < p - 1:
            ops += [("send_act", s + 1, prev)] if 0 <= prev < m else []
            ops += [("recv_grad", s + 1, mb)] if 0 <= mb < m else []
        ops += [("F" if fwd else "B", s, mb)] if 0 <= mb < m else []
        prev = mb
    return ops


def _replay(p: int, m: int, tf: float, tb: float, c_act: float = 0, c_grad: float = 0) -> float:
    """Makespan of ``_ds_commands`` on every stage, each run strictly in order: p2p.send/recv
    (p2p.py @cd7967d6b lines 48-86, ``async_op`` False) block until both sides reach them
    (rendezvous), then hold both for the transfer (``c_act`` an activation, ``c_grad`` a
    gradient); a forward takes ``tf``, a backward ``tb``."""
    pair = {"recv_act": "send_act", "send_act": "recv_act"}
    pair |= {"recv_grad": "send_grad", "send_grad": "recv_grad"}
    ops = [_ds_commands(s, p, m) for s in range(p)]
    at, clock = [0] * p, [0.0] * p
    moved = True
    while moved:
        moved = False
        for s in range(p):
            while at[s] < len(ops[s]):
                op, peer, mb = ops[s][at[s]]
                if op in ("F", "B"):
                    clock[s] += tf if op == "F" else tb
                elif at[peer] < len(ops[peer]) and ops[peer][at[peer]] == (pair[op], s, mb):
                    hold = c_act if op.endswith("act") else c_grad
                    clock[s] = clock[peer] = max(clock[s], clock[peer]) + hold
                    at[peer] += 1
                else:
                    break
                at[s] += 1
                moved = True
    assert at == [len(o) for o in ops]  # no deadlock
    return max(clock)


@pytest.mark.parametrize(("p", "m", "tf", "tb"), [(35, 240, 1, 3), (8, 32, 1, 2), (4, 3, 2, 5)])
def test_deepspeed_blocking_p2p_keeps_the_1f1b_makespan(p: int, m: int, tf: int, tb: int) -> None:
    """With free transfers the schedule ends at (m + p - 1)(t_f + t_b), the 1F1B time whose
    bubble is (p - 1)/m (Narayanan et al. 2021 §2.2): no 2 (p - 1) fill and drain."""
    assert _replay(p, m, tf, tb) == (m + p - 1) * (tf + tb)


@pytest.mark.parametrize("p", [2, 3, 4, 5, 9, 35])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 7, 160, 240])
def test_deepspeed_serial_p2p_puts_both_sides_on_the_critical_path(p: int, m: int) -> None:
    """A stage waits out RecvActivation then SendGrad, SendActivation then RecvGrad one after
    the other (schedule.py @cd7967d6b lines 205-219): the replay's transfers on the critical path
    are ``m + p - 1 + serial_transfers_extra`` of each kind (2 m + p - 4 for p >= 3, m >= 2),
    whatever t_f / t_b; one transfer time 1/64 keeps the sums exact in binary."""
    priced = m + p - 1 + serial_transfers_extra(p, m)
    for tf, tb in ((1, 3), (2, 3)):
        base = (m + p - 1) * (tf + tb)
        assert _replay(p, m, tf, tb, c_act=1 / 64) == base + priced / 64
        assert _replay(p, m, tf, tb, c_grad=1 / 64) == base + priced / 64
    assert priced == (m if p == 2 else (p - 1 if m == 1 else 2 * m + p - 4))
    if p >= 3 and m > 3:
        assert serial_transfers_extra(p, m) == m - 3 > 0  # grows with m: no intercept


def _pass(options: StepOptions, tp: int = 8):
    arch = gpt_arch(8, 4096, 32, 51200, 2048)
    layout = Layout(tp=tp, pp=4, dp=1, micro_batch=1, ckpt=Checkpointing.FULL)
    share = data_share(layout, 16, 2048)
    device = Device(get_hardware("a100-80gb"))
    c = StepContext.of(arch, layout, 2048, share, device, options, Workload())
    st = stages(arch, 4)[1]  # a middle stage
    return c, st, stage_pass(c, st)


def test_whole_gradient_sends_cost_the_full_activation_over_the_nic() -> None:
    c, _, split = _pass(StepOptions())
    _, _, whole = _pass(StepOptions(pp_grad_scatter_gather=False))
    act = c.tokens * int(c.arch.d_model) * c.workload.activation_dtype.bytes
    # engine.py: partitioned activations forward either way (1/t + all-gather) ...
    assert whole.fwd["pp"] == split.fwd["pp"]
    # ... backward: all-gather of the output (_exec_recv_grads) + the whole gradient's p2p
    extra = c.comm(Collective.P2P, act, 2, ("pp",)) - c.comm(Collective.P2P, act / 8, 2, ("pp",))
    assert whole.bwd["pp"] == pytest.approx(split.bwd["pp"] + extra, rel=1e-12)
    assert extra > 0
    # without TP there is nothing to partition: the option changes nothing
    assert _pass(StepOptions(pp_grad_scatter_gather=False), tp=1)[2].bwd["pp"] == pytest.approx(
        _pass(StepOptions(), tp=1)[2].bwd["pp"]
    )


def test_fp16_grad_accumulation_moves_6_bytes_per_parameter() -> None:
    # DeepSpeed fp16: autograd adds the new 16-bit gradient into the 16-bit param.grad
    # (read 2 + 2, write 2); Megatron-LM's unfused fp32 main grads: read 2 + 4, write 4
    c, st, fused = _pass(StepOptions())
    _, _, fp32 = _pass(StepOptions(fused_grad_accumulation=False))
    _, _, fp16 = _pass(StepOptions(fused_grad_accumulation=False, main_grad_bytes=2))
    n = sum(stage_param_counts(c.arch, c.layout, st))
    dev = c.device
    base = fused.bwd["elementwise"]
    assert fp32.bwd["elementwise"] == pytest.approx(base + dev.elementwise_s(n * 10))
    assert fp16.bwd["elementwise"] == pytest.approx(base + dev.elementwise_s(n * 6))


def test_mtnlg_rows_use_the_deepspeed_engine_and_megatron_rows_keep_theirs() -> None:
    table = load_table()
    smith = [r for r in table["rows"] if r["source"] == "smith2022"]
    assert len(smith) == 3  # Smith et al. 2022 §2.3: 280 / 350 / 420 DGX A100 nodes
    for row in smith:
        assert row["options"]["pp_grad_scatter_gather"] is False
        assert row["options"]["main_grad_bytes"] == 2
        megatron_way = copy.deepcopy(row)
        del megatron_way["options"]["pp_grad_scatter_gather"]
        del megatron_way["options"]["main_grad_bytes"]
        ds, meg = predict_row(row).step, predict_row(megatron_way).step
        assert ds.exposed_comm_s["pp"] > meg.exposed_comm_s["pp"]  # whole gradients
        assert ds.compute_s["elementwise"] < meg.compute_s["elementwise"]  # 6 B, not 10 B
    # Megatron-LM's own rows set neither option: the 530B row (Narayanan et al. 2021 Table 1,
    # 163 TFLOP/s) stays within 2 %
    for row in table["rows"]:
        if row["source"] != "smith2022":
            assert "pp_grad_scatter_gather" not in row["options"]
    meg_row = next(r for r in table["rows"] if r["id"] == "narayanan2021-529.6b")
    assert abs(predict_row(meg_row).error) < 0.02


def _stage_passes(options: StepOptions, ckpt: Checkpointing = Checkpointing.FULL):
    arch = gpt_arch(8, 4096, 32, 51200, 2048)
    layout = Layout(tp=8, pp=4, dp=1, micro_batch=1, ckpt=ckpt)
    share = data_share(layout, 16, 2048)
    c = StepContext.of(
        arch, layout, 2048, share, Device(get_hardware("a100-80gb")), options, Workload()
    )
    return c, [stage_pass(c, st) for st in stages(arch, 4)]


def test_pipeline_module_checkpoints_the_embedding_and_the_head() -> None:
    # deepspeed/runtime/pipe/module.py @4ad8019cd, _is_checkpointable: a class not named
    # GPT2ModelPipe (Megatron-DeepSpeed's GPTModelPipe, gpt_model.py @8a132ced) checkpoints every
    # layer with parameters: the tied embedding (first stage) and the final norm + LM head (last)
    c, base = _stage_passes(StepOptions())
    _, ds = _stage_passes(StepOptions(checkpoint_embeddings=True))
    dev, T, d, v = c.device, c.tokens, int(c.arch.d_model), int(c.arch.vocab) // 8
    head_fwd = dev.gemm_s(T, v, d)
    norm = dev.elementwise_s(T * 2 * d * c.workload.activation_dtype.bytes)
    last, first = -1, 0
    assert ds[last].bwd["recompute"] == pytest.approx(base[last].bwd["recompute"] + head_fwd + norm)
    assert ds[last].flops - base[last].flops == 2 * T * v * d  # one more [T, V/t, d] GEMM
    assert ds[last].fwd_s == base[last].fwd_s
    ar = c.comm(Collective.ALL_REDUCE, T * d * c.workload.activation_dtype.bytes, 8, ("tp",))
    assert ds[first].bwd["tp"] == pytest.approx(base[first].bwd["tp"] + ar)  # the lookup again
    assert ds[first].flops == base[first].flops
    for mid in (1, 2):  # transformer layers only: recomputed either way
        assert ds[mid].total_s == base[mid].total_s
    # only full recomputation checkpoints layers; selective (attention core) leaves them alone
    for ckpt in (Checkpointing.SELECTIVE, Checkpointing.NONE):
        _, a = _stage_passes(StepOptions(), ckpt)
        _, b = _stage_passes(StepOptions(checkpoint_embeddings=True), ckpt)
        assert [p.total_s for p in a] == [p.total_s for p in b]


def test_mtnlg_rows_recompute_the_head_and_megatron_rows_do_not() -> None:
    table = load_table()
    for row in table["rows"]:
        assert row["options"].get("checkpoint_embeddings", False) is (row["source"] == "smith2022")
    row = next(r for r in table["rows"] if r["source"] == "smith2022")
    plain = copy.deepcopy(row)
    del plain["options"]["checkpoint_embeddings"]
    ds, meg = predict_row(row).step, predict_row(plain).step
    # the head's forward once more for every sequence: 2 d V per token (V = 51200, d = 20480)
    m = row["model"]
    head = 2 * m["hidden"] * m["vocab"] * row["batch"] * m["seq"]
    assert ds.hardware_flops - meg.hardware_flops == head
    assert ds.model_flops == meg.model_flops
    assert ds.slowest_stage == row["layout"]["pp"] - 1 and ds.step_s > meg.step_s


def test_serial_p2p_adds_the_extra_transfers_to_the_step() -> None:
    # the replay's extra (m - 3 of each kind at p = 4, m = 16) times one activation p2p (1/8
    # of [T, d] fp16) plus one whole-gradient p2p, both over the NIC between nodes
    arch = gpt_arch(8, 4096, 32, 51200, 2048)
    layout = Layout(tp=8, pp=4, dp=1, micro_batch=1, ckpt=Checkpointing.FULL)
    hw = get_hardware("a100-80gb")
    ds = StepOptions(pp_grad_scatter_gather=False, checkpoint_embeddings=True)
    off = train_step_time(arch, layout, 16, 2048, hw, options=ds)
    on = train_step_time(arch, layout, 16, 2048, hw, options=replace(ds, pp_serial_p2p=True))
    c, _, _ = _pass(ds)
    act = 2048 * 4096 * 2
    each = c.comm(Collective.P2P, act / 8, 2, ("pp",)) + c.comm(Collective.P2P, act, 2, ("pp",))
    assert on.micro_batches == 16 and serial_transfers_extra(4, 16) == 13
    assert on.step_s - off.step_s == pytest.approx(13 * each, rel=1e-12)
    assert on.exposed_comm_s["pp"] - off.exposed_comm_s["pp"] == pytest.approx(13 * each)
    assert on.bubble_s == off.bubble_s and on.compute_s == off.compute_s
    assert serial_p2p_s(c, 16) == 0.0  # the option off: Megatron-LM's batched send/recv
    inter = replace(layout, virtual_stages=2, schedule=PipelineSchedule.INTERLEAVED)
    with pytest.raises(SpecError, match="virtual_stages=2 must be 1"):
        train_step_time(arch, inter, 16, 2048, hw, options=replace(ds, pp_serial_p2p=True))


def test_only_the_mtnlg_rows_run_serial_p2p() -> None:
    table = load_table()
    for row in table["rows"]:
        assert row["options"].get("pp_serial_p2p", False) is (row["source"] == "smith2022")
    for row in (r for r in table["rows"] if r["source"] == "smith2022"):
        plain = copy.deepcopy(row)
        del plain["options"]["pp_serial_p2p"]
        ds, meg = predict_row(row).step, predict_row(plain).step
        # 1920 / d micro-batches (d = 8, 10, 12), extra m - 3 transfer pairs of ~4 ms each
        assert 0.5 < ds.step_s - meg.step_s < 1.5
        assert ds.bubble_s == meg.bubble_s
