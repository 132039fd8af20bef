"""Megatron-core's expert grid: EP (and expert TP) folded inside DP x TP x CP.

Independent sources: Megatron-core ``megatron/core/parallel_state.py``
(``initialize_model_parallel``: the expert grid ETP x EP x expert-DP is a second decomposition
of each pipeline stage's TP x CP x DP ranks; ``world_size`` must be divisible by ETP * EP * PP;
ETP = TP when unset), the models' config.json and transformers module shapes (by hand below),
and the NeMo RL / slime MoE recipes (TP 4 x EP 8 on one 8-GPU node with
``expert_tensor_parallel_size: 1``; NeMo RL's Qwen3-235B-A22B: TP 2, PP 8, CP 2, EP 16 on 128
H100s).
"""

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled.memory import memory_per_rank as memory_numeric
from rlmcost.deployment.kinds import Offload
from rlmcost.deployment.memory import offloaded
from rlmcost.deployment.resolve import resolve_layout
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import Mode, stage_params
from rlmcost.parallel.comm import Collective, traffic_per_rank
from rlmcost.parallel.layout import Layout, ZeroStage, dp_unit
from rlmcost.parallel.memory import memory_per_rank
from rlmcost.parallel.shard import stages
from rlmcost.parallel.validate import check_layout
from rlmcost.parallel.zero_groups import zero_groups
from rlmcost.specs import get_model

runner = CliRunner()

# Qwen3-30B-A3B config.json: hidden_size 2048, moe_intermediate_size 768, num_experts 128,
# num_hidden_layers 48, 32 heads / 4 KV heads of head_dim 128, vocab 151936, untied embeddings.
D, D_E, E, L, H, H_KV, D_H, V = 2048, 768, 128, 48, 32, 4, 128, 151936
# transformers Qwen3MoeMLP: gate, up and down projections, no biases
EXPERT = 3 * D * D_E

QWEN3_30B = get_model("qwen3-30b-a3b")
TP4_EP8 = Layout(dp=2, tp=4, ep=8, etp=1, sp=True, zero=ZeroStage.OS)  # 8 GPUs


def test_the_model_is_the_one_sized_by_hand():
    a = QWEN3_30B.arch()
    got = (a.d_model, a.d_expert, a.n_experts, a.n_layers, a.n_heads, a.n_kv_heads)
    assert got == (D, D_E, E, L, H, H_KV)
    assert (a.head_dim, a.vocab, a.tie_embeddings, a.n_shared_experts) == (D_H, V, False, 0)


