"""The device the harness measures: torch import, CPU/CUDA checks, names, dtypes, threads.

torch is imported inside these functions only, so the package imports without it and
``rlmcost calibrate`` answers with one line when it is missing.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec

TORCH_MISSING = 'rlmcost calibrate needs torch: pip install -e ".[calibrate]"'


class DeviceKind(StrEnum):
    """Where the micro-kernels run (the CLI spelling of ``--device``)."""

    CPU = "cpu"
    CUDA = "cuda"


def require_torch() -> Any:
    """The torch module, or a SpecError saying how to install it."""
    try:
        import torch
    except ImportError:
        raise SpecError(TORCH_MISSING) from None
    return torch


def check_device(kind: DeviceKind) -> Any:
    """A ``torch.device`` for ``kind``; a SpecError when CUDA is asked for but absent."""
    torch = require_torch()
    if kind is DeviceKind.CUDA:
        if not torch.cuda.is_available():
            build = f"torch {torch.__version__}" + (
                " built without CUDA" if torch.version.cuda is None else ", no GPU visible"
            )
            raise SpecError(
                f"--device cuda: no CUDA device is available ({build}); "
                "use --device cpu or run on a machine with a GPU"
            )
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def default_dtype(kind: DeviceKind) -> Dtype:
    """fp32 on CPU (what CPU training uses), bf16 on CUDA (what GPU training uses)."""
    return Dtype.FP32 if kind is DeviceKind.CPU else Dtype.BF16


def torch_dtype(dtype: Dtype, kind: DeviceKind) -> Any:
    """The torch dtype for ``dtype``; tf32 is fp32 storage with TF32 tensor-core matmuls."""
    torch = require_torch()
    if dtype is Dtype.FP8:
        raise SpecError("--dtype fp8: the harness has no fp8 kernels; use bf16, fp16 or fp32")
    if dtype is Dtype.TF32 and kind is DeviceKind.CPU:
        raise SpecError("--dtype tf32 is a CUDA matmul mode; use fp32 or bf16 on cpu")
    return {
        Dtype.FP32: torch.float32,
        Dtype.TF32: torch.float32,
        Dtype.BF16: torch.bfloat16,
        Dtype.FP16: torch.float16,
    }[dtype]


def cpu_cores() -> int:
    """CPU cores this process may run on (affinity-aware, as in a CI container)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def set_cpu_threads() -> int:
    """Pin torch's intra-op threads to the machine's cores; returns the count."""
    torch = require_torch()
    n = cpu_cores()
    torch.set_num_threads(n)
    return n


def device_name(kind: DeviceKind) -> str:
    """The device as its vendor names it: the CUDA device name, or the CPU model."""
    if kind is DeviceKind.CUDA:
        torch = require_torch()
        return torch.cuda.get_device_name()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "cpu"


_VENDOR_WORDS = {"nvidia", "amd", "instinct", "tensor", "core", "gpu", "graphics"}


def match_hardware(name: str) -> HardwareSpec:
    """The built-in accelerator that a CUDA device name denotes.

    "NVIDIA H200" -> h200; "NVIDIA H100 80GB HBM3" -> h100-sxm (the alias "h100");
    "NVIDIA H100 PCIe" -> h100-pcie; "NVIDIA A100-SXM4-80GB" -> a100-80gb. A spec is a
    candidate when the first part of its name (the model, "h100") is a word of ``name``;
    among candidates the one with most other name parts in ``name`` wins, ties go to the
    spec that the model word alone resolves to.
    """
    from rlmcost.specs import get_hardware, hardware

    words = set(re.findall(r"[a-z0-9]+", name.lower())) - _VENDOR_WORDS
    scored = []
    for spec in hardware():
        model, *rest = spec.name.split("-")
        if model in words:
            scored.append((sum(part in words for part in rest), spec))
    if not scored:
        raise SpecError(
            f"cannot tell which built-in hardware the device '{name}' is; "
            "pass --hardware NAME (see `rlmcost hardware`)"
        )
    best = max(score for score, _ in scored)
    top = [spec for score, spec in scored if score == best]
    if len(top) == 1:
        return top[0]
    by_alias = get_hardware(top[0].name.split("-")[0])
    return by_alias if by_alias in top else top[0]
