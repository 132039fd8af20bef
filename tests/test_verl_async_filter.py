"""verl's DAPO dynamic sampling (``algorithm.filter_groups``) under the fully-async trainer
(issue 18: does the fully-async trainer drop zero-variance groups?).

Source, volcengine/verl 85d5b2ee2 (the commit that added the doc's experiment tables,
docs/advance/fully_async.md) and b178a3c: ``filter_groups`` is read only by
recipe/dapo/dapo_ray_trainer.py ``fit`` (lines 111-264 at 85d5b2ee2: regenerate until
train_batch_size groups with differing rewards are kept). The fully-async trainer never reads
it: recipe/fully_async_policy/fully_async_trainer.py ``_get_samples_from_queue`` (lines 125-182)
takes ``required_samples`` = ppo_mini_batch_size x require_batches samples and
detach_utils.py ``assemble_batch_from_rollout_samples`` (225-308) concatenates every one;
ray_trainer.py ``_process_batch_common`` (339-440) runs compute_advantage and update_actor on
that whole batch. So a fully-async record that sets filter_groups maps to the same query as
one that does not, while the colocated (DAPO-recipe) import prices the extra rounds.
"""

from __future__ import annotations

from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe

RECORDS = {r["id"]: r for r in load_runs()["runs"]}
DOC = "verl-fully-async-doc-qwen2.5-math-7b-dapo-"
# the keys dapo_30b_a3b_base_math_fsdp.sh (verl/experimental/fully_async_policy/shell at
# b178a3c, lines 48-50) defines: enable_filter_groups=True, metric acc, max_num_gen_batches 10
FILTER = {"algorithm.filter_groups.enable": True, "algorithm.filter_groups.metric": "acc",
          "algorithm.filter_groups.max_num_gen_batches": 10}  # fmt: skip


def _with_filter(row_id: str) -> dict:
    record = dict(RECORDS[row_id])
    record["framework_settings"] = {**record["framework_settings"], **FILTER}
    return record


def test_fully_async_trainer_ignores_filter_groups() -> None:
    plain = recipe(RECORDS[f"{DOC}fully-async-32-32"])
    filtered = recipe(_with_filter(f"{DOC}fully-async-32-32"))
    assert plain.query is not None and filtered.query is not None
    # the same trained batch and no extra generation rounds: the query is unchanged
    assert filtered.query.command() == plain.query.command()
    assert "--oversample" not in dict(filtered.query.flags)
    said = [c for c in filtered.choices if c.startswith("algorithm.filter_groups.enable")]
    assert said and "_get_samples_from_queue" in said[0] and "85d5b2ee2" in said[0]
    assert not any(c.startswith("algorithm.filter_groups") for c in plain.choices)


def test_colocated_dapo_import_prices_the_rounds() -> None:
    # control: the colocated (hybrid-engine) import reads filter_groups as the DAPO recipe
    # runs it (rlmcost/frameworks/verl_batches.py dynamic_sampling): dapo with --oversample
    filtered = recipe(_with_filter(f"{DOC}colocate-sync-32gpu"))
    assert filtered.query is not None
    assert filtered.query.algorithm == "dapo"
    assert "--oversample" in dict(filtered.query.flags)
