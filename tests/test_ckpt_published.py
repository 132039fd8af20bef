"""Checkpoints published quantized: the built-ins' ``checkpoint_quant``, a config.json's
``quantization_config`` read into it, and slime's importer serving a built-in's published
checkpoint as stored (rlmcost.frameworks.ckpt_quant).

The slime launch lines are THUDM/slime scripts at commit 624b824a, expanded into
tests/data/frameworks/slime_*.args (run-kimi-k2-Instruct.sh with scripts/models/kimi-k2.sh,
run-deepseek-r1.sh with scripts/models/deepseek-v3.sh)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.slime import import_slime
from rlmcost.specs.hf_config import load_config
from rlmcost.specs.registry import get_model, models

DATA = Path(__file__).parent / "data" / "frameworks"
GIB = 1 << 30
BASE = ["--rollout-batch-size", "8", "--n-samples-per-prompt", "4",
        "--actor-num-gpus-per-node", "4", "--rollout-num-gpus-per-engine", "2",
        "--rollout-num-gpus", "4"]  # fmt: skip


def _args(name: str) -> list[str]:
    lines = [ln for ln in (DATA / f"slime_{name}.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    return shlex.split(" ".join(lines))


def _flags(q: Any) -> dict[str, Any]:
    return dict(q.flags)


@pytest.mark.parametrize(("name", "quant"), [
    # deepseek-ai/DeepSeek-V3 README_WEIGHTS.md: block-wise FP8, quant_method fp8
    ("deepseek-v3", "fp8"),
    # slime docs/en/examples/deepseek-r1.md @624b824a: "in a block-quantized fp8 format"
    ("deepseek-r1", "fp8"),
    # vLLM recipes, moonshotai/Kimi-K2: "Kimi-K2 FP8 weights"
    ("kimi-k2", "fp8"),
    # Megatron-Bridge docs/models/minimax/minimax-m2.md @067f987d: FP8 block-wise weights
    ("minimax-m2", "fp8"),
    # slime scripts/low_precision/run-kimi-k2-Thinking-int4.sh @624b824a: the INT4 checkpoint
    ("kimi-k2-thinking", "int4"),
    # Megatron-Bridge docs/models/kimi/kimi-k25-vl.md @067f987d: INT4-packed experts
    ("kimi-k2.5", "int4"),
    # Megatron-Bridge gpt_oss_bridge.py @067f987d: MXFP4 experts dequantized on import
    ("gpt-oss-20b", "mxfp4"),
    ("gpt-oss-120b", "mxfp4"),
    # bf16 checkpoints; GLM-4.5's FP8 is a separate zai-org/GLM-4.5-FP8 repository
    ("qwen3-235b-a22b", None),
    ("glm-4.5", None),
])
def test_builtins_record_how_their_checkpoint_is_stored(name: str, quant: str | None) -> None:
    spec = get_model(name)
    assert spec.checkpoint_quant == quant
    if quant:  # the source says where it was read
        assert "checkpoint_quant" in spec.source
    assert "checkpoint_quant" not in spec.arch().__dataclass_fields__  # no cost reads it


def test_only_the_cited_builtins_are_quantized() -> None:
    quantized = {m.name for m in models() if m.checkpoint_quant}
    assert quantized == {"deepseek-v3", "deepseek-r1", "kimi-k2", "minimax-m2",
                         "kimi-k2-thinking", "kimi-k2.5", "gpt-oss-20b", "gpt-oss-120b"}


QWEN3_4B = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 2560,
    "intermediate_size": 9728, "num_hidden_layers": 36, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
    "max_position_embeddings": 40960, "tie_word_embeddings": True}  # fmt: skip


@pytest.mark.parametrize(("qc", "quant"), [
    # DeepSeek-V3's quantization_config (README_WEIGHTS.md)
    ({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
      "weight_block_size": [128, 128]}, "fp8"),
    # compressed-tensors INT4 groups of 32, as Kimi-K2-Thinking's routed experts
    ({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups":
      {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                      "group_size": 32}}}}, "int4"),
    ({"quant_method": "mxfp4"}, "mxfp4"),
    (None, None),
])
def test_a_config_json_quantization_config_sets_the_field(tmp_path, qc, quant) -> None:
    cfg = dict(QWEN3_4B, **({"quantization_config": qc} if qc else {}))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    spec = load_config(tmp_path / "config.json")
    assert spec.checkpoint_quant == quant
    (tmp_path / "plain.json").write_text(json.dumps(QWEN3_4B))
    plain = load_config(tmp_path / "plain.json")
    assert spec.arch().with_(name="") == plain.arch().with_(name="")  # the same shape


def _generation(argv: list[str], algorithm: str, hardware: str) -> tuple[int, bool]:
    """The largest weight bytes a device holds in one invocation (the actor's engine) and
    whether the iteration fits."""
    ev = evaluate_deployment(run_from_argv(algorithm, [*argv, "--hardware", hardware]))
    return max(j.memory.weights for g in ev.groups for j in g.jobs), ev.fits


def test_kimi_k2_script_serves_the_published_fp8_checkpoint() -> None:
    # run-kimi-k2-Instruct.sh: --hf-checkpoint $BASE_DIR/Kimi-K2-Instruct/, the published
    # block-wise FP8 checkpoint SGLang serves while Megatron trains BF16 (slime
    # docs/en/advanced/low-precision.md): --rollout-dtype fp8, as a -FP8 folder would get
    q = import_slime(_args("kimi-k2-Instruct"))
    f = _flags(q)
    assert f["--model"] == "kimi-k2" and f["--rollout-dtype"] == "fp8"
    assert any(c.flag == "--rollout-dtype" and "kimi-k2's published checkpoint" in c.how
               for c in q.conversions)  # fmt: skip
    assert (f["--rollout-tp"], f["--gpu-memory-utilization"], f["--gpus"]) == (16, 0.7, 256)
    # the engine's weights per device halve: 1 B a parameter at FP8, 2 at BF16 (the argv
    # without the FP8 rollout dtype: the pricing before the published format was read)
    argv = q.argv()
    i = argv.index("--rollout-dtype")
    bf16_argv = argv[:i] + argv[i + 2 :]
    fp8, fits_h100 = _generation(argv, q.algorithm, "h100-sxm")
    bf16, _ = _generation(bf16_argv, q.algorithm, "h100-sxm")
    assert abs(2 * fp8 - bf16) <= bf16 // 100  # 63.1 GiB, was 126 GiB
    # Kimi-K2's 1,026,408,209,408 parameters (rlmcost.compiled) over 16 GPUs: at least that,
    # and the bf16 embedding, head and routers (the checkpoint's, 0.3 GiB a GPU) on top
    assert 1_026_408_209_408 // 16 <= fp8 < 64 * GIB
    # 0.7 of an H100 (55.4 GiB) holds no FP8 copy of 63.1 GiB: it does not fit there; 0.7
    # of an H200 (97.9 GiB) does, with room for the KV cache (at bf16 neither did)
    assert not fits_h100
    assert _generation(argv, q.algorithm, "h200")[1]
    assert not _generation(bf16_argv, q.algorithm, "h200")[1]


def test_the_converted_bf16_folder_stays_bf16() -> None:
    # the scripts' commented alternatives, converted by tools/fp8_cast_bf16.py
    # (docs/en/examples/deepseek-r1.md): unquantized, the built-in by its name less "-bf16"
    for folder, model in (("/root/Kimi-K2-bf16/", "kimi-k2"),
                          ("/root/DeepSeek-R1-bf16/", "deepseek-r1")):  # fmt: skip
        q = import_slime(["--hf-checkpoint", folder, *BASE])
        assert _flags(q)["--model"] == model and "--rollout-dtype" not in _flags(q)


def test_deepseek_r1_script_and_the_int4_thinking_checkpoint() -> None:
    # run-deepseek-r1.sh: --hf-checkpoint $BASE_DIR/DeepSeek-R1/ ("we are using the fp8
    # checkpoint of DeepSeek R1", docs/en/examples/deepseek-r1.md)
    assert _flags(import_slime(_args("deepseek-r1")))["--rollout-dtype"] == "fp8"
    # scripts/low_precision/run-kimi-k2-Thinking-int4.sh: --hf-checkpoint /root/Kimi-K2-Thinking/
    # (the published checkpoint's INT4 experts, group 32): served as stored, --rollout-weights;
    # run-kimi-k2-Thinking.sh's Kimi-K2-Thinking-fp8 folder is FP8 by its suffix
    int4 = import_slime(["--hf-checkpoint", "/root/Kimi-K2-Thinking/", *BASE])
    assert "--rollout-dtype" not in _flags(int4)
    assert _flags(int4)["--rollout-weights"] == "int4-g32:experts"
    assert any(c.flag == "--rollout-weights" and "published" in c.how for c in int4.conversions)
    fp8 = import_slime(["--hf-checkpoint", "/root/Kimi-K2-Thinking-fp8/", *BASE])
    assert _flags(fp8)["--rollout-dtype"] == "fp8"


def test_a_local_config_json_decides_over_the_published_format(tmp_path) -> None:
    # a folder named as the built-in but on this machine, its config.json without
    # quantization_config (a dequantized copy): its config.json, not models.json, decides
    ckpt = tmp_path / "Qwen3-4B"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps(QWEN3_4B))
    assert "--rollout-dtype" not in _flags(import_slime(["--hf-checkpoint", str(ckpt), *BASE]))
    plain = import_slime(["--hf-checkpoint", "/root/Qwen3-4B", *BASE])
    assert "--rollout-dtype" not in _flags(plain)
