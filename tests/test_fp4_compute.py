"""W4A4 rollout weights (``--rollout-weights nvfp4-w4a4[:PARTS]``, rlmcost.perf.fp4_gemm).

Independent sources: the FP4 peaks from NVIDIA's datasheets, which print them with 2:4 sparsity
(HGX B200: 144 PFLOPS FP4 Tensor Core per 8 GPUs; GB200 NVL72: 1,440 PFLOPS per 72 GPUs), halved
here; the bytes of vLLM's ``scaled_fp4_quant`` output (``x_fp4`` uint8 [m, k / 2] and
``x_blockscale`` float8_e4m3fn [m, k / 16], vllm nvfp4_utils.py @4159f5ba); the GEMM shapes of
Qwen3-8B's config.json (hidden 4096, 32 query and 8 KV heads of 128, FFN 12288, 36 layers);
NeMo RL's W4A4 recipe (examples/configs/recipes/llm/grpo-nemotron3-super-120BA12B-16n4g-megatron-
qa-nvfp4-w4a4-real-300step.yaml @7ea279abf: quant_cfg nvfp4_experts.yaml, real_quant true).
"""

from __future__ import annotations

import shlex
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.calibrate.profile import SCHEMA, Profile
from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.evaluation.query import evaluate
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.parallel.packed_weights import FORMATS, W4A4
from rlmcost.perf.efficiency import KERNEL_GAP_S, Device
from rlmcost.perf.fp4_gemm import fp4_bytes, quantize_s
from rlmcost.perf.generation import Engine, EngineOptions
from rlmcost.plan.screen import candidate_arrays, query, screen
from rlmcost.run.command import to_command
from rlmcost.run.spec import Run
from rlmcost.specs import get_hardware, get_model

B200, GB200, H100 = get_hardware("b200"), get_hardware("gb200"), get_hardware("h100-sxm")
PACKED = (FORMATS["nvfp4"], "linear")  # Qwen3-8B: every Linear layer packed
CFG = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"


def _flat(device: str, peak: float, hbm: float) -> Profile:
    """A calibration whose GEMMs and copies run at half the peaks, whatever their size."""
    return Profile(
        schema=SCHEMA, device=device, device_name=device, torch="2.13.0", dtype=Dtype.BF16,
        threads=1, quick=True, peak_flops_per_s=peak, peak_bytes_per_s=hbm,
        peak_source="datasheet", compute_efficiency={"gemm": ((1.0, 0.5),)},
        bandwidth_efficiency={"copy": ((1.0, 0.5),)},
    )  # fmt: skip


def _engine(device: Device, w4a4: bool, arch: str = "qwen3-8b") -> Engine:
    return Engine(get_model(arch).arch(), device, options=EngineOptions(packed=(*PACKED, w4a4)))


def test_fp4_peaks_are_the_datasheets_dense_figures() -> None:
    assert B200.fp4_peak_flops_per_s == 144 * 10**15 // 8 // 2 == 4 * B200.peak(Dtype.BF16)
    assert GB200.fp4_peak_flops_per_s == 1440 * 10**15 // 72 // 2 == 4 * GB200.peak(Dtype.BF16)
    for name in ("h100-sxm", "h200", "a100-80gb", "mi300x", "l40s"):  # no FP4 tensor cores
        assert get_hardware(name).fp4_peak_flops_per_s is None
    assert FORMATS["nvfp4-w4a4"] == FORMATS["nvfp4"] and W4A4 == ("nvfp4-w4a4",)


def test_fp4_activation_bytes_are_the_quantizers_tensors() -> None:
    m, k = 8192, 4096
    assert fp4_bytes(m * k) == m * k // 2 + m * (k // 16)  # uint8 [m, k/2] + e4m3 [m, k/16]


