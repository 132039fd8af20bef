"""vLLM V1's profile-run sampler peak (rlmcost.deployment.vllm_profile), counted tensor by
tensor on CPU PyTorch as live storage bytes (tests/live_bytes.py). The steps restate, op by
op, what ``_dummy_sampler_run`` runs (vllm/v1/worker/gpu_model_runner.py, v0.9.0 to 0.21.0:
temperature 0.5, top_p 0.9, top_k vocab - 1, no penalties, no logprobs) through
``Sampler.forward`` / ``Sampler.sample`` (vllm/v1/sample/sampler.py) and
``TopKTopPSampler.forward_native`` (vllm/v1/sample/ops/topk_topp_sampler.py). The CUDA sort's
workspace (aten/src/ATen/native/cuda/SortStable.cu), which CPU PyTorch does not allocate, is
added by its allocations' sizes."""

from __future__ import annotations

import pytest
from live_bytes import live_mode

from rlmcost.deployment.vllm_profile import (
    V1_SMALL_SORT_SAMPLER_BYTES_PER_LOGIT,
    V1_SORT_SAMPLER_BYTES_PER_LOGIT,
    V1_TRITON_SAMPLER_BYTES_PER_LOGIT,
    profile_peak_bytes,
    v1_sampler_bytes_per_logit,
)
from rlmcost.deployment.vllm_release import FRAMEWORK_VLLM, vllm_release

ROWS, VOCAB = 128, 1000


def _sampler(torch, logits, triton: bool):  # noqa: ANN001, ANN202
    """The dummy sampler's steps on ``logits`` (bf16), as vLLM's code orders them."""
    n, v = logits.shape
    temperature = torch.full((n,), 0.5)
    top_p = torch.full((n,), 0.9)
    top_k = torch.full((n,), v - 1)
    x = logits.to(torch.float32)  # Sampler.forward: the fp32 copy
    greedy = x.argmax(dim=-1).view(-1)  # Sampler.sample: not all_random
    x.div_(temperature.unsqueeze(1))  # apply_temperature, in place
    if triton:  # apply_top_k_top_p_triton masks in place: one elementwise write stands for it
        x.masked_fill_(x < x.amin(dim=-1, keepdim=True), float("-inf"))
        masked = x
    else:  # apply_top_k_top_p (0.9.0 to 0.16.x)
        x_sort, x_idx = x.sort(dim=-1, descending=False)
        k_mask = x_sort.gather(1, (x_sort.size(1) - top_k.to(torch.long)).unsqueeze(1))
        k_mask = x_sort < k_mask
        x_sort.masked_fill_(k_mask, float("-inf"))
        probs_sort = x_sort.softmax(dim=-1)
        probs_sum = torch.cumsum(probs_sort, dim=-1, out=probs_sort)
        p_mask = probs_sum <= 1 - top_p.unsqueeze(1)
        p_mask[:, -1] = False
        x_sort.masked_fill_(p_mask, float("-inf"))
        masked = x_sort.scatter(dim=-1, index=x_idx, src=x_sort)
        del x_sort, x_idx, k_mask, probs_sort, probs_sum, p_mask
    probs = masked.softmax(dim=-1, dtype=torch.float32)  # forward_native
    q = torch.empty_like(probs)  # random_sample
    q.exponential_()
    sampled = probs.div_(q).argmax(dim=-1).view(-1)
    return torch.where(temperature < 1e-5, greedy, sampled)


