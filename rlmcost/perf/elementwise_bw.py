"""PyTorch's elementwise kernels in 16-bit dtypes on Hopper: measured bandwidth (issue 18).

Source: pytorch/pytorch PR 141959 "[ATen][CUDA] Implement 128 bit vectorization" (Aidyn-A,
2024-12-03; re-landed as PR 145746, 2025-01-27, with the same tables). Its description times
ATen's eager ``relu`` on "Hopper H100" for 2^24 ... 2^29 contiguous elements, before (64-bit
vectors for 16-bit dtypes: PyTorch <= 2.6) and after (128-bit vectors) the change; a comment of
2024-12-05 ("It improves performance on A100 as well") gives the same table on an A100 for
``relu`` and ``gelu``. Host timing: ``perf_counter`` around 6 back-to-back calls and one
``synchronize``, divided by 6 (the benchmark code in the PR). Each call reads and writes every
element once: ``2 x elements x dtype bytes`` (:func:`streaming_bytes`).

H100, bf16 ``relu`` (:data:`H100_RELU_BF16_S`), against the SXM5's datasheet 3.35 TB/s (an
assumption: the PR says "H100"; the PCIe card's 2.0 TB/s is below the 3.0 TB/s measured, an
H100 NVL's 3.9 TB/s would make the fractions 0.77 and 0.74):

* 2^28 elements (1 GiB moved), 128-bit vectors: 0.356 ms, 3.01 TB/s = **0.90**
  (:data:`HOPPER_ELEMENTWISE_EFFICIENCY`); 64-bit vectors: 0.371 ms, 2.89 TB/s = **0.86**
  (:data:`HOPPER_ELEMENTWISE_LOW`);
* the rate between 2^28 and 2^29 elements (the launch and tail cost differenced away):
  3.05 TB/s = **0.91** (:data:`HOPPER_ELEMENTWISE_HIGH`);
* smaller tensors run below it: 2^24 elements (64 MiB moved) 30.3 us, 0.66; 2^25 0.82 (host
  timing adds about 4 us per call; rlmcost's ``kernel_gap_s`` is 2 us).

So PyTorch's bf16 elementwise kernels stream at 0.86-0.91 of an H100's datasheet bandwidth,
the figure the NVIDIA profiles already used (0.9, from an A100 forum thread); the Hopper
profiles now cite this measurement. fp32 ``relu`` at 2^26 elements reaches 0.88 in the same
table: no 16-bit penalty on Hopper.

A reading to avoid: the 0.843 ms ``gelu`` figure (bf16, "before") is the A100 comment's row of
2^28 elements (:data:`A100_BF16_S`), 1.27 TB/s; taken as 2^29 elements on an H100 it would
read 2.55 TB/s = 0.76, which no H100 row of the PR shows. On that A100 ``gelu`` and ``relu``
take the same time (0.800 and 0.801 ms at 2^28), so both are bandwidth-bound: 1.34 TB/s, 0.86
of an A100 40GB's 1.555 TB/s or 0.66 of an A100 80GB's 2.039 (the PR does not name the
variant). Pricing Hopper's memory-bound kernels at 0.76 instead of 0.9 would add 18 % to them;
the llm-foundry H100 rows' missing time (12-20 % of the step) would need them doubled (0.45),
which the H100 table contradicts.
"""

from __future__ import annotations

H100_SXM_HBM_BYTES_PER_S = 3_350_000_000_000
"""H100 SXM5 datasheet HBM3 bandwidth (NVIDIA H100 Tensor Core GPU datasheet: 3.35 TB/s); the
registry's ``h100-sxm`` value (a test keeps them equal)."""

BF16_BYTES = 2