def test_a_prefill_chunks_gemm_seconds_are_flops_over_the_fp4_peak() -> None:
    """Qwen3-8B, an 8192-token chunk on one B200 under a flat 0.5 calibration: every W4A4
    GEMM is FLOPs / (FP4 peak x 0.5) (all compute-bound), its gap, and its quantizing kernel
    (one bf16 read, one FP4 write, at half the HBM bandwidth, its gap)."""
    dev = Device(B200, measured=_flat("b200", 9e15, 7.7e12))
    m, d, ff, L = 8192, 4096, 12288, 36
    shapes = [(m, (32 + 2 * 8) * 128, d), (m, d, 32 * 128), (m, 2 * ff, d), (m, d, ff)]
    by_hand = 0.0
    for mm, n, k in shapes:
        compute = 2 * mm * n * k / (9e15 * 0.5)
        memory = (fp4_bytes(mm * k) + mm * n * 2 + k * n * 9 / 16) / (7.7e12 * 0.5)
        assert compute > memory
        quantize = (mm * k * 2 + fp4_bytes(mm * k)) / (7.7e12 * 0.5) + KERNEL_GAP_S
        by_hand += L * (compute + KERNEL_GAP_S + quantize)
    got = _engine(dev, True)._layer_gemms_s(m)
    assert got == pytest.approx(by_hand, rel=1e-12)


def test_w4a4_prefill_gemms_run_at_the_peak_ratio_on_b200() -> None:
    """Default B200 profile (the tile model): a compute-bound W4A4 GEMM, less its gap and
    quantizing kernel, takes bf16 peak / FP4 peak = 1/4 of the W4A16 one's compute."""
    w16 = Device(B200, weight_bytes=0.5625)
    fp4 = Device(B200, weight_bytes=0.5625, fp4=True)
    for m, n, k in [(8192, 6144, 4096), (8192, 24576, 4096), (8192, 4096, 12288)]:
        slow = w16.gemm_s(m, n, k) - KERNEL_GAP_S
        fast = fp4.gemm_s(m, n, k) - KERNEL_GAP_S - quantize_s(fp4, m * k)
        assert fast == pytest.approx(slow * 2250 / 9000, rel=1e-12)
    # a whole chunk (attention, norms, all-reduces unchanged): faster, by less than 4x
    t16, t4 = _engine(Device(B200), False).chunk_s(8192, 2048), _engine(Device(B200), True)
    assert 2 < t16 / t4.chunk_s(8192, 2048) < 4


def test_decode_barely_moves_and_hopper_runs_w4a16() -> None:
    for active in (64, 256):  # decode streams the same packed weight bytes
        a = _engine(Device(B200), False).decode_step_s(active, active * 3000)
        b = _engine(Device(B200), True).decode_step_s(active, active * 3000)
        assert abs(b / a - 1) < 0.08, (active, a, b)
    # vLLM's select_nvfp4_linear_backend falls to Marlin below SM100: W4A16, the same numbers
    for hw in (H100, get_hardware("a100-80gb")):
        w16, w4 = _engine(Device(hw), False), _engine(Device(hw), True)
        assert w4.chunk_s(8192, 2048) == w16.chunk_s(8192, 2048)
        assert w4.decode_step_s(64, 64 * 3000) == w16.decode_step_s(64, 64 * 3000)


def _run(hw: str, weights: str):  # noqa: ANN202 - a Run
    words = shlex.split(f"grpo -m qwen3-30b-a3b -H {hw} --gpus 8 -B 64 -K 8 -S 4096 -T 512 "
                        f"--rollout-weights {weights}")  # fmt: skip
    return run_from_argv(words[0], words[1:])


def _generation(hw: str, weights: str) -> tuple[float, int, tuple[str, ...]]:
    ev = evaluate(_run(hw, weights)).evaluation
    job = next(j for g in ev.groups for j in g.jobs if j.task.kind == "generate")
    return job.predicted_s, int(job.memory.weights), ev.notes


def test_the_cli_prices_w4a4_on_b200_and_says_w4a16_on_hopper() -> None:
    t16, w16, _ = _generation("b200", "nvfp4:experts")
    t4, w4, notes = _generation("b200", "nvfp4-w4a4:experts")
    assert w4 == w16 and t4 < t16  # the same bytes; the expert GEMMs' prefill faster
    assert any("W4A4 rollout weights" in n and "FP4 peak" in n for n in notes)
    h16, _, _ = _generation("h100", "nvfp4:experts")
    h4, _, notes = _generation("h100", "nvfp4-w4a4:experts")
    assert h4 == h16
    assert any("no FP4 tensor cores" in n and "Marlin" in n for n in notes)
    again = shlex.split(to_command(_run("b200", "nvfp4-w4a4:mlp")))
    assert again[again.index("--rollout-weights") + 1] == "nvfp4-w4a4:mlp"


