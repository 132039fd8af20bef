"""rlmcost's FLOPs and parameter counts equal what PyTorch executes, exactly.

Independent source: ``torch.utils.flop_counter.FlopCounterMode`` over transformers model
classes built from config objects (no weights, no download), on the meta device; parameter
counts from ``sum(p.numel() for p in model.parameters())``. The Arch under test is made by
rlmcost's own config.json loader from the same config, so the loader is checked too.
Conventions (tests/FLOP_CONVENTIONS.md): eager attention (on meta, SDPA decomposes into the
same bmm); MoE experts run through transformers' "batched_mm" implementation, which the counter
sees (the default "grouped_mm" is invisible to it), and the expert FLOPs do not depend on the
routing: every token is processed by exactly top_k experts.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch_models as tm  # noqa: E402  (tests/ is on sys.path under pytest)

from rlmcost import blocks as bl  # noqa: E402
from rlmcost.specs import get_model  # noqa: E402
from rlmcost.specs.hf_config import spec_from_config  # noqa: E402

BATCH, SEQ = 2, 1024


def arch_of(model):
    return spec_from_config(model.config.to_dict(), name="under-test").arch()


@pytest.fixture(scope="module", params=list(tm.FAMILIES))
def family_model(request):
    return request.param, tm.build(request.param, device="meta")


def test_param_count_equals_numel(family_model):
    _, model = family_model
    # source: sum(p.numel()) of the transformers model (tied weights once)
    assert int(bl.params(arch_of(model))) == tm.param_count(model)


def test_forward_and_backward_flops_equal_flop_counter(family_model):
    _, model = family_model
    fwd, bwd = tm.count_forward_backward(model, BATCH, SEQ)
    arch = arch_of(model)
    # source: FlopCounterMode, batch 2 x seq 1024, full S x S attention as PyTorch counts it
    assert int(bl.work_forward(arch, BATCH, SEQ)) == fwd
    assert int(bl.work_backward(arch, BATCH, SEQ)) == bwd
    assert bwd == 2 * fwd


def test_prefill_flops_equal_flop_counter(family_model):
    _, model = family_model
    # source: FlopCounterMode on model(ids, logits_to_keep=1)
    assert int(bl.work_prefill(arch_of(model), SEQ, BATCH)) == tm.count_prefill(model, BATCH, SEQ)


@pytest.mark.parametrize("context", [2, 77, 1024])
def test_decode_step_flops_equal_flop_counter(family_model, context):
    _, model = family_model
    # source: FlopCounterMode on one token after a KV cache of context-1 tokens
    counted = tm.count_decode_step(model, BATCH, context)
    assert int(bl.work_decode_step(arch_of(model), context, BATCH)) == counted


@pytest.mark.parametrize("name", sorted(tm.FULL_CONFIGS))
def test_full_size_param_counts(name):
    model = tm.build_full(name)
    counted = tm.param_count(model)
    # source: the published total (tests/torch_models.py EXPECTED_PARAMS) and numel of the model
    assert counted == tm.EXPECTED_PARAMS[name]
    assert int(bl.params(arch_of(model))) == counted


@pytest.mark.parametrize(
    "builtin, reference",
    [
        ("llama-3.1-8b", "llama-3.1-8b"),
        ("llama-3.1-70b", "llama-3.1-70b"),
        ("mistral-7b", "mistral-7b"),
        ("qwen2.5-7b", "qwen2-7b"),  # Qwen2.5-7B has Qwen2-7B's shape
        ("gpt-2", "gpt2"),
        ("mixtral-8x7b", "mixtral-8x7b"),
        ("qwen3-30b-a3b", "qwen3-30b-a3b"),
    ],
)
def test_builtin_specs_match_real_model_classes(builtin, reference):
    # source: the transformers class built from the published config, on meta
    model = tm.build_full(reference)
    assert int(bl.params(get_model(builtin).arch())) == tm.param_count(model)


def test_full_size_moe_forward_on_meta():
    # Mixtral-8x7B at full size: routed experts counted through batched_mm, batch 1 x seq 256
    model = tm.build_full("mixtral-8x7b")
    counted = tm.count_forward(model, 1, 256)
    assert int(bl.work_forward(get_model("mixtral-8x7b").arch(), 1, 256)) == counted


def test_real_cpu_moe_eager_routing_does_not_change_flops():
    # real tensors, per-expert eager loop: any routing sends each token to exactly top_k experts
    counts = set()
    for seed in (0, 1):
        model = tm.build("mixtral", device="cpu", seed=seed, num_hidden_layers=1)
        counts.add(tm.count_forward(model, 1, 64))
    (counted,) = counts
    assert int(bl.work_forward(arch_of(model), 1, 64)) == counted


def test_cpu_fused_sdpa_is_invisible_to_the_counter():
    # documents PyTorch's convention: on real CPU tensors SDPA runs the fused flash kernel, which
    # FlopCounterMode does not count, so the count is ours minus the attention products
    model = tm.build("llama", device="cpu", attn_implementation="sdpa", num_hidden_layers=1)
    arch = arch_of(model)
    counted = tm.count_forward(model, 1, 128)
    attention = 4 * arch.n_layers * arch.q_width * 128 * 128
    assert int(bl.work_forward(arch, 1, 128)) - attention == counted


@pytest.mark.parametrize("family", ["llama", "llama-gqa", "gpt2", "qwen3_moe"])
def test_kv_cache_bytes_equal_the_cache_transformers_allocates(family):
    # source: the tensors of transformers' DynamicCache after a prefill (real CPU tensors)
    from rlmcost.choices import Dtype

    model = tm.build(family, device="cpu", num_hidden_layers=2)
    batch, seq = 2, 37
    ids = torch.randint(0, model.config.vocab_size, (batch, seq))
    with torch.no_grad():
        out = model(ids, use_cache=True)
    cache = getattr(out, "cache", None) or out.past_key_values
    counted = sum(
        t.numel() * t.element_size() for lyr in cache.layers for t in (lyr.keys, lyr.values)
    )
    assert int(bl.memory_kv_cache_bytes(arch_of(model), batch * seq, Dtype.FP32)) == counted


def saved_for_backward_bytes(model, batch, seq):
    """Bytes autograd keeps for backward in one forward (saved_tensors_hooks), parameters and
    the logits excluded, each storage counted once."""
    ids = torch.randint(0, model.config.vocab_size, (batch, seq))
    saved, out = tm.saved_tensor_bytes(model, lambda: model(ids, use_cache=False))
    return saved - out.logits.numel() * out.logits.element_size()


@pytest.mark.parametrize("family", ["llama", "llama-gqa", "qwen2"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_faithful_activation_model_is_a_tight_lower_bound_of_what_autograd_saves(family, dtype):
    # source: the tensors PyTorch autograd saves for backward in transformers' Llama-family
    # layers (SDPA path, real CPU tensors). Our byte model assumes fused kernels (FlashAttention,
    # fused RMSNorm and RoPE); the eager transformers code also keeps fp32 RMSNorm temporaries
    # and unfused RoPE inputs, measured at +6% (fp32) to +26% (bf16) at d = 256..512.
    from rlmcost.choices import Dtype

    torch_dtype = getattr(torch, dtype)
    model = tm.build(family, device="cpu", attn_implementation="sdpa", dtype=torch_dtype)
    model.train()
    saved = saved_for_backward_bytes(model, 2, 128)
    element = Dtype.FP32 if dtype == "float32" else Dtype.BF16
    ours = int(bl.memory_activations_bytes(arch_of(model), 2 * 128, element))
    assert ours <= saved <= 1.3 * ours
