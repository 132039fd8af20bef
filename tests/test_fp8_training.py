"""FP8 training (``--train-fp8``, rlmcost.perf.fp8_train, rlmcost.placement.fp8_train).

Independent sources: the H100 SXM datasheet's dense peaks (989.4 TFLOP/s bf16, 1,978.9 FP8,
3.35 TB/s HBM3); Transformer Engine's recipe definitions (transformer_engine/common/recipe/
__init__.py @d0067d0d: ``Float8BlockScaling`` 1x128 activations and gradients, 128x128 weights,
fp32 scales; MXFP8 an E8M0 per 32 elements, OCP MX spec); Llama-3.1-8B's config.json (hidden
4096, 32 query and 8 KV heads of 128, FFN 14336); the NeMo RL recipes
(examples/configs/grpo_math_8B_megatron_fp8.yaml @7ea279ab: fp8 e4m3, blockwise, fp8_param
false); slime's docs/en/advanced/low-precision.md @624b824a (``--fp8-format e4m3
--fp8-recipe blockwise``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from rlmcost.calibrate.profile import SCHEMA, Profile
from rlmcost.choices import Dtype, Fp8Recipe
from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.parallel.layout import Layout
from rlmcost.perf.efficiency import KERNEL_GAP_S, Device
from rlmcost.perf.fp8_train import copy_bytes, linear_pricer
from rlmcost.perf.train_step import StepOptions, train_step_time
from rlmcost.run.command import to_command
from rlmcost.specs import Workload, get_hardware, get_model

H100 = get_hardware("h100-sxm")
DATA = Path(__file__).parent / "data" / "frameworks"
LLAMA = get_model("llama-3.1-8b").arch()


def _flat() -> Profile:
    """A calibration whose GEMMs and copies run at half the peaks, whatever their size."""
    return Profile(
        schema=SCHEMA, device="h100-sxm", device_name="h100-sxm", torch="2.13.0",
        dtype=Dtype.BF16, threads=1, quick=True, peak_flops_per_s=989.4e12,
        peak_bytes_per_s=3.35e12, peak_source="datasheet",
        compute_efficiency={"gemm": ((1.0, 0.5),)}, bandwidth_efficiency={"copy": ((1.0, 0.5),)},
    )  # fmt: skip


def _context(recipe: Fp8Recipe | None) -> SimpleNamespace:
    dev = Device(H100, measured=_flat())
    return SimpleNamespace(device=dev, options=StepOptions(fp8=recipe), workload=Workload())


def test_the_peaks_are_the_datasheets() -> None:
    assert H100.peak(Dtype.BF16) == 989_400_000_000_000
    assert H100.peak(Dtype.FP8) == 1_978_900_000_000_000


def test_cast_bytes_by_hand() -> None:
    """Blockwise: an fp32 scale per 128 elements of a row (activations) or per 128 x 128 block
    (weights); MXFP8: a byte per 32; tensorwise and delayed: one fp32 a tensor."""
    m, k = 8192, 4096
    assert copy_bytes(Fp8Recipe.BLOCKWISE, m, k) == m * k + 4 * m * (k // 128)
    assert copy_bytes(Fp8Recipe.BLOCKWISE, k, m) == m * k + 4 * k * (m // 128)
    assert copy_bytes(Fp8Recipe.BLOCKWISE, 14336, 4096, weight=True) == \
        14336 * 4096 + 4 * 112 * 32  # fmt: skip
    assert copy_bytes(Fp8Recipe.MXFP8, m, k) == m * k + m * k // 32
    assert copy_bytes(Fp8Recipe.BLOCKWISE, 3, 130) == 390 + 4 * 3 * 2  # partial blocks count
    for r in (Fp8Recipe.TENSORWISE, Fp8Recipe.DELAYED):
        assert copy_bytes(r, m, k) == m * k + 4


def test_an_fp8_gemm_runs_at_the_fp8_peak_with_its_casts() -> None:
    """Llama-3.1-8B's FFN up-projection [8192, 28672, 4096] under a flat 0.5 calibration,
    tensorwise: each GEMM is FLOPs / (FP8 peak x 0.5) (compute-bound) + its gap; the forward
    adds the input's cast (two bf16 reads, amax then cast, and a 1-byte copy with its fp32
    scale, two kernels), the backward the input's column-wise copy (no kernel) and the output
    gradient's cast (two reads, both copies)."""
    m, n, k = 8192, 28672, 4096
    bw, peak = 3.35e12 * 0.5, 1978.9e12 * 0.5
    f, b, wf, wb = linear_pricer(_context(Fp8Recipe.TENSORWISE))(m, n, k)
    gemm = 2 * m * n * k / peak + KERNEL_GAP_S
    cast_in = (2 * 2 * m * k + m * k + 4) / bw + 2 * KERNEL_GAP_S
    assert f == pytest.approx(gemm + cast_in, rel=1e-12)
    grad = (2 * 2 * m * n + 2 * (m * n + 4)) / bw + 2 * KERNEL_GAP_S
    assert b == pytest.approx(2 * gemm + (m * k + 4) / bw + grad, rel=1e-12)
    weights_row = (2 * 2 * n * k + n * k + 4) / bw + 2 * KERNEL_GAP_S
    assert wf == pytest.approx(weights_row, rel=1e-12)
    assert wb == pytest.approx(weights_row + (n * k + 4) / bw, rel=1e-12)
    # bf16: the device's three GEMMs at the bf16 peak, no casts
    f16, b16, w16, _ = linear_pricer(_context(None))(m, n, k)
    assert f16 == pytest.approx(2 * m * n * k / (989.4e12 * 0.5) + KERNEL_GAP_S, rel=1e-12)
    assert w16 == 0.0 and b16 > f16


