"""The engine's own dtype (``--rollout-dtype``, ``EngineSpec.dtype``): vLLM's FP8 W8A8
quantization as NeMo RL's ``vllm_cfg.precision: fp8`` runs it.

Independent facts: an FP8 weight is one byte (E4M3), so the engine's weights per device are
params / TP bytes, half of bf16's, but for the embedding, LM head and norms the engine keeps in
bf16 (Llama-3.1-8B: 8,030,261,248 parameters, the count of
transformers' LlamaForCausalLM built from its config, also pinned in the model registry
tests); the KV cache keeps the workload's dtype; decode, weight-streaming bound, gets faster
and its roofline bound lower (the bound reads half the bytes, the FP8 peak is twice bf16's on
H100: 1,979 vs 989 TFLOP/s dense, NVIDIA H100 datasheet)."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from rlmcost import evaluate
from rlmcost.algorithms.kinds import Kind
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.reports.estimate import estimate
from rlmcost.run import Run

runner = CliRunner()
KW = dict(gpus=8, batch=32, group=4, response_len=1024, length_dist="lognormal:300,0.8,1024")
LLAMA_8B_PARAMS = 8_030_261_248


def _generation(e):  # noqa: ANN001, ANN202
    return e.evaluation.jobs_of(Kind.GENERATE)[0]


def test_fp8_engine_holds_one_byte_per_weight_and_decodes_faster() -> None:
    bf16 = estimate("grpo", "llama-3.1-8b", hardware="h100-sxm", **KW)
    fp8 = evaluate(bf16.run.replace(deployment={"engine": {"dtype": "fp8"}}))
    g16, g8 = _generation(bf16), _generation(fp8)
    tp = g16.layout.tp
    # its 16-bit parts (vLLM's Fp8Config quantizes Linear layers only): the embedding and the
    # untied head, 128,256 x 4,096 each, vocab-split over TP, and 2 x 32 + 1 RMSNorms of 4,096
    # (Llama-3.1-8B config.json), one more byte each
    kept = 2 * -(-128_256 // tp) * 4_096 + (2 * 32 + 1) * 4_096
    assert g8.own.weights == LLAMA_8B_PARAMS // tp + kept
    assert g8.own.weights * 2 == g16.own.weights + 2 * kept
    assert g8.predicted_s < g16.predicted_s
    assert g8.ideal_s < g16.ideal_s
    # the trainer's weights are untouched
    train = [j for g in fp8.evaluation.groups for j in g.jobs if j.task.kind.value == "train"]
    ref = [j for g in bf16.evaluation.groups for j in g.jobs if j.task.kind.value == "train"]
    assert [j.own.weights for j in train] == [j.own.weights for j in ref]


def test_rollout_dtype_round_trips_through_the_command_line() -> None:
    args = ["grpo", "-m", "qwen2.5-0.5b", "--gpus", "8", "--rollout-dtype", "fp8", "--json"]
    out = json.loads(runner.invoke(app, args).stdout)
    assert out["run"]["deployment"]["engine"]["dtype"] == "fp8"
    line = Run.from_data(out["run"]).to_command()
    assert "--rollout-dtype fp8" in line
    again = json.loads(runner.invoke(app, [*shlex.split(line)[1:], "--json"]).stdout)
    assert again == out


def test_fp32_engine_is_refused_in_one_line() -> None:
    r = runner.invoke(app, ["grpo", "-m", "qwen2.5-0.5b", "--rollout-dtype", "fp32"])
    assert r.exit_code != 0
    assert "bf16, fp16 or fp8" in r.output and "Traceback" not in r.output


def test_nemo_rl_fp8_generation_imports_as_rollout_dtype(tmp_path) -> None:  # noqa: ANN001
    base = ["policy.model_name=meta-llama/Llama-3.1-8B-Instruct",
            "cluster.gpus_per_node=8", "cluster.num_nodes=1"]  # fmt: skip
    from pathlib import Path

    nemo = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
    q = import_nemo_rl(nemo, [*base, "policy.generation.vllm_cfg.precision=fp8"])
    assert dict(q.flags)["--rollout-dtype"] == "fp8"
    q = import_nemo_rl(nemo, base)
    assert "--rollout-dtype" not in dict(q.flags)
    with pytest.raises(SpecError, match="precision"):
        import_nemo_rl(nemo, [*base, "policy.generation.vllm_cfg.precision=int4"])


def test_rollout_dtype_needs_an_inference_engine() -> None:
    # HF generate and DeepSpeed-Chat's Hybrid Engine run the training weights in place
    r = runner.invoke(app, ["grpo", "-m", "qwen2.5-0.5b", "--engine", "hf", "--rollout-dtype",
                            "fp8"])  # fmt: skip
    assert r.exit_code != 0 and "vLLM and SGLang" in r.output


# --- enforce_eager: no CUDA graphs ---------------------------------------------------------


def test_eager_engine_decode_steps_last_at_least_the_launch_time_per_layer() -> None:
    from rlmcost.perf.generation import STEP_OVERHEAD_S
    from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER

    graphs = estimate("grpo", "llama-3.1-8b", hardware="h100-sxm", **KW)
    eager = evaluate(graphs.run.replace(deployment={"engine": {"eager": True}}))
    g0, g1 = _generation(graphs), _generation(eager)
    assert g1.own == g0.own  # memory is untouched
    # each decode step lasts at least 32 layers' (Llama-3.1-8B) launches
    # (EAGER_LAUNCH_S_PER_LAYER) plus the step's host overhead (rlmcost.perf.eager_launch);
    # the launches overlap the GPU work, so they add at most their own time
    steps = g0.timeline.steps
    launch = 32 * EAGER_LAUNCH_S_PER_LAYER.value
    assert g1.timeline.predicted_decode_s >= steps * (launch + STEP_OVERHEAD_S)
    assert 0 <= g1.predicted_s - g0.predicted_s <= 1.05 * steps * launch


def test_enforce_eager_imports_from_each_framework(tmp_path) -> None:  # noqa: ANN001
    from pathlib import Path

    from rlmcost.frameworks.openrlhf import import_openrlhf
    from rlmcost.frameworks.verl import import_verl

    data = Path(__file__).parent / "data" / "frameworks"
    verl = data / "verl_grpo.yaml"
    assert "--enforce-eager" in dict(
        import_verl(verl, ["actor_rollout_ref.rollout.enforce_eager=true"]).flags)
    assert "--enforce-eager" not in dict(import_verl(verl).flags)
    args = [a for ln in (data / "openrlhf_ppo_ray.args").read_text().splitlines()
            if ln and not ln.startswith("#") for a in shlex.split(ln)]  # fmt: skip
    assert "--enforce-eager" in dict(import_openrlhf([*args, "--enforce_eager"]).flags)
    line = Run.from_data(estimate("grpo", "qwen2.5-0.5b", gpus=8).run.replace(
        deployment={"engine": {"eager": True}}).to_json()).to_command()
    assert "--enforce-eager" in line
