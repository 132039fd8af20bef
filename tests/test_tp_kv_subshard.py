"""A training TP above the KV heads: Megatron-core's QKV activation sub-sharding.

Independent source throughout: NVIDIA/Megatron-LM f7dfb99795 ("Support TP greater than
num_kv_heads by supporting QKV activation sub-sharding (#2565)"), megatron/core/transformer/
attention.py: when num_query_groups < TP the rank all-gathers ``mixed_qkv`` [s, b, ng (np/ng + 2)
hn] over the TP group along its last dimension (with an output gate [s, b, ng (2 np/ng + 2) hn]),
whose backward (``_AllGatherFromTensorParallelRegion``, tensor_parallel/mappings.py) is a
reduce-scatter of the same tensor; NeMo RL at 7ea279abf
(nemo_rl/models/dtensor/parallelize.py) asserts num_key_value_heads % tp == 0 in its DTensor
policy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.comm import Collective, traffic_per_stage
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.validate import check_layout
from rlmcost.perf.collectives import collective_time_s, link
from rlmcost.perf.step_options import StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.run.spec import Run
from rlmcost.specs import Workload, get_hardware, get_model

runner = CliRunner()
RECIPE = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_qwen3.5-397ba17b-megatron.v2.yaml"
H100 = get_hardware("h100")


def test_nemo_rls_qwen35_397b_recipe_imports_and_evaluates_at_tp_8() -> None:
    # the recipe: Qwen3.5-397B-A17B (2 KV heads) at megatron_cfg.tensor_model_parallel_size 8
    res = runner.invoke(app, ["import", "nemo-rl", str(RECIPE), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["run"]["deployment"]["train"]["tp"] == 8
    text = json.dumps(out)
    assert "tp=8 > kv heads=2: Megatron-core's QKV activation sub-sharding" in text
    assert "f7dfb99795" in text


def _tp_rows(arch, layout, kind):
    (stage,) = traffic_per_stage(arch, layout, sequences=16, seq_len=2048)
    return [t for t in stage if t.strategy == "tp" and t.collective is kind]


@pytest.mark.parametrize("ckpt", [Checkpointing.NONE, Checkpointing.FULL])
def test_tp_twice_the_kv_heads_adds_exactly_the_qkv_gather_per_layer(ckpt) -> None:
    arch = get_model("llama-3.1-70b").arch()  # h 64, h_kv 8, d_h 128, 80 layers
    at_kv, twice = Layout(tp=8, ckpt=ckpt), Layout(tp=16, ckpt=ckpt)
    notes = check_layout(arch, twice)
    assert any("sub-sharding" in n and "f7dfb99795" in n for n in notes)
    # the tensor-parallel all-reduces are those of any TP degree; the gather is extra
    ar8 = _tp_rows(arch, at_kv, Collective.ALL_REDUCE)
    ar16 = _tp_rows(arch, twice, Collective.ALL_REDUCE)
    assert [(r.calls, r.payload_bytes) for r in ar8] == [(r.calls, r.payload_bytes) for r in ar16]
    assert not _tp_rows(arch, at_kv, Collective.ALL_GATHER)
    (ag,) = _tp_rows(arch, twice, Collective.ALL_GATHER)
    (rs,) = _tp_rows(arch, twice, Collective.REDUCE_SCATTER)
    # by hand (f7dfb99795): per micro-batch of 1 x 2048 tokens and layer, (64 + 2 * 8) * 128
    # bf16 elements per token gathered forward (again when full checkpointing reruns it) and
    # reduce-scattered backward, over the 16 ranks; 16 sequences on dp 1 are 16 micro-batches
    payload = 2048 * (64 + 2 * 8) * 128 * 2
    forwards = 2 if ckpt is Checkpointing.FULL else 1
    assert (ag.payload_bytes, ag.calls, ag.ranks) == (payload, 16 * 80 * forwards, 16)
    assert (rs.payload_bytes, rs.calls, rs.ranks) == (payload, 16 * 80, 16)
    assert ag.bytes_per_rank == -(-ag.calls * payload * 15 // 16)


def test_the_step_time_names_the_gather_as_its_own_exposed_part() -> None:
    arch = get_model("llama-3.1-70b").arch()
    wl = Workload()
    st8 = train_step_time(arch, Layout(tp=8, dp=1), 8, 2048, H100, wl)
    st16 = train_step_time(arch, Layout(tp=16, dp=1), 8, 2048, H100, wl)
    assert "tp_qkv" not in st8.exposed_comm_s
    # by hand: 8 micro-batches x 80 layers x (all-gather + reduce-scatter) of the gathered
    # [2048, (64 + 16) * 128] bf16 tensor over 16 ranks (2 nodes of 8: the NIC link)
    payload = 2048 * (64 + 2 * 8) * 128 * 2
    lk = link(H100, False, 8)
    algo = StepOptions().algorithm
    one = (collective_time_s(Collective.ALL_GATHER, payload, 16, lk, algo)
           + collective_time_s(Collective.REDUCE_SCATTER, payload, 16, lk, algo))  # fmt: skip
    assert st16.exposed_comm_s["tp_qkv"] == pytest.approx(8 * 80 * one, rel=1e-12)


def test_a_hybrid_models_linear_attention_layers_gather_nothing_and_the_gate_travels() -> None:
    arch = get_model("qwen3.5-397b-a17b").arch()  # 60 layers, 45 Gated DeltaNet, 15 attention
    h, h_kv, d_h = int(arch.n_heads), int(arch.n_kv_heads), int(arch.head_dim)
    assert arch.attn_output_gate and (h, h_kv, d_h) == (32, 2, 256)
    softmax = int(arch.n_layers) - int(arch.linear_layers_of(arch.n_layers))
    (ag,) = _tp_rows(arch, Layout(tp=8), Collective.ALL_GATHER)
    # with attention_output_gate the fused QKV output carries the gate: (2 h + 2 h_kv) d_h
    assert ag.payload_bytes == 2048 * (2 * 32 + 2 * 2) * 256 * 2
    assert ag.calls == 16 * softmax == 16 * 15


def test_a_tp_that_is_not_a_multiple_of_the_kv_heads_is_still_refused() -> None:
    arch = get_model("qwen3.5-397b-a17b").arch()  # 32 heads, 2 KV heads
    with pytest.raises(SpecError, match="tp=3 must divide heads=32"):
        check_layout(arch, Layout(tp=3))
    with pytest.raises(SpecError, match="tp=64 must divide heads=32"):
        check_layout(arch, Layout(tp=64))


@pytest.mark.parametrize(("framework", "extra", "why"), [
    ("nemo-rl", ["--zero", "3"], "DTensor policy asserts num_key_value_heads % tp == 0"),
    ("trl", [], "tensor-parallel plan splits k_proj and v_proj by heads"),
])  # fmt: skip
def test_a_hugging_face_trainer_above_the_kv_heads_is_refused_saying_why(framework, extra,
                                                                         why) -> None:
    res = runner.invoke(app, ["grpo", "-m", "llama-3.1-8b", "--reward", "rule", "--gpus", "16",
                              "--framework", framework, "--tp", "16", *extra])  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "tp=16 > kv heads=8" in res.output and why in res.output
    assert "only Megatron-core sub-shards the QKV activations" in res.output


def test_the_same_layout_on_nemo_rls_megatron_trainer_runs() -> None:
    res = runner.invoke(app, ["grpo", "-m", "llama-3.1-8b", "--reward", "rule", "--gpus", "16",
                              "--framework", "nemo-rl", "--tp", "16", "--zero", "1",
                              "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Megatron-core's QKV activation sub-sharding" in res.stdout


def test_an_engine_above_the_kv_heads_still_replicates_them() -> None:
    arch = get_model("llama-3.1-8b").arch()
    notes = check_layout(arch, Layout(tp=16), replicate_kv=True)
    assert any("replicated on 2 ranks (vLLM)" in n for n in notes)
    assert not any("sub-sharding" in n for n in notes)


def _plan_base(framework: str) -> Run:
    return Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True, "kl": False},
        "models": {"actor": "qwen2.5-1.5b"},  # 12 heads, 2 KV heads: TP 4 sub-shards
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 512},
        "deployment": {"framework": framework},
    })  # fmt: skip


@pytest.mark.parametrize(("framework", "zero", "searched"), [
    ("slime", None, True),  # Megatron-core alone (Behaviour.hf_trainer empty)
    ("nemo-rl", None, False),  # its default search: the DTensor policy at ZeRO-3
    ("nemo-rl", (ZeroStage.OS,), True),  # its Megatron policy
    (None, None, True),  # rlmcost's bare trainer refuses nothing (check_kv_subshard)
])  # fmt: skip
def test_the_rl_plan_searches_tp_above_the_kv_heads_where_megatron_core_trains(
        framework, zero, searched) -> None:  # fmt: skip
    space = RLSpace(placements=("baseline",), tp=None, zero=zero, fractions=(0.5,))
    cands = candidates(_plan_base(framework), space, 8)
    tps = {c.tp for c in cands}
    assert 2 in tps and (4 in tps) is searched, tps
    if searched:  # each such candidate evaluates: the refusal is the evaluation's own rule
        c = next(c for c in cands if c.tp == 4)
        out = evaluate_deployment(candidate_run(_plan_base(framework), c))
        assert any("sub-sharding" in n for n in out.notes), out.notes


def test_a_given_plan_tp_no_searched_zero_can_train_is_refused_naming_the_megatron_trainer():
    res = runner.invoke(app, ["plan", "grpo", "-m", "qwen2.5-1.5b", "--gpus", "8", "--tp", "4",
                              "--framework", "nemo-rl", "--reward", "rule"])  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "tp=4 > kv heads=2" in res.output and "(--zero 1 or 0)" in res.output
