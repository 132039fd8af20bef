"""`rlmcost calibrate`: the quick CPU run end to end (as CI runs it), JSON, profile, errors.

One quick run (with the gloo collectives on 2 spawned ranks) serves most tests; timings are
never asserted, only that they were measured.
"""

import json

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from rlmcost.calibrate import calibrated_seconds, load_profile  # noqa: E402
from rlmcost.calibrate.plan import BANDWIDTH_CLASSES, COMPUTE_CLASSES  # noqa: E402
from rlmcost.cli import app  # noqa: E402

runner = CliRunner()

KERNEL_KEYS = {
    "name", "shape", "analytic_flops", "counted_flops", "seconds", "achieved_flops_per_s",
    "achieved_bytes_per_s", "efficiency",
}  # fmt: skip
KERNELS = {
    "gemm", "sdpa_causal", "sdpa_full", "attention_eager", "mlp_gated", "mlp_plain",
    "block_forward", "block_train", "prefill", "decode_step", "moe_ffn", "copy",
    "all_reduce", "all_gather", "reduce_scatter",
}  # fmt: skip


def run(*args):
    return runner.invoke(app, ["calibrate", *args], env={"COLUMNS": "160"})


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """`rlmcost calibrate --device cpu --quick --json --out FILE`, once."""
    out = tmp_path_factory.mktemp("calibration") / "cpu.json"
    r = run("--device", "cpu", "--quick", "--json", "--out", str(out))
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout), out, r.stderr


def test_quick_run_checks_every_kernel_flops(quick):
    report, _, _ = quick
    assert {k["name"] for k in report["kernels"]} == KERNELS
    for k in report["kernels"]:
        assert KERNEL_KEYS <= k.keys()
        # the acceptance test: analytic FLOPs (rlmcost.blocks) == FlopCounterMode's
        assert k["analytic_flops"] == k["counted_flops"], k
        assert isinstance(k["analytic_flops"], int) and isinstance(k["counted_flops"], int)
        assert k["flops_match"] is True
        assert k["seconds"] > 0 and k["achieved_bytes_per_s"] > 0


def test_quick_run_json_header_and_efficiencies(quick):
    report, _, _ = quick
    assert report["device"] == "cpu" and report["dtype"] == "fp32"
    assert report["torch"] == torch.__version__
    compute = [k for k in report["kernels"] if k["analytic_flops"] > 0]
    for k in compute:
        # achieved FLOP/s is analytic FLOPs over measured time
        assert k["achieved_flops_per_s"] == pytest.approx(k["analytic_flops"] / k["seconds"])
        assert k["efficiency"] == pytest.approx(
            max(k["compute_efficiency"], k["bandwidth_efficiency"])
        )
    # CPU reference peak = the best GEMM of the run, so the best GEMM sits at exactly 1
    gemms = [k["compute_efficiency"] for k in report["kernels"] if k["name"] == "gemm"]
    assert max(gemms) == pytest.approx(1.0)
    collectives = [k for k in report["kernels"] if k["name"] in ("all_reduce", "all_gather")]
    assert all(k["shape"]["ranks"] == 2 and k["efficiency"] is None for k in collectives)
    # ring all-reduce moves 2 (p-1)/p of the buffer per rank: the buffer itself at p = 2
    ar = next(k for k in report["kernels"] if k["name"] == "all_reduce")
    assert ar["analytic_bytes"] == ar["shape"]["bytes"]


def test_quick_run_writes_a_profile_the_time_model_reads(quick):
    report, out, stderr = quick
    assert f"wrote {out}" in stderr
    profile = load_profile(out)
    assert profile.device == "cpu" and profile.quick
    assert set(profile.compute_efficiency) == set(COMPUTE_CLASSES)
    assert set(profile.bandwidth_efficiency) == set(BANDWIDTH_CLASSES)
    assert "rlmcost calibrate --device cpu --quick" in profile.command
    # at a measured decode step the calibrated time is its measured time (bandwidth-bound)
    dec = next(k for k in report["kernels"] if k["name"] == "decode_step")
    if profile.bandwidth(dec["analytic_bytes"], "decode") < 1:  # not clamped
        t = calibrated_seconds(
            dec["analytic_flops"], dec["analytic_bytes"], None, profile.dtype, profile, "decode"
        )
        assert t >= dec["seconds"] * (1 - 1e-9)


def test_quick_run_says_how_sdpa_was_counted(quick):
    _, _, stderr = quick
    assert "_scaled_dot_product_flash_attention_for_cpu has no FlopCounterMode formula" in stderr


def test_human_table():
    r = run("--quick", "--kernel", "gemm", "--kernel", "copy", "--ranks", "1")
    assert r.exit_code == 0, r.output
    assert "Calibration on" in r.stdout and "GFLOP/s" in r.stdout and "= cpu" in r.stdout
    assert "collectives skipped" in r.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_cuda_without_gpu_is_one_line():
    r = run("--device", "cuda", "--quick")
    assert r.exit_code == 2
    assert r.stderr.startswith("error: --device cuda: no CUDA device is available")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output


@pytest.mark.parametrize(
    "args,message",
    [
        (["--dtype", "tf32"], "error: --dtype tf32 is a CUDA matmul mode"),
        (["--dtype", "fp8"], "error: --dtype fp8: the harness has no fp8 kernels"),
        (["--kernel", "softmax"], "error: unknown kernel(s) softmax"),
        (["--hardware", "h200"], "error: --hardware names a GPU spec"),
        (["--ranks", "0"], "error: Invalid value for '--ranks'"),
        (["--device", "tpu"], "error: --device 'tpu' is not one of 'cpu', 'cuda'"),
        # checked before the run, not after it (a file below a read-only, missing /proc path)
        (["--out", "/proc/none/x.json"], "error: cannot create the folder of --out"),
    ],
)
def test_bad_input_is_one_line(args, message):
    r = run("--quick", *args)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(message), r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none here)")
def test_cuda_quick_run(tmp_path):
    r = run(
        "--device", "cuda", "--quick", "--ranks", "1", "--json", "--out", str(tmp_path / "g.json")
    )
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert all(k["analytic_flops"] == k["counted_flops"] for k in report["kernels"])
    assert report["device"] != "cpu"


def test_a_flop_mismatch_fails_the_run_and_writes_no_profile(monkeypatch, tmp_path):
    import dataclasses

    from rlmcost.calibrate import harness, plan

    def wrong_plan(kind, quick, dtype):
        gemm = plan.gemm(64, 64, 64, dtype)
        return [dataclasses.replace(gemm, flops=gemm.flops + 1), plan.copy(1 << 16, dtype)]

    monkeypatch.setattr(harness, "kernel_plan", wrong_plan)
    out = tmp_path / "p.json"
    r = run("--quick", "--ranks", "1", "--out", str(out))
    assert r.exit_code == 1
    assert "error: analytic FLOPs differ from FlopCounterMode for: gemm" in r.stderr
    assert "!= 524 kFLOP" in r.stdout  # the table shows what the counter saw
    assert not out.exists()