def _step(recipe: Fp8Recipe | None, arch=LLAMA, layout: Layout | None = None, hw=H100):  # noqa: ANN001, ANN202
    return train_step_time(arch, layout or Layout(dp=8), 512, 4096, hw,
                           options=StepOptions(fp8=recipe))  # fmt: skip


def test_fp8_step_is_faster_not_twice_and_attention_stays_bf16() -> None:
    """The GEMMs at the FP8 peak, the casts and the bf16 parts (attention, the LM head, norms)
    keep the step above half the bf16 step; blockwise is the slowest recipe (TE's H200 table:
    1.69 / 1.58 / 1.40 x bf16 for delayed / current / block scaling)."""
    base = _step(None)
    steps = {r: _step(r) for r in (Fp8Recipe.DELAYED, Fp8Recipe.TENSORWISE, Fp8Recipe.BLOCKWISE)}
    for st in steps.values():
        assert base.step_s / 2 < st.step_s < base.step_s
        assert st.compute_s["attention"] == base.compute_s["attention"]
        assert st.model_flops == base.model_flops
        assert st.roofline_bound_s <= st.step_s
        # the bound: the busiest rank's FLOPs over the FP8 peak
        assert st.roofline_bound_s * 1978.9e12 == pytest.approx(base.roofline_bound_s * 989.4e12)
    d, t, b = (steps[r].step_s for r in (Fp8Recipe.DELAYED, Fp8Recipe.TENSORWISE,
                                         Fp8Recipe.BLOCKWISE))  # fmt: skip
    assert d < t < b


def test_moe_router_stays_bf16() -> None:
    """Qwen3-30B-A3B: only the router's GEMM is outside the FP8 Linear layers of a MoE layer;
    the FP8 step's GEMMs are below bf16's, and above what they would be with every GEMM
    halved."""
    arch = get_model("qwen3-30b-a3b").arch()
    lay = Layout(dp=8, ep=8)
    base, fp8 = _step(None, arch, lay), _step(Fp8Recipe.DELAYED, arch, lay)
    assert base.compute_s["gemm"] / 2 < fp8.compute_s["gemm"] < base.compute_s["gemm"]


