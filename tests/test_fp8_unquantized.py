"""An FP8 engine's 16-bit parts (``rlmcost.parallel.breakdown.unquantized_params``): vLLM's and
SGLang's online FP8 quantize Linear layers and MoE experts only; the embedding, the LM head,
the norms and the MoE router stay in the model's bf16 (vllm-project/vllm
vllm/model_executor/models/qwen3_moe.py @002456df: ``self.gate = ReplicatedLinear(...,
quant_config=None)``, ``VocabParallelEmbedding`` / ``ParallelLMHead`` / ``RMSNorm`` take no
quant_config). The element counts below are by hand from each config.json's sizes."""

from __future__ import annotations

from rlmcost.choices import Dtype
from rlmcost.compiled import memory as twin
from rlmcost.parallel import memory as symbolic
from rlmcost.parallel.breakdown import Mode, unquantized_params
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import PipelineStage
from rlmcost.specs import ModelSpec, Workload
from rlmcost.specs.registry import get_model

FP8 = Workload(weight_dtype=Dtype.FP8, compute_dtype=Dtype.FP8, unquantized_dtype=Dtype.BF16)


def _whole(spec: ModelSpec, pp: int = 1, s: int = 0) -> PipelineStage:
    moe = spec.n_layers - spec.first_dense_layers if spec.n_experts else 0
    return PipelineStage(s, pp, spec.n_layers - moe, moe)


def test_qwen3_235b_a22b_at_tp_4_by_hand() -> None:
    # Qwen/Qwen3-235B-A22B config.json: vocab 151,936, hidden 4,096, 94 layers, 128 experts,
    # head_dim 128 with q/k RMSNorms, untied head
    spec = get_model("qwen3-235b-a22b")
    embed_and_head = 2 * (151_936 // 4) * 4_096  # 0.29 GiB at 2 B
    norms = 94 * 2 * 4_096 + 94 * 2 * 128 + 4_096  # two per layer, q/k norms, the final one
    routers = 94 * 4_096 * 128
    want = embed_and_head + norms + routers
    assert want == 361_246_208
    assert unquantized_params(spec, 4, _whole(spec)) == want
    # the engine's weights: every parameter on the rank at 1 B, these at 2 B
    fp8 = twin.memory_per_rank(spec, Layout(tp=4), Mode.GENERATE, 8, 2048, FP8)
    one_byte = twin.memory_per_rank(spec, Layout(tp=4), Mode.GENERATE, 8, 2048,
                                    Workload(weight_dtype=Dtype.FP8, compute_dtype=Dtype.FP8))
    assert fp8.weights - one_byte.weights == want


def test_small_tied_dense_model_by_hand_and_both_paths_agree() -> None:
    # 2 layers, d 64, vocab 1,000 (padded to 250 a rank at TP 4), tied embeddings, no q/k norm
    spec = ModelSpec(name="tiny", n_layers=2, d_model=64, d_ff=128, n_heads=4, n_kv_heads=4,
                     head_dim=16, vocab=1000, tie_embeddings=True)  # fmt: skip
    want = 250 * 64 + (2 * 2 + 1) * 64  # one tied matrix, 5 RMSNorms
    assert unquantized_params(spec, 4, _whole(spec)) == want
    got = twin.memory_per_stage(spec, Layout(tp=4), Mode.GENERATE, 2, 64, FP8)
    ref = symbolic.memory_per_stage(spec.arch(), Layout(tp=4), Mode.GENERATE, 2, 64, FP8)
    assert [g.to_json() for g in got] == [r.to_json() for r in ref]
    # over two pipeline stages the last keeps its own copy of the tied matrix (stage_params)
    first, last = (unquantized_params(spec, 4, PipelineStage(s, 2, 1, 0)) for s in (0, 1))
    assert (first, last) == (250 * 64 + 2 * 64, 250 * 64 + 3 * 64)


def test_kimi_k2_mla_latent_norms_and_large_vocabulary() -> None:
    # moonshotai/Kimi-K2-Instruct config.json: vocab 163,840, hidden 7,168, 61 layers (first
    # dense), 384 experts, kv_lora_rank 512, q_lora_rank 1,536; untied
    spec = get_model("kimi-k2")
    want = (2 * (163_840 // 8) * 7_168 + (61 * 2 + 1) * 7_168 + 61 * (512 + 1_536)
            + 60 * 7_168 * 384)  # fmt: skip
    assert unquantized_params(spec, 8, _whole(spec)) == want


def test_no_extra_bytes_outside_an_fp8_engine() -> None:
    spec = get_model("qwen3-8b")
    bf16 = twin.memory_per_rank(spec, Layout(tp=2), Mode.GENERATE, 4, 512, Workload())
    assert bf16.weights == 2 * twin.memory_per_rank(
        spec, Layout(tp=2), Mode.GENERATE, 4, 512,
        Workload(weight_dtype=Dtype.FP8, compute_dtype=Dtype.FP8)).weights
    # a forward pass (not an engine) ignores the field
    fwd = twin.memory_per_rank(spec, Layout(tp=2), Mode.FORWARD, 4, 512, FP8)
    plain = twin.memory_per_rank(spec, Layout(tp=2), Mode.FORWARD, 4, 512,
                                 Workload(weight_dtype=Dtype.FP8, compute_dtype=Dtype.FP8))
    assert fwd.weights == plain.weights
