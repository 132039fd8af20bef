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
* gradients in a wider dtype than the weights (``grad_dtype``): Megatron-core's
  ``DistributedDataParallel`` keeps one contiguous gradient buffer per dtype, fp32 where
  ``DistributedDataParallelConfig.grad_reduce_in_fp32`` (``megatron/core/distributed/
  distributed_data_parallel.py`` @1dcf0daf: ``grad_dtype = torch.float if
  self.ddp_config.grad_reduce_in_fp32 else param.dtype``); the distributed optimizer (ZeRO-1)
  shards the fp32 main parameters and Adam states, not that buffer: each data-parallel rank
  holds the whole buffer of its parameters and the reduce-scatter writes its shard into it
  (``distrib_optimizer.py``, ``param_and_grad_buffer.py``). The gradients take
  ``grad_dtype`` under the stage's sharding (whole under ZeRO-0/1, the shard under 2/3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.frozen import dataclass
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


def states_in_words(
    weight_dtype: Dtype, param_dtype: Dtype | None = None, grad_dtype: Dtype | None = None
) -> str:
    """A trainer's model states and their bytes per parameter, in words: ``weight_dtype``
    weights and gradients with Adam's fp32 master copy, or, stored in ``param_dtype``
    (FSDP mixed precision), weights and gradients in it with a per-unit compute copy;
    gradients in ``grad_dtype`` where it differs (Megatron-core's fp32 gradient buffer).

    >>> states_in_words(Dtype.BF16, Dtype.FP32)
    'fp32 weights and gradients (bf16 compute copy per unit), Adam m, v in fp32 (4 + 4 + 8 B/param)'
    >>> states_in_words(Dtype.BF16, None, Dtype.FP32)
    'bf16 weights, fp32 gradients, fp32 Adam master weights, m, v (2 + 4 + 12 B/param)'
    """
    stored = param_dtype or weight_dtype
    grads = grad_dtype or stored
    k = optimizer_bytes_per_param(stored)
    b, g = stored.bytes, grads.bytes
    both = f"{stored} weights and gradients" if grads == stored else \
        f"{stored} weights, {grads} gradients"  # fmt: skip
    if stored == weight_dtype:
        adam = "fp32 Adam m, v" if k == 8 else "fp32 Adam master weights, m, v"
        return f"{both}, {adam} ({b} + {g} + {k} B/param)"
    return (f"{both} ({weight_dtype} compute copy per unit), Adam m, v in fp32 "
            f"({b} + {g} + {k} B/param)")


@dataclass(frozen=True)
class ModelStateBytes:
    """Model-state bytes on one rank: weights, gradients and optimizer."""

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
    grad_dtype: Dtype | None = None,
) -> ModelStateBytes:
    """Mixed-precision Adam model states of ``n_params`` replicated parameters on one rank.

    Rajbhandari et al. 2020, Table 1: baseline (2 + 2 + K) Psi, P_os 2 Psi + 2 Psi + K Psi/N_d,
    P_os+g 2 Psi + (2 + K) Psi/N_d, P_os+g+p (2 + 2 + K) Psi/N_d. Gradients take
    ``grad_dtype`` (None: the weight dtype; module docstring), sharded as the stage shards
    them. ``trainable=False`` (a frozen model): weights only, still sharded under ZeRO-3.

    >>> m = model_state_bytes_per_rank(7_500_000_000, ZeroStage.OS_G_P, 64)
    >>> m.total / 1e9
    1.875
    >>> model_state_bytes_per_rank(1000, ZeroStage.OS, 4, grad_dtype=Dtype.FP32).gradients
    4000
    """
    n = shard_degree
    w = weight_dtype.bytes
    params_w = split_up(n_params, n) if zero is ZeroStage.OS_G_P else n_params
    weights = w * params_w
    if not trainable:
        return ModelStateBytes(weights, 0, 0)
    g = (grad_dtype or weight_dtype).bytes
    grads = g * (split_up(n_params, n) if zero in (ZeroStage.OS_G, ZeroStage.OS_G_P) else n_params)
    opt_params = n_params if zero is ZeroStage.NONE else split_up(n_params, n)
    return ModelStateBytes(weights, grads, optimizer_bytes_per_param(weight_dtype) * opt_params)
