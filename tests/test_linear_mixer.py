"""The Gated DeltaNet layers of a hybrid model in a training pass (rlmcost.perf.linear_mixer),
slime's / miles's TP-replicated mixer and Megatron-core's CPU AdamW (rlmcost.perf.data_parallel).

Sources: radixark/miles miles_plugins/models/qwen3_5.py and hf_attention.py at bb6f7dbd (the
mixer from nn.Linear, gathered over TP, run whole on every rank); THUDM/slime
slime_plugins/models/ at 624b824a (the same); Qwen3.5-27B's shape from the miles row of
rl_runs.json; DeepSpeed's ZeRO-Offload tutorial ("DeepSpeedCPUAdam is 5X-7X faster than the
standard PyTorch implementation"); Megatron-core's ``from torch.optim import AdamW as CPUAdam``.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from rlmcost.deployment.spec import Deployment
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import stages
from rlmcost.perf.data_parallel import TORCH_CPU_ADAM_OVER_DEEPSPEED, cpu_adam_s
from rlmcost.perf.linear_mixer import linear_mixer_delta
from rlmcost.perf.rl_step import _context, forward_time
from rlmcost.perf.step_pass import StepOptions, stage_pass
from rlmcost.placement.pass_options import step_options
from rlmcost.reports.rl_runs import load_runs, model_spec
from rlmcost.specs import ModelSpec, get_hardware

MILES = {r["id"]: r for r in load_runs()["runs"]}["miles-docs-qwen3.8-27b-grpo-colocate-8gpu"]
ARCH = ModelSpec.model_validate(model_spec("q", MILES["model_config"], "hf")).arch()
H200 = get_hardware("h200")
TP4 = Layout(tp=4, sp=True, dp=2)
REPLICATED = StepOptions(linear_mixer_replicated=True)


def _gemm_flops(options: StepOptions, layout: Layout = TP4) -> int:
    c, _ = _context(ARCH, layout, 1, 8192, H200, None, options)
    return linear_mixer_delta(c).flops


def test_the_replicated_mixer_runs_every_head_on_every_rank() -> None:
    # Qwen3.5-27B: H_k 16, H_v 48, d_k = d_v = 128, d 5120 -> in_proj_qkv 10240, in_proj_z
    # 6144, in_proj_b / _a 48 each, out_proj 6144 -> 5120: 115,834,880 projection weights
    d, kd, vd, hv = 5120, 16 * 128, 48 * 128, 48
    proj = d * (2 * kd + vd) + d * vd + 2 * d * hv + vd * d
    assert proj == 115_834_880
    tokens = 8192
    shared, rep = _gemm_flops(StepOptions()), _gemm_flops(REPLICATED)
    # the two differ by the projections' and the delta rule's FLOPs the other 3 ranks' heads
    # would have done: 6 x T x (3/4 of the projections) + 3 x T x 6 x (36 heads) x d_k d_v
    assert rep - shared == 6 * tokens * (proj - proj // 4) + 3 * tokens * 6 * 36 * 128 * 128


def test_replication_lengthens_the_forward_and_tp1_is_unchanged() -> None:
    base = forward_time(ARCH, TP4, 16, 4785, H200).time_s
    rep = forward_time(ARCH, TP4, 16, 4785, H200, options=REPLICATED).time_s
    # ~5.6 B of the 26.9 B parameters are mixer projections: whole on each of 4 ranks, the
    # rank's GEMM work grows from ~6.7 B to ~10.9 B parameters per token
    assert 1.2 < rep / base < 1.7
    one = Layout(dp=8)
    assert forward_time(ARCH, one, 16, 4785, H200, options=REPLICATED).time_s == forward_time(
        ARCH, one, 16, 4785, H200).time_s


def test_the_linear_layers_replace_attention_in_the_stage_pass() -> None:
    c, _ = _context(ARCH, TP4, 1, 8192, H200, None, REPLICATED)
    with_mixers = stage_pass(c, stages(ARCH, TP4)[0])
    as_attention = stage_pass(replace(c, arch=ARCH.with_(linear_layers=0)), stages(ARCH, TP4)[0])
    delta = linear_mixer_delta(c)
    # 48 of the 64 layers (full_attention_interval 4); full recompute off in this layout
    assert with_mixers.flops - as_attention.flops == 48 * delta.flops


def test_slime_runs_the_mixer_replicated_and_adam_on_the_cpu_by_pytorch() -> None:
    assert step_options(Deployment(framework="slime")).linear_mixer_replicated
    nemo = step_options(Deployment(framework="nemo-rl")) or StepOptions()
    assert not nemo.linear_mixer_replicated
    # DeepSpeed tutorial: DeepSpeedCPUAdam 5-7x faster than PyTorch's; value the middle
    assert (TORCH_CPU_ADAM_OVER_DEEPSPEED.low, TORCH_CPU_ADAM_OVER_DEEPSPEED.high) == (5.0, 7.0)
    ds = cpu_adam_s(3_000_000_000, 8)
    assert cpu_adam_s(3_000_000_000, 8, impl="torch") == ds * 6.0


def test_the_engine_decode_matches_the_miles_page_measurements() -> None:
    # radixark/miles docs/models/qwen/qwen3-8.md (bb6f7dbd) section 5.3, one Qwen3.8-27B SGLang
    # engine per H200: 553-690 tok/s at 11-12 running requests, 1855 tok/s at 39 (contexts not
    # published: 2,000-4,000 tokens each, the page's mean response 4585 half-way)
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.generation import Engine
    from rlmcost.specs.workload import Workload

    engine = Engine(ARCH, Device(H200, Workload().compute_dtype))
    for running, low, high in ((11, 553, 690), (39, 1855, 1855)):
        for ctx in (2000, 4000):
            rate = running / engine.decode_step_s(running, running * ctx)
            assert 0.8 * low < rate < 1.2 * high, (running, ctx, rate)
    # the linear layers' state, not a KV cache: 48 x 48 x 128 x 128 fp32 = 151 MB a sequence
    from rlmcost.perf.linear_decode import STATE_BYTES, linear_state_s

    gaps = 48 * engine.device.defaults.kernel_gap_s
    per_seq = linear_state_s(ARCH, ARCH, engine.device, 1, 2) - gaps
    assert STATE_BYTES == 4
    assert per_seq > engine.device.memory_s(2 * 48 * 48 * 128 * 128 * 4) * 0.99


def test_the_mixer_parameters_add_up_to_transformers_count() -> None:
    # transformers Qwen3_5ForCausalLM of the miles row's config: 26,895,998,464 parameters
    # (tests/test_slime_rl_rows.py builds it); embedding and head 2 V d, per layer two norms,
    # 16 gated attention layers (q_proj d -> 2 x 24 x 256, k/v d -> 4 x 256, o 6144 -> d, q/k
    # norms), 48 mixers, 64 SwiGLU MLPs, the final norm
    from rlmcost.parallel.breakdown import stage_params
    from rlmcost.perf.linear_mixer import mixer_params

    d, v = 5120, 248320
    attn = d * 12288 + 2 * d * 1024 + 6144 * d + 2 * 256
    total = 2 * v * d + 64 * 2 * d + d + 48 * mixer_params(ARCH) + 16 * attn + 64 * 3 * d * 17408
    assert total == 26_895_998_464
    # whole on each of 4 TP ranks, the 48 mixers' other 3/4 join the rank's ~6.7 B parameters,
    # all but the gated norm's d_v = 128 weights, which every rank holds whole either way
    tp4 = Layout(tp=4)
    split = stage_params(ARCH, tp4, stages(ARCH, tp4)[0]).dense
    whole = stage_params(ARCH, tp4, stages(ARCH, tp4)[0], linear_mixer_replicated=True).dense
    assert whole - split == 48 * (mixer_params(ARCH) - 128) * 3 // 4
    assert 1.6 < whole / split < 1.65
    one = Layout()
    assert stage_params(ARCH, one, stages(ARCH, one)[0], linear_mixer_replicated=True) == \
        stage_params(ARCH, one, stages(ARCH, one)[0])  # fmt: skip


def test_the_replicated_share_is_of_the_ranks_own_parameters() -> None:
    # Qwen3-Next-80B-A3B (512 routed experts, 36 Gated DeltaNet layers) at TP 2: under EP 8
    # the rank holds 1/8 of the routed experts, so the mixers' other half is a far larger
    # share of the rank's parameters (what its CPU Adam steps) than at EP 1
    from rlmcost.parallel.breakdown import stage_params
    from rlmcost.specs import get_model

    arch = get_model("qwen3-next-80b-a3b").arch()

    def extra(layout: Layout) -> Fraction:
        stage = stages(arch, layout)[0]
        split, whole = (stage_params(arch, layout, stage, linear_mixer_replicated=r)
                        for r in (False, True))  # fmt: skip
        assert whole.expert == split.expert  # the routed experts split as before
        return Fraction(whole.dense + whole.expert, split.dense + split.expert) - 1

    ep1, ep8 = extra(Layout(tp=2)), extra(Layout(tp=2, ep=8))
    assert 0 < ep1 and ep8 > 5 * ep1


def test_prefill_attends_over_the_softmax_layers_only() -> None:
    # a prefill chunk of 2,048 tokens of a longer prompt attends its prefix (pairs grow with the
    # prompt): on Qwen3.5-27B only its 16 gated full-attention layers do, the 48 Gated DeltaNet
    # layers run the chunked delta rule over the chunk whatever the prompt (linear_decode), so
    # the prompt-dependent part is 16/64 of the same shape with every layer softmax (before,
    # every layer attended: the ratio was 1)
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.generation import Engine
    from rlmcost.specs import Workload

    dense = replace(ARCH, linear_layers=0)
    growth = []
    for arch in (ARCH, dense):
        engine = Engine(arch, Device(H200, Workload().compute_dtype))
        growth.append(engine.chunk_s(2048, 65536) - engine.chunk_s(2048, 16384))
    assert growth[1] > 0
    assert abs(growth[0] / growth[1] - 16 / 64) < 1e-6


@pytest.mark.parametrize("framework", ["none", "nemo-rl", "verl", "openrlhf", "trl", "slime"])
def test_a_hybrid_model_under_every_framework_holds_its_bounds(framework: str) -> None:
    # Qwen3-Next-80B-A3B (36 Gated DeltaNet of 48 layers) under each framework's defaults:
    # it evaluates, and every phase's prediction is at least its roofline bound (the bound's
    # work counts the linear layers' recurrent core, blocks.work; the passes price them by
    # perf.linear_mixer and the engine by perf.linear_decode)
    # (slime's tier, its scripts/run-qwen3-next-80B-A3B.sh @624b824a, lays it out as TP 2 x PP
    # 4 x CP 4 = 32 GPUs, which these 16 do not hold, an error naming the mends:
    # tests/test_preset_small_tiers.py; the query gives the example's TP 2)
    from rlmcost.parallel.layout import Layout
    from rlmcost.reports.estimate import estimate

    layout = {"layout": Layout(tp=2)} if framework == "slime" else {}
    e = estimate("grpo", "qwen3-next-80b-a3b", hardware="h200", gpus=16, response_len=2048,
                 length_dist="lognormal:900,0.6,2048", framework=framework,
                 **layout).evaluation  # fmt: skip
    assert e is not None and e.iteration_time_s >= e.iteration_time_lower_bound_s > 0
    for p in e.phases:
        assert p.time_s >= p.time_lower_bound_s * (1 - 1e-9), (p.name, p)


def test_a_generations_cache_is_the_softmax_layers_kv_and_the_linear_layers_state() -> None:
    # Qwen3.5-27B, one sequence of 8,192 positions in bf16: 16 softmax layers x 2 x 4 KV heads
    # x 256 x 8,192 positions, plus 48 Gated DeltaNet layers' state (48 x 128 x 128 recurrent,
    # 3 x 10,240 conv) once: blocks.memory_kv_cache's count (before, the invocation's memory
    # cached keys and values on all 64 layers: 2,147,483,648 B, 3.5 x); the compiled twin alike
    from rlmcost.blocks.memory import memory_kv_cache
    from rlmcost.compiled.memory import memory_per_rank as compiled_memory
    from rlmcost.parallel.breakdown import Mode
    from rlmcost.parallel.memory import memory_per_rank
    from rlmcost.specs import Workload

    kv = 16 * 2 * 4 * 256 * 8192 + 48 * (48 * 128 * 128 + 3 * (2 * 16 * 128 + 48 * 128))
    assert kv * 2 == int(memory_kv_cache(ARCH, 8192)) * 2 == 615_317_504
    assert memory_per_rank(ARCH, Layout(), Mode.GENERATE, 1, 8192, Workload()).kv_cache == kv * 2
    spec = ModelSpec.model_validate(model_spec("q", MILES["model_config"], "hf"))
    for layout in (Layout(tp=4), Layout(tp=2, pp=2)):
        exact = memory_per_rank(ARCH, layout, Mode.GENERATE, 3, 5000, Workload())
        assert compiled_memory(spec.model_dump(), layout, Mode.GENERATE, 3, 5000,
                               Workload()) == exact  # fmt: skip
