"""Model-state memory under ZeRO / FSDP sharding (seed paper §III-G1; Rajbhandari et al. 2020).

Two conventions, told apart by their names:

* elements (the paper's tables): Adam model states = parameters + gradients + two moments,
  4P elements per replica; ZeRO-1 P + P + 2P/P_z, ZeRO-2 P + 3P/P_z, ZeRO-3/FSDP 4P/P_z.
* bytes (ZeRO paper, §3.1 and Table 1): mixed-precision Adam keeps 16-bit parameters (2 bytes)
  and gradients (2 bytes) and K = 12 bytes of fp32 master weights, momentum and variance per
  parameter; stage 1 shards the K bytes, stage 2 the gradients too, stage 3 the parameters too,
  over N_d = P_z data-parallel ranks. Shards are rounded up to whole parameters (ZeRO pads its
  flat buffers). With fp32 weights there is no master copy and K = 8.
* fp32 parameters under mixed precision (FSDP ``MixedPrecision(param_dtype=bf16)`` over
  parameters loaded in fp32: verl's actor and critic, ``verl/workers/fsdp_workers.py``
  ``torch_dtype = torch.float32 if self._is_actor``; NeMo RL's DTensor policy,
  ``nemo_rl/models/policy/workers/dtensor_policy_worker.py`` "Always load the model in
  float32"): the sharded parameters and their gradients are fp32 (4 + 4 bytes), Adam keeps
  m and v (K = 8) and no master copy; the bf16 copy a unit computes with is a transient of
  the unit (``torch/distributed/fsdp/_fully_shard/_fsdp_api.py`` ``MixedPrecisionPolicy``:
  the sharded parameter stays in its own dtype and is cast to ``param_dtype`` for the
  all-gather). Callers pass the stored dtype as ``weight_dtype``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.parallel.layout import ZeroStage
from rlmcost.parallel.shard import split_up

if TYPE_CHECKING:
    import sympy as sp


def model_state_elements_per_rank(
    n_params: sp.Expr | int, zero: ZeroStage, shard_degree: sp.Expr | int
) -> sp.Expr:
    """Adam model states per rank in elements (§III-G1): parameters, gradients, m and v.

    >>> import sympy as sp
    >>> from rlmcost.symbols import P_z
    >>> P = sp.Symbol("P", positive=True)
    >>> [model_state_elements_per_rank(P, z, P_z) for z in ZeroStage]
    [4*P, 2*P + 2*P/P_z, P + 3*P/P_z, 4*P/P_z]
    """
    import sympy as sp

    p, z = sp.sympify(n_params), sp.sympify(shard_degree)
    sharded = {ZeroStage.NONE: 0, ZeroStage.OS: 2, ZeroStage.OS_G: 3, ZeroStage.OS_G_P: 4}[zero]
    return sp.expand((4 - sharded) * p + sharded * p / z)


def optimizer_bytes_per_param(weight_dtype: Dtype) -> int:
    """K: optimizer bytes per parameter for Adam (ZeRO paper §3.1).

    12 (fp32 master copy, momentum, variance) when the weights are 16-bit or 8-bit; 8 (momentum
    and variance only) when the weights themselves are fp32.
    """
    return 8 if weight_dtype.bytes == 4 else 12


def states_in_words(weight_dtype: Dtype, param_dtype: Dtype | None = None) -> str:
    """A trainer's model states and their bytes per parameter, in words: ``weight_dtype``
    weights and gradients with Adam's fp32 master copy, or, stored in ``param_dtype``
    (FSDP mixed precision), weights and gradients in it with a per-unit compute copy.

    >>> states_in_words(Dtype.BF16, Dtype.FP32)
    'fp32 weights and gradients (bf16 compute copy per unit), Adam m, v in fp32 (4 + 4 + 8 B/param)'
    """
    stored = param_dtype or weight_dtype
    k = optimizer_bytes_per_param(stored)
    b = stored.bytes
    if stored == weight_dtype:
        adam = "fp32 Adam m, v" if k == 8 else "fp32 Adam master weights, m, v"
        return f"{stored} weights and gradients, {adam} ({b} + {b} + {k} B/param)"
    return (
        f"{stored} weights and gradients ({weight_dtype} compute copy per unit), Adam m, v in "
        f"fp32 ({b} + {b} + {k} B/param)"
    )


@dataclass(frozen=True)
class ModelStateBytes:
    """Model-state bytes on one rank: weights, gradients (in the weight dtype) and optimizer."""

    weights: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer


def model_state_bytes_per_rank(
    n_params: int,
    zero: ZeroStage,
    shard_degree: int,
    weight_dtype: Dtype = Dtype.BF16,
    trainable: bool = True,
) -> ModelStateBytes:
    """Mixed-precision Adam model states of ``n_params`` replicated parameters on one rank.

    Rajbhandari et al. 2020, Table 1: baseline (2 + 2 + K) Psi, P_os 2 Psi + 2 Psi + K Psi/N_d,
    P_os+g 2 Psi + (2 + K) Psi/N_d, P_os+g+p (2 + 2 + K) Psi/N_d. Gradients take the weight
    dtype. ``trainable=False`` (a frozen model): weights only, still sharded under ZeRO-3.

    >>> m = model_state_bytes_per_rank(7_500_000_000, ZeroStage.OS_G_P, 64)
    >>> m.total / 1e9
    1.875
    """
    n = shard_degree
    w = weight_dtype.bytes
    params_w = split_up(n_params, n) if zero is ZeroStage.OS_G_P else n_params
    weights = w * params_w
    if not trainable:
        return ModelStateBytes(weights, 0, 0)
    grads = w * (split_up(n_params, n) if zero in (ZeroStage.OS_G, ZeroStage.OS_G_P) else n_params)
    opt_params = n_params if zero is ZeroStage.NONE else split_up(n_params, n)
    return ModelStateBytes(weights, grads, optimizer_bytes_per_param(weight_dtype) * opt_params)
