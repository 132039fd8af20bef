"""A device group's own layouts read by the fields they give (``deployment.given``): the
places that took a group's raw layout (its defaults for the fields it does not give) where
the layout over the run's is meant, and the kept values that must tell apart two layouts of
equal values that give different fields."""

from __future__ import annotations

from typing import Any

from group_runs import grpo_on_groups

from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.run import Run

DENSE = "llama-3.2-1b"


def _packed(own_forward: dict[str, Any] | None) -> Run:
    """NeMo RL GRPO on a rollout and an actor+reference group, packed forwards of micro-batch
    4 run-wide; ``own_forward``: the actor group's own forward layout (None: none)."""
    actor: dict[str, Any] = {"members": "actor+reference", "gpus": 8}
    if own_forward is not None:
        actor["forward"] = own_forward
    return grpo_on_groups(DENSE, {
        "framework": "nemo-rl", "train": {"packing": True, "micro_batch": 2},
        "forward": {"packing": True, "micro_batch": 4},
        "groups": [{"members": "rollout", "gpus": 8}, actor]})  # fmt: skip


def _forwards(run: Run) -> list[tuple[int, float, int]]:
    """Micro-batch, predicted seconds and bytes per device of each forward of the actor group."""
    e = evaluate_deployment(run)
    g = next(g for g in e.groups if g.name.startswith("actor"))
    return [(j.layout.micro_batch, j.predicted_s, j.memory.total) for j in g.jobs
            if str(j.task.kind) == "forward"]  # fmt: skip


def test_a_groups_forward_layout_not_giving_a_micro_batch_keeps_the_runs() -> None:
    # placement.group_train.group_forward took the group's forward micro_batch whenever it had a
    # forward layout: forward: {tp: 1} (the run's value) packed 1 x seq tokens, not 4 x seq
    run_wide = _forwards(_packed(None))
    assert {mb for mb, _, _ in run_wide} == {4}
    assert _forwards(_packed({"tp": 1})) == run_wide
    assert _forwards(_packed({"tp": 1, "micro_batch": 4})) == run_wide
    assert {mb for mb, _, _ in _forwards(_packed({"micro_batch": 1}))} == {1}


def _budget_limit(groups_train: dict[str, Any] | None) -> int:
    """The token-budget limit on prompt + response (``evaluation.advice._limits``) of verl GRPO
    on Llama-3.1-8B, CP 2 and a 16,000-token budget run-wide, the actor group's own trainer
    layout ``groups_train`` (None: none)."""
    from types import SimpleNamespace

    from rlmcost.evaluation.advice import _limits

    actor: dict[str, Any] = {"members": "actor", "gpus": 8}
    if groups_train is not None:
        actor["train"] = groups_train
    run = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
                         "deployment": {"framework": "verl",
                                        "train": {"cp": 2, "max_tokens_per_gpu": 16000},
                                        "groups": [{"members": "rollout", "gpus": 8}, actor]}})
    estimate = SimpleNamespace(evaluation=None, model="8b", deployment=run.deployment)
    return _limits(estimate)["token budget"]


def test_the_token_budget_limit_reads_a_groups_layout_over_the_runs() -> None:
    # verl refuses a sequence of more than budget tokens per CP rank
    # (verl/utils/seqlen_balancing.py: assert max_token_len >= max_seq_len): 16,000 x CP 2;
    # a group's train: {padded: true} keeps the run's CP 2 (deployment.given.layered), where
    # the raw layout's CP 1 (its default) halved the limit
    assert _budget_limit(None) == 32_000
    assert _budget_limit({"padded": True}) == 32_000
    # a group's own smaller budget is the one its jobs are refused against
    assert _budget_limit({"max_tokens_per_gpu": 8000}) == 16_000
    assert _budget_limit({"cp": 1}) == 16_000


def _forward_beside(forward: dict[str, Any]) -> Any:
    """A deployment whose trainer runs ``pp_overlap_p2p: false``, its actor group's own trainer
    layout giving ``tp`` alone and its own forward layout ``forward``."""
    from rlmcost.deployment.spec import Deployment

    return Deployment.model_validate({"train": {"pp_overlap_p2p": False}, "groups": [
        {"members": "actor", "gpus": 8, "train": {"tp": 2}, "forward": forward}]})  # fmt: skip


def test_a_groups_forward_is_checked_against_its_trainer_over_the_runs() -> None:
    import pytest

    from rlmcost.placement.group_train import group_trainer

    # the group's trainer runs the run's pp_overlap_p2p (false; deployment.given.layered), so a
    # forward giving false is read, and one giving None (the raw layout's default) is not:
    # deployment.trainer_only._beside took the raw layout's value for the fields outside
    # PASS_FIELDS, refusing the first and accepting the second
    dep = _forward_beside({"pp_overlap_p2p": False})
    assert group_trainer(dep, "actor").pp_overlap_p2p is False
    with pytest.raises(ValueError, match=r"groups\[0\]\.forward\.pp_overlap_p2p = None is not"):
        _forward_beside({"pp_overlap_p2p": None})


