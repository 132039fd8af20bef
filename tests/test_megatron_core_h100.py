"""Megatron-Core's H100 weak-scaling rows (issue 18) and the tp-comm-overlap term they need."""

from __future__ import annotations

import pytest

from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import stages
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_pass import StepContext, StepOptions, stage_pass
from rlmcost.perf.tp_overlap import overlap_tp_comm
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch, load_table, published_flops, validate
from rlmcost.specs import Workload, get_hardware

README_COMMIT = "f2e5db402"  # NVIDIA/Megatron-LM README, 'New scaling figures on H100 GPUs'
H100 = get_hardware("h100-sxm")
# NVIDIA/Megatron-LM README @f2e5db402, images/model_table.png: (TFLOP/s per GPU, MFU %)
TABLE = {
    "1.7b": (408.8, 41), "7.1b": (465.9, 47), "16b": (489.1, 49), "32b": (459.6, 46),
    "70b": (419.7, 42), "119b": (420.5, 43), "177b": (432.8, 44), "314b": (474.4, 48),
    "462b": (459.9, 47),
}  # fmt: skip


def _rows() -> dict[str, dict]:
    rows = [r for r in load_table()["rows"] if r["source"] == "megatron_core_h100"]
    return {r["id"].removeprefix("megatron-core-h100-gpt-"): r for r in rows}


def test_rows_are_the_readme_table_and_bf16():
    rows = _rows()
    assert set(rows) == set(TABLE)
    for name, (tflops, mfu) in TABLE.items():
        r = rows[name]
        assert r["published"] == tflops and README_COMMIT in r["cite"]
        assert f"{tflops} per-GPU teraFLOP/s, MFU {mfu}%" in r["cite"]
        lay = r["layout"]
        assert lay["dp"] == 48 and lay["sp"] == (lay["tp"] > 1) and r["dtype"] == "bf16"
        # the BF16 assumption: the README's MFU is its TFLOP/s over the 989 TFLOP/s dense
        # BF16 peak of the H100 SXM datasheet, rounded to a percent (an FP8 run would be 2x off)
        mfu_pct = 100 * tflops * 1e12 / H100.peak_flops_per_s[r["dtype"]]
        assert mfu_pct == pytest.approx(mfu, abs=0.6)


def test_model_sizes_are_untied_parameter_counts():
    # images/model_table.png's 'Model size' column (1.7B ... 462B, the rows' setup) is the
    # parameter count with a separate output layer (12 l h^2 + 2 V h, biases, norms and learned
    # positions), not the tied one: nearer for every row, within 3.2 % (1.75e9 printed as
    # '1.7B') where the tied count is up to 12.6 % off (7.1B: 7.13e9 untied, 6.60e9 tied)
    from rlmcost.compiled.blocks import params

    for name, r in _rows().items():
        m = r["model"]
        assert m["tie_embeddings"] is False
        size = float(name.removesuffix("b")) * 1e9
        shape = (m["layers"], m["hidden"], m["heads"], m["vocab"], m["seq"])
        untied = params(gpt_arch(*shape, tie_embeddings=False))
        tied = params(gpt_arch(*shape, tie_embeddings=True))
        assert abs(untied / size - 1) < 0.032, name
        assert abs(untied / size - 1) < abs(tied / size - 1), name
        assert untied - tied == m["vocab"] * m["hidden"]


def test_metric_is_megatrons_num_floating_point_operations():
    # megatron/training/training.py @f2e5db402: 12 B s l h^2 ((1 + g/a + s/h) q/h
    # + (f/h) k m + V / (2 l h)), with g = a (no GQA), q = h, k = 1 (dense), m = 1 (GeLU)
    for r in _rows().values():
        m, b = r["model"], r["batch"]
        s, n, h, v = m["seq"], m["layers"], m["hidden"], m["vocab"]
        megatron = 12 * b * s * n * h * h * ((1 + 1 + s / h) + 4 + v / (2 * n * h))
        ours = published_flops(r["metric"], b, s, n, h, v)
        assert ours == pytest.approx(megatron, rel=1e-12)


def _pass(tp_comm_overlap: bool):
    arch = gpt_arch(8, 4096, 32, 32000, 2048)
    lay = Layout(tp=8, sp=True)
    share = data_share(lay, 4, 2048)
    dev = Device(H100, Workload().compute_dtype)
    opts = StepOptions(tp_comm_overlap=tp_comm_overlap)
    c = StepContext.of(arch, lay, 2048, share, dev, opts, Workload())
    (st,) = stages(arch, 1)
    p = stage_pass(c, st)
    return c, p


