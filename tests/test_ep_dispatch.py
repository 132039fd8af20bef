"""The MoE dispatch / combine all-to-all across nodes (rlmcost/perf/ep_dispatch.py)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import combinations

import pytest

from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Layout
from rlmcost.perf.collectives import link
from rlmcost.perf.efficiency import Device
from rlmcost.perf.ep_dispatch import EpDispatcher, ep_all_to_all_s, remote_nodes_per_token
from rlmcost.perf.step_pass import StepContext, StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.specs import Workload, get_hardware
from rlmcost.specs.registry import get_model

QWEN = get_model("qwen3-235b-a22b").arch()
H100 = get_hardware("h100-sxm")


def _context(layout: Layout, dispatcher: EpDispatcher) -> StepContext:
    w = Workload()
    share = data_share(layout, layout.dp * layout.cp, 4096)
    dev = Device(H100, w.compute_dtype)
    return StepContext.of(QWEN, layout, 4096, share, dev, StepOptions(ep_dispatcher=dispatcher), w)


@pytest.mark.parametrize(("experts", "k", "nodes"), [(8, 2, 2), (8, 3, 4), (12, 4, 3)])
def test_remote_nodes_is_the_mean_over_every_choice_of_experts(experts, k, nodes):
    # brute force over all C(E, k) equally likely expert sets, the token's own node = node 0
    per = experts // nodes
    sets = list(combinations(range(experts), k))
    hit = sum(len({e // per for e in s} - {0}) for s in sets)
    assert remote_nodes_per_token(experts, k, nodes) == Fraction(hit, len(sets))


def test_intra_node_groups_price_the_same_for_both_dispatchers():
    lay = Layout(tp=1, dp=8, ep=8, etp=1)
    sent, tok = 8 * 4096 * 4096 * 2, 4096 * 4096 * 2
    a = ep_all_to_all_s(_context(lay, EpDispatcher.ALLTOALL), sent, tok)
    b = ep_all_to_all_s(_context(lay, EpDispatcher.DEEPEP), sent, tok)
    want = _context(lay, EpDispatcher.ALLTOALL).comm(Collective.ALL_TO_ALL, sent, 8, ("ep",))
    assert a == b == want


def test_across_nodes_nccl_sends_only_remote_peers_over_the_nic():
    # EP 32 over 4 nodes of 8: 24 of 32 peers' copies leave the node, 7 stay on NVLink
    lay = Layout(tp=1, dp=32, ep=32, etp=1)
    tok = 4096 * 4096 * 2
    sent = 8 * tok
    nic = link(H100, False, 1)
    s = ep_all_to_all_s(_context(lay, EpDispatcher.ALLTOALL), sent, tok)
    assert s == pytest.approx(24 * nic.latency_s + sent * 24 / 32 / nic.bus_bytes_per_s)
    # below the old price of every copy at the NIC's rate
    assert s < 31 * nic.latency_s + sent * 31 / 32 / nic.bus_bytes_per_s


def test_deepep_sends_a_token_once_per_remote_node():
    lay = Layout(tp=1, dp=32, ep=32, etp=1)
    tok = 4096 * 4096 * 2
    nic = link(H100, False, 1)
    s = ep_all_to_all_s(_context(lay, EpDispatcher.DEEPEP), 8 * tok, tok)
    hits = remote_nodes_per_token(128, 8, 4)  # 2.72 of the 3 other nodes
    assert s == pytest.approx(3 * nic.latency_s + float(tok * hits) / nic.bus_bytes_per_s)
    assert s < ep_all_to_all_s(_context(lay, EpDispatcher.ALLTOALL), 8 * tok, tok) / 2


def test_the_dispatcher_reaches_the_step_and_only_across_nodes():
    hw, w = H100, Workload()
    cross = Layout(tp=2, pp=8, dp=16, ep=32, etp=1, sp=True)
    opts = StepOptions()
    a = train_step_time(QWEN, cross, 2048, 4096, hw, w, opts)
    deepep = replace(opts, ep_dispatcher=EpDispatcher.DEEPEP)
    b = train_step_time(QWEN, cross, 2048, 4096, hw, w, deepep)
    assert b.exposed_comm_s["ep"] < a.exposed_comm_s["ep"]
    assert b.step_s < a.step_s
    inside = Layout(tp=4, pp=8, dp=8, ep=8, etp=1, sp=True)
    c = train_step_time(QWEN, inside, 2048, 4096, hw, w, opts)
    d = train_step_time(QWEN, inside, 2048, 4096, hw, w, deepep)
    assert c.step_s == d.step_s


def test_train_cli_takes_the_dispatcher_and_megatron_modules():
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    base = ["train", "-m", "qwen3-235b-a22b", "--gpus", "256", "--tp", "2", "--pp", "8",
            "--ep", "32", "--etp", "1", "--sp", "--batch", "2048", "--json"]  # fmt: skip
    runner = CliRunner()

    def ep_s(*extra: str) -> float:
        out = runner.invoke(app, [*base, *extra])
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)["step_time"]["exposed_communication_s"]["ep"]

    assert ep_s("--ep-dispatcher", "deepep") < ep_s()
    mods = ["--ckpt", "selective", "--selective", "modules"]
    out = runner.invoke(app, [*base, *mods, "--recompute-modules", "layernorm,moe"])
    assert out.exit_code == 0, out.output
    for bad in (["--ep-dispatcher", "nccl"], [*mods, "--recompute-modules", "foo"]):
        res = runner.invoke(app, [*base, *bad])
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert res.output.startswith("error: ")


def test_allgather_gathers_the_expert_tp_by_ep_group_and_reduce_scatters_back():
    # Megatron-core MoEAllGatherTokenDispatcher (token_dispatcher.py @d98e8a64dd): hidden states,
    # routing map (bool) and dense probs [tokens, E] all-gathered over tp_ep_group, the outputs
    # reduce-scattered in the probs' dtype (fp32 router: 4 B; fp64: 8 B)
    from rlmcost.perf.ep_dispatch import allgather_comm_s
    from rlmcost.perf.moe_ffn import ep_comm_s

    lay = Layout(tp=1, dp=32, ep=32, etp=1)
    c = _context(lay, EpDispatcher.ALLGATHER)
    rows, d, e = c.tokens, int(QWEN.d_model), int(QWEN.n_experts)
    tok = rows * d * 2  # bf16 hidden states
    gathered = 32 * (tok + rows * e * (1 + 4))
    want = c.comm(Collective.ALL_GATHER, gathered, 32, ("etp", "ep")) + c.comm(
        Collective.REDUCE_SCATTER, 32 * rows * d * 4, 32, ("etp", "ep"))
    assert allgather_comm_s(c, tok, 4) == pytest.approx(want)
    assert ep_comm_s(c) == pytest.approx(want)
    # an fp64 router doubles the reduce-scatter's bytes and the gathered probabilities'
    c64 = replace(c, options=replace(c.options, router_fp64=True))
    assert ep_comm_s(c64) > ep_comm_s(c)
    # the volume ignores routing: the busiest rank gathers what every rank does
    skew = replace(c, options=replace(c.options, moe_rank_imbalance=1.5))
    assert ep_comm_s(skew) == ep_comm_s(c)
    # every rank receives all 32 ranks' tokens: more than the all-to-all's k / E share
    assert ep_comm_s(c) > ep_comm_s(_context(lay, EpDispatcher.ALLTOALL))


def test_allgather_reaches_the_step():
    hw, w = H100, Workload()
    lay = Layout(tp=2, pp=8, dp=16, ep=32, etp=1, sp=True)
    a = train_step_time(QWEN, lay, 2048, 4096, hw, w, StepOptions())
    g = train_step_time(QWEN, lay, 2048, 4096, hw, w,
                        StepOptions(ep_dispatcher=EpDispatcher.ALLGATHER))
    assert g.exposed_comm_s["ep"] != a.exposed_comm_s["ep"]