H100_RELU_BF16_S: dict[int, tuple[float, float]] = {
    1 << 24: (3.03e-05, 3.04e-05),
    1 << 25: (4.89e-05, 5.06e-05),
    1 << 26: (9.32e-05, 9.65e-05),
    1 << 27: (0.000180805509444326, 0.000187998676362137),
    1 << 28: (0.000356242332297067, 0.000371279485989362),
    1 << 29: (0.000708114336399982, 0.000736773828975856),
}
"""Elements -> (seconds after, seconds before) of bf16 ``torch.relu`` on an H100: pytorch/pytorch
PR 141959 description (and PR 145746), "time after" / "time before" columns."""

A100_BF16_S: dict[int, tuple[float, float, float]] = {
    1 << 24: (5.50e-05, 5.56e-05, 5.71e-05),
    1 << 25: (0.000104047668476899, 0.000105594181352192, 0.000109837338742283),
    1 << 26: (0.000202173677583536, 0.000204587148295508, 0.000214392060620917),
    1 << 27: (0.000398641969594691, 0.000403126029090749, 0.000423436725719108),
    1 << 28: (0.000800862442702055, 0.000799921082539691, 0.000842164632760816),
    1 << 29: (0.00159262172463867, 0.00159319071099162, 0.00167886317811078),
}
"""Elements -> (relu after, gelu after, gelu before) seconds, bf16, on an A100 (variant not
named): pytorch/pytorch PR 141959, comment of 2024-12-05."""


def streaming_bytes(elements: int, dtype_bytes: int) -> int:
    """Bytes a unary elementwise kernel moves: each element read once and written once.

    >>> streaming_bytes(1 << 28, BF16_BYTES)  # 1 GiB
    1073741824
    """
    return 2 * elements * dtype_bytes


def bandwidth_fraction(
    elements: int, seconds: float, bandwidth_bytes_per_s: int, dtype_bytes: int = BF16_BYTES
) -> float:
    """Achieved / datasheet bandwidth of a unary elementwise kernel over ``elements``.

    >>> n = 1 << 28
    >>> round(bandwidth_fraction(n, H100_RELU_BF16_S[n][0], H100_SXM_HBM_BYTES_PER_S), 3)
    0.9
    """
    return streaming_bytes(elements, dtype_bytes) / seconds / bandwidth_bytes_per_s


def _marginal_fraction(small: int, large: int) -> float:
    """The rate between two sizes of the H100 table (after), over the datasheet bandwidth."""
    extra = streaming_bytes(large, BF16_BYTES) - streaming_bytes(small, BF16_BYTES)
    dt = H100_RELU_BF16_S[large][0] - H100_RELU_BF16_S[small][0]
    return extra / dt / H100_SXM_HBM_BYTES_PER_S


_N = 1 << 28
HOPPER_ELEMENTWISE_EFFICIENCY = round(
    bandwidth_fraction(_N, H100_RELU_BF16_S[_N][0], H100_SXM_HBM_BYTES_PER_S), 2
)
"""0.90: bf16 ``relu`` over 2^28 elements on an H100 with 128-bit vectors (module docstring)."""
HOPPER_ELEMENTWISE_LOW = round(
    bandwidth_fraction(_N, H100_RELU_BF16_S[_N][1], H100_SXM_HBM_BYTES_PER_S), 2
)
"""0.86: the same with 64-bit vectors (PyTorch before PR 145746, <= 2.6)."""
HOPPER_ELEMENTWISE_HIGH = round(_marginal_fraction(_N, _N << 1), 2)
"""0.91: the rate between 2^28 and 2^29 elements (launch and tail differenced away)."""

HOPPER_ELEMENTWISE_SOURCE = (
    f"pytorch/pytorch PR 141959 / 145746: bf16 relu over 2^28 elements on H100 at "
    f"{HOPPER_ELEMENTWISE_EFFICIENCY} of 3.35 TB/s ({HOPPER_ELEMENTWISE_LOW} with PyTorch <= "
    f"2.6's 64-bit vectors, {HOPPER_ELEMENTWISE_HIGH} marginal); carried to the other Hopper "
    "parts (assumption)"
)