def test_tp_comm_overlap_hides_sp_behind_each_sides_gemms():
    # rlmcost.perf.tp_overlap: exposed_sp = max(0, sp - gemm) per side (TE userbuffers), plus
    # TransformerEngine v1.7's defaults (module/base.py initialize_ub, csrc/
    # comm_gemm_overlap.h): the pipelined reduce-scatter's last of 4 chunks exposed, and 16 of
    # the 132 SMs held by the bulk / pipeline kernels (ring exchanges on copy engines)
    c, p = _pass(True)
    (st,) = stages(c.arch, 1)
    before = {k: (dict(p.fwd)[k], dict(p.bwd)[k]) for k in ("sp", "gemm")}
    assert before["sp"][0] > 0  # TP 8 with SP: the pass has all-gathers and reduce-scatters
    overlap_tp_comm(c, st, p)
    act = 2048 * 4096 * 2  # one sequence of 2048 tokens, hidden 4096, bf16
    ag = c.comm(Collective.ALL_GATHER, act, 8, ("tp",))
    rs = c.comm(Collective.REDUCE_SCATTER, act, 8, ("tp",))
    pairs, share = 2 * 8, 16 / 132  # two GEMM pairs in each of the 8 layers
    hidden_f = max(0.0, before["sp"][0] - before["gemm"][0])
    hidden_b = max(0.0, before["sp"][1] - before["gemm"][1])
    assert p.fwd["sp"] == pytest.approx(hidden_f + pairs * rs / 4 + share * pairs * rs)
    assert p.bwd["sp"] == pytest.approx(hidden_b + share * pairs * (ag + rs))
    assert p.fwd["sp"] < before["sp"][0] and p.bwd["sp"] < before["sp"][1]  # still a gain
    assert p.fwd["gemm"] == before["gemm"][0]  # the GEMMs themselves are not changed
    off_c, off_p = _pass(False)
    sp = off_p.fwd["sp"]
    overlap_tp_comm(off_c, st, off_p)
    assert off_p.fwd["sp"] == sp  # flag off: nothing hidden


def test_tp_comm_overlap_needs_sequence_parallelism():
    arch = gpt_arch(8, 4096, 32, 32000, 2048)
    on, off = StepOptions(tp_comm_overlap=True), StepOptions()
    lay = Layout(tp=8, sp=False)  # Megatron-core refuses --tp-comm-overlap without SP
    a = train_step_time(arch, lay, 4, 2048, H100, options=on)
    b = train_step_time(arch, lay, 4, 2048, H100, options=off)
    assert a.step_s == b.step_s and a.exposed_comm_s["tp"] > 0
    sp = Layout(tp=8, sp=True)
    assert train_step_time(arch, sp, 4, 2048, H100, options=on).step_s < train_step_time(
        arch, sp, 4, 2048, H100, options=off
    ).step_s


def test_h100_rows_are_predicted_fast_most_at_small_hidden():
    # The finding the rows record (issue 18): with the README's overlaps (TE userbuffers'
    # defaults, perf.tp_overlap), Megatron's unfused cross-entropy, the dropout run's pre-FA3
    # attention, the fp32 gradient reduce, Hopper's per-tile GEMM cost
    # (efficiency.HOPPER_GEMM_K_OVERHEAD) and Megatron-LM's loop (perf.megatron_loop)
    # modelled, the 1.7B and 7.1B rows (hidden 2048-4096, all compute) are still 15-17 %
    # fast, where the A100 rows of the same code base (narayanan2021, korthikanti2022) are
    # within 7 %; the 32B row (TP 8, the largest DP exposure: its fp32 reduce-scatter over
    # one NIC per rank) is 17 % slow at the assumed micro-batch 1, which its published figure
    # does not allow (test_32b_row_at_micro_batch_1_needs_compute_beyond_any_rows); the others
    # within 6 %. A change that moves these rows must say why.
    rows = validate("megatron_core_h100").rows
    got = {r.id.removeprefix("megatron-core-h100-gpt-"): r for r in rows}
    assert -0.20 < got["32b"].error < -0.10
    small = min(got["1.7b"].error, got["7.1b"].error)
    assert small > 0.10
    assert all(abs(r.error) < 0.06 for k, r in got.items() if k not in ("1.7b", "7.1b", "32b"))
    assert max(r.error for r in got.values()) < 0.20


