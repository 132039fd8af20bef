"""Megatron-Bridge's 26.08 MXFP8 pre-training rows in ``rlmcost validate`` (source
``megatron_bridge_2608``): the DGX-GB200 rows of the page's '26.08 NeMo Container' section
whose model is built in, transcribed from the page's columns, their layouts and options from the
performance recipes at the commit that brought the section into the release branch."""

from __future__ import annotations

import pytest

from rlmcost.perf.moe_host import MOE_LAYER_HOST_S
from rlmcost.perf.validate import load_table, predict_row, validate

PAGE = "docs/performance-summary.md @067f987df"  # NVIDIA-NeMo/Megatron-Bridge
SECTION = "'26.08 NeMo Container'"
RECIPES = "@5796c06a1"  # r0.6.0: cp of 'docs: update performance summary for 26.08' (#5507)
SOURCE = "megatron_bridge_2608"

# The page's DGX-GB200 MXFP8 rows (performance-summary.md @067f987df, '26.08 NeMo Container'),
# its columns as printed: id suffix, model, #-GPUs, GBS, MBS, seq, TP, PP, VP, EP,
# Tokens/sec/GPU, Model TFLOP/sec/GPU
ROWS = [
    ("deepseek-v3-mxfp8", "deepseek-v3", 256, 4096, 1, 4096, 1, 4, 4, 64, 4912, 1276),
    ("gpt-oss-120b-mxfp8", "gpt-oss-120b", 64, 1280, 4, 4096, 1, 1, 1, 64, 28672, 934),
    ("qwen3-30b-a3b-mxfp8", "qwen3-30b-a3b", 8, 512, 4, 4096, 1, 1, 1, 8, 39936, 923),
    ("qwen3-235b-a22b-mxfp8", "qwen3-235b-a22b", 256, 8192, 1, 4096, 1, 8, 3, 32, 7280, 1077),
    ("nemotron-3.5-lightning-mxfp8", "nemotron-3.5-lightning-30b-a3b", 8, 512, 2, 8192, 1, 1, 1,
     8, 28672, 807),
    ("nemotron-3-super-mxfp8", "nemotron-3-super-120b-a12b", 64, 512, 1, 8192, 2, 1, 1, 64, 7040,
     600),
]  # fmt: skip


def _rows() -> dict[str, dict]:
    return {r["id"]: r for r in load_table()["rows"] if r["source"] == SOURCE}


def test_the_source_has_exactly_the_pages_gb200_rows_of_built_in_models():
    assert set(_rows()) == {f"megatron-bridge-26.08-gb200-{r[0]}" for r in ROWS}
    src = load_table()["sources"][SOURCE]
    # GB300 is not a built-in accelerator; DeepSeek-V4 Flash and Nemotron 3 Ultra not built-in
    # models; NVFP4 not a training recipe rlmcost prices: each left out with its reason
    excluded = " ".join(src["excluded"])
    for what in ("DGX-GB300", "DeepSeekV4 Flash (7776)", "Nemotron_3_Ultra (2528)",
                 "NVFP4 (7168)"):  # fmt: skip
        assert what in excluded


@pytest.mark.parametrize(
    ("suffix", "model", "gpus", "gbs", "mbs", "seq", "tp", "pp", "vp", "ep", "tokens", "tflops"),
    ROWS,
)  # fmt: skip
def test_every_row_is_transcribed(suffix, model, gpus, gbs, mbs, seq, tp, pp, vp, ep, tokens,
                                  tflops):  # fmt: skip
    r = _rows()[f"megatron-bridge-26.08-gb200-{suffix}"]
    assert r["published"] == tokens and PAGE.split()[-1] in r["cite"] and SECTION in r["cite"]
    assert f"{tokens} Tokens/sec/GPU" in r["cite"] and f"({tflops} model" in r["cite"]
    assert r["model"] == {"name": model, "seq": seq} and r["hardware"] == "gb200"
    assert r["options"]["fp8"] == "mxfp8" and r["dtype"] == "bf16"
    lay = r["layout"]
    assert (lay["tp"], lay["pp"], lay["virtual_stages"], lay["ep"]) == (tp, pp, vp, ep)
    assert lay["tp"] * lay["pp"] * lay["dp"] == gpus and lay["micro_batch"] == mbs
    assert r["batch"] == gbs and r["metric"] == "tokens_per_s_per_gpu"
    # every row names the recipe function it ran, read at the release branch's commit
    assert any(RECIPES in a and "_gb200_fp8mx_config" in a for a in r["assumptions"])


