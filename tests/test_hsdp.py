"""Hybrid sharding (HSDP, verl's fsdp_size): ZeRO states over P_z ranks, replicated across the
P_d P_c / P_z shard groups (rlmcost.parallel.zero_groups).

Reference numbers: parameter counts from rlmcost's own model of the architecture (its
parameter count at P_z = 1 is the whole model); the expected bytes are the ZeRO paper's
Table 1 terms with N_d = P_z (Rajbhandari et al. 2020), the expected collectives PyTorch
FSDP's HYBRID_SHARD (torch/distributed/fsdp/_runtime_utils.py ``_reduce_grad``: reduce-scatter
in the shard group, all-reduce of the shard in the replicate group).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.compiled import memory as cmem
from rlmcost.errors import SpecError
from rlmcost.parallel.comm import Collective, group_is_intra_node, traffic_per_rank
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.memory import memory_per_rank
from rlmcost.parallel.validate import check_layout
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload

Z3, Z2, Z1 = ZeroStage.OS_G_P, ZeroStage.OS_G, ZeroStage.OS
QWEN = get_model("qwen2.5-7b").arch()
MOE = get_model("qwen3-30b-a3b").arch()


def _params(arch) -> int:
    """Parameters of the whole model: the weights of one unsharded rank, bf16."""
    return memory_per_rank(arch, Layout(), "train", 1, 128).weights // 2


@pytest.mark.parametrize(
    ("arch", "layout"),
    [
        (QWEN, Layout(dp=8, zero=Z3)),
        (QWEN, Layout(dp=4, cp=2, zero=Z1, ckpt=Checkpointing.FULL)),
        (QWEN, Layout(dp=2, tp=2, pp=2, zero=Z2)),
        (MOE, Layout(dp=8, ep=4, etp=1, zero=Z3)),
    ],
)
@pytest.mark.parametrize("mode", ["train", "forward"])
def test_full_shard_is_byte_identical(arch, layout, mode):
    """P_z = P_d P_c (given, or larger, as verl reads fsdp_size >= world) is today's layout."""
    base = memory_per_rank(arch, layout, mode, 16, 1024)
    ranks = layout.dp * layout.cp
    for z in (ranks, 2 * ranks):
        lay = layout.with_(zero_shard=z)
        assert lay.zero_group == ranks and lay.zero_replicas == 1
        assert memory_per_rank(arch, lay, mode, 16, 1024) == base
        assert cmem.memory_per_rank(arch, lay, mode, 16, 1024) == base
    assert traffic_per_rank(arch, layout.with_(zero_shard=ranks), 16, 1024) == \
        traffic_per_rank(arch, layout, 16, 1024)  # fmt: skip


