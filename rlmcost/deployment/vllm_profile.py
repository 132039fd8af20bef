"""vLLM's KV-cache pool as vLLM sizes it, and its batch defaults by device.

vLLM V1 sizes the pool once, at start-up (``vllm/v1/worker/gpu_worker.py``
``Worker.determine_available_memory``, v0.9 to v0.20; the ``memory_profiling`` context of
``vllm/utils`` from v0.10):

    available_kv_cache_memory = total_memory x gpu_memory_utilization
                                - (weights + torch_peak_increase + non_torch_increase)

* ``torch_peak_increase``: the PyTorch peak of ``GPUModelRunner.profile_run``
  (``vllm/v1/worker/gpu_model_runner.py``): a dummy forward of ``max_num_batched_tokens``
  tokens (``_dummy_run(self.max_num_tokens)``), then on the last pipeline stage the sampler's
  dummy run over ``min(max_num_seqs, max_num_batched_tokens)`` rows of full-vocabulary logits
  (``_dummy_sampler_run``; the logits are gathered whole on every TP rank,
  ``LogitsProcessor._gather_logits``, and upcast to fp32 by ``Sampler``), beside the forward's
  output hidden states, which ``profile_run`` keeps while the sampler runs. The forward's
  transients are freed before the sampler runs, so the peak is the larger of the two
  (:func:`profile_peak_bytes`). rlmcost prices the forward with its own inference buffer
  (``blocks.memory_inference_buffer``: one layer's transients for the token count, TP-sharded)
  and the sampler as vLLM's code runs it (:func:`v1_sampler_bytes_per_logit`). The dummy
  ``SamplingMetadata`` is the same in every release from v0.9.0 to v0.21.0 (read in the
  wheels): ``temperature`` 0.5, ``all_greedy=False``, ``all_random=False``, ``top_p`` 0.9,
  ``top_k`` vocab - 1, ``no_penalties=True``, ``max_num_logprobs=None``, no generators, no
  logits processors, so ``Sampler.sample`` takes the argmax, divides by the temperature in
  place and runs ``TopKTopPSampler`` with both filters:

  - vLLM 0.9.0 to 0.16.x: the PyTorch-native ``apply_top_k_top_p``
    (``vllm/v1/sample/ops/topk_topp_sampler.py``) sorts the whole vocabulary
    (:data:`V1_SORT_SAMPLER_BYTES_PER_LOGIT`). FlashInfer's sampler (14 B a logit) replaced
    it only where FlashInfer was installed: through v0.11.0 it was used when importable
    (``VLLM_USE_FLASHINFER_SAMPLER`` unset), but the vllm wheel did not require it (0.9.0 and
    0.10.0 name no ``flashinfer-python``, 0.10.2 and 0.11.0 only under the ``flashinfer``
    extra); from v0.11.1 it is a requirement and the sampler is off unless the variable is 1
    (vLLM PR 26859, 2025-10-15).
  - vLLM 0.17.0 to 0.20.x: ``apply_top_k_top_p`` calls ``apply_top_k_top_p_triton``
    (``vllm/v1/sample/ops/topk_topp_triton.py``) for batches of >= 8 rows, which masks the
    fp32 logits in place (:data:`V1_TRITON_SAMPLER_BYTES_PER_LOGIT`); FlashInfer's sampler is
    still off by default.

  vLLM 0.21.0 turned FlashInfer's sampler on by default (PR 40376), 14 B a logit too
  (``top_k_top_p_sampling_from_logits``: the top-k-masked fp32 logits and their softmax).
  Which release runs is the engine's ``vllm_version``, else the framework's pin
  (:func:`rlmcost.deployment.vllm_release.vllm_release`).
* ``non_torch_increase``: memory outside PyTorch's allocator that appeared since the worker's
  start (NCCL communicators, custom all-reduce buffers, cuBLAS workspaces); the CUDA context
  is in the baseline, not in the increase. Priced as rlmcost's communicator buffers
  (:data:`~rlmcost.deployment.overhead.COMMUNICATOR_BYTES`, 512 MiB) when the replica spans
  more than one GPU, else 0: vLLM's own logs put it at 0.05-0.35 GiB on one GPU (vLLM PR 12126,
  Llama-3.2-11B on H100: "non_torch_memory takes 0.16GiB") and about 0.9 GiB on a Ray TP
  replica (a DeepSeek-V2.5 log on A100-40GB: "non_torch_memory takes 0.93GiB").
* CUDA graphs are captured after the KV cache is allocated (``compile_or_warm_up_model``
  after ``initialize_from_config``), inside the ``1 - gpu_memory_utilization`` left over, in
  every release the frameworks here pin (NeMo RL v0.3-v0.7: vLLM 0.9.0-0.20.0, pyproject.toml;
  verl: ``vllm>=0.7.3,<=0.9.1`` in setup.py @14227201e, ``>=0.8.5,<=0.12.0`` @b178a3cd5).
  vLLM 0.21.0 turned ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` on by default
  (vLLM PR 30515, the log line "CUDA graph memory profiling is enabled (default since
  v0.21.0)"), which subtracts the graphs' estimate too: not modelled (no framework pins it).

Batch defaults (``vllm/engine/arg_utils.py`` ``EngineArgs._set_default_args`` /
``get_batch_defaults``, v0.9-v0.20): offline ``vllm.LLM`` (``UsageContext.LLM_CLASS``) runs
``max_num_seqs`` 1024 and ``max_num_batched_tokens`` 16384 on GPUs of at least 70 GiB whose
name is not A100 (H100, H200, H20, B200, GB200; PR 12369 set them for H100/H200 by name, PR
16158 kept 1024 sequences there, PR 17885 of 2025-05-09, before v0.9.0, the A100 exception of
the memory rule), else 256 and 8192 (:func:`llm_class_defaults`).

Light to import: integer arithmetic only.
"""

