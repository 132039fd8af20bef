"""verl's DAPO dynamic sampling (``algorithm.filter_groups``) and ``data.gen_batch_size`` as
`rlmcost import verl` reads them.

Independent reference: verl's docs/algo/dapo.md "Dynamic Sampling (with Group Filtering)"
example (gen_batch_size 1536, train_batch_size 512, filter_groups.enable True, metric acc,
max_num_gen_batches 10) and recipe/dapo/dapo_ray_trainer.py ``fit`` at volcengine/verl
b25bb7d4f: rounds of gen_batch_size prompts x n until train_batch_size groups are kept, then
those train; ray_trainer.py ``_create_dataloader``: the dataloader's batch is gen_batch_size.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.verl import import_verl

VERL = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
DAPO_DOC = ["algorithm.filter_groups.enable=true", "algorithm.filter_groups.metric=acc",
            "algorithm.filter_groups.max_num_gen_batches=10", "+data.gen_batch_size=1536",
            "data.train_batch_size=512", "actor_rollout_ref.actor.use_kl_loss=false"]  # fmt: skip


def _flags(q) -> dict:  # noqa: ANN001
    return {c.flag: c.value for c in q.conversions} | dict(q.flags)


def test_filter_groups_is_dapo_with_one_round_of_the_gen_batch():
    q = import_verl(VERL, DAPO_DOC)
    f = _flags(q)
    assert q.algorithm == "dapo"
    # docs/algo/dapo.md: 512 prompts trained from rounds of 1536: one round is 3x oversampling
    assert f["--oversample"] == Fraction(3)
    assert f["--batch"] == 512
    assert f["--mini-batches"] == 2  # 512 / ppo_mini_batch_size 256 (verl_grpo.yaml)
    assert "--kl" not in f and "--no-kl" not in f  # dapo has no reference to switch
    assert any("one round assumed" in n and "at most 10" in n for n in q.notes)
    assert not [k for k in q.ignored if "filter_groups" in k or "gen_batch_size" in k]


def test_a_round_is_one_call_per_replica():
    f = _flags(import_verl(VERL, DAPO_DOC))
    # verl_grpo.yaml: 8 GPUs, vLLM TP 2 -> 4 replicas; 1536 prompts x n 5 per round
    assert f["--sequences-per-call"] == 1536 * 5 // 4


def _generation_s(args: list[str]) -> float:
    est = evaluate_deployment(run_from_argv("dapo", args))
    return next(j.predicted_s for g in est.groups for j in g.jobs if j.task.kind == "generate")


def _with(args: list[str], flag: str, value: str | None) -> list[str]:
    out = list(args)
    i = out.index(flag)
    del out[i:i + 2]
    return out + ([flag, value] if value is not None else [])


def test_rounds_decode_one_after_another():
    """Two rounds (--oversample 6) as two calls wait for each other's longest response; the
    same sequences handed over at once overlap their tails. One round is one call either
    way."""
    q = import_verl(VERL, [*DAPO_DOC, "data.max_response_length=8192"])
    args = [*q.argv(), "--length-dist", "lognormal:1000,0.67,8192"]  # a long tail
    two = _with(args, "--oversample", "6")
    # vLLM's per-sequence host time, the same in both, dilutes the tail's share (+6 % here)
    assert _generation_s(two) > 1.04 * _generation_s(_with(two, "--sequences-per-call", None))
    one = _with(args, "--oversample", "3")
    assert _generation_s(one) == pytest.approx(
        _generation_s(_with(one, "--sequences-per-call", None)))


def test_more_rounds_generate_more():
    """The query runs as rlmcost dapo; k rounds (--oversample k x 3) generate k times the
    sequences of one, and the iteration takes longer."""
    q = import_verl(VERL, DAPO_DOC)

    def generated(oversample: str) -> tuple[int, float]:
        args = list(q.argv())
        i = args.index("--oversample")
        args[i + 1] = oversample
        est = evaluate_deployment(run_from_argv("dapo", args))
        gen = next(j for g in est.groups for j in g.jobs if j.task.kind == "generate")
        return gen.sequences, est.iteration_time_s

    (n1, t1), (n2, t2) = generated("3"), generated("6")
    assert n1 == 3 * 512 * 5  # rho x B x K, K = rollout.n 5 of verl_grpo.yaml
    assert n2 == 2 * n1
    assert t2 > t1


def test_gen_batch_without_filtering_is_the_steps_batch():
    q = import_verl(VERL, ["+data.gen_batch_size=512", "data.train_batch_size=1024"])
    f = _flags(q)
    assert q.algorithm == "rlvr"
    assert f["--batch"] == 512  # the dataloader yields gen_batch_size prompts, all trained
    assert f["--mini-batches"] == 2
    assert any("without filter_groups" in n for n in q.notes)


def test_kl_with_filter_groups_is_said():
    q = import_verl(VERL, [*DAPO_DOC[:-1], "actor_rollout_ref.actor.use_kl_loss=true"])
    assert q.algorithm == "dapo"
    assert any("KL with filter_groups" in n for n in q.notes)


def test_filter_groups_on_ppo_is_refused_in_one_line():
    with pytest.raises(SpecError, match="filter_groups"):
        import_verl(VERL, [*DAPO_DOC, "algorithm.adv_estimator=gae"])
    result = CliRunner().invoke(app, ["import", "verl", str(VERL), *DAPO_DOC,
                                      "algorithm.adv_estimator=gae"])  # fmt: skip
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "filter_groups" in result.output


def test_import_json_carries_the_oversampling():
    result = CliRunner().invoke(app, ["import", "verl", str(VERL), *DAPO_DOC, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "--oversample" in json.dumps(data)


# -- the log-prob forwards' batching (verl_batches.forward_batching) ------------------------
# verl/workers/fsdp_workers.py compute_log_prob (b25bb7d4f) batches the old-log-prob forward by
# rollout.log_prob_max_token_len_per_gpu (use_dynamic_bsz) or log_prob_micro_batch_size_per_gpu


def test_log_prob_token_budget_is_the_forwards():
    f = _flags(import_verl(VERL, [
        "actor_rollout_ref.actor.use_dynamic_bsz=true",
        "+actor_rollout_ref.actor.ppo_max_token_len_per_gpu=61440",
        "+actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=92160",
    ]))  # the fully-async doc's 7B scripts: (2048 + 28672) x 2 and x 3
    assert f["--max-tokens-per-gpu"] == 61440
    assert f["--forward-max-tokens-per-gpu"] == 92160


def test_log_prob_micro_batch_only_when_it_differs():
    assert "--forward-micro-batch" not in _flags(import_verl(VERL))  # 40 = the trainer's 40
    q = import_verl(VERL, ["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=80"])
    assert _flags(q)["--forward-micro-batch"] == 80
    assert any("ref.log_prob_micro_batch_size_per_gpu 40" in n for n in q.notes)
