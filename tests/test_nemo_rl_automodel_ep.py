"""NeMo RL's DTensor v2 worker with NeMo Automodel's expert parallelism
(rlmcost.frameworks.nemo_rl_automodel).

Sources: NeMo RL ``nemo_rl/models/automodel/setup.py`` @7ea279abf (``setup_distributed``,
``expert_parallel_size``, ``dp_replicate_size``), ``lm_policy.py`` (HSDP refused on v1);
NeMo Automodel @24b47e85 (NeMo RL's pin): ``components/distributed/device_mesh.py`` (the
``(ep_shard, ep)`` MoE mesh), ``components/moe/parallelizer.py`` (``apply_ep`` shards the
expert dim over EP; ``n_routed_experts % ep`` asserted), ``_transformers/capabilities.py``
(EP refused on a class that is not an ``MoEFSDPSyncMixin``), ``components/models/common/
utils.py`` ``BackendConfig`` (dispatcher, deprecated ``enable_deepep``). The stored recipe is
NeMo RL's grpo-qwen3.5-35ba3b-2n8g-automodel-ep16.yaml at 7ea279abf.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.nemo_rl_automodel import DISPATCH_NOTES, UNSET_NOTE, V1_NOTE
from rlmcost.parallel.breakdown import stage_params
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.shard import stages
from rlmcost.specs import get_model

DATA = Path(__file__).parent / "data" / "frameworks"
EP16 = DATA / "nemo_rl_qwen3.5-35ba3b-automodel-ep16.yaml"
MATH = DATA / "nemo_rl_grpo_math.yaml"  # qwen2.5-7b, one node of 8
C = "policy.dtensor_cfg"
B = f"{C}.automodel_kwargs.backend"


def _import(path: Path, *overrides: str):
    q = import_nemo_rl(path, list(overrides), 2048 if path == EP16 else 200)
    return q, dict(q.flags)


def _args(q) -> list[str]:
    out = [q.algorithm]
    for k, v in q.flags:
        out += [k] if v is None else [k, str(v)]
    return out


def test_the_ep16_recipe_imports_as_expert_parallelism_with_deepep() -> None:
    q, flags = _import(EP16)
    assert flags["--ep"] == 16 and flags["--zero"] == "3" and flags["--gpus"] == 16
    assert flags["--ep-dispatcher"] == "deepep"  # backend.dispatcher: deepep
    assert DISPATCH_NOTES["deepep"] in q.notes
    assert any("16 of 256 experts whole on each rank" in n for n in q.notes)
    assert f"{C}.expert_parallel_size" not in q.ignored
    assert f"{B}.dispatcher" not in q.ignored and f"{B}.experts" not in q.ignored


def test_a_rank_holds_one_sixteenth_of_the_experts() -> None:
    """Qwen/Qwen3.5-35B-A3B's config.json: 40 layers, all MoE, hidden 2048, 256 routed
    experts of intermediate 512 (gate, up, down: 3 x 2048 x 512 each). Under EP 16 a rank
    holds 256 / 16 = 16 whole experts per layer (Automodel's apply_ep, Shard(0) over the
    expert dim), ep_shard 1: 40 x 16 x 3 x 2048 x 512 parameters."""
    _, flags = _import(EP16)
    arch = get_model(flags["--model"]).arch()
    lay = Layout(dp=16, ep=flags["--ep"], zero=ZeroStage.OS_G_P)
    (stage,) = stages(arch, lay)
    held = stage_params(arch, lay, stage).expert
    assert held == 40 * 16 * 3 * 2048 * 512 == 2_013_265_920
    assert held * 16 == 40 * 256 * 3 * 2048 * 512  # 1/16 of every routed expert
    # fp32 master weights (the v2 worker loads in float32): 4 B per parameter
    assert held * 4 == 8_053_063_680


def test_the_ep16_recipe_evaluates_and_ep_changes_the_update() -> None:
    q, _ = _import(EP16)

    def run(dispatcher: str) -> dict:
        args = [dispatcher if a == "deepep" else a for a in _args(q)]
        res = CliRunner().invoke(app, [*args, "--json"])
        assert res.exit_code == 0, res.output
        return {p["name"]: p["time_s"] for p in json.loads(res.stdout)["phases"]}

    ep, alltoall = run("deepep"), run("alltoall")
    # EP 16 over two nodes: DeepEP sends a token over the NIC once per remote node, the
    # all-to-all once per expert copy there (rlmcost.perf.ep_dispatch): the dispatcher counts
    assert ep["update actor"] < alltoall["update actor"]


def test_the_dispatcher_as_backendconfig_resolves_it() -> None:
    q, flags = _import(EP16, f"{B}.dispatcher=torch")
    assert flags["--ep-dispatcher"] == "allgather" and DISPATCH_NOTES["torch"] in q.notes
    _, flags = _import(EP16, f"{B}.dispatcher=hybridep")
    assert flags["--ep-dispatcher"] == "deepep"
    # the deprecated enable_deepep wins over dispatcher (utils.py __post_init__)
    _, flags = _import(EP16, f"{B}.dispatcher=torch", f"+{B}.enable_deepep=true")
    assert flags["--ep-dispatcher"] == "deepep"
    _, flags = _import(EP16, f"+{B}.enable_deepep=false")
    assert flags["--ep-dispatcher"] == "allgather"
    q, flags = _import(EP16, f"~{B}.dispatcher")  # unset: DeepEP, installed by NeMo RL
    assert flags["--ep-dispatcher"] == "deepep" and UNSET_NOTE in q.notes
    with pytest.raises(SpecError, match="uccl_ep"):
        _import(EP16, f"{B}.dispatcher=uccl_ep")


def test_what_automodel_refuses_is_refused() -> None:
    with pytest.raises(SpecError, match="routed experts"):  # 256 % 24 (parallelizer.py)
        _import(EP16, f"{C}.expert_parallel_size=24", "cluster.num_nodes=3")
    with pytest.raises(SpecError, match="does not divide the 16 GPUs"):  # device_mesh.py
        _import(EP16, f"{C}.expert_parallel_size=32")
    with pytest.raises(SpecError, match="refuses tensor parallelism"):  # moe/parallelizer.py
        _import(EP16, f"{C}.tensor_parallel_size=2")


def test_a_transformers_class_with_ep_is_refused_as_automodel_does() -> None:
    # Qwen2: NeMo RL forces the transformers class (_maybe_set_force_hf); Automodel's
    # validate_for_mesh raises for EP on a class that is not an MoEFSDPSyncMixin
    with pytest.raises(SpecError, match="MoEFSDPSyncMixin"):
        _import(MATH, f"+{C}._v2=true", f"+{C}.expert_parallel_size=8")
    with pytest.raises(SpecError, match="MoEFSDPSyncMixin"):  # force_hf on an MoE model
        _import(EP16, f"+{C}.automodel_kwargs.force_hf=true")


def test_the_v1_worker_ignores_ep_and_refuses_hsdp() -> None:
    q, flags = _import(MATH, "policy.model_name=qwen3-30b-a3b", f"+{C}.expert_parallel_size=8")
    assert "--ep" not in flags and V1_NOTE.format(ep=8) in q.notes
    with pytest.raises(SpecError, match="HSDP is not supported"):  # lm_policy.py
        _import(MATH, f"+{C}.dp_replicate_size=2")


def test_hsdp_shards_within_the_replicas() -> None:
    q, flags = _import(MATH, f"+{C}._v2=true", f"+{C}.dp_replicate_size=2")
    assert flags["--zero-shard"] == 4  # 8 GPUs / 2 replicas: dp_shard 4 (device_mesh.py)
    q, flags = _import(EP16, f"+{C}.dp_replicate_size=2", f"{C}.expert_parallel_size=8")
    assert flags["--zero-shard"] == 8 and flags["--ep"] == 8
    assert any("replicates their shards 2 times" in n for n in q.notes)
    with pytest.raises(SpecError, match="not a multiple"):  # 16 / 16 = 1 % 2 (setup.py)
        _import(EP16, f"+{C}.dp_replicate_size=2")
