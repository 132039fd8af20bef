"""cuDNN's fused attention at head dim 64 and on a 128-key window: measured rates.

The default profiles price a ``flash`` pass (cuDNN's ``FusedAttention``, which Transformer
Engine prefers on sm90 and up: the kernel a Megatron-core trainer runs) at one causal head-dim-128
figure per part (:mod:`~rlmcost.perf.efficiency`, :mod:`~rlmcost.perf.blackwell_attention`). A
64-dim head does half the matrix work per query-key pair with the same softmax per pair, and on
Blackwell the forward is bound by the exponential units and the backward by shared memory, not by
the tensor cores (FlashAttention-4, Zadouri et al. 2026, arXiv 2603.05451, abstract; the
together.ai FlashAttention-4 post: "the main performance bottleneck lies not in how fast the
tensor cores can do MMA"). So a 64-dim head runs well below the 128-dim figure, and a 128-key
window, whose query tiles meet two key tiles each, lower still.

Source: NVIDIA/cudnn-frontend ``benchmark/sdpa_benchmark_training/results`` (the repository's
own SDPA benchmark: kernel time by the torch profiler, bf16, non-deterministic backward; FLOPs
counted on the unmasked pairs, forward 4 d, backward 10 d per pair and head, rlmcost's 1 : 2.5;
a window's pairs ``W (W + 1) / 2 + (S - W) W``, :func:`~rlmcost.perf.attention_shapes.
causal_pairs`'s count). Each figure is a ratio of two models timed in the same run, on the same
GPU and cuDNN:

* **head dim 64**, cuDNN 9.19.1 (commit df73764, 2026-03-09, ``results/gb200_919_only_cudnn``
  and ``h200_919_only_cudnn``): the ``gpt_oss`` preset (64 query / 8 KV heads of 64, batch 2,
  causal with a 1024-key window: :data:`GB200_HD64_TFLOPS`, :data:`H200_HD64_TFLOPS`) over the
  ``llama3.1`` preset (64 / 8 heads of 128, batch 1, causal: :data:`GB200_HD128_TFLOPS`,
  :data:`H200_HD128_TFLOPS`), forward + backward (:func:`~rlmcost.perf.blackwell_attention.
  fwd_bwd_tflops`) at 8k / 16k / 32k tokens: GB200 0.459 / 0.440 / 0.424, mean **0.44**
  (:data:`BLACKWELL_HEAD_DIM_64`); H200 0.551 / 0.524 / 0.516, mean **0.53**
  (:data:`HOPPER_HEAD_DIM_64`);
* **a 128-key window at head dim 64**, cuDNN 9.22 (commit 50c8aeb, 2026-05-01,
  ``results/gpt_oss/gb200`` and ``results/llama3.1/gb200``, both runs of 2026-04-24): the
  ``gpt_oss`` preset then (128 / 128 heads of 64, batch 2, 128-key window) over ``llama3.1``
  (batch 2): 0.129 / 0.128 / 0.115, mean **0.12** (:data:`BLACKWELL_WINDOW_128`; the 32k
  forward, 104 TFLOP/s against 165-167 at 8k-16k, is kept).

Applied (:func:`timed_attention_flops`) by dividing a layer's pair FLOPs by its factor: a layer of
head dim <= 64 (non-MLA, non-DSA) on a Hopper part (the H200's factor; H100, H800 share its
die, as the profiles' GEMM figure does) or a Blackwell part (GB200's; B200 the same die), on the
``flash`` kernel (with attention dropout too: the profiles price cuDNN's dropout runs at the
FlashAttention-2 figure, and the factor scales that), no calibration profile (whose attention
table is its own measurement); a sliding-window layer of W <= 128 keys at head dim <= 64 on
Blackwell takes the window's factor instead. A ``flash2`` pass (FlashAttention-2 or SDPA's flash
backend: a Hugging Face trainer) keeps its rate: no head-dim-64 figure of it is used here.
Everything else keeps its rate.

Assumptions, each stated: (1) the ratios hold at the cuDNN of the validated runs (9.13.1 in
Megatron-Bridge 25.11's image; the default profiles price that era's head-dim-128 rate, and these
measurements are later: no head-dim-64 figure of 9.13 is published); (2) the full-attention
layers of a head-dim-64 model run at the 1024-key band's rate (its query tiles meet 9 key tiles,
a causal layer's s / 256 on average: the band's partial tiles cost it about 7 %, so this slightly
over-prices them); (3) the learnable softmax sinks (GPT-OSS, cuDNN 9.13.1+) add nothing the
benchmark lacks (one logit per head and row); (4) GQA 64 / 8 runs a 128-key window as the
benchmark's 128 / 128 heads did; (5) a Hopper part's 128-key window takes only the head-dim
factor (no Hopper measurement of it: an under-price), and windows between 128 and 1024 keys the
head-dim factor (measured at 1024); (6) the H20 keeps its rate (its tensor cores are capped at
148 TFLOP/s, so the exponential and shared-memory limits do not bind). FlashAttention-3's own
head-dim ratio on H100 is milder (arXiv 2407.08608 Figs. 5-6: forward 497 / 648, backward
474 / 561 TFLOP/s at 16k, causal): a Hopper trainer on FlashAttention-3 is over-priced by this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.perf.attention_shapes import causal_pairs, window_pairs
from rlmcost.perf.blackwell_attention import fwd_bwd_tflops
from rlmcost.perf.step_options import AttentionKernel

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.perf.step_pass import StepContext

_RUN_919 = "NVIDIA/cudnn-frontend@df73764 benchmark/sdpa_benchmark_training/results/"
_RUN_922 = "NVIDIA/cudnn-frontend@50c8aeb benchmark/sdpa_benchmark_training/results/"

GB200_HD64_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (609.0, 646.0), 16384: (624.0, 658.0), 32768: (632.0, 660.0)}  # fmt: skip
"""Tokens -> (forward, backward) TFLOP/s, cuDNN 9.19.1, GB200, 64 / 8 heads of 64, 1024-key
window (``gb200_919_only_cudnn/gpt_oss_20260226_175022.csv``, bfloat16 rows)."""

GB200_HD128_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (1598.0, 1311.0), 16384: (1687.0, 1402.0), 32768: (1720.0, 1473.0)}  # fmt: skip
"""The same run's causal 64 / 8 heads of 128 (``llama3.1_20260226_174648.csv``, top_left)."""