def test_refusals() -> None:
    with pytest.raises(SpecError, match="Blackwell"):
        _step(Fp8Recipe.MXFP8)
    with pytest.raises(SpecError, match="no FP8 tensor cores"):
        _step(Fp8Recipe.BLOCKWISE, hw=get_hardware("a100-80gb"))
    assert _step(Fp8Recipe.MXFP8, hw=get_hardware("b200")).step_s < _step(
        None, hw=get_hardware("b200")).step_s
    base = ["-m", "llama-3.1-8b", "--gpus", "8"]
    with pytest.raises(SpecError, match="Hugging Face"):  # verl's FSDP workers
        evaluate(run_from_argv("grpo", [*base, "--framework", "verl", "--train-fp8", "blockwise"]))
    with pytest.raises(SpecError, match="--train-fp8 RECIPE"):
        run_from_argv("grpo", [*base, "--train-fp8-param"])
    with pytest.raises(SpecError, match="not one of"):
        run_from_argv("grpo", [*base, "--train-fp8", "fp8"])
    res = CliRunner().invoke(app, ["grpo", *base, "--train-fp8", "mxfp8"])  # NeMo RL's DTensor
    assert res.exit_code != 0 and "Traceback" not in res.output and "Hugging Face" in res.output
    res = CliRunner().invoke(app, ["grpo", *base, "--zero", "1", "--train-fp8", "mxfp8"])
    assert res.exit_code != 0 and "Traceback" not in res.output and "Blackwell" in res.output


def test_rl_phases_speed_up_and_stay_above_their_bounds() -> None:
    """A NeMo RL Megatron trainer: update and log-prob forwards faster in FP8 (the forwards
    run the trainer's FP8 too), generation unchanged, every phase at or above its bound."""
    argv = ["-m", "llama-3.1-8b", "--gpus", "16", "--framework", "nemo-rl", "--zero", "1"]
    plain = evaluate(run_from_argv("grpo", argv)).evaluation
    fp8 = evaluate(run_from_argv("grpo", [*argv, "--train-fp8", "blockwise"])).evaluation
    a, b = ({p.name: p for p in e.phases} for e in (plain, fp8))
    assert b["update actor"].time_s < a["update actor"].time_s
    assert b["old log-prob"].time_s < a["old log-prob"].time_s
    assert b["generation"].time_s == a["generation"].time_s
    for p in fp8.phases:
        assert p.time_lower_bound_s <= p.time_s + 1e-9
    assert b["update actor"].time_lower_bound_s < a["update actor"].time_lower_bound_s


def test_the_command_round_trips() -> None:
    run = run_from_argv("grpo", ["-m", "llama-3.1-8b", "--gpus", "16", "--framework", "nemo-rl",
                                 "--zero", "1", "--train-fp8", "blockwise", "--train-fp8-param"])
    assert run.deployment.train.fp8 is Fp8Recipe.BLOCKWISE and run.deployment.train.fp8_param
    assert run.deployment.forward_layout().fp8 is Fp8Recipe.BLOCKWISE
    again = run_from_argv("grpo", shlex.split(to_command(run))[2:])
    assert again.deployment.train == run.deployment.train
    data = json.loads(json.dumps(run.to_json()))
    assert data["deployment"]["train"]["fp8"] == "blockwise"


def test_rlmcost_train_takes_the_flag() -> None:
    argv = ["train", "-m", "llama-3.1-8b", "--gpus", "8", "--json"]
    out = [json.loads(CliRunner().invoke(app, [*argv, *more]).stdout)
           for more in ((), ("--train-fp8", "delayed"))]  # fmt: skip
    assert out[1]["step_time_s"] < out[0]["step_time_s"]


