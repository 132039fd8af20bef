"""The engine's KV cache for sliding-window layers and the Gated DeltaNet state's dtype
(rlmcost.deployment.engine_kv), in generation memory (exact and compiled) and decode time.

Sources: vLLM's hybrid KV cache manager (vllm/v1/core/single_type_kv_cache_manager.py
``SlidingWindowManager.remove_skipped_blocks``, v0.10.0 on) frees a sliding layer's blocks
outside its window; SGLang's ``SWAKVPool`` serves only ``is_hybrid_swa_model``'s
architectures (python/sglang/srt/configs/model_config.py), not Gemma 2/3, Mistral or Phi-3,
and sizes the sliding layers' pool at ``swa_full_tokens_ratio`` 0.8 of the full one's tokens
(python/sglang/srt/model_executor/pool_configurator.py ``HybridSWAPoolConfigurator``);
vLLM's ``CacheConfig.mamba_ssm_cache_dtype`` "auto" (vllm/config/cache.py) is the model's
dtype, SGLang's ``ServerArgs.mamba_ssm_dtype`` "float32" (python/sglang/srt/server_args.py).
Reference counts by hand from the registry's config.json shapes.
"""

from __future__ import annotations

import pytest

from rlmcost import blocks as bl
from rlmcost.choices import Dtype
from rlmcost.compiled.memory import memory_per_rank as compiled_memory
from rlmcost.deployment.engine_kv import (
    cache_options,
    keeps_window,
    read_workload,
    reads_window,
    state_dtype,
    swa_pool,
)
from rlmcost.deployment.kinds import EngineKind
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.memory import memory_per_rank
from rlmcost.perf.efficiency import Device
from rlmcost.perf.engine_step import EngineOptions, window_read
from rlmcost.perf.generation import Engine
from rlmcost.specs import Workload, get_hardware, get_model

WINDOWED = Workload(kv_window=True)


def test_vllm_keeps_a_mistral_sliding_layer_at_its_window():
    # Mistral-7B-v0.1, W = 4096 on all 32 layers, 8 KV heads x 128: at 8,192 positions each
    # layer holds its last 4,095 (blocks.window.cached_positions), bf16: 32 x 4,095 x 4,096 B
    # a sequence (before, every layer at 8,192: twice that)
    spec = get_model("mistral-7b")
    arch = spec.arch()
    one = memory_per_rank(arch, Layout(), Mode.GENERATE, 1, 8192, WINDOWED).kv_cache
    assert one == 32 * 4095 * 2 * 8 * 128 * 2
    assert one == int(bl.memory_kv_cache_bytes(arch, 8192, Dtype.BF16))
    full = memory_per_rank(arch, Layout(), Mode.GENERATE, 1, 8192, Workload()).kv_cache
    assert full == 32 * 8192 * 2 * 8 * 128 * 2
    # shorter than the window: nothing to free
    short = memory_per_rank(arch, Layout(), Mode.GENERATE, 1, 3000, WINDOWED).kv_cache
    assert short == memory_per_rank(arch, Layout(), Mode.GENERATE, 1, 3000, Workload()).kv_cache


@pytest.mark.parametrize("name", ["gemma-2-9b", "gemma-3-12b", "mistral-7b"])
@pytest.mark.parametrize("layout", [Layout(), Layout(tp=2), Layout(tp=2, pp=2), Layout(cp=2, dp=2)])
def test_the_compiled_twin_keeps_the_window_alike(name, layout):
    spec = get_model(name)
    for wl in (WINDOWED, Workload()):
        exact = memory_per_rank(spec.arch(), layout, Mode.GENERATE, 6, 12_000, wl)
        assert compiled_memory(spec.model_dump(), layout, Mode.GENERATE, 6, 12_000, wl) == exact


def test_gemma2_full_layers_keep_the_context_and_sliding_ones_the_window():
    # Gemma-2-9B: 21 full and 21 sliding of 42 layers, 8 KV heads x 256, W = 4096
    arch = get_model("gemma-2-9b").arch()
    kv = memory_per_rank(arch, Layout(), Mode.GENERATE, 2, 10_000, WINDOWED).kv_cache
    assert kv == 2 * (21 * 10_000 + 21 * 4095) * 2 * 8 * 256 * 2


def test_the_recurrent_state_takes_the_engines_dtype():
    # Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers, 32 value heads x 128 x 128 recurrent state,
    # conv 3 x (2 x 16 x 128 + 32 x 128); 12 softmax layers, 2 KV heads x 256
    spec = get_model("qwen3-next-80b-a3b")
    arch = spec.arch()
    rec, conv = 32 * 128 * 128, 3 * (2 * 16 * 128 + 32 * 128)
    softmax = 12 * 2 * 2 * 256 * 4096 * 2
    for dtype, nbytes in ((None, 2), (Dtype.FP32, 4), (Dtype.BF16, 2)):
        wl = Workload(state_dtype=dtype)
        kv = memory_per_rank(arch, Layout(), Mode.GENERATE, 1, 4096, wl).kv_cache
        assert kv == softmax + 36 * (rec * nbytes + conv * 2)
        for layout in (Layout(tp=2), Layout(tp=4, pp=2)):
            exact = memory_per_rank(arch, layout, Mode.GENERATE, 3, 4096, wl)
            assert compiled_memory(spec.model_dump(), layout, Mode.GENERATE, 3, 4096, wl) == exact