H200_HD64_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (349.0, 300.0), 16384: (355.0, 303.0), 32768: (358.0, 299.0)}  # fmt: skip
"""Tokens -> (forward, backward) TFLOP/s, cuDNN 9.19.1, H200, the ``gpt_oss`` preset
(``h200_919_only_cudnn/gpt_oss_20260227_034819.csv``, bfloat16 rows)."""

H200_HD128_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (644.0, 541.0), 16384: (673.0, 579.0), 32768: (688.0, 581.0)}  # fmt: skip
"""The same run's ``llama3.1`` causal rows (``llama3.1_20260227_034703.csv``, top_left)."""

GB200_WINDOW_128_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (165.0, 187.0), 16384: (167.0, 188.0), 32768: (104.0, 186.0)}  # fmt: skip
"""Tokens -> (forward, backward) TFLOP/s, cuDNN 9.22, GB200, 128 / 128 heads of 64, 128-key
window (``gpt_oss/gb200/gpt_oss_20260424_100011.csv``, bfloat16, non-deterministic rows)."""

GB200_HD128_922_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (1574.0, 1332.0), 16384: (1708.0, 1328.0), 32768: (1622.0, 1226.0)}  # fmt: skip
"""The same day's causal ``llama3.1`` rows (``llama3.1/gb200/llama3.1_20260424_100750.csv``)."""