def test_attention_dropout_on_hopper_runs_at_flashattention2_speed():
    # FlashAttention-3 (arXiv 2407.08608), abstract: FlashAttention-2 "achieves only 35%
    # utilization on the H100 GPU"; FA3 has no dropout (Dao-AILab/flash-attention
    # hopper/flash_attn_interface.py @01afd16d: no dropout_p), so the README's attention
    # dropout 0.1 runs a pre-FA3 kernel. FlashAttention-2 (A100) applies dropout in-kernel.
    h100 = Device(H100)
    assert h100.defaults.flash_attention_efficiency == 0.55
    assert h100.defaults.fa2_attention_efficiency == 0.35
    flops = 1e12
    plain, drop = h100.flash_attention_s(flops, True), h100.flash_attention_s(flops, True, True)
    gap = h100.defaults.kernel_gap_s
    assert (drop - gap) / (plain - gap) == pytest.approx(0.55 / 0.35, rel=1e-12)
    a100 = Device(get_hardware("a100-80gb"))
    assert a100.flash_attention_s(flops, False, True) == a100.flash_attention_s(flops, False)
    # the training pass reads the attention dropout: attention only moves (the hidden
    # dropout's masks do not touch the kernel)
    arch = gpt_arch(4, 2048, 16, 32000, 4096)
    on = train_step_time(arch, Layout(), 2, 4096, H100, options=StepOptions(attention_dropout=True))
    off = train_step_time(arch, Layout(), 2, 4096, H100, options=StepOptions(hidden_dropout=True))
    assert on.compute_s["attention"] > 1.5 * off.compute_s["attention"]
    assert on.compute_s["gemm"] == off.compute_s["gemm"]


def test_megatron_cross_entropy_head_prices_its_kernels():
    # megatron/core/tensor_parallel/cross_entropy.py @f2e5db402 (_VocabParallelCrossEntropy):
    # forward .float() 2+4, max 4, -= 4+4, exp 4+4, sum 4, div_ 4+4 = 38 B in 6 kernels;
    # backward mul_ 4+4 and the cast's gradient 4+2 = 14 B in 2 kernels (per logit element)
    from rlmcost.perf.logprob_head import FUSED, logprob_head

    head = logprob_head("megatron-vocab-parallel-ce")
    assert (head.fwd_bytes, head.bwd_bytes, head.fwd_kernels, head.bwd_kernels) == (38, 14, 6, 2)
    arch = gpt_arch(4, 1024, 16, 50304, 2048)
    lay = Layout()
    meg = train_step_time(arch, lay, 1, 2048, H100, options=StepOptions(logprob_head=head))
    fused = train_step_time(arch, lay, 1, 2048, H100, options=StepOptions(logprob_head=FUSED))
    dev = Device(H100, Workload().compute_dtype)
    extra_bytes = 2048 * 50304 * ((38 - 8) + (14 - 8))
    extra_gaps = (6 - 3) + (2 - 3)
    by_hand = dev.memory_s(extra_bytes) + extra_gaps * dev.defaults.kernel_gap_s
    got = meg.compute_s["elementwise"] - fused.compute_s["elementwise"]
    assert got == pytest.approx(by_hand, rel=1e-9)
    assert meg.compute_s["gemm"] == fused.compute_s["gemm"]


def test_bf16_megatron_reduces_gradients_in_fp32():
    # megatron/training/arguments.py @f2e5db402: for bf16 Megatron-LM forces
    # accumulate_allreduce_grads_in_fp32 ("bfloat16 requires gradient accumulation and
    # all-reduce to be done in fp32"), so the distributed optimizer reduce-scatters a 4-byte
    # gradient; the param all-gather stays bf16. The README rows say so; nothing else changes.
    from rlmcost.parallel.comm import Collective
    from rlmcost.perf.data_parallel import dp_after_flush

    assert all(r["options"]["grad_reduce_bytes"] == 4 for r in _rows().values())
    arch = gpt_arch(4, 4096, 32, 32000, 2048)
    from rlmcost.parallel.layout import ZeroStage

    lay = Layout(dp=16, zero=ZeroStage.OS)
    dev = Device(H100, Workload().compute_dtype)
    (st,) = stages(arch, 1)
    got = {}
    for g in (0, 4):
        opts = StepOptions(grad_reduce_bytes=g, overlap_grad_reduce=False,
                           overlap_param_gather=False)  # fmt: skip
        c = StepContext.of(arch, lay, 2048, data_share(lay, 16, 2048), dev, opts, Workload())
        got[g] = (c, dp_after_flush(c, st, stage_pass(c, st)))
    c = got[4][0]
    from rlmcost.perf.step_pass import stage_param_counts

    n = sum(stage_param_counts(arch, lay, st))
    rs = {b: c.comm(Collective.REDUCE_SCATTER, n * b, 16, ("dp", "cp")) for b in (2, 4)}
    assert got[4][1] - got[0][1] == pytest.approx(rs[4] - rs[2], rel=1e-9)
    assert rs[4] > rs[2]
    with pytest.raises(Exception, match="grad_reduce_bytes=3"):
        train_step_time(arch, lay, 16, 2048, H100, options=StepOptions(grad_reduce_bytes=3))


