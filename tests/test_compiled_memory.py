"""The numeric twin rlmcost.compiled.memory equals the symbolic rlmcost.parallel.memory."""

from __future__ import annotations

import pytest
from compiled_strategies import SYNTHETIC, layouts, models, spec
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rlmcost.choices import Dtype, Head
from rlmcost.compiled import arch_numbers
from rlmcost.compiled import memory as twin
from rlmcost.errors import SpecError
from rlmcost.parallel import memory as symbolic
from rlmcost.parallel.breakdown import stage_params
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.validate import check_layout
from rlmcost.specs import ModelSpec, Workload

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


def _valid(arch, layout) -> bool:
    try:
        check_layout(arch, layout)
    except SpecError:
        return False
    return True


@SETTINGS
@given(
    data=st.data(),
    model=models,
    mode=st.sampled_from(list(symbolic.Mode)),
    sequences=st.integers(1, 40),
    seq_len=st.integers(1, 5000),
    head=st.sampled_from(list(Head)),
    dtypes=st.sampled_from([Workload(), Workload(weight_dtype=Dtype.FP32,
                                                 activation_dtype=Dtype.FP32, kv_dtype=Dtype.FP8),
                            Workload(weight_dtype=Dtype.FP8, compute_dtype=Dtype.FP8,
                                     unquantized_dtype=Dtype.BF16),  # an FP8 engine's
                            # an engine's FP8 KV cache: conv state bf16, recurrent fp32
                            Workload(kv_dtype=Dtype.FP8, conv_dtype=Dtype.BF16,
                                     state_dtype=Dtype.FP32),
                            # 4-bit engines (parallel.packed_weights)
                            Workload(packed_format="nvfp4"),
                            Workload(packed_format="int4-g128", packed_parts="mlp"),
                            Workload(packed_format="int4-g32", packed_parts="experts"),
                            Workload(packed_format="nvfp4-w4a4", packed_parts="experts")]),
    fused_glu=st.booleans(),
)  # fmt: skip
def test_twin_equals_the_symbolic_model_component_by_component(
    data, model, mode, sequences, seq_len, head, dtypes, fused_glu
):
    arch = model.arch()
    layout = data.draw(layouts(model))
    assume(_valid(arch, layout))
    want = symbolic.memory_per_stage(arch, layout, mode, sequences, seq_len, dtypes, head, False,
                                     fused_glu)  # fmt: skip
    got = twin.memory_per_stage(arch, layout, mode, sequences, seq_len, dtypes, head, False,
                                fused_glu)  # fmt: skip
    # Independent: the symbolic core (sympy blocks, parallel.zero/shard/activations) per stage.
    assert [g.to_json() for g in got] == [w.to_json() for w in want]
    assert all(type(v) is int for g in got for v in g.to_json().values())


@SETTINGS
@given(data=st.data(), model=models)
def test_layout_rules_agree_with_check_layout(data, model):
    arch = model.arch()
    layout = data.draw(layouts(model))
    # Independent: rlmcost.parallel.validate.check_layout is the rule book.
    assert twin.layout_ok(arch_numbers(arch), layout) == _valid(arch, layout)


def test_the_peak_rank_is_the_symbolic_peak_for_every_built_in_model():
    from rlmcost.specs import models as built_in

    layout = Layout(tp=2, pp=3, dp=2, zero=ZeroStage.OS_G, ckpt=Checkpointing.SELECTIVE)
    for m in (*built_in(), *SYNTHETIC):
        arch = m.arch()
        if not _valid(arch, layout):
            continue
        for mode in symbolic.Mode:
            # Independent: the sympy-based memory_per_rank.
            assert twin.memory_per_rank(m, layout, mode, 16, 1024) == symbolic.memory_per_rank(
                arch, layout, mode, 16, 1024
            ), (m.name, mode)


def test_a_models_json_entry_needs_no_pydantic_model():
    import json
    from importlib import resources

    data = json.loads(resources.files("rlmcost.specs").joinpath("data", "models.json").read_text())
    entry = next(m for m in data["models"] if m["name"] == "mixtral-8x7b")
    layout = Layout(tp=2, dp=4, ep=4, pp=2, schedule=PipelineSchedule.ZERO_BUBBLE, micro_batch=2)
    got = twin.memory_per_rank(entry, layout, "train", 32, 2048)
    # Independent: the symbolic model on the validated ModelSpec of the same entry.
    assert got == symbolic.memory_per_rank(spec("mixtral-8x7b").arch(), layout, "train", 32, 2048)


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        (Layout(tp=3), "tp=3 must divide heads"),
        (Layout(ep=2), "needs a MoE model"),
        (Layout(pp=999), "exceeds the 32 layers"),
        (Layout(virtual_stages=2), "needs --schedule interleaved"),
        # Megatron-core refuses a virtual pipeline without pipeline parallelism.
        (Layout(virtual_stages=2, schedule=PipelineSchedule.INTERLEAVED), "needs pp > 1"),
    ],
)
def test_bad_layouts_raise_the_same_one_line_error(layout, message):
    arch = spec("llama-3.1-8b").arch()
    with pytest.raises(SpecError, match=message) as got:
        twin.memory_per_rank(arch, layout, "train", 8, 1024)
    with pytest.raises(SpecError) as want:
        symbolic.memory_per_rank(arch, layout, "train", 8, 1024)
    assert str(got.value) == str(want.value)
    assert "\n" not in str(got.value)


