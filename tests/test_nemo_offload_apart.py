"""NeMo RL moves the policy's states to the host between phases only around a colocated
engine's refit (nemo_rl/algorithms/grpo.py ``refit_policy_generation``: ``offload_before_refit``
/ ``offload_after_refit`` under ``colocated_inference``, NVIDIA-NeMo/RL @7ea279abf), so its
preset's ``--offload optimizer-idle,params-idle`` runs on the colocated deployment and not on a
trainer group whose GPUs hold no engine (``Behaviour.phase_offload_colocated``)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app

QUERY = ["grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "16", "--json"]


def _json(*flags: str) -> dict:
    res = CliRunner().invoke(app, [*QUERY, *flags])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _jobs(j: dict, group: str) -> dict:
    g = next(g for g in j["placement_detail"]["groups"] if g["name"] == group)
    return {job["phase"]: job for job in g["jobs"]}


def _adam(job: dict) -> int:
    return job["memory_breakdown_bytes"]["optimizer"]


def test_apart_trainer_keeps_its_states():
    r = _json("--framework", "nemo-rl", "--groups", "rollout=8,actor+reference=8")
    jobs = _jobs(r, "actor+reference")
    # no host round trip, and the Adam states stay on the GPU through the forwards
    assert all(job["predicted_breakdown_s"].get(k, 0.0) == 0.0 for job in jobs.values()
               for k in ("offload_s", "pageable_offload_s"))  # fmt: skip
    assert _adam(jobs["old log-prob"]) == _adam(jobs["update actor"]) > 0
    assert any("not run on actor+reference" in n for n in r["notes"])
    # and no note prices the pageable optimizer round trip the run leaves out
    assert not any(n.startswith("optimizer offload as") for n in r["notes"])


def test_colocated_policy_offloads_between_phases():
    r = _json("--framework", "nemo-rl")
    # the Adam states wait on the host through the forwards and come back for the update
    assert r["stages"]["assessment"]["memory_breakdown_bytes"]["optimizer"] == 0
    assert r["stages"]["training"]["memory_breakdown_bytes"]["optimizer"] > 0
    assert not any("not run on" in n for n in r["notes"])
    assert any(n.startswith("optimizer offload as nemo-rl runs it") for n in r["notes"])


def test_other_frameworks_keep_their_idle_offloads_apart():
    """verl offloads around every phase whatever the placement (verl/workers/fsdp_workers.py
    offload_fsdp_model_to_cpu / offload_fsdp_optimizer): the rule is NeMo RL's alone."""
    r = _json("--framework", "verl", "--groups", "rollout=8,actor=8",
              "--offload", "optimizer-idle,params-idle")  # fmt: skip
    jobs = _jobs(r, "actor")
    assert _adam(jobs["old log-prob"]) == 0 < _adam(jobs["update actor"])
    assert not any("not run on" in n for n in r["notes"])


def test_a_groups_own_offload_runs_and_the_note_does_not_deny_it():
    """A trainer group's bracket offload is run as given (GroupTasks.train_offload), so the
    note does not say the -idle offloads are not run there (it said so while the group's
    Adam states went to the host through the forwards)."""
    r = _json("--framework", "nemo-rl", "--groups",
              "rollout=8,actor+reference=8[offload=optimizer-idle]")  # fmt: skip
    jobs = _jobs(r, "actor+reference")
    assert _adam(jobs["old log-prob"]) == 0 < _adam(jobs["update actor"])
    assert not any("not run on" in n for n in r["notes"])
