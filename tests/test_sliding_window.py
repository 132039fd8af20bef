"""Sliding-window attention in the building blocks, their compiled twins and the model specs.

Independent sources: direct sums over the decode steps and over the query-key pairs (the
closed forms must equal them), the full-attention forms (a window no shorter than the context
changes nothing, an exact sympy identity), a hand computation of Mistral-7B-v0.1's KV cache, and
the registry's own public config.json values. The transformers side (caches, FlopCounterMode,
config classes) is in tests/test_sliding_window_torch.py.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp

from rlmcost import blocks as bl
from rlmcost.arch import CANONICAL, CANONICAL_GQA
from rlmcost.choices import AttnCounting, Dtype, MlaDecode
from rlmcost.compiled import arch_numbers, generate
from rlmcost.compiled import blocks as nb
from rlmcost.compiled import blocks_gen as g
from rlmcost.errors import SpecError
from rlmcost.specs import ModelSpec, get_model
from rlmcost.specs.hf_config import spec_from_config
from rlmcost.symbols import S, T, c

TINY = dict(n_layers=5, d_model=64, d_ff=160, n_heads=4, n_kv_heads=2, head_dim=16, vocab=97)
MLA = dict(q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=12, qk_rope_head_dim=4,
           v_head_dim=8, head_dim=16, n_kv_heads=4)  # fmt: skip


def tiny(window: int, full: int = 0, **kw: object) -> ModelSpec:
    fields = {**TINY, **kw}
    return ModelSpec(name="tiny-swa", sliding_window=window, full_attention_layers=full, **fields)


SPECS = [tiny(1), tiny(5), tiny(5, full=2), tiny(16, full=4), tiny(7, full=1, **MLA)]


def spec_id(spec: ModelSpec) -> str:
    return f"W{spec.sliding_window}-full{spec.full_attention_layers}{'-mla' * spec.is_mla}"


def zero(expr: sp.Expr) -> bool:
    return sp.simplify(expr) == 0


def test_mistral_7b_v01_caches_4095_positions_and_attends_4096_keys():
    arch = get_model("mistral-7b-v0.1").arch()  # the alias resolves to the windowed v0.1 spec
    assert arch.sliding_window == 4096 and arch.n_sliding_layers == 32
    # hand computation: 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 B (bf16) x 4095 positions
    want = 2 * 32 * 8 * 128 * 2 * 4095
    assert want == 536_739_840
    assert int(bl.memory_kv_cache_bytes(arch, 4096, Dtype.BF16)) == want
    assert nb.memory_kv_cache_bytes(arch, 4096, Dtype.BF16) == want
    # the step after 4096 tokens (context 4097) attends the 4095 cached keys and its own
    assert int(bl.attended_keys(arch, 4097)) == 32 * 4096
    assert int(bl.attended_keys(arch, 100)) == 32 * 100  # inside the window: every position
    assert bl.work_decode_step(arch, 10**6) == bl.work_decode_step(arch, 4096)


def test_instruct_v02_has_no_window_and_resolves_apart():
    # mistralai/Mistral-7B-Instruct-v0.2 config.json: sliding_window null (rope_theta 1e6)
    v02 = get_model("mistralai/Mistral-7B-Instruct-v0.2")
    assert v02.name == "mistral-7b-v0.2" and v02.sliding_window is None
    assert v02.arch().with_(name="x") == get_model("mistral-7b").arch().with_(
        name="x", sliding_window=None
    )
    # microsoft/Phi-3.5-mini-instruct config.json: sliding_window 262144, 131072 positions
    assert get_model("microsoft/Phi-3.5-mini-instruct").sliding_window == 262144
    assert get_model("phi-3-mini").sliding_window == 2047


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_attended_keys_and_cached_positions_are_per_layer_sums(spec):
    arch = spec.arch()
    w, full = spec.sliding_window, spec.full_attention_layers
    sliding = spec.n_layers - full
    for ctx in (1, 2, w - 1, w, w + 1, 3 * w + 5):
        if ctx < 1:
            continue
        # direct count: a full layer sees every position, a sliding one its last w
        assert int(bl.attended_keys(arch, ctx)) == full * ctx + sliding * min(ctx, w)
        assert int(bl.cached_positions(arch, ctx)) == full * ctx + sliding * min(ctx, w - 1)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("counting", list(AttnCounting))
def test_rollout_is_prefill_plus_its_decode_steps(spec, counting):
    arch = spec.arch()
    for prompt, response in ((1, 1), (3, 9), (spec.sliding_window, 4), (20, 30)):
        steps = sum(bl.work_decode_step(arch, prompt + t) for t in range(1, response + 1))
        # direct sum of the T decode steps at contexts S+1 .. S+T
        want = bl.work_prefill(arch, prompt, 1, counting) + steps
        assert bl.work_rollout(arch, prompt, response, counting) == want
        assert nb.work_rollout(arch, prompt, response, counting) == want
        depth = bl.depth_prefill(arch, prompt) + sum(
            bl.depth_decode_step(arch, prompt + t) for t in range(1, response + 1)
        )
        assert bl.depth_generation(arch, prompt, response) == depth
        assert nb.depth_generation(arch, prompt, response) == depth


def test_mla_reference_rollout_is_its_decode_steps():
    arch = tiny(7, full=1, **MLA).arch()
    ref = MlaDecode.REFERENCE
    for prompt, response in ((2, 3), (6, 10)):
        steps = sum(bl.work_decode_step(arch, prompt + t, 1, ref) for t in range(1, response + 1))
        assert bl.work_rollout(arch, prompt, response, mla=ref) == bl.work_prefill(
            arch, prompt
        ) + steps


@pytest.mark.parametrize("spec", SPECS[:4], ids=spec_id)
def test_causal_pairs_count_the_unmasked_pairs(spec):
    arch = spec.arch()
    w, full, n = spec.sliding_window, spec.full_attention_layers, spec.n_layers
    for seq in (1, 2, w, w + 3, 40):
        # direct count: query i sees key j when i - w < j <= i (sliding) or j <= i (full)
        slid = sum(1 for i in range(seq) for j in range(seq) if i - w < j <= i)
        causal = seq * (seq + 1) // 2
        want = full * causal + (n - full) * slid
        assert int(bl.attended_pairs(arch, seq, AttnCounting.CAUSAL)) == want
        # full counting: the whole score matrix in every layer, as FlopCounterMode reports
        assert int(bl.attended_pairs(arch, seq, AttnCounting.FULL)) == n * seq * seq


def test_a_window_no_shorter_than_the_context_changes_nothing():
    w, k = sp.symbols("W k", integer=True, positive=True)
    for base in (CANONICAL, CANONICAL_GQA):
        windowed = base.with_(sliding_window=S + T + k)
        # exact sympy identities: min(x, S + T + k) = x for every context x <= S + T
        assert zero(bl.work_rollout(windowed, S, T) - bl.work_rollout(base, S, T))
        causal = AttnCounting.CAUSAL
        assert zero(bl.work_rollout(windowed, S, T, causal) - bl.work_rollout(base, S, T, causal))
        assert zero(bl.memory_kv_cache(windowed, S + T) - bl.memory_kv_cache(base, S + T))
        assert zero(bl.depth_forward(windowed, S) - bl.depth_forward(base, S))
    # and a window below the context caps the keys at W in every layer
    capped = bl.attended_keys(CANONICAL.with_(sliding_window=w), w + k)
    assert zero(capped - CANONICAL.n_layers * w)


def test_kv_cache_applies_the_window_per_sequence():
    arch = tiny(5).arch()
    # 3 sequences of 10 tokens keep 4 positions each, not min(30, 4)
    assert int(bl.memory_kv_cache(arch, 10, 3)) == 3 * 5 * 4 * arch.kv_cache_width
    assert nb.memory_kv_cache(arch, 10, 3) == int(bl.memory_kv_cache(arch, 10, 3))
    plain = get_model("llama-3.1-8b").arch()
    assert bl.memory_kv_cache(plain, 10, 3) == bl.memory_kv_cache(plain, 30)


def test_a_head_only_slice_has_no_sliding_layers():
    arch = get_model("gemma-2-9b").arch()
    assert (arch.n_sliding_layers, arch.n_full_layers) == (21, 21)
    head = arch.with_(n_layers=0, first_dense_layers=0)
    assert head.n_sliding_layers == 0
    # the head-only depth is the LM head's GEMM alone: 1 + ceil(log2 d)
    assert int(bl.depth_forward(head, 5000)) == 1 + (arch.d_model - 1).bit_length()


@pytest.mark.parametrize("spec", [*SPECS, get_model("gemma-2-2b")], ids=spec_id)
def test_every_generated_function_equals_its_symbolic_block_with_a_window(spec):
    arch, a = spec.arch(), arch_numbers(spec)
    sizes = dict(context=23, seqs=3, seq=19, prompt=11, response=17, tokens=29, act_bytes=2,
                 fused_glu=1)
    exact = {k: sp.Integer(v) for k, v in sizes.items()}
    symbolic = SimpleNamespace(tp=1, vocab_tp=arch.vocab, ple_vocab_tp=arch.ple_vocab, **exact)
    for block in generate.blocks():
        args = [1 if s == "tp" else sizes[s] for s in block.sizes]
        # source: the symbolic core (rlmcost.blocks / parallel.activations) on this arch
        assert g.FUNCTIONS[block.name](a, *args) == block.build(arch, symbolic), block.name


def test_compiled_window_functions_take_numpy_arrays():
    a = arch_numbers(get_model("gemma-2-2b"))
    ctx = np.array([1.0, 100.0, 4096.0, 4097.0, 50000.0])
    got = g.work_decode_step(a, ctx, 2)
    for i, x in enumerate(ctx):
        # the exact scalar evaluation of the same function
        assert got[i] == pytest.approx(g.work_decode_step(a, int(x), 2), rel=1e-15)
    kv = g.memory_kv_cache(a, ctx, 3)
    assert list(kv) == [g.memory_kv_cache(a, int(x), 3) for x in ctx]


def test_symbolic_window_prints_min():
    arch = CANONICAL.with_(sliding_window=sp.Symbol("W", integer=True, positive=True))
    assert str(bl.attended_keys(arch, c)) == "L*Min(W, c)"


@pytest.mark.parametrize(
    "changes, fragment",
    [
        (dict(full_attention_layers=2), "without a sliding_window"),
        (dict(sliding_window=8, full_attention_layers=5), "leaves no sliding layer"),
        (dict(sliding_window=0), "greater than 0"),
    ],
)
def test_inconsistent_window_specs_are_rejected(changes, fragment):
    with pytest.raises((SpecError, ValueError)) as exc:
        ModelSpec(name="bad", **{**TINY, **changes})
    assert fragment in str(exc.value)


BASE = dict(model_type="qwen2", num_hidden_layers=6, hidden_size=64, intermediate_size=128,
            num_attention_heads=4, num_key_value_heads=2, vocab_size=100)  # fmt: skip


@pytest.mark.parametrize(
    "cfg, window, full",
    [
        (dict(BASE, sliding_window=32), None, 0),  # use_sliding_window defaults to false
        (dict(BASE, sliding_window=32, use_sliding_window=True, max_window_layers=2), 32, 2),
        (dict(BASE, use_sliding_window=True, max_window_layers=0), 4096, 0),  # class default
        (dict(BASE, sliding_window=32, use_sliding_window=True, max_window_layers=6), None, 0),
        (dict(BASE, model_type="mistral"), 4096, 0),  # MistralConfig's default window
        (dict(BASE, model_type="mistral", sliding_window=None), None, 0),
        (dict(BASE, model_type="mixtral", num_local_experts=4, num_experts_per_tok=2), None, 0),
        (dict(BASE, model_type="gemma2", sliding_window=8), 8, 3),
        (dict(BASE, model_type="gemma2", sliding_window=8,
              layer_types=["sliding_attention"] * 5 + ["full_attention"]), 8, 1),
        (dict(BASE, model_type="gemma3_text", sliding_window=8, sliding_window_pattern=3), 8, 2),
    ],
)  # fmt: skip
def test_loader_reads_the_window_and_the_layers_that_slide(cfg, window, full):
    spec = spec_from_config(cfg, name="t")
    assert (spec.sliding_window, spec.full_attention_layers) == (window, full)
    assert any("sliding-window" in n for n in spec.notes) == (window is not None)


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"layer_types": ["full_attention"] * 5}, "layer_types must list"),
        ({"layer_types": ["sliding_attention"] * 5 + ["linear_attention"]}, "layer_types must"),
        ({"use_bidirectional_attention": True}, "encoder"),
        ({"sliding_window": -3}, "sliding_window=-3 is implausible"),
    ],
)
def test_bad_window_configs_are_one_line_errors(change, fragment):
    cfg = {**BASE, "model_type": "gemma3_text", "sliding_window": 8, **change}
    with pytest.raises(SpecError) as exc:
        spec_from_config(cfg, name="t")
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("spec", SPECS[:4], ids=spec_id)
def test_training_pairs_are_the_mean_of_the_layers_unmasked_pairs(spec):
    # perf.attention_shapes.causal_pairs (the training step's fused kernel): the per-layer mean
    # of the direct count, every layer windowed (full 0) included and windows at or past the
    # sequence (no fewer pairs than causal's at W >= seq, the causal count exactly)
    from rlmcost.perf.attention_shapes import causal_pairs

    arch = spec.arch()
    w, full, n = spec.sliding_window, spec.full_attention_layers, spec.n_layers
    for seq in (1, 2, w - 1 or 1, w, w + 3, 40):
        slid = sum(1 for i in range(seq) for j in range(seq) if i - w < j <= i)
        causal = seq * (seq + 1) // 2
        got = causal_pairs(arch, seq)
        assert type(got) is int
        assert got == (full * causal + (n - full) * slid) // n
        assert got == int(bl.attended_pairs(arch, seq, AttnCounting.CAUSAL)) // n
        if seq <= w:
            assert got == causal
