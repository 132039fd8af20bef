"""verl's between-phases parameter offload through pageable host memory (issue 18;
rlmcost.placement.group_offload ``pageable_offload_s``, ``Behaviour.param_offload_pageable``).

Sources (volcengine/verl 85d5b2ee2, alike at b25bb7d4f and b178a3cd5):
verl/utils/fsdp_utils.py ``offload_fsdp2_model_to_cpu`` (``model.cpu()``) and
``load_fsdp2_model_to_gpu`` (``model.to(device)``): blocking copies into and out of pageable
memory, both ways; verl/utils/megatron_utils.py ``offload_megatron_model_to_cpu``
(``param_data.data.cpu().pin_memory()``: a blocking copy into pageable memory on the way out)
and ``load_megatron_model_to_gpu`` (``copy_`` from that pinned copy, non_blocking: the link's
rate); verl/workers/fsdp_workers.py and megatron_workers.py load and offload around
rollout_mode, compute_log_prob and update_actor (three phases per colocated step). The rate is
NeMo RL PR 1404's pageable round trip (rlmcost.perf.host_offload).
"""

from __future__ import annotations

import pytest

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.host_offload import PAGEABLE_OFFLOAD_BYTES_PER_S
from rlmcost.specs import get_hardware

_COMMON = ["--framework", "verl", "--no-kl", "--batch", "64", "--group", "8",
           "--prompt-len", "200", "--response-len", "2048", "--hardware", "h100-sxm",
           "--gpus", "16", "--rollout-tp", "2", "--sleep"]  # fmt: skip
_FSDP = ["--model", "qwen2.5-7b", "--zero", "3", "--offload", "params-idle"]
_MEGATRON = ["--model", "qwen3-30b-a3b", "--ep", "8", "--zero", "1", "--param-dtype", "bf16",
             "--offload", "params-idle,grads-idle"]  # fmt: skip


def _train_job(argv: list[str]):
    est = evaluate_deployment(run_from_argv("rlvr", [*_COMMON, *argv]))
    (job,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind is Kind.TRAIN]
    return est, job


def _extra_s(nbytes: int) -> float:
    """Pageable seconds beyond the link time the offload already counts."""
    link = get_hardware("h100-sxm").host_link_bandwidth_bytes_per_s
    return nbytes / PAGEABLE_OFFLOAD_BYTES_PER_S.value - nbytes / link


def test_verls_behaviour_names_the_pageable_directions():
    """FSDP2 both ways (model.cpu() / model.to(device)), Megatron the way out only."""
    verl = behaviour("verl")
    assert verl is not None
    assert verl.param_offload_pageable == 2 and verl.megatron_param_offload_pageable == 1


def _forward_trip(est):
    (t,) = [t for g in est.groups for t in g.transfers
            if t.what == "actor parameters to the GPU and back around its forward"]  # fmt: skip
    return t


def test_fsdp_parameters_go_both_ways_pageable_once_per_phase():
    """A colocated verl FSDP2 step loads and offloads the actor's parameter shard around its
    weight sync, old log-prob forward and update: 3 phases x 2 pageable directions. The
    forward's round trip is timed in its own phase (compute_log_prob loads and offloads inside
    marked_timer('old_log_prob')); the update carries the other two."""
    est, job = _train_job(_FSDP)
    weights = int(job.own.weights)
    assert weights > 0
    assert job.predicted_parts_s["pageable_offload_s"] == pytest.approx(_extra_s(4 * weights))
    link = get_hardware("h100-sxm").host_link_bandwidth_bytes_per_s
    trip = _forward_trip(est)
    assert (trip.phase, trip.bytes_per_device) == ("old log-prob", 2 * weights)
    assert trip.predicted == pytest.approx(2 * weights / link + _extra_s(2 * weights))
    phases = {p.name: p.time_s for p in est.phases}
    (fwd,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind is Kind.FORWARD]
    calls = sum(t.predicted for g in est.groups for t in g.transfers
                if t.kind == "controller" and t.phase == "old log-prob")  # fmt: skip
    assert phases["old log-prob"] == pytest.approx(fwd.predicted_s + calls + trip.predicted)


def test_megatron_parameters_go_pageable_one_way():
    """verl's Megatron backend (a layout with ep > 1) copies the shard out through pageable
    memory and back from a pinned copy: 3 phases x 1 direction; its gradient buffers are
    freed, not copied, so the link time of the offload holds the parameters only."""
    est, job = _train_job(_MEGATRON)
    weights = int(job.own.weights)
    assert job.predicted_parts_s["pageable_offload_s"] == pytest.approx(_extra_s(2 * weights))
    link = get_hardware("h100-sxm").host_link_bandwidth_bytes_per_s
    assert job.predicted_parts_s["offload_s"] == pytest.approx(2 * 2 * weights / link)
    trip = _forward_trip(est)  # megatron_workers.py compute_log_prob: the same load/offload
    assert trip.predicted == pytest.approx(2 * weights / link + _extra_s(weights))
    assert any("parameter offload as verl runs it" in n for n in est.notes)


def test_no_parameter_offload_no_term():
    """Without params-idle the term is zero, and no forward carries a round trip."""
    est, job = _train_job(["--model", "qwen2.5-7b", "--zero", "3", "--offload", ""])
    assert job.predicted_parts_s["pageable_offload_s"] == 0.0
    assert not any("around its forward" in t.what for g in est.groups for t in g.transfers)


def test_the_7b_colocated_rows_offload_as_their_launch_scripts_do():
    """The fully-async doc's colocated 7B runs were launched by
    recipe/fully_async_policy/exp/qwen2-7B-math_{32,64,128}/fsdp2_colocate/run.sh (volcengine/
    verl PR 2981's history, commit 1fc52bb50): offload=True sets the actor's param_offload and
    optimizer_offload, fsdp_size=2. The rows carry those settings, the importer turns them into
    the between-phases offload and the 2-way hybrid shard (--zero-shard 2)."""
    from rlmcost.reports.rl_runs import recipes

    chosen = [c for c in recipes("verl_fully_async_doc")
              if "qwen2.5-math-7b-dapo-colocate-sync" in c.record["id"]]  # fmt: skip
    assert len(chosen) == 3
    for c in chosen:
        r = c.record
        fsdp = {k.rsplit(".", 1)[1]: v for k, v in r["framework_settings"].items()
                if k.startswith("actor_rollout_ref.actor.fsdp_config.")}  # fmt: skip
        assert (fsdp["param_offload"], fsdp["optimizer_offload"], fsdp["fsdp_size"]) == \
            (True, True, 2)  # fmt: skip
        notes = " ".join(r["assumptions"])
        assert "1fc52bb50" in notes and f"qwen2-7B-math_{r['gpus']}/fsdp2_colocate" in notes
        assert "15.2 GB" in notes and "--zero-shard 2" in notes  # the hybrid shard, modelled
        assert "Not modelled: fsdp_size" not in notes
        assert c.query is not None
        argv = " ".join(c.query.argv())
        assert argv.count("--offload params-idle,optimizer-idle") == 1
        assert argv.count("--zero-shard 2") == 1  # through the importer (fsdp_workers.py)