@pytest.mark.parametrize("triton", [False, True])
def test_sampler_peak_tensor_by_tensor_on_cpu(triton: bool) -> None:
    """Peak live bytes of the steps: 28 B a logit for the sort (bf16 2 + fp32 4 + sorted 4 +
    int64 indices 8 + top-k mask 1 + softmax / cumsum 4 + top-p mask 1 + scatter 4, at the
    scatter) and 14 B for the in-place Triton mask (2 + 4 + softmax 4 + noise 4)."""
    torch = pytest.importorskip("torch")
    logits = torch.randn(ROWS, VOCAB).to(torch.bfloat16)
    mode = live_mode()
    with mode:
        _sampler(torch, logits, triton)
    peak = mode.peak + logits.untyped_storage().nbytes()  # the model's logits, made before
    per = 14 if triton else 28
    small = 64 * ROWS  # the per-row vectors (temperature, top-p/k, argmax, gathers)
    assert ROWS * VOCAB * per <= peak <= ROWS * VOCAB * per + small
    assert (V1_TRITON_SAMPLER_BYTES_PER_LOGIT if triton else 28) == per


def test_cuda_sort_workspace_makes_the_sort_the_peak() -> None:
    """At ``logits.sort`` live: bf16 2 + fp32 4 + the sort's fp32 values 4 + int64 indices 8
    (measured above as the sort's outputs) and the CUDA sort's workspace. From 128 rows
    (``segmented_sort_pairs``): an int64 iota (``fill_reverse_indices_kernel``, 8 B) and cub
    ``DeviceSegmentedRadixSort::SortPairs`` temporary storage, whose alternate key (fp32) and
    value (int64) buffers are 4 + 8 B: 38 B, above the 28 B of the scatter. At 2 to 127 rows
    (``segmented_sort_pairs_by_full_sort``): two int2 buffers 8 + 8, cub's output keys 4 and
    its alternate keys and int2 values 4 + 8: 50 B."""
    at_sort = 2 + 4 + 4 + 8
    assert V1_SORT_SAMPLER_BYTES_PER_LOGIT == at_sort + 8 + (4 + 8) > 28
    assert V1_SMALL_SORT_SAMPLER_BYTES_PER_LOGIT == at_sort + 8 + 8 + 4 + (4 + 8)
    assert [v1_sampler_bytes_per_logit(n, False) for n in (1, 2, 127, 128, 1024)] == [
        38, 50, 50, 38, 38]  # fmt: skip
    # the Triton kernel from 8 rows; fewer sort; fp32 model logits add 2 B
    assert [v1_sampler_bytes_per_logit(n, True) for n in (7, 8, 1024)] == [50, 14, 14]
    assert v1_sampler_bytes_per_logit(1024, True, 4) == 16


def test_frameworks_pick_their_vllm_pins_sampler() -> None:
    # verl setup.py vllm<=0.12.0 sorts; NeMo RL v0.7.0 vllm==0.20.0, TRL >=0.17.0, OpenRLHF
    # 0.27.1 run the Triton kernel (or FlashInfer's sampler, 0.21.0 on); no framework: NeMo RL's
    assert not vllm_release(None, "verl").triton_sampler
    assert vllm_release(None, "nemo-rl").triton_sampler and vllm_release(None, "TRL").triton_sampler
    assert vllm_release(None, None).triton_sampler and vllm_release(None, "none").triton_sampler
    assert set(FRAMEWORK_VLLM) == {"verl", "nemo-rl", "trl", "openrlhf"}


def test_profile_peak_at_1024_rows_of_qwen_vocab_by_hand() -> None:
    """Qwen2.5-1.5B (V 151,936, d 1536) at vLLM's H100 offline defaults (1024 sequences,
    16384 tokens): 1024 x V x 38 B + 16384 x 1536 x 2 B = 5.55 GiB sorting, 2.08 GiB with the
    Triton kernel: the earlier 10 B a logit (1.45 GiB) was 4.1 GiB short of the sort."""
    hidden = 16384 * 1536 * 2
    sort = profile_peak_bytes(0, 1024, 151_936, hidden, 38)
    triton = profile_peak_bytes(0, 1024, 151_936, hidden, 14)
    assert sort == 5_962_465_280 and triton == 2_228_486_144
    assert sort - 1024 * 151_936 * 10 > 4 * 2**30
    assert profile_peak_bytes(sort + 1, 1024, 151_936, hidden, 38) == sort + 1