def test_each_engine_keeps_its_own_cache():
    # vLLM "auto" = the model's dtype; SGLang float32; HF fp32 (fla's final state); only vLLM
    # frees the blocks outside a window (SGLang's SWA pool is for its hybrid-SWA list only)
    assert state_dtype(EngineKind.VLLM, Dtype.BF16) is Dtype.BF16
    assert state_dtype(EngineKind.SGLANG, Dtype.BF16) is Dtype.FP32
    assert state_dtype(EngineKind.HF, Dtype.BF16) is Dtype.FP32
    assert keeps_window(EngineKind.VLLM)
    assert not keeps_window(EngineKind.SGLANG) and not keeps_window(EngineKind.HF)
    # decode reads: vLLM every window; SGLang Gemma's (gemma2.py / gemma3_causal.py pass
    # sliding_window_size), not Mistral's (llama.py passes none); HF the whole cache
    gemma, mistral = get_model("gemma-2-9b").arch(), get_model("mistral-7b").arch()
    assert reads_window(EngineKind.VLLM, gemma) and reads_window(EngineKind.VLLM, mistral)
    assert reads_window(EngineKind.SGLANG, gemma) and not reads_window(EngineKind.SGLANG, mistral)
    assert not reads_window(EngineKind.HF, gemma)
    # the rollout's roofline counts the KV bytes a step reads: SGLang's Gemma at its window
    # (it holds the whole context), Mistral's whole; the ideal deployment as before
    wl = Workload()
    assert read_workload(EngineKind.SGLANG, gemma, wl, False).kv_window
    assert not read_workload(EngineKind.SGLANG, mistral, wl, False).kv_window
    assert read_workload(EngineKind.SGLANG, gemma, wl, True) is wl


def test_window_read_is_the_decode_sums_ratio():
    # direct sums over the decode steps (blocks.window.attended_keys_sum's two sums)
    for w, s, t in ((4096, 1024, 8192), (512, 100, 50), (1024, 2000, 3000), (7, 1, 1)):
        sliding = sum(min(c, w) for c in range(s + 1, s + t + 1))
        full = sum(range(s + 1, s + t + 1))
        assert window_read(w, s, t) == pytest.approx(sliding / full, rel=1e-12)
    assert window_read(4096, 1024, 1024) == 1.0  # never past the window


def test_the_decode_step_reads_the_window_and_the_state_in_the_engines_dtype():
    h100 = Device(get_hardware("h100"), Dtype.BF16)
    gemma = get_model("gemma-3-12b").arch()  # 40 sliding of 48 layers, W = 1024
    opts = cache_options(EngineKind.VLLM, gemma, Dtype.BF16, False, lambda: (1024, 1024 + 8192))
    ratio = window_read(1024, 1024, 8192)
    assert opts["window_read"] == ratio < 0.2
    full = Engine(gemma, h100).decode_step_parts(8)[1]
    windowed = Engine(gemma, h100, options=EngineOptions(**opts)).decode_step_parts(8)[1]
    assert windowed == pytest.approx(full * (8 + 40 * ratio) / 48, rel=1e-12)
    # Qwen3-Next: the state's bytes halve from SGLang's fp32 to vLLM's bf16
    qwen = get_model("qwen3-next-80b-a3b").arch()
    steps = {}
    for kind in (EngineKind.SGLANG, EngineKind.VLLM):
        o = EngineOptions(**cache_options(kind, qwen, Dtype.BF16, False, lambda: (1024, 4096)))
        steps[kind] = Engine(qwen, h100, options=o).decode_step(64, 64 * 2048).attention_s
    # per layer: 64 sequences' state in and out, 32 x 128 x 128 elements, conv in bf16
    conv = 2 * 64 * 3 * (2 * 16 * 128 + 32 * 128) * 2
    layer = {n: 2 * 64 * 32 * 128 * 128 * n + conv for n in (4, 2)}
    want = 36 * (h100.elementwise_s(layer[4], 1) - h100.elementwise_s(layer[2], 1))
    assert steps[EngineKind.SGLANG] - steps[EngineKind.VLLM] == pytest.approx(want, rel=1e-9)
    assert want > 0