def rate_ratio(
    slow: dict[int, tuple[float, float]], base: dict[int, tuple[float, float]]
) -> float:
    """Mean over the shared lengths of the forward + backward rate of ``slow`` over ``base``.

    >>> rate_ratio({8192: (1.0, 1.0)}, {8192: (2.0, 2.0)})
    0.5
    """
    shared = sorted(set(slow) & set(base))
    ratios = [fwd_bwd_tflops(*slow[s]) / fwd_bwd_tflops(*base[s]) for s in shared]
    return sum(ratios) / len(ratios)


BLACKWELL_HEAD_DIM_64 = round(rate_ratio(GB200_HD64_TFLOPS, GB200_HD128_TFLOPS), 2)
"""0.44: cuDNN at head dim 64 over head dim 128 on GB200 (module docstring)."""
HOPPER_HEAD_DIM_64 = round(rate_ratio(H200_HD64_TFLOPS, H200_HD128_TFLOPS), 2)
"""0.53: the same on H200."""
BLACKWELL_WINDOW_128 = round(rate_ratio(GB200_WINDOW_128_TFLOPS, GB200_HD128_922_TFLOPS), 2)
"""0.12: a 128-key window at head dim 64 over causal head dim 128 on GB200."""

MEASURED_HEAD_DIM = 64
MEASURED_WINDOW = 128
HOPPER_PARTS = frozenset({"h100-sxm", "h100-pcie", "h200", "h800", "h100-hbm2e-500w"})
BLACKWELL_PARTS = frozenset({"b200", "gb200"})
SOURCE = (
    f"{_RUN_919}{{gb200,h200}}_919_only_cudnn (cuDNN 9.19.1): head dim 64 over 128, fwd+bwd, "
    f"8k-32k: GB200 {BLACKWELL_HEAD_DIM_64}, H200 {HOPPER_HEAD_DIM_64}; {_RUN_922}"
    f"{{gpt_oss,llama3.1}}/gb200 (cuDNN 9.22): 128-key window at head dim 64 "
    f"{BLACKWELL_WINDOW_128} (rlmcost.perf.head_dim_attention)"
)


def rate_factors(arch: Arch, part: str) -> tuple[float, float]:
    """(full-attention layer, sliding-window layer) rate factors of ``arch`` on ``part``'s
    cuDNN fused attention: 1.0 where nothing measured applies (module docstring).

    >>> from rlmcost.specs.registry import get_model
    >>> rate_factors(get_model("llama-3.1-8b").arch(), "gb200")
    (1.0, 1.0)
    """
    if arch.is_mla or arch.index_topk is not None or int(arch.head_dim) > MEASURED_HEAD_DIM:
        return 1.0, 1.0
    if part in BLACKWELL_PARTS:
        w = arch.sliding_window
        small = w is not None and int(w) <= MEASURED_WINDOW
        return BLACKWELL_HEAD_DIM_64, BLACKWELL_WINDOW_128 if small else BLACKWELL_HEAD_DIM_64
    if part in HOPPER_PARTS:
        return HOPPER_HEAD_DIM_64, HOPPER_HEAD_DIM_64
    return 1.0, 1.0


def timed_attention_flops(c: StepContext, flops: int) -> float:
    """The forward FLOPs one layer's fused attention is timed at: ``flops`` (its pair FLOPs,
    the mean over the model's layers, as the step pass counts them) with each layer kind's pairs
    divided by its rate factor (:func:`rate_factors`); ``flops`` itself where none applies."""
    opt, arch = c.options, c.arch
    if opt.attention is not AttentionKernel.FLASH:  # FlashAttention-2: no figure of its own
        return flops
    full_f, window_f = rate_factors(arch, c.device.defaults.name)
    if c.device.measured is not None or full_f == window_f == 1.0:
        return flops
    s, n, w = c.seq, int(arch.n_layers), arch.sliding_window
    sliding = int(arch.n_sliding_layers) if w is not None else 0
    window = window_pairs(s, int(w)) if w is not None else 0
    full = s * (s + 1) // 2
    weighted = (full * (n - sliding) / full_f + window * sliding / window_f) / n
    return flops * weighted / causal_pairs(arch, s)