def test_h100_gemm_at_hidden_2048_matches_a_measured_linear():
    # NVIDIA/TransformerEngine issue 2053 (2025-08-11), H100 DGX (Xeon 8480C), torch.nn.Linear
    # BF16, hidden 2048, 8192 tokens: 100.06 us GPU time a forward (13.48 us of host time), a
    # lone kernel at the boost clock. The sustained tile model (MSMF rate, Hopper's per-tile
    # K_0: tests/test_gemm_tile_overhead.py matches the burst figure) prices it 5-20 % longer,
    # and the host's 13.5 us is far below the kernel's 100 us.
    from rlmcost.choices import Dtype
    from rlmcost.perf.efficiency import gemm_time_s

    t = gemm_time_s(8192, 2048, 2048, Dtype.BF16, "h100-sxm")
    assert 1.05 * 100.06e-6 < t < 1.2 * 100.06e-6
    assert t > 5 * 13.48e-6


def _dp_traffic(name: str) -> tuple[dict, int, float]:
    """(row, the rank's parameter elements, its data-parallel link's bytes/s) of a PP 1 row."""
    from rlmcost.parallel.comm import group_ranks_per_node
    from rlmcost.parallel.layout import ZeroStage
    from rlmcost.perf.collectives import inter_node_bytes_per_s
    from rlmcost.perf.step_pass import stage_param_counts

    r = _rows()[name]
    m, lay = r["model"], r["layout"]
    arch = gpt_arch(m["layers"], m["hidden"], m["heads"], m["vocab"], m["seq"], False)
    layout = Layout(dp=48, tp=lay["tp"], sp=lay["sp"], zero=ZeroStage.OS)
    (st,) = stages(arch, 1)
    n = sum(stage_param_counts(arch, layout, st))
    per_node = group_ranks_per_node(layout, ("dp", "cp"), H100.gpus_per_node)
    return r, n, inter_node_bytes_per_s(H100, per_node)


def test_dp_traffic_of_the_pp1_rows_is_the_distributed_optimizers(monkeypatch):
    # Megatron-core @f2e5db402 (the README's r0.8.0 code): the distributed optimizer
    # reduce-scatters the rank's fp32 gradient buffer (param_and_grad_buffer.py
    # Bucket.start_grad_sync, grad_reduce_in_fp32 forced for bf16 by arguments.py) and
    # all-gathers its bf16 parameter buffer (distrib_optimizer.py _dispatch_gather_model_params)
    # over the 48 data-parallel ranks: 4 + 2 bytes a parameter of the rank. A DP group of
    # TP-8 ranks has one member per node, so each reduce runs on that rank's own 400 Gb/s NIC
    # (the eight TP ranks' groups use the eight NICs at once); TP 4 puts two members in a
    # node (two NICs), TP 1 eight (8 x 50 GB/s, under NVLink's 450).
    from rlmcost.parallel.comm import Collective
    from rlmcost.perf.collectives import link

    links = {name: _dp_traffic(name)[2] for name in ("1.7b", "7.1b", "16b", "32b")}
    nic = H100.inter_node_bandwidth_bytes_per_s
    assert nic == 50e9  # DGX H100: one ConnectX-7 400 Gb/s compute NIC per GPU
    assert links == {"1.7b": 8 * nic, "7.1b": 4 * nic, "16b": 2 * nic, "32b": nic}
    r, n, bw = _dp_traffic("32b")
    assert r["options"]["grad_reduce_bytes"] == 4 and n > 3.9e9
    arch = gpt_arch(48, 7168, 56, 131072, 4096, False)
    layout = Layout(dp=48, tp=8, sp=True)
    dev = Device(H100, Workload().compute_dtype)
    c = StepContext.of(arch, layout, 4096, data_share(layout, 192, 4096), dev,
                       StepOptions(), Workload())  # fmt: skip
    lk = link(H100, False, 1)
    rs = c.comm(Collective.REDUCE_SCATTER, n * 4, 48, ("dp", "cp"))
    assert lk.bandwidth_bytes_per_s == bw
    assert rs == pytest.approx(47 * 5e-6 + 47 / 48 * n * 4 / lk.bus_bytes_per_s, rel=1e-12)
    # and the row's prediction moves these bytes: the rank's whole fp32 gradient buffer
    # reduce-scattered and its bf16 parameters all-gathered over the 48 DP ranks
    calls = []
    comm = StepContext.comm

    def record(self, kind, payload, ranks, dims):  # noqa: ANN001, ANN202
        calls.append((kind, payload, ranks, dims))
        return comm(self, kind, payload, ranks, dims)

    monkeypatch.setattr(StepContext, "comm", record)
    from rlmcost.perf.validate import predict_row

    predict_row(r)
    dp = {(k, p) for k, p, ranks, dims in calls if ranks == 48 and dims == ("dp", "cp")}
    assert {(Collective.REDUCE_SCATTER, n * 4), (Collective.ALL_GATHER, n * 2)} <= dp