def test_nemo_rl_reads_fp8_cfg() -> None:
    meg = ["policy.megatron_cfg.enabled=true", "policy.dtensor_cfg.enabled=false"]
    path = DATA / "nemo_rl_grpo_math.yaml"
    q = import_nemo_rl(path, [*meg, "policy.megatron_cfg.fp8_cfg.enabled=true"])
    assert ("--train-fp8", "blockwise") in q.flags  # grpo_math_1B.yaml's recipe
    q = import_nemo_rl(path, [*meg, "policy.megatron_cfg.fp8_cfg.enabled=true",
                              "policy.megatron_cfg.fp8_cfg.fp8_recipe=tensorwise",
                              "policy.megatron_cfg.fp8_cfg.fp8_param=true"])  # fmt: skip
    assert ("--train-fp8", "tensorwise") in q.flags and "--train-fp8-param" in dict(q.flags)
    assert not [k for k in q.ignored if "fp8" in k]
    q = import_nemo_rl(path, [*meg, "policy.megatron_cfg.fp8_cfg.enabled=false",
                              "policy.megatron_cfg.fp8_cfg.fp8_recipe=blockwise"])  # fmt: skip
    assert "--train-fp8" not in dict(q.flags) and not [k for k in q.ignored if "fp8" in k]


def test_slime_and_verl_read_megatron_fp8() -> None:
    lines = (DATA / "slime_qwen3-4B.args").read_text().splitlines()
    args = shlex.split(" ".join(ln for ln in lines if ln and not ln.startswith("#")))
    q = import_slime([*args, "--fp8-format", "e4m3", "--fp8-recipe", "blockwise"])
    assert ("--train-fp8", "blockwise") in q.flags
    q = import_slime([*args, "--fp8-recipe", "blockwise"])  # no format: no FP8 (Megatron-LM)
    assert "--train-fp8" not in dict(q.flags)
    a = "actor_rollout_ref.actor"
    tf = f"+{a}.megatron.override_transformer_config"
    q = import_verl(DATA / "verl_grpo.yaml", [f"{a}.strategy=megatron", f"{tf}.fp8=e4m3"])
    assert ("--train-fp8", "delayed") in q.flags  # TransformerConfig's default recipe


def test_te_keeps_two_fp8_copies_of_each_linear_weight_through_the_step() -> None:
    """placement/fp8_memory.py: a row-wise and a column-wise FP8 copy (1 B each) of every
    Linear weight on the rank (TE caches them after the step's first micro-batch); under
    fp8_param the row-wise copy is the weight. Llama-3.1-8B's config.json (d 4096, 32 heads
    and 8 KV heads of 128, d_ff 14336, 32 layers): its Linear weights by hand, split over TP 2,
    with the norms (2 d a layer and the final d, replicated) the counted upper bound."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.query import evaluate

    d, layers = 4096, 32
    linear = layers * (d * (32 * 128 + 2 * 8 * 128) + 32 * 128 * d + 3 * d * 14336) // 2
    norms = 2 * d * layers + d
    base = ["-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8", "--framework", "nemo-rl",
            "--zero", "1", "--param-dtype", "bf16", "--tp", "2"]  # fmt: skip

    def own(*more: str):  # noqa: ANN202 - a MemoryBreakdown
        est = evaluate(run_from_argv("grpo", [*base, *more]))
        assert est.evaluation is not None
        return next(j.own for g in est.evaluation.groups for j in g.jobs
                    if j.task.kind is Kind.TRAIN)  # fmt: skip

    bf16, fp8 = own(), own("--train-fp8", "tensorwise")
    assert fp8.buffers - bf16.buffers == 2 * (linear + norms)
    assert fp8.weights == bf16.weights
    param = own("--train-fp8", "tensorwise", "--train-fp8-param")
    assert param.weights == bf16.weights - (linear + norms)  # 2 B -> 1 B a Linear weight
    assert param.buffers - bf16.buffers == linear + norms
    block = own("--train-fp8", "blockwise")  # an fp32 scale per 128 x 128 block, each copy
    blocks = -(-(linear + norms) // (128 * 128))
    assert block.buffers - bf16.buffers == 2 * (linear + norms + 4 * blocks)