from __future__ import annotations

from rlmcost.deployment.overhead import COMMUNICATOR_BYTES

LARGE_GPU_BYTES = 70 * 1024**3
"""vLLM's threshold for its large batch defaults: ``device_memory >= 70 * GiB_bytes`` and
"a100" not in the device name (``vllm/engine/arg_utils.py``, v0.9-v0.20)."""

LLM_CLASS_LARGE = (1024, 16384)
"""``(max_num_seqs, max_num_batched_tokens)`` of ``UsageContext.LLM_CLASS`` on large GPUs."""

LLM_CLASS_SMALL = (256, 8192)
"""``(max_num_seqs, max_num_batched_tokens)`` of ``UsageContext.LLM_CLASS`` elsewhere."""


def llm_class_defaults(device_bytes: int, device_name: str) -> tuple[int, int]:
    """vLLM's offline defaults ``(max_num_seqs, max_num_batched_tokens)`` for a device of
    ``device_bytes`` named ``device_name`` (module doc).

    >>> llm_class_defaults(85_520_809_984, "h100-sxm")
    (1024, 16384)
    >>> llm_class_defaults(85_899_345_920, "a100-80gb")
    (256, 8192)
    """
    large = device_bytes >= LARGE_GPU_BYTES and "a100" not in device_name.lower()
    return LLM_CLASS_LARGE if large else LLM_CLASS_SMALL


def sampler_rows(max_num_seqs: int, max_num_batched_tokens: int) -> int:
    """Rows of the profile run's dummy sampler: ``min(max_num_seqs, max_num_batched_tokens)``
    (``GPUModelRunner._dummy_sampler_run``)."""
    return min(max_num_seqs, max_num_batched_tokens)


