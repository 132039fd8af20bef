"""The dtypes the compiled memory model reads (:class:`Dtypes`), taken once from a workload.
Split from :mod:`rlmcost.compiled.memory`, which re-exports it."""

from __future__ import annotations

from typing import Any

from rlmcost.choices import Dtype
from rlmcost.frozen import dataclass


@dataclass(frozen=True)
class Dtypes:
    """Bytes per element of what memory holds, and the GEMM dtype whose peak bounds compute;
    the defaults are ``specs.Workload()``'s (bf16 weights, gradients, activations, KV cache
    and compute; fp32 logits). ``param``: a trainer's stored parameters and gradients
    (``Workload.param_dtype``; None: ``weight``); ``grad``: its gradients where they are wider
    (``Workload.grad_dtype``; None: ``param``)."""

    weight: int = Dtype.BF16.bytes
    activation: int = Dtype.BF16.bytes
    kv: int = Dtype.BF16.bytes
    logits: int = Dtype.FP32.bytes
    compute: Dtype = Dtype.BF16
    param: int | None = None
    state: int | None = None  # a linear layer's recurrent state (None: kv)
    kv_window: bool = False  # sliding layers keep their window (Workload.kv_window)
    grad: int | None = None  # a trainer's gradient buffer (Workload.grad_dtype; None: param)
    kv_swa_pool: bool = False  # SGLang's SWA pool (Workload.kv_swa_pool)
    unquantized: int | None = None  # an FP8 engine's 16-bit parts (Workload.unquantized_dtype)
    conv: int | None = None  # a linear layer's conv state (Workload.conv_dtype; None: kv)
    packed: str | None = None  # a 4-bit engine's format, parts (Workload.packed_format, _parts)
    packed_parts: str = "linear"

    @classmethod
    def of(cls, workload: Any | None) -> Dtypes:
        """The dtypes of a ``specs.Workload`` (or any object with its dtype fields)."""
        if workload is None:
            return _DEFAULT
        return cls(workload.weight_dtype.bytes, workload.activation_dtype.bytes,
                   workload.kv_dtype.bytes, workload.logits_dtype.bytes, workload.compute_dtype,
                   _nbytes(workload, "param_dtype"), _nbytes(workload, "state_dtype"),
                   bool(getattr(workload, "kv_window", False)), _nbytes(workload, "grad_dtype"),
                   bool(getattr(workload, "kv_swa_pool", False)),
                   _nbytes(workload, "unquantized_dtype"),
                   _nbytes(workload, "conv_dtype"), getattr(workload, "packed_format", None),
                   getattr(workload, "packed_parts", "linear"))  # fmt: skip


def _nbytes(workload: Any, name: str) -> int | None:
    """The bytes of ``workload``'s optional dtype ``name`` (None: unset)."""
    d = getattr(workload, name, None)
    return None if d is None else d.bytes


_DEFAULT = Dtypes()
