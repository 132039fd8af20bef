"""The trainer layout fields that no evaluation of a plan's candidates reads, each searched at
one value (:func:`rlmcost.plan.rl_space.family_lists`): candidates that differ only in such a
field evaluate alike (the same time, memory, groups and layouts), so the plan would list each
deployment once per value.

The micro-batch (``--micro-batch``, ``TrainLayout.micro_batch``) is read by the evaluation
where a pass forms its micro-batches from it: a training or log-prob forward without a per-GPU
token budget (``TrainLayout.token_budget``; under NeMo RL's packing the budget is the
micro-batch times the sequence), generation in the trainer's own layout (HF generate, an
unpinned Hybrid Engine, a Megatron engine on the policy's weights:
``placement.inputs._replica``), and the rollout buffer's device copy, which reads the
micro-batch the task's layout holds after the budget
(``placement.group_batch.rollout_buffers_of``). Under a token budget on the training and the
forwards the evaluation replaces each training and forward task's micro-batch by what the
budget packs (``placement.group_own.GroupTasks._apply_token_budget``,
``placement.group_passes.packed_layout``), as the frameworks do (:data:`BUDGET_PACKS`); with an
engine that generates in its own layout nothing reads the run's value. The paper's idealized
iteration (``Deployment.ideal``) applies no budget and reads it. A row of such a base says
so: its ``micro_batch`` is None (the table's mb ``budget``); what each group's passes pack is
in its ``group_layouts``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

BUDGET_PACKS = {
    "slime": "slime/utils/dp_schedule.py _pack_step_into_mbs @624b824a: "
             "--use-dynamic-batch-size packs first-fit bins of --max-tokens-per-gpu x CP "
             "tokens, micro_batch_size is read on the static path alone",
    "verl": "verl/workers/actor/dp_actor.py compute_log_prob, update_policy @b178a3cd: "
            "use_dynamic_bsz splits by max_token_len (prepare_dynamic_batch), the "
            "micro-batch sizes are read otherwise alone",
}
"""Framework -> the file where a per-GPU token budget forms the micro-batches of training and
of the log-prob forwards and the configured micro-batch is not read (the frameworks whose
presets set a budget: slime's ``--max-tokens-per-gpu``, whose slime/utils/arguments.py says
of ``--micro-batch-size`` "will be ignored if `use_dynamic_batch_size` is set"; verl's
``use_dynamic_bsz``)."""

EVALUATION_RULE = ("rlmcost/placement/group_own.py GroupTasks._apply_token_budget: each "
                   "training and forward task's micro-batch is what the budget packs")
"""Where a framework without an entry in :data:`BUDGET_PACKS` (or none) runs under a token
budget: the evaluation's own rule, the one reason the field goes unread."""


def unread_fields(base: Run) -> dict[str, str]:
    """Trainer layout field -> why no candidate of ``base`` reads it (module docstring): the
    micro-batch where ``base`` trains and runs its forwards under a per-GPU token budget
    (``max_tokens_per_gpu``; packing's budget reads the micro-batch), outside the idealized
    iteration, with an engine that generates in its own layout. Empty where every field is
    read. The candidates change neither the budget, the forwards' layout, the engine's kind
    nor ``ideal`` (:func:`rlmcost.plan.rl_runs.candidate_sections`), so the base Run decides
    for all of them."""
    from rlmcost.deployment.kinds import EngineKind

    dep = base.deployment
    train, fwd = dep.train.max_tokens_per_gpu, dep.forward_layout().max_tokens_per_gpu
    kind = dep.engine.kind
    if dep.ideal or train is None or fwd is None or kind.in_trainer_layout \
            or kind is EngineKind.MEGATRON:  # fmt: skip
        return {}
    budget = f"--max-tokens-per-gpu {train}" + ("" if fwd == train else
                                                  f", the forwards' {fwd}")  # fmt: skip
    where = BUDGET_PACKS.get(dep.framework or "", EVALUATION_RULE)
    return {"micro_batch": f"{dep.framework or 'the run'}'s token budget ({budget}) forms "
                           f"every training and log-prob micro-batch ({where}) and its "
                           f"{kind} engine generates in a layout of its own"}


def unread_notes(parts: list[tuple[Run, RLSpace]]) -> list[str]:
    """The plan's note for each base Run of ``parts`` (a query's per-framework bases and
    spaces) whose searched list of an unread field had more than one value: which value was
    searched alone, and why (:func:`unread_fields`)."""
    out: list[str] = []
    for base, space in parts:
        for field, why in unread_fields(base).items():
            values = getattr(space, field)
            if len(values) < 2:
                continue
            flag = "--" + field.replace("_", "-")
            note = (f"{flag} {','.join(map(str, values))}: searched at {values[0]} alone, as "
                    f"no evaluation reads it: {why}; the rows at "
                    f"{','.join(map(str, values[1:]))} would repeat these (micro_batch null in "
                    "--json, mb 'budget' in the table)")  # fmt: skip
            if note not in out:
                out.append(note)
    return out