def test_mxfp4_w4a4_is_refused_with_the_formats() -> None:
    out = CliRunner().invoke(app, ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "8",
                                   "--rollout-weights", "mxfp4-w4a4"])  # fmt: skip
    assert out.exit_code != 0 and "give one of nvfp4, nvfp4-w4a4" in out.output
    assert "Traceback" not in out.output


def test_nemo_rl_w4a4_recipe_imports_as_nvfp4_w4a4() -> None:
    # nvfp4_experts.yaml: routed-expert weights and input activations NVFP4 (W4A4);
    # nvfp4_w4a8_fp8.yaml: FP8 input activations (W4A8), not W4A4
    g = "policy.generation"
    experts = "examples/modelopt/quant_configs/nvfp4_experts.yaml"
    q = import_nemo_rl(CFG, [f"{g}.quant_cfg={experts}", f"{g}.real_quant=true"], 200)
    assert dict(q.flags)["--rollout-weights"] == "nvfp4-w4a4:experts"
    w4a8 = "examples/modelopt/quant_configs/nvfp4_w4a8_fp8.yaml"
    q = import_nemo_rl(CFG, [f"{g}.quant_cfg={w4a8}", f"{g}.real_quant=true"], 200)
    assert dict(q.flags)["--rollout-weights"] == "nvfp4:mlp"
    (conv,) = [c for c in q.conversions if c.flag == "--rollout-weights"]
    assert "W4A8 (FP8 input activations) priced as W4A16" in conv.how


def test_the_plan_screen_bounds_a_w4a4_engine_at_the_fp4_peak() -> None:
    from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates

    base = Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "prompt_len": 8192,
                     "response_len": 64},
        "deployment": {"engine": {"weight_format": "nvfp4-w4a4"}},
        "cluster": {"hardware": "b200"}})  # fmt: skip
    space = RLSpace(placements=("baseline", "split"), tp=(1, 2), rollout_tp=(1, 2))
    pool = candidates(base, space, 8)[:6]
    assert pool
    for c in pool:
        e = evaluate_deployment(candidate_run(base, c))
        q = query(base, e)
        assert q.peak == 9e15  # the FP4 peak, above bf16's 2.25e15
        assert screen(q, candidate_arrays([c])).time[0] <= e.iteration_time_s, c


def test_fraction_of_the_packed_tuple_stays_exact() -> None:
    assert float(FORMATS["nvfp4-w4a4"]) == 0.5625 and Fraction(0.5625) == Fraction(9, 16)


def test_a_slime_nvfp4_checkpoint_folder_is_served_w4a4() -> None:
    # a folder named -NVFP4 (ModelOpt's NVFP4 quant_algo and llm-compressor's NVFP4 scheme
    # quantize the inputs too; the weight-only scheme is named NVFP4A16): W4A4
    from rlmcost.frameworks.slime import import_slime

    base = ["--rollout-batch-size", "8", "--n-samples-per-prompt", "4",
            "--actor-num-gpus-per-node", "4", "--rollout-num-gpus-per-engine", "2",
            "--rollout-num-gpus", "4"]  # fmt: skip
    q = import_slime(["--hf-checkpoint", "/root/Qwen3-30B-A3B-NVFP4", *base])
    assert dict(q.flags)["--rollout-weights"] == "nvfp4-w4a4"
    (conv,) = [c for c in q.conversions if c.flag == "--rollout-weights"]
    assert "W4A4 where the GPUs have FP4 tensor cores" in conv.how


def test_a_w4a4_generations_roofline_takes_the_fp4_peak() -> None:
    # the same FLOPs at B200's FP4 peak (9 PFLOP/s) instead of its bf16 one (2.25): a quarter
    def job(weights: str):  # noqa: ANN202 - a generation Job
        words = shlex.split("grpo -m llama-3.1-8b -H b200 --gpus 8 -B 8 -K 2 -S 2048 -T 2 "
                            f"--rollout-weights {weights}")  # fmt: skip
        ev = evaluate(run_from_argv(words[0], words[1:])).evaluation
        return next(j for g in ev.groups for j in g.jobs if j.task.kind == "generate")

    w16, w4 = job("nvfp4"), job("nvfp4-w4a4")
    assert w4.time.compute_s == pytest.approx(w16.time.compute_s * 2250 / 9000, rel=1e-12)
    assert w4.time.bound_s <= w4.predicted_s < w16.predicted_s