@pytest.mark.parametrize("zero", [Z1, Z2, Z3])
def test_states_over_two_ranks_are_half(zero):
    """ZeRO paper Table 1 with N_d = P_z = 2: the sharded terms are ceil(P / 2), exact ints."""
    n = _params(QWEN)
    half = -(-n // 2)
    lay = Layout(dp=8, zero=zero, zero_shard=2)
    for m in (memory_per_rank(QWEN, lay, "train", 8, 1024),
              cmem.memory_per_rank(QWEN, lay, "train", 8, 1024)):  # fmt: skip
        assert m.optimizer == 12 * half
        assert m.gradients == 2 * (half if zero is not Z1 else n)
        assert m.weights == 2 * (half if zero is Z3 else n)


def test_fp32_stored_states_over_two_ranks():
    """verl's actor (fp32 parameters under FSDP mixed precision): 4 + 4 + 8 bytes of the half."""
    half = -(-_params(QWEN) // 2)
    wl = Workload(param_dtype=Dtype.FP32)
    m = memory_per_rank(QWEN, Layout(dp=32, zero=Z3, zero_shard=2), "train", 32, 1024, wl)
    assert (m.weights, m.gradients, m.optimizer) == (4 * half, 4 * half, 8 * half)


def test_experts_shard_over_expert_dp_per_replica():
    """A routed expert's states: the expert-DP group (P_t P_c P_d / (ETP P_e) = 2) divided by
    the 2 replicas: 1 rank, so each rank keeps its experts' whole Adam states."""
    full = Layout(dp=8, ep=4, etp=1, zero=Z3)
    hybrid = full.with_(zero_shard=4)
    assert (full.expert_dp, hybrid.expert_zero_group, hybrid.zero_replicas) == (2, 1, 2)
    a = memory_per_rank(MOE, full, "train", 8, 512)
    b = memory_per_rank(MOE, hybrid, "train", 8, 512)
    assert b == cmem.memory_per_rank(MOE, hybrid, "train", 8, 512)
    assert b.optimizer > a.optimizer


def test_traffic_gathers_within_the_group_and_all_reduces_the_shard():
    """16 GPUs on two 8-GPU nodes, FSDP over 8 (one node): all-gathers and reduce-scatters of
    the whole stage's parameters over 8 ranks inside the node, then an all-reduce of the 1/8
    shard over the 2 replicas across the nodes, once per micro-batch."""
    n = _params(QWEN)
    lay = Layout(dp=16, zero=Z3, zero_shard=8, micro_batch=1)
    rows = {t.collective: t for t in traffic_per_rank(QWEN, lay, 32, 1024) if t.strategy == "dp"}
    ag, rs, ar = rows[Collective.ALL_GATHER], rows[Collective.REDUCE_SCATTER], \
        rows[Collective.ALL_REDUCE]  # fmt: skip
    assert (ag.ranks, ag.payload_bytes, ag.intra_node, ag.calls) == (8, 2 * n, True, 4)
    assert (rs.ranks, rs.payload_bytes, rs.intra_node, rs.calls) == (8, 2 * n, True, 2)
    assert (ar.ranks, ar.payload_bytes, ar.intra_node, ar.calls) == (2, 2 * -(-n // 8), False, 2)
    full = {t.collective: t for t in traffic_per_rank(QWEN, lay.with_(zero_shard=None), 32, 1024)}
    assert not full[Collective.ALL_GATHER].intra_node and Collective.ALL_REDUCE not in full


def test_zero1_all_reduces_the_shard_once():
    lay = Layout(dp=16, zero=Z1, zero_shard=4, micro_batch=1)
    ar = [t for t in traffic_per_rank(QWEN, lay, 64, 512) if t.collective is Collective.ALL_REDUCE]
    assert [(t.ranks, t.calls) for t in ar] == [(4, 1)]


def test_shard_group_link_is_its_own_span():
    """The shard group is P_z consecutive ranks (FSDP2's 2-D mesh, shard dim innermost): two
    ranks in a node; the replicas stride P_z ranks and cross nodes once they exceed a node."""
    lay = Layout(dp=32, zero=Z3, zero_shard=2)
    assert group_is_intra_node(lay, ("zs",), 8)
    assert not group_is_intra_node(lay, ("zr",), 8)
    assert group_is_intra_node(Layout(dp=8, zero=Z3, zero_shard=2), ("zr",), 8)


def _step(layout, **opts):
    from rlmcost.perf.train_step import StepOptions, train_step_time

    o = StepOptions(overlap_grad_reduce=False, overlap_param_gather=False, **opts)
    return train_step_time(QWEN, layout, 32, 1024, get_hardware("h100"), options=o)


def test_step_time_default_is_unchanged():
    for zero in (Z1, Z3):
        lay = Layout(dp=16, zero=zero)
        assert _step(lay.with_(zero_shard=16)) == _step(lay)


def test_step_exposes_the_shard_all_reduce():
    """ZeRO-1 with neither overlap: after the last backward the gradients are reduce-scattered
    in the 8-GPU node, the 1/8 shard all-reduced across the 2 nodes, and the updated
    parameters all-gathered in the node, all exposed: the step's dp time is those three
    collectives priced one by one (a full shard instead runs both over 16 GPUs, 2 nodes)."""
    from rlmcost.parallel.breakdown import data_share
    from rlmcost.parallel.shard import stages
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_pass import StepContext, stage_param_counts
    from rlmcost.perf.train_step import StepOptions

    def priced(lay, groups):
        c = StepContext.of(QWEN, lay, 1024, data_share(lay, 32, 1024),
                           Device(get_hardware("h100"), Dtype.BF16), StepOptions(),
                           Workload())  # fmt: skip
        dense, expert = stage_param_counts(QWEN, lay, stages(QWEN, 1)[0])
        n = dense + expert
        return sum(c.comm(kind, 2 * size(n), ranks, dims) for kind, size, ranks, dims in groups)

    lay = Layout(dp=16, zero=Z1, zero_shard=8)
    hybrid = priced(lay, [
        (Collective.REDUCE_SCATTER, lambda n: n, 8, ("zs",)),
        (Collective.ALL_REDUCE, lambda n: -(-n // 8), 2, ("zr",)),
        (Collective.ALL_GATHER, lambda n: n, 8, ("zs",)),
    ])  # fmt: skip
    full = priced(lay.with_(zero_shard=None), [
        (Collective.REDUCE_SCATTER, lambda n: n, 16, ("dp", "cp")),
        (Collective.ALL_GATHER, lambda n: n, 16, ("dp", "cp")),
    ])  # fmt: skip
    assert _step(lay).exposed_comm_s["dp"] == pytest.approx(hybrid, rel=1e-12)
    assert _step(lay.with_(zero_shard=None)).exposed_comm_s["dp"] == pytest.approx(full, rel=1e-12)
    assert hybrid != full


def test_optimizer_step_runs_over_the_shard():
    """Adam updates the rank's 1 / P_z of the parameters: P_z = 2 is 8x the work of 16."""
    a = _step(Layout(dp=16, zero=Z3)).optimizer_s
    b = _step(Layout(dp=16, zero=Z3, zero_shard=2)).optimizer_s
    assert b > 4 * a


def test_check_layout_names_the_divisors():
    with pytest.raises(SpecError, match=r"zero_shard=3 must divide dp\*cp = 8\*1 = 8.*1, 2, 4, 8"):
        check_layout(QWEN, Layout(dp=8, zero=Z3, zero_shard=3))
    with pytest.raises(SpecError, match="expert-DP group"):
        check_layout(MOE, Layout(dp=8, ep=4, etp=1, zero=Z3, zero_shard=2))
    assert not cmem.layout_ok(cmem.arch_numbers(QWEN), Layout(dp=8, zero=Z3, zero_shard=3))
    check_layout(QWEN, Layout(dp=8, zero=ZeroStage.NONE, zero_shard=3))  # no effect, no error
    moe0 = Layout(dp=8, ep=8, etp=1)  # ZeRO 0: nothing sharded, the shard size has no effect
    for fn in (memory_per_rank, cmem.memory_per_rank):
        assert fn(MOE, moe0.with_(zero_shard=2), "train", 8, 128) == fn(MOE, moe0, "train", 8, 128)


def test_train_cli_zero_shard():
    r = CliRunner().invoke(app, ["train", "--model", "qwen2.5-7b", "--gpus", "16", "--zero",
                                 "3", "--zero-shard", "2", "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert '"zero_shard": 2' in r.output and "hybrid sharding" in r.output
    bad = CliRunner().invoke(app, ["train", "--model", "qwen2.5-7b", "--gpus", "16", "--zero",
                                   "3", "--zero-shard", "3"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "must divide dp*cp" in bad.output


def _verl(tmp_path, size):
    from rlmcost.frameworks.verl import import_verl

    p = tmp_path / "verl.yaml"
    p.write_text(
        "actor_rollout_ref:\n  model:\n    path: Qwen/Qwen2.5-7B\n  actor:\n"
        "    ppo_micro_batch_size_per_gpu: 1\n    fsdp_config:\n"
        f"      fsdp_size: {size}\ntrainer:\n  n_gpus_per_node: 8\n  nnodes: 4\n"
    )
    return import_verl(p)


@pytest.mark.parametrize(("size", "flag"), [(-1, None), (32, None), (64, None), (2, 2), (8, 8)])
def test_verl_fsdp_size(tmp_path, size, flag):
    """verl/workers/fsdp_workers.py create_device_mesh: -1 or >= world is the 1-D mesh."""
    argv = _verl(tmp_path, size).argv()
    if flag is None:
        assert "--zero-shard" not in argv
    else:
        assert argv[argv.index("--zero-shard") + 1] == str(flag)


def test_verl_fsdp_size_zero_is_an_error(tmp_path):
    with pytest.raises(SpecError, match="fsdp_size=0"):
        _verl(tmp_path, 0)


def _rl(zero_shard):
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.run import Run

    return evaluate_deployment(Run.from_data({
        "algorithm": {"name": "grpo"}, "models": {"actor": "qwen2.5-7b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "prompt_len": 128,
                     "response_len": 256},
        "deployment": {"framework": "verl", "train": {"zero": "3", "zero_shard": zero_shard}},
        "cluster": {"gpus": 16},
    }))  # fmt: skip


def test_rl_run_default_unchanged_and_hybrid_moves_states():
    """An RL run with zero_shard at the GPU count equals today's in every number; at 2 the
    update holds half the model's states per GPU (verl's fp32 parameters and gradients, Adam
    m and v: 4 + 4 + 8 bytes, rlmcost.parallel.zero)."""
    a, b = _rl(None).to_json(), _rl(16).to_json()
    assert a.pop("deployment")["train"]["zero_shard"] is None
    assert b.pop("deployment")["train"]["zero_shard"] == 16
    assert a == b
    assert not any("hybrid sharding" in n for n in a["notes"])
    hsdp = _rl(2)
    assert any(n.startswith("hybrid sharding: ZeRO-3 states over 2 ranks, 8 replicas")
               for n in hsdp.notes)  # the modelling choice, stated
    jobs = hsdp.to_json()["groups"][0]["jobs"]
    train = next(j["memory_breakdown_bytes"] for j in jobs if j["kind"] == "train")
    half = -(-_params(QWEN) // 2)
    assert (train["weights"], train["gradients"], train["optimizer"]) == \
        (4 * half, 4 * half, 8 * half)  # fmt: skip
