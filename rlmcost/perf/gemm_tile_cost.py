"""A GEMM tile's fixed cost on Hopper: prologue and epilogue as K-steps (issue 18); and the rows
a skinny GEMM is padded to (:data:`WGMMA_ROWS`, :func:`skinny_gemm_flops`).

Each output tile also pays a cost that does not grow with K: the pipeline's prologue (the first
K-stages loaded before the first MMA) and the epilogue (the accumulators converted and the tile
stored). :data:`HOPPER_GEMM_K_OVERHEAD` writes it as ``K_0`` extra K-steps per tile, fitted to
a measured K sweep on an H800 (the H100 die): TileLang's FP16 GEMM at M = N = 8192
(``xwhzz/tilelang`` benchmark/matmul/README.md @b2acfc3791, tilelang @17bd0a6c: 628 / 705 / 736
/ 758 / 766 TFLOP/s at K = 1024 / 2048 / 4096 / 8192 / 16384; time = a (K + K_0), least squares
over K >= 1024: K_0 = 222, which reproduces the five within 1.6 %). M = N = 8192 fills every
wave, so the sweep isolates the K term. A large GEMM's efficiency was measured at its own K
(``gemm_reference_k``: the H200 MSMF's shape 8192 x 8448 x 20480), so the K-loop rate is
``eta_gemm' = eta_gemm (K_ref + K_0) / K_ref`` and a GEMM of that shape still runs at
``eta_gemm``; at K = 2048 (a hidden-2048 model's QKV, up-projection and their data gradients) a
Hopper GEMM runs 9 % below it, at K = 8192 3 %. A Hopper tile's K-loop is 2.6 x as fast as an
A100's at a similar fixed cost, so the term is Hopper's (the mechanism the issue names: costs
that do not scale with the FLOPs weigh more on a faster chip); Blackwell takes its own fit
(:data:`BLACKWELL_GEMM_K_OVERHEAD`, OpenXLA's sm_100 table); other parts take ``K_0 = 0`` (no
K sweep of theirs was found; an assumption that favours them), the H20 too (its tensor rate is
capped at 148 TFLOP/s, so the same fixed time is a quarter of the K-steps). Checked:
TransformerEngine issue 2053 timed a BF16 ``torch.nn.Linear`` forward of 8192 tokens at hidden
2048 on a DGX-H100 at 100.06 us of GPU time (13.48 us on the host), a single kernel at the
boost clock; the tile model with ``K_0`` at the H100's burst MAMF (794.5 / 989, ml-engineering)
gives 99.8 us for that [8192, 2048] x [2048, 2048] GEMM (at the sustained MSMF the model
prices: 112.5 us). At 4096-token micro-batches a layer's kernels outlast its host launches.

:class:`~rlmcost.perf.efficiency.Device` ``gemm_s`` prices a tile of a wave as
``2 t_m t_n (K + K_0)`` FLOPs at the K-loop rate ``AcceleratorProfile.k_loop_efficiency``.
"""

from math import ceil

HOPPER_GEMM_K_OVERHEAD = 222
"""A Hopper GEMM tile's fixed cost (prologue, epilogue) in K-steps: fitted to TileLang's FP16
M = N = 8192 K sweep on an H800 (xwhzz/tilelang benchmark/matmul/README.md @b2acfc3791; module
docstring). Global for the Hopper profiles."""

MSMF_REFERENCE_K = 20480
"""K of the shape of the H200's MSMF (8192 x 8448 x 20480; ml-engineering commit 082816f,
compute/accelerator/README.md): the K at which the Hopper profiles' ``gemm_efficiency`` was
measured."""

K0_SOURCE = (
    "Hopper tile prologue/epilogue = 222 K-steps, fitted to TileLang's FP16 M = N = 8192 K sweep "
    "on an H800 (xwhzz/tilelang benchmark/matmul/README.md @b2acfc3791); gemm_efficiency "
    "renormalized at the MSMF shape's K = 20480"
)
K0_NONE = "none: no K sweep of this part found (assumption; favours it)"

BLACKWELL_GEMM_K_OVERHEAD = 358
"""A Blackwell (sm_100: B200, GB200) GEMM tile's fixed cost in K-steps, fitted as Hopper's is
(time = a (K + K_0), least squares over K >= 1024) to OpenXLA's measured default matmul table
(``third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h``, ``kDefaultMatmulPTable``,
tensorflow/tensorflow mirror punittiwari50/tensorflow-tensorflow @7cc7ba552): ``sm_100``,
``bf16xbf16->bf16``, b = 4, M = N = 4096 (14 full waves of 256 x 128 tiles on 148 SMs, so only
K varies): 1350.5 / 1539.9 / 1670.5 TFLOP/s at K = 1024 / 2048 / 4096 (:data:`XLA_SM100_B4_4096`).
An older version of the same table (tensorflow/tensorflow, sm_90 and sm_100 entries) gives
389 (b = 4) and 393 (b = 2) on sm_100; its sm_90 entries at the same shapes give 138 and 243,
bracketing TileLang's H800 fit (222, :data:`HOPPER_GEMM_K_OVERHEAD`), so the table reads
Hopper's term right. A Blackwell tile's K-loop is about twice as fast as a Hopper tile's
(2.25 against 0.99 PFLOP/s over 148 against 132 SMs) at a similar fixed time, hence about
twice the K-steps. The efficiency it renormalizes (``gemm_efficiency``, B200's MSMF and
GB200's MAMF scaled) is taken at :data:`MSMF_REFERENCE_K`, the H200 MSMF shape's K (an
assumption: the Blackwell shapes are not printed)."""

