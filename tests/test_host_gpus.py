"""A host is not always a node: a GB200 NVL72 'node' (its NVLink domain) is a 72-GPU rack of
18 compute trays, each a host of 4 GPUs with its own CPUs, memory and four NICs (NVIDIA DGX
GB200 user guide; NeMo RL's GB200 recipes set cluster.gpus_per_node=4). Refit lanes, CPU Adam
and init-time host copies count hosts, not racks.

Independent reference: NeMo RL v0.6 performance summary (docs/about/performance-summary.md),
DeepSeek-V3 GRPO 1-step off-policy on 256 GB200, 61.7 s per step (the rl_runs.json row).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlmcost import memo
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.packed_refit import packed_refit_s
from rlmcost.perf.refit import Refit
from rlmcost.placement import weight_syncs
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe
from rlmcost.specs.hardware import HardwareSpec
from rlmcost.specs.registry import get_hardware

ROW = "nemo-rl-v0.6-gb200-deepseek-v3-grpo-1off-256gpu"


def test_a_gb200_host_is_a_four_gpu_tray_and_other_hosts_are_nodes():
    gb200, h100 = get_hardware("gb200"), get_hardware("h100-sxm")
    assert (gb200.gpus_per_node, gb200.host_gpus) == (72, 4)
    assert gb200.gpus_per_host_source and "ConnectX-7" in gb200.gpus_per_host_source
    assert h100.host_gpus == h100.gpus_per_node == 8


def _weight_sync_s() -> float:
    r = recipe({x["id"]: x for x in load_runs()["runs"]}[ROW])
    assert r.query is not None
    with memo.plain():
        e = evaluate_deployment(run_from_argv(r.query.algorithm, list(r.argv)))
    return next(p.time_s for p in e.phases if p.name == "weight sync")


def test_refit_across_racks_runs_one_stream_per_host(monkeypatch: pytest.MonkeyPatch):
    """Under a rank-0 NCCL refit split by sending host (Refit.NCCL: OpenRLHF, slime), 128
    trainer GPUs send DeepSeek-V3's 1,342 GB (bf16) to 128 engine GPUs as 32 concurrent host
    pairs. Counting the rack as one host leaves 2 streams, 16x the time (the step it gave on
    this row, 473 s, was 7.7x the published 61.7 s)."""
    nemo = behaviour("nemo-rl")
    assert nemo is not None
    generic = replace(nemo, apart=Refit.NCCL)
    monkeypatch.setattr(weight_syncs, "behaviour", lambda framework: generic)
    per_host = _weight_sync_s()
    monkeypatch.setattr(HardwareSpec, "host_gpus", property(lambda self: self.gpus_per_node))
    per_rack = _weight_sync_s()
    assert per_rack > 10 * per_host


def test_nemo_rl_packed_refit_does_not_count_hosts(monkeypatch: pytest.MonkeyPatch):
    """NeMo RL's own refit pipelines the whole model through one NCCL group from trainer rank
    0 (nemo_rl/utils/packed_tensor.py): hosts or racks, the same seconds, packed_refit_s of
    the bf16 model (671e9 parameters x 2 B)."""
    per_host = _weight_sync_s()
    monkeypatch.setattr(HardwareSpec, "host_gpus", property(lambda self: self.gpus_per_node))
    assert _weight_sync_s() == pytest.approx(per_host, rel=1e-9)
    assert per_host == pytest.approx(packed_refit_s(671 * 10**9 * 2), rel=0.02)
