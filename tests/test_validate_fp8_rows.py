"""Megatron-Bridge's 25.11 FP8 pre-training rows in ``rlmcost validate`` (source
``megatron_bridge``, row option ``fp8``: Transformer Engine's FP8 Linear layers,
rlmcost.perf.fp8_train), transcribed from the page's own columns."""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.perf.fp8_train import FP8_GEMM_EFFICIENCY_RATIO
from rlmcost.perf.validate import load_table, predict_row

PAGE = "docs/performance-summary-archive.md @067f987df"  # NVIDIA-NeMo/Megatron-Bridge
SECTION = "'25.11 NeMo Container'"

# The page's FP8 rows of the 25.11 section that rlmcost predicts, its columns as printed:
# id suffix, recipe, #-GPUs, GBS, MBS, seq, TP, PP, VP, EP, GA, Tokens/sec/GPU, TFLOP/s/GPU
FP8_ROWS = [
    ("h100-llama3-70b-fp8", "tensorwise", 64, 128, 1, 8192, 4, 8, 5, 1, 64, 1602, 719),
    ("gb200-llama3-8b-fp8", "tensorwise", 8, 128, 2, 8192, 1, 1, 1, 1, 8, 31508, 1622),
    ("gb200-llama3-8b-fp8-mx", "mxfp8", 8, 128, 2, 8192, 1, 1, 1, 1, 8, 29789, 1533),
    ("b200-llama3-8b-fp8", "tensorwise", 8, 128, 2, 8192, 1, 1, 1, 1, 8, 30624, 1576),
    ("b200-llama3-8b-fp8-mx", "mxfp8", 8, 128, 2, 8192, 1, 1, 1, 1, 8, 29521, 1519),
    ("gb200-qwen3-30b-a3b-fp8-mx-mbs4", "mxfp8", 8, 512, 4, 4096, 1, 1, 1, 8, 16, 23766, 547),
]  # fmt: skip


def _rows() -> dict[str, dict]:
    return {r["id"]: r for r in load_table()["rows"] if r["source"] == "megatron_bridge"}


@pytest.mark.parametrize(
    ("suffix", "recipe", "gpus", "gbs", "mbs", "seq", "tp", "pp", "vp", "ep", "ga", "tokens",
     "tflops"),
    FP8_ROWS,
)  # fmt: skip
def test_every_fp8_row_is_transcribed(suffix, recipe, gpus, gbs, mbs, seq, tp, pp, vp, ep, ga,
                                      tokens, tflops):  # fmt: skip
    r = _rows()[f"megatron-bridge-25.11-{suffix}"]
    assert r["published"] == tokens and PAGE.split()[-1] in r["cite"] and SECTION in r["cite"]
    assert f"{tokens} " in r["cite"] and f"{tflops} " in r["cite"]
    # FP8-CS is current scaling (tensorwise), FP8-MX MXFP8 (the performance scripts'
    # get_precision_config 'fp8_cs' / 'fp8_mx'); the activations and attention stay bf16
    assert r["options"]["fp8"] == recipe and r["dtype"] == "bf16"
    lay = r["layout"]
    assert (lay["tp"], lay["pp"], lay["virtual_stages"], lay.get("ep", 1)) == (tp, pp, vp, ep)
    assert lay["tp"] * lay["pp"] * lay["dp"] == gpus and lay["micro_batch"] == mbs
    assert r["batch"] == gbs == ga * mbs * lay["dp"] and r["model"]["seq"] == seq


@pytest.mark.parametrize("suffix", [row[0] for row in FP8_ROWS])
def test_fp8_row_beats_its_bf16_twin_but_not_by_the_peak_ratio(suffix):
    # The same row evaluated in bf16 (options.fp8 dropped): FP8 must be faster, yet below the
    # GEMMs' own gain, since attention, norms, the router and the output layer stay bf16.
    # The bounds' sources: the FP8 peak is 2 x the bf16 peak on every system here (H100 SXM
    # 1,978.9 / 989.4 TFLOP/s dense, B200 4.5 / 2.25, GB200 5 / 2.5 PFLOP/s: NVIDIA's
    # datasheets), and Transformer Engine's GEMM benchmark measured its pre-quantized FP8 GEMMs
    # at 1.905 x bf16's speed (docs/examples/gemm_profiling/gemm_profiling.rst @d0067d0d;
    # rlmcost.perf.fp8_train.FP8_GEMM_EFFICIENCY_RATIO x 2)
    row = _rows()[f"megatron-bridge-25.11-{suffix}"]
    fp8 = predict_row(row)
    twin = dict(row, options={k: v for k, v in row["options"].items() if k != "fp8"})
    bf16 = predict_row(twin)
    gain = fp8.predicted / bf16.predicted
    assert 2 * FP8_GEMM_EFFICIENCY_RATIO == pytest.approx(1.905, abs=1e-3)
    assert 1.0 < gain < 2 * FP8_GEMM_EFFICIENCY_RATIO < 2.0
    # the dense Llama rows, GEMM-heavy, gain most (rlmcost: 1.42-1.45); Qwen3-30B-A3B, whose
    # micro-batch spends much of its time in attention, the all-to-all and the MoE host floor
    # (rlmcost.perf.moe_host), gains least (1.09)
    assert gain > (1.3 if "llama" in suffix else 1.0)


def test_fp8_row_option_is_checked():
    row = _rows()["megatron-bridge-25.11-h100-llama3-70b-fp8"]
    with pytest.raises(SpecError, match="fp8 'fp4' is not one of"):
        predict_row(dict(row, options=dict(row["options"], fp8="fp4")))
    # MXFP8 needs Blackwell's block-scaled tensor cores (rlmcost.perf.fp8_train.fp8_peak)
    with pytest.raises(SpecError, match="mxfp8 needs Blackwell"):
        predict_row(dict(row, options=dict(row["options"], fp8="mxfp8")))