V1_SORT_SAMPLER_BYTES_PER_LOGIT = 38
"""PyTorch bytes per logit at the peak of vLLM V1's profile-run sampler where it sorts
(vLLM 0.9.0 to 0.16.x; module doc), bf16 (or fp16) model logits: inside ``logits.sort`` of
``apply_top_k_top_p`` (``vllm/v1/sample/ops/topk_topp_sampler.py``) live at once the model's
logits (2 B, kept by ``_dummy_sampler_run``), their fp32 copy (``Sampler.forward``
``logits.to(torch.float32)``, 4 B; the temperature divides it in place), the sort's values
(fp32, 4 B) and int64 indices (8 B), and the CUDA sort's workspace
(``aten/src/ATen/native/cuda/SortStable.cu`` ``segmented_sort_pairs``, taken from 128 rows
on and, per row, for one row: an int64 iota of the positions, 8 B, and cub's
``DeviceSegmentedRadixSort::SortPairs`` temporary storage, whose alternate key and value
buffers are 4 + 8 B, both from PyTorch's caching allocator): 38 B. After the sort the top-k
and top-p masks (1 + 1 B), the softmax that the cumsum overwrites (4 B) and the ``scatter``'s
output (4 B) take their place: 28 B; then ``forward_native``'s softmax and
``random_sample``'s exponential noise (4 + 4 B) beside the re-sorted logits: 18 B."""

V1_SMALL_SORT_SAMPLER_BYTES_PER_LOGIT = 50
"""The same sort at 2 to 127 rows, where PyTorch sorts all rows at once by value and then by
row (``segmented_sort_pairs_by_full_sort``, ``SortStable.cu``): two int2 (row, position)
buffers (8 + 8 B), cub's output keys (4 B) and its alternate keys and int2 values (4 + 8 B)
beside the 18 B of the logits and the sort's outputs: 50 B."""

V1_TRITON_SAMPLER_BYTES_PER_LOGIT = 14
"""The profile-run sampler's peak from vLLM 0.17.0 (module doc): the top-k/top-p mask is
``apply_top_k_top_p_triton``'s kernel writing the fp32 logits in place
(``vllm/v1/sample/ops/topk_topp_triton.py``), so the peak is ``forward_native``'s softmax
and ``random_sample``'s noise (4 + 4 B) beside the model logits and their fp32 copy (2 + 4
B): 14 B a logit. The kernel's per-program scratch, ``min(SMs, rows)`` rows of fp32 logits
(80 MB at 132 SMs and a 151,936 vocabulary), is left out. FlashInfer's sampler (vLLM 0.21.0
on by default) holds as much: the top-k-masked fp32 logits and their softmax."""

TRITON_MIN_ROWS = 8
"""``apply_top_k_top_p`` takes the Triton kernel only for ``logits.shape[0] >= 8`` (vLLM
0.17.0 to 0.21.0); fewer rows sort."""

SEGMENTED_SORT_MIN_ROWS = 128
"""``SortStable.cu`` sorts 2 to 127 rows of one sort with ``segmented_sort_pairs_by_full_sort``
and 128 or more with ``segmented_sort_pairs`` (PyTorch ``do_launch_stable_sort_kernel``)."""

def v1_sampler_bytes_per_logit(rows: int, triton: bool, activation_bytes: int = 2) -> int:
    """Bytes per logit at the peak of vLLM V1's profile-run sampler over ``rows`` rows, with
    the Triton top-k/top-p of vLLM >= 0.17 (``triton``) or the sort before it, model logits
    of ``activation_bytes`` (module doc). Exact ints.

    >>> [v1_sampler_bytes_per_logit(n, False) for n in (1, 64, 1024)]
    [38, 50, 38]
    >>> [v1_sampler_bytes_per_logit(n, True) for n in (4, 1024)]
    [50, 14]
    """
    if triton and rows >= TRITON_MIN_ROWS:
        per = V1_TRITON_SAMPLER_BYTES_PER_LOGIT
    elif 1 < rows < SEGMENTED_SORT_MIN_ROWS:
        per = V1_SMALL_SORT_SAMPLER_BYTES_PER_LOGIT
    else:
        per = V1_SORT_SAMPLER_BYTES_PER_LOGIT
    return per - 2 + activation_bytes