@pytest.mark.parametrize(("sequences", "seq_len"), [(0, 10), (4, -1), (2.5, 10)])
def test_bad_sizes_are_spec_errors(sequences, seq_len):
    with pytest.raises(SpecError, match="must be a positive integer"):
        twin.memory_per_rank(spec("gpt-2"), Layout(), "forward", sequences, seq_len)


def test_a_symbolic_arch_is_refused_with_a_fix():
    from rlmcost.arch import CANONICAL

    with pytest.raises(SpecError, match="needs a numeric architecture"):
        twin.memory_per_rank(CANONICAL, Layout(), "train", 1, 1)


def test_default_dtypes_are_the_workloads():
    w = Workload()
    # Independent: specs.Workload's field defaults.
    assert twin.Dtypes() == twin.Dtypes.of(w)


@pytest.mark.parametrize(
    ("model", "tp"), [("llama-3.1-8b", 16), ("llama-3.1-70b", 16), ("qwen3-8b", 16),
                      (SYNTHETIC[2], 4)],
)  # fmt: skip
def test_an_engine_with_more_tp_ranks_than_kv_heads_replicates_them_as_the_symbolic_model(
    model, tp
):
    arch = spec(model).arch()
    layout = Layout(tp=tp)
    # Independent: check_layout(replicate_kv=True) and parallel.shard.tp_shard (one KV head per
    # rank, vLLM) in the symbolic model.
    check_layout(arch, layout, replicate_kv=True)
    assert twin.layout_ok(arch_numbers(arch), layout, replicate_kv=True)
    want = symbolic.memory_per_stage(arch, layout, symbolic.Mode.GENERATE, 8, 3000)
    got = twin.memory_per_stage(arch, layout, twin.Mode.GENERATE, 8, 3000)
    assert [g.to_json() for g in got] == [w.to_json() for w in want]
    # A trainer takes it too, as Megatron-core since f7dfb99795 (QKV activation sub-sharding:
    # one KV head per rank), and the twin keeps equal to the symbolic model there; without
    # the sub-sharding (check_layout(subshard_kv=False)) it is refused, naming the commit.
    assert twin.layout_ok(arch_numbers(arch), layout)
    want = symbolic.memory_per_stage(arch, layout, symbolic.Mode.TRAIN, 8, 3000)
    got = twin.memory_per_stage(arch, layout, twin.Mode.TRAIN, 8, 3000)
    assert [g.to_json() for g in got] == [w.to_json() for w in want]
    with pytest.raises(SpecError, match="must divide heads.*f7dfb99795"):
        check_layout(arch, layout, subshard_kv=False)


@SETTINGS
@given(data=st.data(), model=models, head=st.sampled_from(list(Head)))
def test_stage_params_equal_the_symbolic_stage_params(data, model, head):
    from rlmcost.parallel.shard import stages

    arch = model.arch()
    layout = data.draw(layouts(model))
    assume(_valid(arch, layout))
    for stage in stages(arch, layout.pp):
        # Independent: parallel.memory.stage_params over the sympy blocks of the TP shard.
        assert stage_params(arch, layout, stage, head) == symbolic.stage_params(
            arch, layout, stage, head
        )


def _hybrids() -> list:
    """Hybrid models with Gated DeltaNet layers: the built-in Qwen3-Next-80B-A3B (MoE, 36 of
    48 layers linear) and a small dense one of Qwen3.5's kind (gated attention, H_k < H_v)."""
    from rlmcost.specs import get_model

    small = ModelSpec(
        name="hybrid-dense", n_layers=8, d_model=256, d_ff=512, n_heads=4, n_kv_heads=2,
        head_dim=64, vocab=1003, qk_norm=True, attn_output_gate=True, linear_layers=6,
        linear_key_heads=4, linear_value_heads=8, linear_key_head_dim=32,
        linear_value_head_dim=32, linear_conv_kernel=4,
    )  # fmt: skip
    return [get_model("qwen3-next-80b-a3b"), small]


@SETTINGS
@given(
    data=st.data(),
    model=st.sampled_from(_hybrids()),
    mode=st.sampled_from([symbolic.Mode.TRAIN, symbolic.Mode.FORWARD]),
    replicated=st.booleans(),
)  # fmt: skip
def test_twin_equals_the_symbolic_model_with_the_mixers_whole(data, model, mode, replicated):
    arch = model.arch()
    layout = data.draw(layouts(model))
    assume(_valid(arch, layout))
    want = symbolic.memory_per_stage(arch, layout, mode, 8, 1000, None, Head.LM, replicated)
    got = twin.memory_per_stage(arch, layout, mode, 8, 1000, None, Head.LM, replicated)
    # Independent: the sympy blocks of the whole mixer and of the attention's TP shard.
    assert [g.to_json() for g in got] == [w.to_json() for w in want]
    split = twin.memory_per_stage(arch, layout, mode, 8, 1000)
    # whole on each rank: never fewer weight bytes than split over P_t, equal at P_t = 1
    assert all(g.weights >= s.weights for g, s in zip(got, split, strict=True))
    if layout.tp == 1:
        assert got == split
