"""NVIDIA's published pre-training rows (issue 18) and the MLA shapes they exercise."""

from __future__ import annotations

import pytest

from rlmcost.parallel.layout import Layout
from rlmcost.perf.train_step import model_flops_train, train_step_time
from rlmcost.perf.validate import load_table, validate
from rlmcost.specs import get_hardware
from rlmcost.specs.registry import get_model

MB_COMMIT = "067f987df"  # NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md
AM_COMMIT = "cb9765441"  # NVIDIA-NeMo/Automodel docs/performance-summary.mdx


def _rows(source: str) -> list[dict]:
    return [r for r in load_table()["rows"] if r["source"] == source]


def test_megatron_bridge_rows_cite_page_commit_and_figure():
    rows = {r["id"]: r for r in _rows("megatron_bridge")}
    # 25.11 NeMo Container, DGX-GB200, BF16: Qwen3_235B_a22B 4916 and DeepSeekV3 (w/o MTP)
    # 3139 Tokens/sec/GPU (the archive page at MB_COMMIT)
    want = {
        "megatron-bridge-25.11-gb200-qwen3-235b-a22b-bf16": (4916, 256, 8192),
        "megatron-bridge-25.11-gb200-deepseek-v3-bf16": (3139, 256, 4096),
        # the GPT-OSS 120B rows (tests/test_validate_bridge_rows.py)
        "megatron-bridge-25.11-gb200-gpt-oss-120b-bf16": (15876, 64, 1280),
        "megatron-bridge-25.11-b200-gpt-oss-120b-bf16": (8213, 64, 512),
        "megatron-bridge-25.11-h100-gpt-oss-120b-bf16": (5630, 64, 512),
        # the FP8 rows of the same section (tests/test_validate_fp8_rows.py): DGX-H100 LLAMA3_70B
        # FP8-CS 1602; LLAMA3_8B FP8-CS (FP8-MX) on DGX-GB200 31508 (29789) and DGX-B200 30624
        # (29521); DGX-GB200 Qwen3_30B_a3B FP8-MX 23766
        "megatron-bridge-25.11-h100-llama3-70b-fp8": (1602, 64, 128),
        "megatron-bridge-25.11-gb200-llama3-8b-fp8": (31508, 8, 128),
        "megatron-bridge-25.11-gb200-llama3-8b-fp8-mx": (29789, 8, 128),
        "megatron-bridge-25.11-b200-llama3-8b-fp8": (30624, 8, 128),
        "megatron-bridge-25.11-b200-llama3-8b-fp8-mx": (29521, 8, 128),
        "megatron-bridge-25.11-gb200-qwen3-30b-a3b-fp8-mx-mbs4": (23766, 8, 512),
    }
    assert set(rows) == set(want)
    for rid, (figure, gpus, gbs) in want.items():
        r = rows[rid]
        assert r["published"] == figure and r["batch"] == gbs
        assert MB_COMMIT in r["cite"] and f"{figure} Tokens/sec/GPU" in r["cite"]
        lay = r["layout"]
        assert lay["tp"] * lay["pp"] * lay["dp"] * lay.get("cp", 1) == gpus
        assert r["metric"] == "tokens_per_s_per_gpu"
        assert r["hardware"] == {"b200": "b200", "h100": "h100-sxm"}.get(rid.split("-")[3], "gb200")


def test_automodel_llama3_70b_row_is_its_own_tokens_figure():
    (r,) = [r for r in _rows("nemo_automodel") if r["id"] == "nemo-automodel-llama3-70b-64gpu"]
    assert AM_COMMIT in r["cite"]
    # the page's own identity: 128 x 8192 tokens / (18.90 s x 64 GPUs) = 866.77 tokens/s/GPU
    assert 128 * 8192 / (r["published"] * 64) == pytest.approx(866.77, rel=1e-3)


def test_tokens_metric_and_context_parallel_reach_the_prediction():
    rows = {r.id: r for r in validate("megatron_bridge").rows + validate("nemo_automodel").rows}
    qwen = rows["megatron-bridge-25.11-gb200-qwen3-235b-a22b-bf16"]
    # exact identity: tokens/s/GPU = GBS x seq / (step x GPUs)
    assert qwen.predicted == pytest.approx(8192 * 4096 / (qwen.step.step_s * 256), rel=1e-12)
    # cp=2 is part of the layout: 32 DP x 2 CP = the 64 GPUs of the row (was dropped before)
    assert rows["nemo-automodel-llama3-70b-64gpu"].step.gpus == 64


