"""Between-phases offload copies that do not run at the host link's DMA rate.

rlmcost prices a colocated trainer's between-phases offload (``--offload optimizer-idle,
params-idle,grads-idle``: the states go to the host while the engine generates and come back
for the update) as bytes over the host link (:mod:`rlmcost.placement.transfer`, PCIe Gen5 x16
64 GB/s on H100). Two of NeMo RL's Megatron-core moves are not such copies:

* **Optimizer states: pageable, tensor by tensor** (:data:`PAGEABLE_OFFLOAD_BYTES_PER_S`).
  ``MegatronPolicyWorker.move_optimizer`` (``nemo_rl/models/policy/workers/
  megatron_policy_worker.py`` at NVIDIA-NeMo/RL v0.5.0 line 2361, unchanged at v0.7.0 line
  1643; ``megatron_policy_worker.py`` before, inline in ``offload_before_refit``) walks the
  optimizer state and replaces each tensor with ``v.to("cpu")`` (``offload_before_refit``,
  every refit of a colocated run) and ``v.to("cuda")`` (``prepare_for_training``, every
  update): a blocking copy into freshly allocated pageable host memory and back, one state
  tensor at a time. The driver stages pageable copies through a pinned bounce buffer and the
  host pages are faulted in on every step, so the copy runs at a fraction of the link's DMA
  rate. NVIDIA-NeMo/RL PR 2248 (2026-04-10, "Add pinned memory optimizer offload for Megatron
  policy worker") names it: "Optimizer D2H/H2D transfers used per-tensor pageable
  allocations, causing expensive cudaHostAlloc calls and synchronous memcpy on every step"
  (opt-in there, default off; not in v0.7.0). The DTensor worker's
  ``move_optimizer_to_device`` (``dtensor_policy_worker.py`` at v0.5.0) does the same; its
  parameters go the same way (``offload_after_refit``: ``model.to("cpu")``) but stay at the
  link's rate here (a known deviation: ``Behaviour`` is per framework, not per backend).
* **Gradients: freed, not copied** (``Behaviour.grads_offload_frees``). The gradient buffers
  go "to the CPU" through Megatron-core's ``_ParamAndGradBuffer.offload_to_cpu(move_params=
  False, move_grads=True)`` (``megatron/core/distributed/param_and_grad_buffer.py``,
  NVIDIA/Megatron-LM d98e8a64), which only ``grad_data.storage().resize_(0)``; the reload
  resizes and ``zero_()``s them. No host traffic. (The parameters' move is a real copy, into a
  cached pinned buffer with ``non_blocking=True``: the link's rate stands.)

Both are framework behaviours (:class:`~rlmcost.frameworks.preset_model.Behaviour`), read by
:meth:`rlmcost.placement.group_offload.GroupOffload.pageable_offload_s` and
``phase_traffic_bytes``. Rows whose generation runs on GPUs of their own do not offload
(NeMo RL's ``offload_optimizer_for_logprob`` is false by default from v0.5.0 on, PR 1404).
"""

from __future__ import annotations

from rlmcost.perf.rl_constants import Constant

PAGEABLE_OFFLOAD_BYTES_PER_S = Constant(
    4.18e9, 3.82e9, 4.67e9, "NeMo RL PR 1404 (Qwen3-30B-A3B, Qwen3-235B-A22B timings)"
)
"""Bytes per second per GPU of NeMo RL's tensor-by-tensor pageable optimizer offload, each
direction (module docstring).

NVIDIA-NeMo/RL PR 1404 ("Make the optimizer offloading optional", merged 2025-11-06 as
8615ee9ab, in v0.5.0) stopped moving the optimizer states to the host before the log-prob
forward (``prepare_for_lp_inference``) and back (``prepare_for_training``) when generation is
not colocated, and measured "Performance (logprob_inference_prep + training_prep): QWEN3
235B: 10 s --> 1 s, QWEN3 30B: 13 s --> ~1 s": the saving is one pageable round trip of the
optimizer states, 12 s and 9 s. The PR does not give its layouts; taken as the 1-step
off-policy performance recipes (the non-colocated runs of that time, published in the v0.5
section of docs/about/performance-summary.md): grpo-qwen3-30ba3b-4n8g-async-1off (16
training H100s, PP 2, EP 8) and grpo-qwen3-235b-32n8g-async-1off (128 training H100s, TP 4,
PP 8, EP 16), whose distributed optimizer holds fp32 master weights, m and v (12 bytes per
parameter of the rank's shard): 22.90 GB and 21.00 GB per GPU (rlmcost's memory model).
Rates: 2 x 22.90 GB / 12 s = 3.82 GB/s (low), 2 x 21.00 GB / 9 s = 4.67 GB/s (high), pooled
87.8 GB / 21 s = 4.18 GB/s (value). An assumption beyond the PR: the layouts; the two
derived rates agree within 20 %, and a pageable staged copy with page faults running near
4 GB/s against the link's 64 GB/s is what the mechanism predicts. Measured on x86 DGX-H100
hosts: applied where the host link is no faster than theirs (:func:`applies_to`)."""

PCIE_HOST_LINK_BYTES_PER_S = 64_000_000_000
"""PCIe Gen5 x16 per direction, the DGX-H100's host link where the pageable rate was measured
(``host_link_source`` of h100-sxm in specs/data/hardware.json)."""


def applies_to(host_link_bytes_per_s: int) -> bool:
    """Whether the measured pageable rate applies to a host link (a modelling choice, stated in
    the output): a PCIe-class link, no faster than the measured DGX-H100's. Not a coherent
    NVLink-C2C host (GB200, 450 GB/s), whose GPU reaches pageable memory through the link's
    address translation without the staging copy; no measurement of the move there, so its
    bytes stay at the link's rate.

    >>> applies_to(64_000_000_000), applies_to(450_000_000_000)
    (True, False)
    """
    return host_link_bytes_per_s <= PCIE_HOST_LINK_BYTES_PER_S


def pageable_offload_s(nbytes: int, end: str = "value") -> float:
    """Seconds to move ``nbytes`` per GPU (both directions summed) by pageable, tensor-by-tensor
    copies (module docstring).

    >>> round(pageable_offload_s(2 * 11_449_545_984), 2)  # Qwen3-30B-A3B at EP 8 on 32 GPUs
    5.48
    >>> pageable_offload_s(0)
    0.0
    """
    return nbytes / PAGEABLE_OFFLOAD_BYTES_PER_S.at(end) if nbytes else 0.0