def profile_peak_bytes(
    forward_bytes: int, rows: int, vocab: int, hidden_bytes: int, per_logit: int
) -> int:
    """PyTorch's peak during vLLM's ``profile_run`` per device: the larger of the dummy
    forward's transients (``forward_bytes``) and the dummy sampler's ``per_logit`` bytes over
    ``rows`` rows of the whole ``vocab`` (:func:`v1_sampler_bytes_per_logit`) beside the
    forward's output hidden states (``hidden_bytes``: tokens x hidden x activation bytes).
    Exact ints.

    >>> profile_peak_bytes(10**9, 256, 128_256, 0, 14)  # 256 x V x 14 B < the forward
    1000000000
    >>> profile_peak_bytes(0, 1024, 151_936, 16384 * 1536 * 2, 38)
    5962465280
    """
    return max(forward_bytes, per_logit * rows * vocab + hidden_bytes)


V0_SAMPLER_BYTES_PER_LOGIT = 40
"""PyTorch bytes per logit at the peak of vLLM V0's profile-run sampler (v0.4 to v0.6.x,
``vllm/model_executor/layers/sampler.py``): ``ModelRunner.profile_run`` gives its
``max_num_seqs`` dummy requests ``SamplingParams(top_p=0.99, top_k=vocab_size - 1)`` "to
reflect the accurate memory usage", so ``Sampler.forward`` runs ``_apply_top_k_top_p``, whose
last line holds at once: the model's logits (2 B, bf16, still referenced by
``ModelRunner.execute_model``), their fp32 copy (``logits.to(torch.float)``, 4 B), the sort's
values and int64 indices (4 + 8 B), the top-k mask (bool, 1 B), ``probs_sort`` and its
``cumsum`` (4 + 4 B), the top-p mask (1 B), the inverse permutation ``logits_idx_inv``
(int64, 8 B) and the ``gather`` that re-sorts the logits (4 B): 40 B. The later form of the
function (one ``scatter_`` in place of the inverse permutation and gather) holds 32 B; the
softmax / log-softmax / ``_multinomial`` steps after it hold at most 22 B."""


def v0_profile_peak_bytes(
    forward_bytes: int, rows: int, vocab: int, tokens: int, hidden: int, activation_bytes: int
) -> int:
    """PyTorch's peak during vLLM V0's ``profile_run`` per device: the larger of the dummy
    forward's transients (``forward_bytes``) and the sampler's top-k/top-p peak over ``rows``
    (``max_num_seqs``) rows of the whole ``vocab`` (:data:`V0_SAMPLER_BYTES_PER_LOGIT`) beside
    the forward's output hidden states, ``tokens`` x ``hidden`` activations that
    ``execute_model`` keeps while it samples. Exact ints.

    >>> v0_profile_peak_bytes(0, 256, 128_256, 8192, 4096, 2)  # 40 x 256 x V + 64 MiB
    1380450304
    """
    sampler = V0_SAMPLER_BYTES_PER_LOGIT * rows * vocab + tokens * hidden * activation_bytes
    return max(forward_bytes, sampler)


def non_torch_bytes(gpus_per_replica: int) -> int:
    """Memory outside PyTorch that vLLM's profile adds (module doc): the communicator buffers
    when the replica spans more than one GPU, else 0."""
    return COMMUNICATOR_BYTES if gpus_per_replica > 1 else 0


def available_kv_bytes(
    reserved: int, weights: int, profile_peak: int, non_torch: int
) -> int:
    """``determine_available_memory``: the reservation minus the weights, the profile run's
    peak and the non-torch memory; negative when they do not fit.

    >>> available_kv_bytes(48 * 2**30, 16 * 2**30, 2**30, 0) == 31 * 2**30
    True
    """
    return reserved - weights - profile_peak - non_torch
