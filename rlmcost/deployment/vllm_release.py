"""The vLLM release an engine runs (``EngineSpec.vllm_version``, ``--vllm-version``) and what
rlmcost prices by it; each framework's vLLM pin by its release or code day.

:func:`vllm_release` maps a release to what :mod:`rlmcost.deployment.vllm_profile` keys by
release:

* the start-up profile's sampler (:func:`~rlmcost.deployment.vllm_profile.
  v1_sampler_bytes_per_logit`): the PyTorch sort of ``apply_top_k_top_p`` in vLLM 0.9.0 to
  0.16.x, the in-place Triton kernel from 0.17.0 (``vllm/v1/sample/ops/topk_topp_triton.py``);
* the offline batch defaults (:func:`~rlmcost.deployment.vllm_profile.llm_class_defaults`),
  one rule over the whole modelled range (``get_batch_defaults``, v0.9-v0.20);
* the V1 engine (the default from vLLM 0.8.0) and no CUDA-graph memory profiling (captured
  inside ``1 - gpu_memory_utilization`` through v0.20).

rlmcost models vLLM 0.9.0 to 0.20.x (:data:`MODELLED`). Before 0.9.0 the V1 profile's dummy
sampling metadata was not read (0.8.x), and the V0 engine (< 0.8) prices its profile
(:func:`~rlmcost.deployment.vllm_profile.v0_profile_peak_bytes`) only in the memory
validation rows (``validate --memory``, profile ``vllm-v0.6.5``), whose forward and rows the
RL evaluation does not build. vLLM 0.21.0 profiles the CUDA graphs' memory at start-up by
default (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``, vLLM PR 30515) and takes it out of the
KV pool: not modelled. Both ends are refused with a clear error.

Without a release the engine runs its framework's current pin (:data:`FRAMEWORK_VLLM`).

Light to import: no pydantic, integer tuples only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rlmcost.errors import SpecError

Version = tuple[int, int, int]

MODELLED: tuple[Version, Version] = ((0, 9, 0), (0, 21, 0))
"""The vLLM releases rlmcost models, ``[first, end)``: 0.9.0 to 0.20.x (module doc)."""

TRITON_SAMPLER_FROM: Version = (0, 17, 0)
"""The first release whose ``apply_top_k_top_p`` takes the Triton top-k/top-p kernel
(``vllm/v1/sample/ops/topk_topp_triton.py``, vLLM 0.17.0); 0.9.0 to 0.16.x sort."""

FRAMEWORK_VLLM: dict[str, str] = {
    "verl": "0.12.0", "nemo-rl": "0.20.0", "trl": "0.25.1", "openrlhf": "0.27.1",
}  # fmt: skip
"""Each framework's current vLLM pin (the newest its requirement admits, pip's choice):
verl ``vllm>=0.8.5,<=0.12.0`` (setup.py @b178a3cd5, since PR 4653, 99a3ed060, 2025-12-29);
NeMo RL v0.7.0 ``vllm==0.20.0`` (pyproject.toml @81aa43dda4); TRL ``vllm>=0.17.0,<=0.25.1``
(pyproject.toml @f2cd57710); OpenRLHF ``vllm==0.27.1`` (setup.py extra @3c3be623). TRL's and
OpenRLHF's lie past :data:`MODELLED`: their default engine takes the sampler of 0.17-0.20
(FlashInfer's of 0.21 holds as much, 14 B a logit), without 0.21's CUDA-graph profiling. slime
runs SGLang. A deployment without a framework takes NeMo RL's."""

NEMO_RL_VLLM: dict[tuple[int, int], str] = {
    (0, 1): "0.8.0", (0, 2): "0.8.4", (0, 3): "0.9.0", (0, 4): "0.10.0", (0, 5): "0.11.2",
    (0, 6): "0.17.1", (0, 7): "0.20.0",
}  # fmt: skip
"""NeMo RL release line -> its pinned vLLM (``pyproject.toml`` ``vllm==`` at the tags of
NVIDIA-NeMo/RL: v0.1.0 0.8.0, v0.2.0/v0.2.1 0.8.4, v0.3.0/v0.3.1 0.9.0 (b1c86a816c), v0.4.0
0.10.0 (c751f81121), v0.5.0 0.11.2 (6c7089300f), v0.6.0 0.17.1 (5fb588932b), v0.7.0 0.20.0
(81aa43dda4, the wheel URLs of its ``vllm`` extra))."""

_FORM = "X.Y or X.Y.Z, e.g. 0.11.2"


@dataclass(frozen=True)
class VllmRelease:
    """What rlmcost prices by vLLM release (module doc)."""

    version: Version
    triton_sampler: bool
    """The profile's sampler masks in place (Triton, >= 0.17.0; 14 B a logit) rather than
    sorting the vocabulary (0.9.0 to 0.16.x; 38 B)."""

    @property
    def text(self) -> str:
        return ".".join(map(str, self.version))


def parse_version(text: str) -> Version:
    """``X.Y[.Z]`` (a leading ``v`` and a ``.postN``/``rcN`` tail allowed) as a tuple."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.?(?:post|rc|dev)\d*)?", str(text).strip())
    if m is None:
        raise SpecError(f"vLLM version {text!r}: give {_FORM}")
    return int(m[1]), int(m[2]), int(m[3] or 0)


def _show(v: Version) -> str:
    return ".".join(map(str, v))


def check_vllm_version(text: str) -> str:
    """``--vllm-version``: the release as ``X.Y.Z``, refused outside :data:`MODELLED`
    (module doc: why each end)."""
    v = parse_version(text)
    first, end = MODELLED
    span = f"rlmcost models vLLM {_show(first)} to {end[0]}.{end[1] - 1}.x"
    if v < first:
        raise SpecError(f"vLLM {_show(v)}: {span} (the V1 engine's start-up profile); 0.8.x's "
                        "profile sampler is not modelled and the V0 engine of < 0.8 is priced "
                        "only by validate --memory's vllm-v0.6.5 rows; give 0.9.0 or later")
    if v >= end:
        raise SpecError(f"vLLM {_show(v)}: {span}; from 0.21.0 vLLM profiles the CUDA graphs' "
                        "memory at start-up (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, PR 30515) "
                        "and takes it from the KV pool, which rlmcost does not model; give "
                        "0.20.0 or leave --vllm-version out (the framework's pin)")
    return _show(v)


def framework_vllm(framework: str | None) -> str:
    """:data:`FRAMEWORK_VLLM` of ``framework`` (None, slime or unknown: NeMo RL's)."""
    return FRAMEWORK_VLLM.get(str(framework).lower(), FRAMEWORK_VLLM["nemo-rl"])


@lru_cache(maxsize=64)  # per engine budget: a query has one or two
def vllm_release(version: str | None, framework: str | None = None) -> VllmRelease:
    """What rlmcost prices for vLLM ``version`` (None: ``framework``'s pin,
    :func:`framework_vllm`), module doc.

    >>> [vllm_release(v).triton_sampler for v in ("0.16.9", "0.17.0", "0.20.0")]
    [False, True, True]
    >>> vllm_release(None, "verl").text, vllm_release(None, "verl").triton_sampler
    ('0.12.0', False)
    """
    v = parse_version(version if version is not None else framework_vllm(framework))
    return VllmRelease(v, v >= TRITON_SAMPLER_FROM)


def nemo_rl_vllm(release: str) -> str | None:
    """The vLLM NeMo RL ``release`` (``0.5``, ``v0.5.0``) pins (:data:`NEMO_RL_VLLM`); None
    for a release rlmcost does not know."""
    major, minor, _ = parse_version(release)
    return NEMO_RL_VLLM.get((major, minor))


def modelled(version: str) -> bool:
    """Whether ``version`` lies in :data:`MODELLED` (an importer sets only those)."""
    return MODELLED[0] <= parse_version(version) < MODELLED[1]
