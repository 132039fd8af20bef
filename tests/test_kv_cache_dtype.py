"""An engine's KV-cache dtype (``--kv-cache-dtype``, ``EngineSpec.kv_cache_dtype``): FP8 keys
and values at one byte an element, the linear-attention states in their own dtypes, and the
frameworks' keys that set it.

Independent sources: vLLM's page size, ``AttentionSpec.page_size_bytes = 2 x block_size x
num_kv_heads x head_size x get_dtype_size(kv_cache_dtype)`` (vllm/v1/kv_cache_interface.py),
over the checkpoint's config.json (Qwen2.5-7B: 28 layers, 4 KV heads of 128); vLLM's
``mamba_cache_dtype`` "auto" keeps a Mamba/Gated DeltaNet layer's conv state in the model's
dtype whatever the KV cache's (vllm/config/cache.py); NeMo RL's grpo.py ``setup`` asserts
(7ea279abf); slime's docs/en/advanced/low-precision.md ("FP8 KV Cache for Rollout").
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.deployment.engine import EngineSpec
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.parallel.layout import Layout
from rlmcost.perf.validate_memory_engine import engine_job, kv_bytes_per_token
from rlmcost.specs import get_model
from rlmcost.specs.workload import Workload

DATA = Path(__file__).parent / "data" / "frameworks"
runner = CliRunner()
QUERY = ("rlmcost grpo -m qwen2.5-7b -H h100 --gpus 8 -B 64 -K 8 -S 512 -T 4096 "
         "--groups rollout=4[tp=1],actor+reference=4")  # fmt: skip
QWEN25_7B_TOKEN_BF16 = 28 * 2 * 4 * 128 * 2  # vLLM page size per token, bf16 (57,344 B)


def _engine(extra: str = "") -> tuple:
    row = {"id": "kv", "command": f"{QUERY} {extra}".strip()}
    est, _g, job = engine_job(row, run_from_argv)
    return est, job


def test_fp8_keys_and_values_take_one_byte_as_vllms_page_size() -> None:
    est, job = _engine()
    est8, job8 = _engine("--kv-cache-dtype fp8")
    assert kv_bytes_per_token(est, job, 4096) == 4096 * QWEN25_7B_TOKEN_BF16
    assert kv_bytes_per_token(est8, job8, 4096) == 4096 * QWEN25_7B_TOKEN_BF16 // 2
    # the pool is what the reservation leaves after weights and workspace: the same bytes,
    # twice the tokens
    assert int(job8.memory.kv_cache) == int(job.memory.kv_cache)
    assert int(job8.memory.weights) == int(job.memory.weights)


def test_a_groups_own_kv_cache_dtype_is_the_one_its_engine_keeps() -> None:
    row = {"id": "kv", "command": QUERY.replace("[tp=1]", "[tp=1;kv-cache-dtype=fp8]")}
    est, _g, job = engine_job(row, run_from_argv)
    assert kv_bytes_per_token(est, job, 1024) == 1024 * QWEN25_7B_TOKEN_BF16 // 2


def test_generation_with_fp8_kv_is_no_slower() -> None:
    def gen(extra: str) -> float:
        est, job = _engine(extra)
        return float(job.predicted_s)

    assert gen("--kv-cache-dtype fp8") < gen("")


def test_linear_attention_states_keep_their_dtypes() -> None:
    """A Gated DeltaNet model (Qwen3.5): only the full-attention layers' keys and values
    shrink; the recurrent state (the engine's dtype) and the conv state (the model's) do not."""
    model = get_model("qwen3.5-2b")
    arch = model.arch()
    attention_layers = int(arch.n_layers - arch.linear_layers)  # 24 - 18 (config.json)
    assert arch.linear_layers and attention_layers == 6
    base = Workload()
    # as placement.task_workload sets a vLLM engine's: recurrent state in the model's dtype
    fp8 = Workload(kv_dtype=Dtype.FP8, conv_dtype=Dtype.BF16, state_dtype=Dtype.BF16)
    seq = 2048

    def kv(w: Workload) -> int:
        return int(memory_per_rank(arch, Layout(), "generate", 1, seq, w).kv_cache)

    attention = attention_layers * seq * int(arch.kv_cache_width) * 2  # bf16
    assert kv(base) - kv(fp8) == attention // 2
    # the conv state counted in the KV's dtype would shrink it further
    assert kv(Workload(kv_dtype=Dtype.FP8, state_dtype=Dtype.BF16)) < kv(fp8)


@pytest.mark.parametrize("given, want", [
    ("fp8", Dtype.FP8), ("fp8_e4m3", Dtype.FP8), ("FP8_E5M2", Dtype.FP8), ("auto", None),
    ("bf16", Dtype.BF16), (None, None),
])  # fmt: skip
def test_engine_names_of_fp8(given: str | None, want: Dtype | None) -> None:
    assert EngineSpec(kv_cache_dtype=given).kv_cache_dtype == want


@pytest.mark.parametrize("argv, message", [
    (["--kv-cache-dtype", "int4"], "KV-cache dtype int4: give auto, bf16, fp16 or fp8"),
    (["--engine", "hf", "--kv-cache-dtype", "fp8"], "applies to vLLM and SGLang engines"),
])  # fmt: skip
def test_bad_kv_cache_dtypes_are_one_line(argv: list[str], message: str) -> None:
    out = runner.invoke(app, ["grpo", "-m", "qwen2.5-1.5b", "--gpus", "8", *argv])
    assert out.exit_code != 0 and message in out.output
    assert "Traceback" not in out.output


def test_the_header_says_the_engines_kv_dtype() -> None:
    out = runner.invoke(app, shlex.split(QUERY)[1:] + ["--kv-cache-dtype", "fp8"])
    assert out.exit_code == 0, out.output
    assert "(fp8 in the engines)" in " ".join(out.output.split())


NEMO = DATA / "nemo_rl_grpo_math.yaml"
FP8_KV = ["policy.megatron_cfg.enabled=true", "policy.dtensor_cfg.enabled=false",
          "policy.generation.vllm_cfg.precision=fp8",
          "policy.generation.vllm_cfg.kv_cache_dtype=fp8"]  # fmt: skip


def test_nemo_rl_kv_cache_dtype_fp8() -> None:
    # examples/configs/recipes/llm/grpo-qwen3-8b-base-1n8g-fp8-kvcache-megatron.yaml's keys
    flags = dict(import_nemo_rl(NEMO, FP8_KV, 200).flags)
    assert flags["--kv-cache-dtype"] == "fp8" and flags["--rollout-dtype"] == "fp8"
    assert "--kv-cache-dtype" not in dict(import_nemo_rl(NEMO, FP8_KV[:3], 200).flags)


@pytest.mark.parametrize("override, why", [
    (["policy.generation.vllm_cfg.precision=bfloat16"], "needs FP8 weights"),
    (["policy.megatron_cfg.enabled=false", "policy.dtensor_cfg.enabled=true"], "DTensor policy"),
    (["policy.generation.vllm_cfg.async_engine=true"], "async rollouts"),
    (["policy.megatron_cfg.pipeline_model_parallel_size=2"], "pipeline_model_parallel_size 1"),
])  # fmt: skip
def test_nemo_rl_refuses_what_its_setup_asserts(override: list[str], why: str) -> None:
    with pytest.raises(SpecError, match=f"NeMo RL refuses.*{why}"):
        import_nemo_rl(NEMO, [*FP8_KV, *override], 200)


def test_slime_sglang_kv_cache_dtype() -> None:
    lines = [ln for ln in (DATA / "slime_qwen3-4B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    argv = shlex.split(" ".join(lines)) + ["--sglang-kv-cache-dtype", "fp8_e4m3"]
    q = import_slime(argv)
    assert dict(q.flags)["--kv-cache-dtype"] == "fp8_e4m3"
    assert EngineSpec(kind="sglang", kv_cache_dtype="fp8_e4m3").kv_cache_dtype is Dtype.FP8


def test_verl_engine_kwargs_pass_through() -> None:
    key = "actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_dtype"
    flags = dict(import_verl(DATA / "verl_grpo.yaml", [f"{key}=fp8"]).flags)
    assert flags["--kv-cache-dtype"] == "fp8"
    auto = import_verl(DATA / "verl_grpo.yaml", [f"{key}=auto"])
    assert "--kv-cache-dtype" not in dict(auto.flags)


KV_SCALES = ("grpo -m qwen3-8b -H h100 --gpus 8 -B 32 -K 16 -S 512 -T 2048 --tp 4 "
             "--rollout-dtype fp8 --kv-cache-dtype fp8")  # fmt: skip


def _phases(extra: str = "") -> dict[str, float]:
    from rlmcost.evaluation.query import evaluate

    words = shlex.split(f"{KV_SCALES} {extra}")
    ev = evaluate(run_from_argv(words[0], words[1:])).evaluation
    return {p.name: p.time_s for p in ev.phases}


def test_nemo_rl_calibrates_kv_scales_with_a_log_prob_forward() -> None:
    """grpo.py grpo_train: after policy.train, calibrate_qkv_fp8_scales(train_data) runs
    get_logprobs over the same samples with the log-prob micro-batches: the 'kv scales' phase
    is the old-log-prob forward again (NeMo RL is the default deployment)."""
    on = _phases()
    assert on["kv scales"] == on["old log-prob"] > 0
    off = _phases("--no-kv-scale-calibration")
    assert "kv scales" not in off
    assert {k: v for k, v in on.items() if k != "kv scales"} == off
    assert "kv scales" not in _phases("--framework verl")
    assert "kv scales" in _phases("--framework verl --kv-scale-calibration")


def test_kv_scales_need_a_sampling_loop() -> None:
    out = runner.invoke(app, ["dpo", "-m", "qwen2.5-1.5b", "--gpus", "8",
                              "--kv-scale-calibration"])  # fmt: skip
    assert out.exit_code != 0 and "samples nothing in its loop" in out.output
    assert "Traceback" not in out.output