def test_a_vllm_deployment_holds_and_reads_the_window(monkeypatch):
    # Gemma-2-9B on 2 H100 at 1,024 + 8,192 tokens, 256 sequences, the pool binding: with
    # the window (vLLM's hybrid manager) the engine holds at least as many sequences at once,
    # preempts fewer (342 vs 419) and finishes sooner than with every layer at the whole
    # context (keeps_window off); SGLang, which allocates the whole context, does not move
    from rlmcost import evaluate, memo
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.placement import task_workload
    from rlmcost.reports.estimate import estimate

    run = estimate("grpo", "gemma-2-9b", hardware="h100-sxm", gpus=2, batch=64, group=4,
                   response_len=8192, prompt_len=1024).run  # fmt: skip

    def generation(engine: str, window: bool):  # noqa: ANN202
        monkeypatch.setattr(task_workload, "keeps_window", lambda k: window and keeps_window(k))
        with memo.plain():  # nothing kept between the two
            e = evaluate(run.replace(deployment={"engine": {"kind": engine}}))
        return e.evaluation.jobs_of(Kind.GENERATE)[0]

    on, off = generation("vllm", True), generation("vllm", False)
    assert on.timeline is not None and off.timeline is not None
    assert on.timeline.slots >= off.timeline.slots
    assert on.timeline.preemptions < off.timeline.preemptions
    assert on.predicted_s < off.predicted_s
    assert generation("sglang", True).predicted_s == generation("sglang", False).predicted_s


def test_the_evaluation_says_what_the_engine_keeps():
    from rlmcost.reports.estimate import estimate

    e = estimate("grpo", "gemma-2-9b", hardware="h100-sxm", gpus=8, response_len=2048)
    assert any(n.startswith("sliding-window layers on vllm") for n in e.notes)
    plain = estimate("grpo", "llama-3.1-8b", hardware="h100-sxm", gpus=8, response_len=2048)
    assert not any("engine_kv" in n for n in plain.notes)


def test_sglang_holds_gpt_oss_sliding_layers_in_its_swa_pool():
    # GPT-OSS 120B: 18 full and 18 sliding layers, 8 KV heads x 64, TP 2 (4 heads a rank),
    # bf16: 1,024 B a layer and token. SGLang's pool_configurator.py charges a full-pool token
    # the full layers' KV + 0.8 x the sliding layers' (swa_full_tokens_ratio, server_args.py):
    # per sequence of 10,001 positions 18 x 10,001 + ceil(0.8 x 18 x 10,001) slots
    spec = get_model("gpt-oss-120b")
    arch = spec.arch()
    pooled = Workload(kv_swa_pool=True)
    kv = memory_per_rank(arch, Layout(tp=2), Mode.GENERATE, 3, 10_001, pooled).kv_cache
    assert kv == 3 * (18 * 10_001 + 144_015) * 1024
    whole = memory_per_rank(arch, Layout(tp=2), Mode.GENERATE, 3, 10_001, Workload()).kv_cache
    assert whole == 3 * 36 * 10_001 * 1024
    for layout in (Layout(), Layout(tp=2), Layout(tp=2, pp=2)):
        exact = memory_per_rank(arch, layout, Mode.GENERATE, 5, 7_777, pooled)
        assert compiled_memory(spec.model_dump(), layout, Mode.GENERATE, 5, 7_777, pooled) == exact
    # only SGLang, only its hybrid-SWA list (GptOssForCausalLM), not Gemma 2/3 or Mistral
    assert swa_pool(EngineKind.SGLANG, spec.model_type)
    assert not swa_pool(EngineKind.VLLM, spec.model_type)
    for name in ("gemma-2-9b", "gemma-3-12b", "mistral-7b"):
        assert not swa_pool(EngineKind.SGLANG, get_model(name).model_type)


def test_an_sglang_deployment_of_gpt_oss_admits_more_with_the_swa_pool(monkeypatch):
    # GPT-OSS 20B on 4 H100, 64 x 8 responses of 16,384 tokens, the pool binding: with the
    # SWA pool (24 layers' KV a slot -> 12 + 0.8 x 12) the engine preempts less and finishes
    # sooner than with every layer at the whole context
    from rlmcost import evaluate, memo
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.placement import task_workload
    from rlmcost.reports.estimate import estimate

    run = estimate("grpo", "gpt-oss-20b", hardware="h100-sxm", gpus=4, batch=64, group=8,
                   response_len=16384, prompt_len=1024).run  # fmt: skip

    def generation(pool: bool):  # noqa: ANN202
        monkeypatch.setattr(task_workload, "swa_pool", lambda k, m: pool and swa_pool(k, m))
        with memo.plain():
            e = evaluate(run.replace(deployment={"engine": {"kind": "sglang"}}))
        return e.evaluation.jobs_of(Kind.GENERATE)[0]

    on, off = generation(True), generation(False)
    assert on.timeline is not None and off.timeline is not None
    assert on.timeline.preemptions < off.timeline.preemptions
    assert on.predicted_s < off.predicted_s
