"""Sliding-window attention against transformers: the caches it keeps and the FLOPs it runs.

Independent sources: the key/value tensors of transformers' ``DynamicCache``
(``DynamicSlidingWindowLayer`` for a sliding layer) after a prefill and after every decode step;
``torch.utils.flop_counter.FlopCounterMode`` on eager decode steps and prefills of tiny models
on CPU (real tensors); the layers transformers' own ``DynamicCache(config=...)`` makes sliding;
Mistral-7B-v0.1 built at full size on the meta device. The Arch under test comes from rlmcost's
config.json loader reading the same config, so the loader is checked too.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import torch_models as tm  # noqa: E402  (tests/ is on sys.path under pytest)
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from rlmcost import blocks as bl  # noqa: E402
from rlmcost.choices import AttnCounting, Dtype  # noqa: E402
from rlmcost.compiled import blocks as nb  # noqa: E402
from rlmcost.specs import get_model  # noqa: E402
from rlmcost.specs.hf_config import spec_from_config  # noqa: E402

SMALL = dict(vocab_size=100, hidden_size=64, intermediate_size=128, num_attention_heads=4,
             num_key_value_heads=2)  # fmt: skip

#: name -> (config class, kwargs): every layer sliding (Mistral, Phi-3) or a mix (Gemma 2
#: alternates, Gemma 3 keeps one full layer in six, Qwen2 slides from max_window_layers on,
#: Qwen2-MoE in the even layers below it), window 6.
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "mistral": ("MistralConfig", dict(SMALL, num_hidden_layers=2, sliding_window=6)),
    "phi3": ("Phi3Config", dict(SMALL, num_hidden_layers=2, sliding_window=6, pad_token_id=0,
                                eos_token_id=2)),
    "gemma2": ("Gemma2Config", dict(SMALL, num_hidden_layers=4, head_dim=16, sliding_window=6)),
    "gemma3_text": ("Gemma3TextConfig", dict(SMALL, num_hidden_layers=7, head_dim=16,
                                             sliding_window=6)),
    "qwen2": ("Qwen2Config", dict(SMALL, num_hidden_layers=3, use_sliding_window=True,
                                  sliding_window=6, max_window_layers=1)),
    "qwen2_moe": ("Qwen2MoeConfig", dict(SMALL, num_hidden_layers=4, use_sliding_window=True,
                                         sliding_window=6, max_window_layers=3,
                                         moe_intermediate_size=32, num_experts=4,
                                         num_experts_per_tok=2,
                                         shared_expert_intermediate_size=64)),
}  # fmt: skip
BATCH, PROMPT, STEPS = 2, 9, 11  # prefill 9 > window 6, then contexts 10 .. 20


def config(name: str) -> Any:
    cls, kwargs = CONFIGS[name]
    return getattr(transformers, cls)(**kwargs)


def build(cfg: Any) -> Any:
    extra = {"experts_implementation": "eager"} if cfg.model_type == "qwen2_moe" else {}
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager",
                                                          **extra)  # fmt: skip
    return model.eval()


def arch_of(cfg: Any, *, drop_layer_types: bool = False) -> Any:
    d = cfg.to_dict()
    if drop_layer_types:
        d.pop("layer_types", None)
    return spec_from_config(d, name="under-test").arch()


def kv_bytes(cache: Any) -> int:
    return sum(t.numel() * t.element_size() for lyr in cache.layers for t in (lyr.keys, lyr.values))


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def generation(request):
    """(arch, prefill FLOPs, [(context, step FLOPs, cache lengths per layer, cache bytes)])."""
    cfg = config(request.param)
    model, arch = build(cfg), arch_of(cfg)
    ids = torch.randint(0, cfg.vocab_size, (BATCH, PROMPT + STEPS), generator=torch.Generator())
    steps = []
    with torch.no_grad():
        with FlopCounterMode(display=False) as counter:
            out = model(input_ids=ids[:, :PROMPT], use_cache=True, logits_to_keep=1)
        prefill = counter.get_total_flops()
        cache = out.cache
        for t in range(PROMPT, PROMPT + STEPS):
            with FlopCounterMode(display=False) as counter:
                out = model(input_ids=ids[:, t : t + 1], cache=out.cache, use_cache=True)
            cache = out.cache
            lengths = [lyr.keys.shape[-2] for lyr in cache.layers]
            steps.append((t + 1, counter.get_total_flops(), lengths, kv_bytes(cache)))
    return request.param, arch, prefill, steps


def test_loader_reads_the_layers_that_transformers_makes_sliding(generation):
    name, arch, _, _ = generation
    cfg = config(name)
    # source: the cache layers transformers builds for this config
    layers = transformers.DynamicCache(config=cfg).layers
    sliding = [lyr for lyr in layers if getattr(lyr, "is_sliding", False)]
    assert arch.n_sliding_layers == len(sliding) and 0 < len(sliding)
    assert {lyr.sliding_window for lyr in sliding} == {arch.sliding_window}
    # without layer_types the loader falls back on the config class's own pattern
    assert arch_of(cfg, drop_layer_types=True) == arch


def test_decode_steps_equal_flop_counter(generation):
    _, arch, _, steps = generation
    for context, counted, _, _ in steps:
        # source: FlopCounterMode on one eager decode step at this context (real CPU tensors)
        assert int(bl.work_decode_step(arch, context, BATCH)) == counted
        assert nb.work_decode_step(arch, context, BATCH) == counted


def test_cache_keeps_min_of_tokens_and_window_minus_one(generation):
    _, arch, _, steps = generation
    for context, _, lengths, nbytes in steps:
        # source: the lengths of the cached key tensors, layer by layer, after ``context`` tokens
        full = {context} if arch.n_full_layers else set()
        assert set(lengths) == {min(context, arch.sliding_window - 1)} | full
        assert sum(lengths) == int(bl.cached_positions(arch, context))
        # source: the bytes of every cached key and value tensor (fp32)
        assert int(bl.memory_kv_cache_bytes(arch, context, Dtype.FP32, BATCH)) == nbytes
        assert nb.memory_kv_cache_bytes(arch, context, Dtype.FP32, BATCH) == nbytes


def test_prefill_and_rollout_equal_flop_counter(generation):
    _, arch, prefill, steps = generation
    # source: FlopCounterMode on the prefill (full S x S scores whatever the mask) and the steps
    assert int(bl.work_prefill(arch, PROMPT, BATCH)) == prefill
    total = prefill + sum(counted for _, counted, _, _ in steps)
    assert int(BATCH * bl.work_rollout(arch, PROMPT, STEPS)) == total


def test_causal_pairs_are_the_mask_transformers_applies():
    from transformers.masking_utils import sliding_window_causal_mask_function

    arch = arch_of(config("mistral"))
    seq = 17
    allowed = sliding_window_causal_mask_function(arch.sliding_window)
    # source: transformers' sliding-window mask function, evaluated on every (query, key) pair
    idx = [torch.tensor(i) for i in range(seq)]
    pairs = sum(bool(allowed(0, 0, q, k)) for q in idx for k in idx)
    assert int(bl.attended_pairs(arch, seq, AttnCounting.CAUSAL)) == arch.n_layers * pairs


def test_full_size_mistral_7b_v01_on_meta():
    model = tm.build_full("mistral-7b", dtype=torch.bfloat16)
    arch = get_model("mistral-7b-v0.1").arch()
    ids = torch.zeros(1, 4097, dtype=torch.long, device="meta")
    with torch.no_grad():
        out = model(input_ids=ids[:, :4096], use_cache=True, logits_to_keep=1)
        # source: the bf16 cache transformers holds after 4096 tokens: 32 x (1, 8, 4095, 128) x 2
        assert kv_bytes(out.cache) == 536_739_840
        assert int(bl.memory_kv_cache_bytes(arch, 4096, Dtype.BF16)) == 536_739_840
        with FlopCounterMode(display=False) as counter:
            model(input_ids=ids[:, 4096:], cache=out.cache, use_cache=True)
    # source: FlopCounterMode on the step at context 4097: 4096 keys in each of the 32 layers
    assert int(bl.work_decode_step(arch, 4097)) == counter.get_total_flops()
    assert int(bl.attended_keys(arch, 4097)) == 32 * 4096