def test_deepseek_v3_row_is_its_recipes_layout_with_mtp():
    """deepseek_v3_pretrain_256gpu_gb200_fp8mx_config (src/megatron/bridge/perf_recipes/deepseek/
    gb200/deepseek_v3.py @5796c06a1): PP 4, VP 4, EP 64, recompute_modules ['mla_up_proj'];
    its base deepseek_v3_pretrain_config (recipes/deepseek/h100/deepseek_v3.py) trains
    mtp_num_layers 1, and set_deepseek_v3_pipeline_model_parallel_layout's layout_map[(4, 4)]
    is [embedding + 4 decoder], 14 x [4 decoder], [decoder] + [mtp] x 1 + [loss]."""
    r = _rows()["megatron-bridge-26.08-gb200-deepseek-v3-mxfp8"]
    layout_map_4_4 = [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14 + [
        ["decoder", "mtp", "loss"]]  # fmt: skip
    text = "|".join("".join({"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}[x]
                            for x in stage) for stage in layout_map_4_4)  # fmt: skip
    from rlmcost.parallel.pp_layout import parse

    assert parse(r["layout"]["pp_layout"], 4).stages == parse(text, 4).stages
    assert sum(len(s) for s in layout_map_4_4) - 3 == 61  # DeepSeek-V3's 61 layers
    o = r["options"]
    assert o["mtp_layers"] == 1 and not o.get("mtp_detach_heads", False)
    assert r["layout"]["ckpt"] == "selective" and o["recompute_modules"] == ["mla_up_proj"]
    # a full-iteration CUDA graph (_enable_deepseek_full_iteration_mxfp8): no host floor
    assert o["moe_layer_host_s"] == 0 and o["ep_dispatcher"] == "deepep"


def test_row_options_reach_the_step():
    """The row options this source adds reach StepOptions: the MTP depths make the DeepSeek-V3
    step longer (the last rank, 13 layers, the MTP depth and two heads, becomes the slowest),
    and the full-iteration graph's zero host floor makes the micro-batch-1 Qwen3-235B-A22B step
    shorter than under the eager floor (rlmcost.perf.moe_host: 4096 / (9691 x 48) s a layer)."""
    rows = _rows()
    ds = rows["megatron-bridge-26.08-gb200-deepseek-v3-mxfp8"]
    no_mtp = dict(ds, options=dict(ds["options"], mtp_layers=0))
    assert predict_row(ds).step.step_s > predict_row(no_mtp).step.step_s
    assert predict_row(ds).step.slowest_stage == 3
    q = rows["megatron-bridge-26.08-gb200-qwen3-235b-a22b-mxfp8"]
    eager = dict(q, options={k: v for k, v in q["options"].items() if k != "moe_layer_host_s"})
    assert MOE_LAYER_HOST_S.value == pytest.approx(4096 / (9691 * 48))
    assert predict_row(q).step.step_s < predict_row(eager).step.step_s


def test_the_nemotron_rows_keep_the_host_floor_and_train_two_repeated_mtp_depths():
    # nemotron_3_5_lightning / nemotron_3_super GB200 fp8mx recipes: cuda_graph_impl
    # 'transformer_engine' over attn, mamba, moe_router, moe_preprocess (no full-iteration
    # graph); mtp_num_layers 2 with mtp_use_repeated_layer
    for suffix in ("nemotron-3.5-lightning-mxfp8", "nemotron-3-super-mxfp8"):
        o = _rows()[f"megatron-bridge-26.08-gb200-{suffix}"]["options"]
        assert "moe_layer_host_s" not in o
        assert o["mtp_layers"] == 2 and o["mtp_repeated"] is True


def test_summary_has_the_source():
    s = validate(SOURCE).summary()[SOURCE]
    assert s["rows"] == len(ROWS)
