"""The per-process device memory outside the model's tensors: the CUDA context, the
communicator buffers and the caching allocator's slack (:class:`Overhead`, a field of
:class:`~rlmcost.deployment.spec.Deployment`). Light to import (pydantic only)."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
from pydantic import ConfigDict, Field

from rlmcost.specs.validation import Checked

MIB = 1024**2

_STRICT = ConfigDict(frozen=True, extra="forbid")


CUDA_CONTEXT_BYTES = 512 * MIB
"""CUDA context, cuBLAS/cuDNN handles and kernels of one process: 300-600 MiB on Hopper with
PyTorch 2.x (PyTorch docs, 'CUDA semantics: memory management' note that the context is not
counted by the caching allocator; nvidia-smi with an empty tensor shows ~500 MiB)."""

COMMUNICATOR_BYTES = 512 * MIB
"""NCCL communicator buffers of a process in a multi-GPU job: NCCL_BUFFSIZE 4 MiB per channel
and peer (NCCL environment-variable docs), a few hundred MiB per communicator in practice."""

ALLOCATOR_SLACK = 0.05
"""Fragmentation of PyTorch's caching allocator without expandable segments (its default) in a
process that keeps one allocation pattern (a trainer alone, a forward-only model): reserved
minus allocated at the peak, about 5% of the allocated peak in FSDP/Megatron runs
(torch.cuda.memory_stats reserved vs allocated); vLLM leaves 10% of the device by default for
the same reasons. An assumption; its range, 0.02 to the 0.49 of GMLake's largest measured
fragmentation (33 % of reserved, arXiv 2401.08156), is ``rlmcost.perf.validate_memory.
SLACK_RANGE``."""

ALLOCATOR_SLACK_EXPANDABLE = 0.02
"""Slack with ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``: the allocator maps physical
pages into one growing virtual segment per stream instead of a cudaMalloc per large request,
so a freed block's pages serve the next request of any size (PyTorch docs, "CUDA semantics",
``expandable_segments``: segments that "can later be expanded to better handle cases where a
job changes allocation sizes frequently"; ``c10/cuda/CUDACachingAllocator.cpp``
``ExpandableSegment``); what stays reserved is the partly used pages and the cached but idle
blocks. An assumption (no published reserved/allocated ratio with expandable segments); its
range, 0.0 to 0.18 (the default allocator's mean fragmentation in GMLake's measurements, 15 %
of reserved), is ``rlmcost.perf.validate_memory.SLACK_RANGE_EXPANDABLE``."""

ALLOCATOR_SLACK_SWITCHING = 0.10
"""Slack without expandable segments of a process that switches between generation and
training on the same GPUs (colocated RL): blocks cached for the trainer's activations and
gathered layers are split for the log-prob and refit tensors of other sizes, and blocks of
different segments never merge (PyTorch DevLog, E. Yang, "When does fragmentation occur in the
CUDA caching allocator?", 2026), so the reserved pool outgrows the allocated peak. NeMo RL
names it the main memory issue of the train -> offload -> refit -> generate cycle
(``nemo_rl/models/policy/workers/megatron_policy_worker.py`` ``_clear_fp8_caches``: "CUDA
allocator fragmentation"); verl switches expandable segments on around the trainer's phases
for it (``verl/workers/fsdp_workers.py`` ``set_expandable_segments``; the FSDP2 OOM fixed in
verl PR 3020). An assumption (no published ratio): low 0.05, high 0.25."""


class Overhead(Checked):
    """Fixed per-process device memory outside the model's tensors and the caching allocator's
    slack (each term's source is in the constant it defaults to)."""

    model_config = _STRICT

    cuda_context_bytes: int = Field(default=CUDA_CONTEXT_BYTES, ge=0)
    communicator_bytes: int = Field(default=COMMUNICATOR_BYTES, ge=0)
    allocator_slack: float | None = Field(
        default=None, ge=0, le=1, description="reserved / allocated - 1 of the caching "
        "allocator (None: from expandable_segments and whether the GPUs switch between "
        "generation and training, allocator_slack_for)",
    )
    expandable_segments: bool = Field(
        default=False, description="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the "
        "trainer's processes (PyTorch's default: False)",
    )

    def allocator_slack_for(self, switches: bool) -> float:
        """The allocator's slack: ``allocator_slack`` when given; else
        :data:`ALLOCATOR_SLACK_EXPANDABLE` with expandable segments,
        :data:`ALLOCATOR_SLACK_SWITCHING` without them on GPUs that ``switches`` between
        generation and training, :data:`ALLOCATOR_SLACK` otherwise."""
        if self.allocator_slack is not None:
            return self.allocator_slack
        if self.expandable_segments:
            return ALLOCATOR_SLACK_EXPANDABLE
        return ALLOCATOR_SLACK_SWITCHING if switches else ALLOCATOR_SLACK
