"""4-bit rollout weights (``--rollout-weights FORMAT[:PARTS]``, rlmcost.parallel.packed_weights).

Independent sources: the tensors vLLM allocates for a quantized Linear layer, counted by hand
from the checkpoints' config.json shapes — ModelOpt NVFP4 (``ModelOptNvFp4LinearMethod``:
``weight`` uint8 [N, K/2], ``weight_scale`` float8_e4m3fn [N, K/16]), compressed-tensors
pack-quantized INT4 (``CompressedTensorsWNA16``: ``weight_packed`` int32 [N, K/8],
``weight_scale`` bf16 [N, K/g]), MXFP4 (E2M1 [N, K/2] and an E8M0 scale [N, K/32]); which
weights slime's converter quantizes (THUDM/slime tools/convert_hf_to_int4_direct.py @624b824a:
``--ignore-rules`` lm_head, norms, embeddings, self_attn, shared_experts, dense MLP, router).
"""

from __future__ import annotations

import shlex
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.evaluation.query import evaluate
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.packed_weights import FORMATS, packed_params
from rlmcost.parallel.shard import PipelineStage
from rlmcost.run.command import to_command
from rlmcost.specs import get_model
from rlmcost.specs.workload import Workload

runner = CliRunner()


def _bytes_per_element(k: int, n: int, values_bits: int, scale_bits: int, group: int) -> Fraction:
    """A [n, k] weight's bytes per element: packed values plus one scale per group along k."""
    return Fraction(n * k * values_bits // 8 + n * (k // group) * scale_bits // 8, n * k)


def test_format_bytes_are_the_engines_tensors() -> None:
    k, n = 2048, 768  # a Qwen3-30B-A3B expert's gate projection (config.json)
    assert FORMATS["nvfp4"] == _bytes_per_element(k, n, 4, 8, 16) == Fraction(9, 16)
    assert FORMATS["mxfp4"] == _bytes_per_element(k, n, 4, 8, 32) == Fraction(17, 32)
    assert FORMATS["int4-g32"] == _bytes_per_element(k, n, 4, 16, 32)
    assert FORMATS["int4-g128"] == _bytes_per_element(k, n, 4, 16, 128) == Fraction(33, 64)


def _stage(name: str) -> tuple:
    arch = get_model(name).arch()
    a = arch_numbers(arch)
    dense = a.first_dense_layers if a.moe else a.n_layers
    return arch, PipelineStage(0, 1, dense, a.n_layers - dense)


def test_quantized_parts_counted_from_the_configs() -> None:
    # DeepSeek-V3 config.json: 61 layers, 3 dense (FFN 18432), 58 MoE of 256 routed experts
    # and 1 shared of 2048, hidden 7168, gated FFNs (3 projections)
    arch, stage = _stage("deepseek-v3")
    routed = 58 * 256 * 3 * 7168 * 2048
    assert packed_params(arch, Layout(), stage, "experts") == routed
    assert packed_params(arch, Layout(), stage, "mlp") == (routed + 3 * 3 * 7168 * 18432
                                                           + 58 * 3 * 7168 * 2048)  # fmt: skip
    # TP (and expert TP x EP) split them as they split the model
    assert packed_params(arch, Layout(tp=8), stage, "experts") == routed // 8
    assert packed_params(arch, Layout(tp=8, ep=8), stage, "experts") == routed // 64
    # Qwen3-8B (dense, 36 layers, FFN 12288, hidden 4096): mlp = every FFN, no experts
    arch, stage = _stage("qwen3-8b")
    assert packed_params(arch, Layout(), stage, "mlp") == 36 * 3 * 4096 * 12288
    assert packed_params(arch, Layout(), stage, "experts") == 0


def test_kimi_k2_thinking_int4_experts_in_memory() -> None:
    """Kimi-K2-Thinking's checkpoint: routed experts INT4 with a bf16 scale per 32, the rest
    bf16 (60 MoE layers of 384 experts, hidden 7168, expert FFN 2048): a GPU of a TP-8 engine
    holds 1/8 of the experts at 9/16 B in place of 2 B."""
    arch = get_model("kimi-k2-thinking").arch()
    layout = Layout(tp=8)
    plain = memory_per_rank(arch, layout, "generate", 1, 1024, Workload()).weights
    int4 = memory_per_rank(arch, layout, "generate", 1, 1024,
                           Workload(packed_format="int4-g32", packed_parts="experts")).weights
    experts = 60 * 384 * 3 * 7168 * 2048 // 8
    assert plain - int4 == experts * 2 - experts * 9 // 16


def _run(extra: str):
    words = shlex.split("grpo -m qwen3-30b-a3b -H h100 --gpus 8 -B 64 -K 8 -S 512 -T 4096 "
                        + extra)  # fmt: skip
    return run_from_argv(words[0], words[1:])


def _generation(extra: str) -> tuple[float, int]:
    ev = evaluate(_run(extra)).evaluation
    job = next(j for g in ev.groups for j in g.jobs if j.task.kind == "generate")
    return job.predicted_s, int(job.memory.weights)


def test_decode_streams_fewer_bytes() -> None:
    t16, w16 = _generation("")
    t4, w4 = _generation("--rollout-weights int4-g32:experts")
    tn, wn = _generation("--rollout-weights nvfp4")
    assert w4 < w16 and wn < w4  # linear packs the attention too
    assert t4 < t16 and tn <= t4


def test_the_command_and_brackets_round_trip() -> None:
    run = _run("--rollout-weights nvfp4:mlp")
    assert (run.deployment.engine.weight_format, run.deployment.engine.weight_parts) == (
        "nvfp4", "mlp")
    again = shlex.split(to_command(run))
    assert again[again.index("--rollout-weights") + 1] == "nvfp4:mlp"
    grouped = _run("--groups 'rollout=4[rollout-weights=int4-g128:experts],actor+reference=4'")
    own = grouped.deployment.group("rollout").engine
    assert (own.weight_format, own.weight_parts) == ("int4-g128", "experts")


@pytest.mark.parametrize("argv, message", [
    (["--rollout-weights", "int3"], "4-bit weight format int3: give one of nvfp4"),
    (["--rollout-weights", "nvfp4:attention"], "--rollout-weights 'attention'"),
    (["--rollout-weights", "nvfp4", "--rollout-dtype", "fp8"], "drop one"),
    (["--rollout-weights", "nvfp4", "--engine", "hf"], "applies to vLLM and SGLang"),
    (["--rollout-weights", "nvfp4:experts", "-m", "qwen3-8b"], "has no routed experts"),
])  # fmt: skip
def test_bad_rollout_weights_are_one_line(argv: list[str], message: str) -> None:
    model = [] if "-m" in argv else ["-m", "qwen3-30b-a3b"]
    out = runner.invoke(app, ["grpo", "--gpus", "8", *model, *argv])
    assert out.exit_code != 0 and message in out.output, out.output
    assert "Traceback" not in out.output