def test_mla_training_flops_match_the_published_per_token_count():
    # Megatron-Bridge 25.11 GB200 BF16 DeepSeek-V3: 782 model TFLOP/s at 3139 tokens/s/GPU,
    # 2.491e11 FLOP per token (Megatron's count: MLA projections, causal attention). rlmcost
    # counts attention over the full S x S: minus half of it, the two agree within 2 %.
    arch = get_model("deepseek-v3").arch()
    seq = 4096
    full = model_flops_train(arch, 1, seq)
    # MLA pair FLOPs 2 h (d_qk + d_v) = 2 x 128 x (192 + 128), fwd + bwd = 3x, 61 layers
    attention = 3 * 61 * 2 * 128 * (192 + 128) * seq * seq
    per_token = (full - attention // 2) / seq
    assert per_token == pytest.approx(782e12 / 3139, rel=0.02)


def test_mla_projections_are_cheaper_than_the_mha_of_their_width():
    # The latent down/up projections (arXiv:2405.04434 §2.1.2) multiply 187 M weights per token
    # and layer in DeepSeek-V3 against 705 M for MHA of 128 heads x 192 (q, k, v, o):
    # the step must be far below a pass that treated MLA as that MHA.
    arch = get_model("deepseek-v3").arch()
    lay = Layout(dp=1, pp=1, ep=1)
    from rlmcost.perf.train_step import _attn_weights

    assert _attn_weights(arch) == (
        1536 * (7168 + 128 * 192) + 7168 * (512 + 64) + 512 * 128 * (128 + 128) + 128 * 128 * 7168
    )
    step = train_step_time(arch, lay, 1, 1024, get_hardware("gb200"))
    assert step.compute_s["gemm"] > 0


def test_unpredicted_nvidia_rows_keep_their_reason():
    # rows of the same pages that rlmcost cannot express (pretrain_runs.json): each says why
    import json
    from importlib import resources

    text = resources.files("rlmcost.perf").joinpath("data", "pretrain_runs.json").read_text()
    nvidia = ("megatron_bridge", "nemo_automodel")
    rows = [r for r in json.loads(text)["rows"] if r["source"] in nvidia]
    assert len(rows) >= 8
    for r in rows:
        assert r["not_predicted"] and r["published"] > 0
        assert MB_COMMIT in r["cite"] or AM_COMMIT in r["cite"]


def _flat_readme() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    return " ".join(text.split())


def test_the_readme_states_the_pretraining_figures_validate_prints():
    """Issue 18: the training rows' figures are printed and stated in the README. The README's
    sentences are recomputed here from `rlmcost validate`'s rows (exact arithmetic over each
    row's error): every row, and the rows beyond Megatron-LM's own tables (every source but
    Narayanan et al. 2021 and Korthikanti et al. 2022), against the issue's mean <= 8 % and
    max <= 20 %."""
    import re

    rows = validate().rows
    readme = _flat_readme()
    errs = [abs(r.error) for r in rows]
    sources = {r.source for r in rows}
    m = re.search(r"All training rows \(`rlmcost validate`, (\d+) rows, (\d+) sources\): mean "
                  r"\|error\| ([\d.]+) %, max ([\d.]+) %", readme)  # fmt: skip
    assert m, "the README's sentence on all training rows is missing"
    assert (int(m[1]), int(m[2])) == (len(rows), len(sources))
    assert (m[3], m[4]) == (f"{100 * sum(errs) / len(errs):.1f}",
                            f"{100 * max(errs):.1f}")  # fmt: skip
    own = {"narayanan2021", "korthikanti2022"}
    beyond = [abs(r.error) for r in rows if r.source not in own]
    m = re.search(r"The (\d+) pre-training rows beyond Megatron-LM's own tables \(every source "
                  r"but [^)]*\): mean \|error\| ([\d.]+) %, max ([\d.]+) % \([^)]*\), (\d+) rows "
                  r"more than 20 % off: (short of|meeting) the targets", readme)  # fmt: skip
    assert m, "the README's sentence on the rows beyond Megatron-LM's tables is missing"
    assert int(m[1]) == len(beyond)
    assert (m[2], m[3]) == (f"{100 * sum(beyond) / len(beyond):.1f}",
                            f"{100 * max(beyond):.1f}")  # fmt: skip
    assert int(m[4]) == sum(e > 0.20 for e in beyond)
    met = sum(beyond) / len(beyond) <= 0.08 and max(beyond) <= 0.20
    assert m[5] == ("meeting" if met else "short of")
