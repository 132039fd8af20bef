"""The software the llm-foundry benchmark rows ran (issue 18): not sweep.sh's IMAGE.

mosaicml/llm-foundry's README tables (@061f2c7ce) came from runs whose per-run record,
``scripts/train/benchmarking/h100new.csv`` (deleted by commit 803e67182; read at its parent),
names the image of every row: mosaicml/pytorch:2.1.0_cu121-nightly20230827. For a 'nightly'
image ``submit_benchmarks.py`` @061f2c7ce ``run_config`` installs torch
2.1.0.dev20230821+cu121 and Composer mvpatel2000/composer@784f50be over crinard/llm-foundry
branch add_attns. sweep.sh's ``IMAGE="mosaicml/pytorch:2.0.1_cu118..."`` at 061f2c7ce was set
after the runs (at 568e61d2f, 2023-08-31, the nightly line was the active one).
"""

from __future__ import annotations

from rlmcost.perf.validate import load_table

NIGHTLY = "mosaicml/pytorch:2.1.0_cu121-nightly20230827"
TORCH = "torch 2.1.0.dev20230821+cu121"
# h100new.csv @803e67182^ (columns Model, SeqLen, # GPUs, GPU, Throughput (T/s/GPU), Image):
# every row below has Image mosaicml/pytorch:2.1.0_cu121-nightly20230827-python3.10-ubuntu20.04
H100NEW_CSV = {
    ("h100", "760m", 2048, 32): 67971, ("h100", "1b", 2048, 8): 45455,
    ("h100", "1b", 2048, 64): 44402, ("h100", "3b", 2048, 64): 22525,
    ("h100", "3b", 4096, 8): 20964, ("h100", "7b", 2048, 8): 10643,
    ("h100", "13b", 2048, 8): 4792, ("h100", "13b", 2048, 64): 4800,
    ("h100", "7b", 4096, 8): 8611, ("h100", "13b", 4096, 8): 4717,
    ("h100", "30b", 2048, 8): 2002, ("h100", "30b", 2048, 32): 2308,
    ("h100", "70b", 2048, 64): 1039,
    ("a100", "1b", 2048, 8): 20513, ("a100", "3b", 4096, 8): 9457,
    ("a100", "7b", 2048, 8): 4641, ("a100", "13b", 2048, 8): 2262,
    ("a100", "7b", 4096, 8): 3684, ("a100", "13b", 4096, 8): 2060,
    ("a100", "30b", 2048, 8): 916,
}  # fmt: skip


def _foundry() -> dict[tuple[str, str, int, int], dict]:
    rows = [r for r in load_table()["rows"] if r["source"].startswith("llm_foundry")]
    return {
        (r["source"].split("_")[-1], r["id"].split("-mpt-")[1].split("-")[0], r["model"]["seq"],
         r["layout"]["dp"]): r
        for r in rows
    }  # fmt: skip


def test_every_row_is_a_run_of_the_nightly_image():
    rows = _foundry()
    assert set(rows) == set(H100NEW_CSV)
    for key, tps in H100NEW_CSV.items():
        assert rows[key]["published"] == tps, key


def test_sources_name_the_runs_stack_not_sweep_sh_image():
    sources = load_table()["sources"]
    for name in ("llm_foundry_h100", "llm_foundry_a100"):
        title = sources[name]["title"]
        assert NIGHTLY in title and TORCH in title and "add_attns" in title, name
        assert "2.0.1_cu118" not in title, name
    stack = sources["llm_foundry_h100"]["assumptions"][0]
    assert "h100new.csv" in stack and "784f50be" in stack and "CUDA 12.1" in stack


def test_mp_default_reduces_in_bf16_in_the_runs_composer():
    # Composer 'DEFAULT' got reduce_dtype float32 only with PR 2628 (d745fcb1b, 2023-10-10,
    # v0.16.4), after h100new.csv was in the tree (2023-10-03): the runs reduce-scattered bf16
    rows = _foundry()
    assert all(r["options"]["grad_reduce_bytes"] == 2 for r in rows.values())
    mp = load_table()["sources"]["llm_foundry_h100"]["assumptions"][4]
    assert mp.startswith("MP Mode DEFAULT") and "PR 2628" in mp and "grad_reduce_bytes 2" in mp


def test_the_runs_cublas_is_no_slower_h100_gemm_era():
    # stas00/ml-engineering compute/accelerator/README.md, MAMF BF16 (TFLOP/s): H100 SXM 792.1
    # 'CUDA-12.1' @b48e07c and 785.5 at torch 2.5.1+cu121 @488e893 (cuBLAS 12.1.3.1, the runs'),
    # 794.5 at 2.7.0+cu126 @744d01e1; A100 SXM 267.9 'CUDA-12.1' @b48e07c, 271.2 at 2.6.0+cu126
    from rlmcost.perf.efficiency import default_profile

    h100_cu121, h100_later = (792.1, 785.5), 794.5
    a100_cu121, a100_later = 267.9, 271.2
    assert all(abs(x / h100_later - 1) < 0.012 for x in h100_cu121)
    # the H100 loses no more to CUDA 12.1 than the A100 control does: no H100-only era factor
    assert min(h100_cu121) / h100_later > a100_cu121 / a100_later - 0.001
    # so the H100 profile keeps the H200's sustained MSMF (702.9 / 989), not an era-scaled rate
    assert default_profile("h100-sxm").gemm_efficiency == round(702.9 / 989, 3)
    checked = load_table()["sources"]["llm_foundry_h100"]["assumptions"][-1]
    assert checked.startswith("checked for the H100 rows' excess")
    for cite in ("@b48e07c", "792.1", "PR 120925", "PR 101145", "@082816f", "PR 141959"):
        assert cite in checked, cite