def test_worker_notes_are_kept_with_the_fields_a_group_gives() -> None:
    from rlmcost import memo
    from rlmcost.evaluation.batch import evaluate_many

    # verl runs its Megatron trainer at TP 2, the Hugging Face model at TP 1
    # (pass_options.runs_hf_model); a group giving tp: 1 trains at TP 1, one giving nothing at
    # the run's TP 2: equal group values, so the worker notes kept per query on the groups'
    # values gave the second the first's Hugging Face note
    def run(own: dict[str, Any]) -> Run:
        return grpo_on_groups(DENSE, {"framework": "verl", "train": {"tp": 2}, "groups": [
            {"members": "rollout", "gpus": 8}, {"members": "actor", "gpus": 8, "train": own}]})

    runs = [run({"tp": 1}), run({})]
    assert runs[0].deployment.groups == runs[1].deployment.groups
    fast = [e.notes for e in evaluate_many(runs)]
    with memo.plain():
        plain = [evaluate_deployment(r).notes for r in runs]
    assert fast == plain
    hf = [any(n.startswith("verl's trainer runs the Hugging Face model") for n in notes)
          for notes in fast]  # fmt: skip
    assert hf == [True, False]


def test_a_bracket_over_a_file_groups_train_keeps_what_the_file_does_not_give() -> None:
    from rlmcost.deployment.given import layered
    from rlmcost.deployment.spec import GroupLayouts, TrainLayout
    from rlmcost.evaluation.query import groups_from_text

    # --deployment FILE --groups 'rollout=8,actor=8[padded]' over the file's actor group
    # giving train: {max_tokens_per_gpu: 4096}: the bracket adds padded (module
    # deployment.group_brackets: "adding padded changes its padding only, never its ZeRO
    # stage"); it gave every other field at TrainLayout's default (ZeRO 0, no recompute, no
    # param_dtype) over the run's ZeRO 3 and full recompute
    run_train = TrainLayout(zero="3", ckpt="full", param_dtype="fp32")
    before = (GroupLayouts(members="rollout", gpus=8),
              GroupLayouts.model_validate({"members": "actor", "gpus": 8,
                                           "train": {"max_tokens_per_gpu": 4096}}))  # fmt: skip
    train = groups_from_text("rollout=8,actor=8[padded]", run_train, before)[1].train
    assert train is not None
    assert train.model_fields_set == {"max_tokens_per_gpu", "padded"}
    merged = layered(train, run_train)
    assert (str(merged.zero), str(merged.ckpt), str(merged.param_dtype)) == ("3", "full", "fp32")
    assert (merged.max_tokens_per_gpu, merged.padded) == (4096, True)


def test_groups_over_a_file_find_its_group_by_its_members_in_any_order() -> None:
    from rlmcost.deployment.spec import GroupLayouts, TrainLayout
    from rlmcost.evaluation.query import groups_from_text

    # a file's group `reference+actor` is the flag's `actor+ref` (parse_groups: one group of
    # the same members); the flag found it by its spelling alone and dropped its own train
    before = (GroupLayouts(members="rollout", gpus=8),
              GroupLayouts.model_validate({"members": "reference+actor", "gpus": 8,
                                           "train": {"max_tokens_per_gpu": 4096}}))  # fmt: skip
    for text in ("rollout=8,actor+ref=8", "rollout=8,actor+reference=8[padded]"):
        train = groups_from_text(text, TrainLayout(), before)[1].train
        assert train is not None and train.max_tokens_per_gpu == 4096, text
    # another group's settings are not taken
    assert groups_from_text("rollout=8,actor=8", TrainLayout(), before)[1].train is None


def test_a_file_groups_train_giving_bracket_keys_is_written_as_its_brackets(tmp_path) -> None:  # noqa: ANN001
    import json
    import shlex

    from typer.testing import CliRunner

    from rlmcost.cli import app

    # a file group's train: {padded: true} trains and runs its forwards as [padded] does
    # (the run's fields under both, deployment.given.layered): Run.to_command writes it so,
    # where it refused it (the bracket gives the run's other fields too) and the command
    # reproduces the file's numbers
    run = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": DENSE},
                         "deployment": {"framework": "verl", "groups": [
                             {"members": "rollout", "gpus": 8},
                             {"members": "actor", "gpus": 8, "train": {"padded": True}}]}})
    line = run.to_command()
    assert "--groups 'rollout=8,actor=8[padded]'" in line
    out = CliRunner().invoke(app, [*shlex.split(line)[1:], "--json"])
    run.dump(tmp_path / "run.json")
    file = CliRunner().invoke(app, ["run", str(tmp_path / "run.json"), "--json"])
    assert out.exit_code == file.exit_code == 0, out.output + file.output
    times = [json.loads(o.stdout)["iteration"]["time_s"] for o in (out, file)]
    assert times[0] == times[1]
    # a file group giving what no bracket key says (its own offload) is still refused
    from rlmcost.errors import SpecError

    other = run.replace(deployment={"groups": [{"members": "rollout", "gpus": 8}, {
        "members": "actor", "gpus": 8, "train": {"padded": True, "offload": ["optimizer"]}}]})
    import pytest

    with pytest.raises(SpecError, match="not what --groups keys give"):
        other.to_command()
