"""Two costs of a policy worker's own mechanics that its GEMMs and collectives leave out: the
reference model swapped in through host memory, and FSDP2's per-micro-batch parameter and
gradient copies.

* **Reference swap** (:func:`reference_swap_s`). NeMo RL runs the reference's log-prob forward
  in the policy's own model: ``use_reference_model`` in ``nemo_rl/models/policy/
  megatron_policy_worker.py`` (NVIDIA-NeMo/RL v0.3.0 and v0.4.0; ``workers/megatron_policy_
  worker.py`` at v0.5.0 and v0.7.0) copies the policy's state dict to the host
  (``item.detach().to(device="cpu", non_blocking=True, copy=True)``), loads the reference's
  host copy into the model (``load_state_dict(self.reference_state_dict)``), and on exit loads
  the policy's back; ``dtensor_policy_worker.py`` (v0.3.0) does the same with
  ``get_cpu_state_dict(..., pin_memory=True)`` and ``copy_``. That is
  :data:`REFERENCE_SWAP_COPIES` copies of the rank's model state (its parameters as the model
  holds them: 16-bit in Megatron-core beside the distributed optimizer's fp32 master copy, the
  fp32 FSDP2 shard in the DTensor worker) over the host link, in series with the forward. The
  ``gc.collect()`` and ``torch.cuda.empty_cache()`` around them are not priced.
* **FSDP2 copies** (:func:`fsdp2_copy_bytes`). ``fully_shard`` (PyTorch ``torch/distributed/
  fsdp/_fully_shard/_fsdp_param_group.py`` ``wait_for_unshard``, ``_fsdp_collectives.py``
  ``foreach_all_gather_copy_out`` and ``foreach_reduce``) shards each parameter on its own, so
  every all-gather lands in a flat buffer that ``split_with_sizes_copy`` copies out into the
  parameters (read + write of ``a`` bytes each, ``a`` = the MixedPrecisionPolicy's
  ``param_dtype``), on the compute stream, before the layer runs: once in the forward and once
  more in the backward (``reshard_after_forward=True``, the default the per-layer
  ``fully_shard`` of ``nemo_rl/models/dtensor/parallelize.py`` keeps). Before each
  reduce-scatter the gradients (``a`` bytes) are copied into the reduce-scatter buffer in the
  ``reduce_dtype`` (``r`` bytes: ``foreach_reduce_scatter_copy_in`` / ``_chunk_cat``, on the
  compute stream before ``reduce_scatter_stream.wait_stream(current_stream)``). NeMo RL's
  DTensor worker sets ``MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32,
  output_dtype=float32)`` (``parallelize.py`` at v0.3.0) and syncs gradients every micro-batch
  (its ``train`` loop has no ``set_requires_gradient_sync(False)``), so per micro-batch and
  parameter of the rank's tensor-parallel shard: forward ``2 a``, backward ``2 a + a + r``
  bytes (bf16 / fp32: 4 and 10), and the reduce-scatter moves ``r`` bytes per parameter.
"""

from __future__ import annotations

REFERENCE_SWAP_COPIES = 3
"""Host-link copies of the rank's model state per reference forward: policy out, reference
in, policy back in (NeMo RL ``use_reference_model``, module docstring)."""


def reference_swap_s(state_bytes_per_device: int, host_bytes_per_s: float,
                     copies: int = REFERENCE_SWAP_COPIES) -> float:  # fmt: skip
    """Seconds of one reference swap: ``copies`` x the rank's model state bytes over the host
    link (module docstring).

    >>> reference_swap_s(16_000_000_000, 64e9)  # Llama-3.1-8B bf16 at TP 1, PCIe Gen5 x16
    0.75
    """
    return copies * state_bytes_per_device / host_bytes_per_s if copies else 0.0


def fsdp2_copy_bytes(params: int, param_bytes: int, reduce_bytes: int) -> tuple[int, int]:
    """(forward, backward) bytes FSDP2's copies move per micro-batch for ``params`` parameters
    of the rank's tensor-parallel shard (module docstring): the all-gather copy-out
    (``2 a``) each way, and the reduce-scatter copy-in (``a + r``) in the backward.

    >>> fsdp2_copy_bytes(1_000, 2, 4)  # bf16 parameters, fp32 gradient reduction
    (4000, 10000)
    """
    out = 2 * param_bytes * params
    return out, out + (param_bytes + reduce_bytes) * params