def test_tp4_ep8_runs_on_8_gpus_with_megatron_sizes():
    arch = QWEN3_30B.arch()
    check_layout(arch, TP4_EP8, 8)  # accepted: ETP*EP = 8 divides TP*CP*DP = 4*1*2
    assert TP4_EP8.n_gpus == 8 and TP4_EP8.expert_dp == 1
    (stage,) = stages(arch, 1)
    p = stage_params(arch, TP4_EP8, stage)
    # E / EP = 16 whole experts per rank (ETP 1: not split), in each of the 48 layers
    assert p.expert == L * (E // 8) * EXPERT // 1
    # TP 4 splits attention (q: 32 heads, k and v: 4 KV heads, o) and the vocabulary; the
    # norms (q_norm, k_norm over head_dim; two per layer; the final one) and the d x E router
    # are replicated (transformers Qwen3MoeAttention, Qwen3MoeSparseMoeBlock)
    layer = D * H * D_H // 4 + 2 * D * H_KV * D_H // 4 + H * D_H // 4 * D
    layer += 2 * D_H + 2 * D + D * E
    assert p.dense == L * layer + 2 * (V // 4) * D + D
    # bf16 weights and gradients; Megatron's distributed optimizer shards the 12 fp32 bytes of
    # the dense parameters over their DP group (2 ranks) and the experts' over the expert-DP
    # group (TP*CP*DP / (ETP*EP) = 1 rank)
    m = memory_per_rank(arch, TP4_EP8, Mode.TRAIN, 16, 4096)
    assert m.weights == m.gradients == 2 * (p.dense + p.expert)
    assert m.optimizer == 12 * (-(-p.dense // 2) + p.expert)
    assert memory_numeric(QWEN3_30B, TP4_EP8, "train", 16, 4096) == m


def test_expert_tp_splits_each_expert_and_widens_the_expert_dp_group():
    arch = QWEN3_30B.arch()
    lay = Layout(dp=4, tp=4, ep=4, etp=2, zero=ZeroStage.OS)  # 16 GPUs
    (stage,) = stages(arch, 1)
    assert stage_params(arch, lay, stage).expert == L * (E // 4) * EXPERT // 2
    assert lay.expert_dp == 4 * 4 // (2 * 4)
    m = memory_per_rank(arch, lay, Mode.TRAIN, 16, 1024)
    p = stage_params(arch, lay, stage)
    assert m.optimizer == 12 * (-(-p.dense // 4) + -(-p.expert // 2))


def test_expert_tp_defaults_to_tp_as_megatron_core():
    # parallel_state.initialize_model_parallel: expert_tensor_parallel_size None -> TP; then
    # TP 4 x EP 8 needs 32 ranks per stage, as Megatron-core rejects it on 8 GPUs
    lay = TP4_EP8.with_(etp=None)
    assert lay.expert_tp == 4 and dp_unit(4, ep=8) == 8
    with pytest.raises(SpecError) as err:
        check_layout(QWEN3_30B.arch(), lay, 8)
    msg = str(err.value)
    assert "\n" not in msg and "etp*ep = 4*8 must divide tp*cp*dp" in msg and "--etp 1" in msg


def test_nemo_rl_qwen3_235b_layout_is_accepted():
    spec = get_model("qwen3-235b-a22b")
    arch = spec.arch()
    lay, notes = resolve_layout(
        Layout(tp=2, pp=8, cp=2, ep=16, etp=1, sp=True, zero=ZeroStage.OS), 128
    )
    assert lay.dp == 4 and lay.n_gpus == 128 and notes
    check_layout(arch, lay, 128)
    assert lay.expert_dp == 2 * 2 * 4 // 16 == 1
    # 94 layers over 8 stages: the first six hold 12; config.json: moe_intermediate_size
    # 1536, hidden 4096, 128 experts -> 8 whole experts per rank in each layer
    first = stages(arch, 8)[0]
    assert first.moe_layers == 12
    assert stage_params(arch, lay, first).expert == 12 * (128 // 16) * 3 * 4096 * 1536
    m = memory_per_rank(arch, lay, Mode.TRAIN, 4, 4096)
    assert memory_numeric(spec, lay, "train", 4, 4096) == m


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        (Layout(dp=3, ep=3), "ep=3 must divide the 128 experts"),
        (Layout(dp=1, tp=4, ep=8, etp=1), "etp*ep = 1*8 must divide tp*cp*dp = 4*1*1"),
        (Layout(dp=8, tp=4, ep=2, etp=5), "etp=5 (expert TP) must divide d_expert=768"),
    ],
)
def test_invalid_expert_grids_are_one_line_errors(layout, words):
    with pytest.raises(SpecError) as err:
        check_layout(QWEN3_30B.arch(), layout)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_cli_accepts_tp4_ep8_on_8_gpus_and_explains_a_bad_grid():
    args = ["train", "-m", "qwen3-30b-a3b", "--gpus", "8", "--tp", "4", "--ep", "8", "--sp"]
    ok = runner.invoke(app, [*args, "--etp", "1", "--json"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, args)
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    line = bad.output.strip()
    assert line.startswith("error:") and "\n" not in line and "--etp 1" in line


def test_cli_ep_help_states_the_convention():
    out = runner.invoke(app, ["train", "--help"], terminal_width=200).output
    assert "folded inside dp*tp*cp" in out and "Megatron-core" in out


def test_gradients_reduce_over_the_dense_and_expert_dp_groups():
    # Megatron-core: dense gradients over the DP x CP group, expert gradients over the expert
    # data-parallel group (1 rank here: nothing to reduce)
    groups = [(g.name, g.dims, g.ranks) for g in zero_groups(TP4_EP8)]
    assert groups == [("dense", ("dp", "cp"), 2), ("expert", ("edp",), 1)]
    traffic = traffic_per_rank(QWEN3_30B.arch(), TP4_EP8, 16, 4096, gpus_per_node=8)
    a2a = [t for t in traffic if t.strategy == "ep" and t.collective is Collective.ALL_TO_ALL]
    assert [(t.ranks, t.intra_node) for t in a2a] == [(8, True)]  # ETP 1 x EP 8: one node
    assert not [t for t in traffic if t.strategy == "dp-experts"]
    assert not [t for t in traffic if t.collective is Collective.ALL_GATHER and t.ranks == 1]


def test_megatron_parameter_offload_is_between_phases():
    # verl megatron param_offload / NeMo RL offload_after_refit move parameters between phases
    # (params-idle); during the step only ZeRO-3/FSDP keeps them on the host
    m = memory_per_rank(QWEN3_30B.arch(), TP4_EP8, Mode.TRAIN, 16, 1024)
    with pytest.raises(SpecError) as err:
        offloaded(m, (Offload.PARAMS,), TP4_EP8)
    assert "params-idle" in str(err.value) and "\n" not in str(err.value)
    assert offloaded(m, (Offload.PARAMS_IDLE,), TP4_EP8).device == m
