"""NeMo RL's fp64 MoE router (rlmcost.perf.moe_router): peaks, pricing, the Run field, the
importer and the preset."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from rlmcost.arch import Arch
from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import DataShare
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import PipelineStage
from rlmcost.perf.efficiency import Device
from rlmcost.perf.moe_router import router_fp64_bytes
from rlmcost.perf.step_pass import StepContext, StepOptions, stage_pass
from rlmcost.placement.pass_options import router_fp64, step_options
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload


@pytest.mark.parametrize(
    "name,tflops",
    [
        # NVIDIA datasheets, FP64 Tensor Core (dense): H100 SXM 67 (66.9 in the Hopper
        # whitepaper's table), H100 PCIe 51, H200 67, A100 19.5, HGX B200 40, GB200 NVL72
        # 3,240 / 72 = 45 per GPU; H20 1 TFLOPS (product brief as reported)
        ("h100-sxm", 66.9), ("h100-pcie", 51.2), ("h200", 66.9), ("a100-80gb", 19.5),
        ("b200", 40.0), ("gb200", 45.0), ("h20", 1.0),
    ],
)  # fmt: skip
def test_fp64_peaks_are_the_datasheets(name: str, tflops: float) -> None:
    assert get_hardware(name).peak(Dtype.FP64) == round(tflops * 1e12)


def test_a_device_without_an_fp64_figure_is_an_error() -> None:
    # the H800 and L40S list no FP64 tensor-core figure in rlmcost's hardware specs
    with pytest.raises(SpecError, match="fp64"):
        get_hardware("l40s").peak(Dtype.FP64)


def test_cast_and_score_bytes() -> None:
    # RouterGatingLinearFunction (Megatron-core moe_utils.py): forward casts the bf16 input
    # [T, d] and weight [E, d] to fp64 (2 B read, 8 B written each); backward casts both again
    # and the two fp64 gradients back (8 read, 2 written); score + top-k read and write [T, E]
    # fp64 forward, twice backward
    t, d, e = 4096, 2048, 128
    fwd, bwd = router_fp64_bytes(t, d, e, 2, 2)
    casts = (t * d + e * d) * 10
    assert fwd == casts + 2 * t * e * 16
    assert bwd == 2 * casts + 2 * 2 * t * e * 16


def _layer_pass(options: StepOptions, hardware: str = "h100-sxm") -> tuple[float, float, int]:
    arch: Arch = get_model("qwen3-30b-a3b").arch()
    layout = Layout(dp=8, ep=8, etp=1)
    share = DataShare(sequences=1, micro_batch=1, micro_batches=1, tokens_per_sequence=4096)
    c = StepContext.of(arch, layout, 4096, share, Device(get_hardware(hardware)), options,
                       Workload())  # fmt: skip
    p = stage_pass(c, PipelineStage(0, 1, 0, 1))  # one MoE layer, no head
    gpu = sum(v for k, v in p.fwd.items() if k != "host")
    gpu_b = sum(v for k, v in p.bwd.items() if k != "host")
    return gpu, gpu_b, p.flops


def test_fp64_router_costs_dgemm_time_at_the_fp64_peak() -> None:
    # Qwen3-30B-A3B (d 2048, 128 experts), 4096 tokens: the router's forward DGEMM is
    # 2 x 4096 x 128 x 2048 = 2.15 GFLOP, >= 32 us at H100's 66.9 TFLOP/s FP64 peak, where the
    # bf16 GEMM takes ~2 us; backward two more
    free = StepOptions(moe_layer_host_s=0.0)
    f32, b32, flops32 = _layer_pass(free)
    f64, b64, flops64 = _layer_pass(dataclasses.replace(free, router_fp64=True))
    dgemm = 2 * 4096 * 128 * 2048 / 66.9e12
    assert f64 - f32 > dgemm
    assert b64 - b32 > 2 * dgemm
    assert flops64 == flops32  # the same FLOPs, in another dtype
    # on an H20 (1 TFLOP/s FP64) the DGEMM alone is >= 2.1 ms
    h20_32, _, _ = _layer_pass(free, "h20")
    h20_64, _, _ = _layer_pass(dataclasses.replace(free, router_fp64=True), "h20")
    assert h20_64 - h20_32 > 2 * 4096 * 128 * 2048 / 1e12


def test_fp64_router_on_a_device_without_fp64_names_the_fix() -> None:
    with pytest.raises(SpecError, match="--router-dtype fp32"):
        _layer_pass(StepOptions(router_fp64=True), "l40s")


def test_megatron_trainer_only() -> None:
    # NeMo RL's preset: fp64 (grpo_math_1B.yaml policy.megatron_cfg.moe_router_dtype), but its
    # default trainer is the DTensor worker (a Hugging Face model: no Megatron router)
    dtensor = Deployment(framework="nemo-rl", train={"zero": "3", "router_dtype": "fp64"})
    megatron = Deployment(framework="nemo-rl", train={"zero": "1", "router_dtype": "fp64"})
    assert not router_fp64(dtensor)
    assert router_fp64(megatron)
    assert step_options(megatron).router_fp64  # type: ignore[union-attr]
    assert not router_fp64(Deployment(train={"router_dtype": "fp32"}))
    assert step_options(Deployment(train={"router_dtype": "fp64"})) == StepOptions(
        router_fp64=True
    )


def test_preset_and_flag() -> None:
    runner = CliRunner()
    base = ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "32", "--json"]
    out = runner.invoke(app, [*base, "--framework", "nemo-rl"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["run"]["deployment"]["train"]["router_dtype"] == "fp64"
    out = runner.invoke(app, [*base, "--router-dtype", "fp64", "--zero", "1", "--ep", "8"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["run"]["deployment"]["train"]["router_dtype"] == "fp64"
    assert any("fp64" in n and "router" in n for n in data["notes"])
    bad = runner.invoke(app, [*base, "--router-dtype", "fp16"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_nemo_rl_importer_reads_moe_router_dtype() -> None:
    from nemo_rl_moe import import_qwen3_moe

    # absent: the base config's fp64 (grpo_math_1B_megatron.yaml v0.3.0-v0.7.0)
    assert dict(import_qwen3_moe(4).flags)["--router-dtype"] == "fp64"
    # the FP8 DeepSeek-V3 recipe's fp32; null is Megatron-core's None, priced as fp32
    for given in ("fp32", "null"):
        q = import_qwen3_moe(4, f"policy.megatron_cfg.moe_router_dtype={given}")
        assert dict(q.flags)["--router-dtype"] == "fp32"
    with pytest.raises(SpecError, match="moe_router_dtype"):
        import_qwen3_moe(4, "policy.megatron_cfg.moe_router_dtype=bf16")


def test_dgemm_at_full_occupancy_of_the_fp64_peak() -> None:
    # rlmcost.perf.moe_router: FLOPs / (FP64 peak x the profile's GEMM efficiency) + launch gap
    from rlmcost.perf.moe_router import dgemm_s

    dev = Device(get_hardware("h100-sxm"))
    flops = 2 * 4096 * 128 * 2048
    want = flops / (66.9e12 * dev.defaults.gemm_efficiency) + dev.defaults.kernel_gap_s
    assert dgemm_s(dev, 4096, 128, 2048) == pytest.approx(want, rel=1e-12)


def test_router_dtype_round_trips_through_the_command() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    argv = ["grpo", "--framework", "none", "--model", "qwen3-30b-a3b", "--gpus", "32",
            "--ep", "8", "--zero", "1"]  # fmt: skip
    run = run_from_argv(argv[0], [*argv[1:], "--router-dtype", "fp64"])
    assert run.deployment.train.router_dtype == "fp64"
    assert "--router-dtype fp64" in to_command(run)
    assert "--router-dtype" not in to_command(run_from_argv(argv[0], argv[1:]))
