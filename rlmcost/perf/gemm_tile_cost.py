"""A GEMM tile's fixed cost on Hopper: prologue and epilogue as K-steps (issue 18).

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
that do not scale with the FLOPs weigh more on a faster chip); other parts take ``K_0 = 0`` (no
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