def test_32b_row_at_micro_batch_1_needs_compute_beyond_any_rows():
    # Why the 32B row is slow (issue 18) and what the data-parallel pricing cannot fix: at
    # micro-batch 1 (the rows' assumption; the README prints none) a rank runs 4 micro-batches,
    # and Megatron-core @f2e5db402 starts the gradient reduce-scatter only in the last one's
    # backward (distributed_data_parallel.py no_sync sets is_last_microbatch False for the
    # others; param_and_grad_buffer.py register_grad_ready launches a bucket only when it is
    # True) and the next step's parameter all-gather at zero_grad, each next bucket from the
    # forward pre-hook (distrib_optimizer.py _finish_param_sync_helper): hidden behind at most
    # the first forward (C / 12) and the last backward (C / 6) of the step's compute C. The
    # step is then at least max(AG, C / 12) + max(RS, C / 6) + 3/4 C >= AG + RS + 3/4 C, with
    # both collectives at the NIC's full line rate (no bus efficiency, no contention, nothing
    # else exposed). With the published step
    # (F / (459.6 TFLOP/s x 384 GPUs)) the 32B row's compute would have to run at >= 69.9 % of
    # the dense BF16 peak over all its kernels, above what the tool prices for every H100 row
    # (the 1.7B and 7.1B rows, all compute, are predicted 15-17 % fast). The 16B row (TP 4:
    # two NICs) needs 49 %. So the 32B run most likely used a larger micro-batch (at 2 the
    # reduce hides behind half the backward: predicted -0.2 % instead of -17 %), an unpublished
    # setting that the table does not let the rows choose per run.
    need = {}
    for name in ("16b", "32b"):
        r, n, bw = _dp_traffic(name)
        m = r["model"]
        flops = published_flops(r["metric"], r["batch"], m["seq"], m["layers"], m["hidden"],
                                m["vocab"])  # fmt: skip
        gpus = 48 * r["layout"]["tp"]
        step = flops / (r["published"] * 1e12 * gpus)
        rs, ag = 47 / 48 * n * 4 / bw, 47 / 48 * n * 2 / bw
        # the rank's own FLOPs: causal attention (half the s^2 term F counts in full)
        h, s, L = m["hidden"], m["seq"], m["layers"]
        causal = flops - 12 * r["batch"] * s * L * h * h * (s / h) / 2
        need[name] = causal / gpus / ((step - rs - ag) / 0.75) / H100.peak_flops_per_s["bf16"]
    assert need["32b"] > 0.68 and need["16b"] < 0.5
    rate = {}  # the tool's sustained fraction of peak over each row's compute
    for row in validate("megatron_core_h100").rows:
        st = row.step
        rate[row.id.removeprefix("megatron-core-h100-gpt-")] = st.roofline_bound_s / sum(
            st.compute_s.values()
        )
    assert max(rate.values()) < need["32b"]  # above even the 462B row's largest GEMMs
    assert need["32b"] > rate["32b"] + 0.12 and need["16b"] < rate["16b"]
    import copy

    from rlmcost.perf.validate import predict_row

    two = copy.deepcopy(_rows()["32b"])
    two["layout"]["micro_batch"] = 2  # the hypothesis above, not the row: 2 micro-batches
    assert abs(predict_row(two).error) < 0.03