XLA_SM100_B4_4096 = {1024: 1350.485933693623, 2048: 1539.854612058775, 4096: 1670.467342710337}
"""K -> TFLOP/s of OpenXLA's sm_100 bf16 entries b = 4, M = N = 4096 (matmul_interpolator_data.h,
punittiwari50/tensorflow-tensorflow @7cc7ba552), the sweep :data:`BLACKWELL_GEMM_K_OVERHEAD` is
fitted to."""

BLACKWELL_K0_SOURCE = (
    "Blackwell tile prologue/epilogue = 358 K-steps, fitted to OpenXLA's sm_100 bf16 matmul table "
    "(b 4, M = N = 4096, K 1024-4096; xla/service/gpu/model/matmul_interpolator_data.h @7cc7ba552);"
    " gemm_efficiency renormalized at K = 20480 (assumption)"
)

GEMM_K_OVERHEAD: dict[str, tuple[int, str]] = {
    **{n: (HOPPER_GEMM_K_OVERHEAD, K0_SOURCE)
       for n in ("h100-sxm", "h100-pcie", "h200", "h800", "h100-hbm2e-500w")},
    **{n: (BLACKWELL_GEMM_K_OVERHEAD, BLACKWELL_K0_SOURCE) for n in ("b200", "gb200")},
}  # fmt: skip
"""Built-in accelerator -> (K_0, source); the others take ``K_0 = 0`` (:data:`K0_NONE`): A100
and Ada (no K sweep found), the H20 (module docstring)."""

# -- skinny GEMMs: the tensor-core instruction's least row count ---------------------------------

MMA_SYNC_ROWS = 16
"""Rows of the warp-level MMA (``mma.sync`` m16n8k16; PTX ISA, "Warp-level matrix multiply-
accumulate instructions"): the short side of a skinny GEMM is padded to it on Ampere, Ada and
AMD's 16 x 16 MFMA, and by Triton kernels whose blocks have fewer than 64 rows on any part."""

WGMMA_ROWS = 64
"""Rows of the warpgroup MMA, Hopper's tensor-core instruction: ``wgmma.mma_async`` has shape
m64nNk16 for 16-bit inputs (PTX ISA 8.0+, "Asynchronous warpgroup level matrix multiply-
accumulate", "Matrix shape": M = 64 only); Blackwell's ``tcgen05.mma`` takes M = 64 or 128
(PTX ISA 8.6, "tcgen05 matrix shapes"). A cuBLAS GEMM on these parts with fewer than 64 rows
(a decode step's projections at batch 1-63) computes 64 rows (an assumption where a library
swaps the operands to put the short side on wgmma's N, which takes multiples of 8; the H20
rows below show the 64-row time for SGLang's decode GEMMs). Checked on the part where the
padded FLOPs, not the weights' bytes, bound a decode GEMM: the H20 (148 TFLOP/s dense bf16
against 4.0 TB/s). The Qwen team's SGLang 0.4.6.post1 speed benchmark on one H20 at batch 1
(QwenLM/Qwen3 docs/source/getting_started/speed_benchmark.md @7a2f61ff, 1 input token, 2048
generated) gives Qwen3-8B, -14B and -32B 12.2, 21.2 and 48.3 ms per token, 1.34-1.40 TB/s of
bf16 weights: a third of the H20's bandwidth. The engine model's GEMMs of one such step take
9.5, 17.3 and 39.4 ms with 64 padded rows at the H20's sustained GEMM rate, and 5.3, 9.7 and
21.8 ms (the weights' streaming time: 16 padded rows do not bind) without. On H100-class parts
64 rows stay under the weights' streaming time (Llama-3.1-8B: 2 x 64 x 7.5e9 FLOPs at 0.711 of
989 TFLOP/s, 1.4 ms, against 5.8 ms), so there the term does not bind. A doubt, measured:
cuBLAS 13 (PyTorch 2.11 on an H100) runs a batch-1 bf16 linear as
``nvjet_sm90_tst_256x8_64x6_2x1_v_bz_TNT``, the operands swapped and the token padded to 8
(``benchmarks/bench_decode_gemv.py``); the Qwen rows ran cuBLAS 12.4 (PyTorch 2.6.0+cu124),
whose batch-1 kernel on the H20 is not known here."""

WGMMA_PARTS = frozenset({"h100-sxm", "h100-pcie", "h200", "h800", "h100-hbm2e-500w", "h20",
                         "b200", "gb200"})  # fmt: skip
"""The built-in accelerators whose tensor cores run ``wgmma`` / ``tcgen05`` (:data:`WGMMA_ROWS`)."""

MMA_ROWS_SOURCE = {
    WGMMA_ROWS: "PTX ISA wgmma.mma_async m64nNk16 (Hopper), tcgen05.mma M = 64/128 (Blackwell)",
    MMA_SYNC_ROWS: "PTX ISA mma.sync m16n8k16 (warp-level MMA)",
}


def skinny_gemm_flops(m: int, n: int, k: int, batch: int, mma_rows: int) -> int:
    """FLOPs a split-K / GEMV-class kernel computes for ``batch`` skinny [m, k] x [k, n]
    GEMMs: the short side padded to ``mma_rows`` (the instruction's least M), the long side
    to 16.

    >>> skinny_gemm_flops(1, 4096, 4096, 1, 64) == 2 * 64 * 4096 * 4096
    True
    """
    short, long = min(m, n), max(m, n)
    return 2 * batch * mma_rows * ceil(short / mma_rows) * 16 * ceil(long / 16) * k
