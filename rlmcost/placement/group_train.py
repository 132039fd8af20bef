"""A device group's own trainer settings where the time and memory models read them.

A group of a deployment may give its own trainer and forward layouts (``groups[].train``,
``groups[].forward`` in a Run file; :class:`~rlmcost.deployment.spec.GroupLayouts`). Their
degrees, ZeRO stage, checkpointing, micro-batch, schedule and Megatron split become the group's
:class:`~rlmcost.parallel.layout.Layout` (``inputs.layouts_for``), their ``offload``,
``param_dtype`` and ``freeze_vision_tower`` are read by ``GroupTasks`` (``train_offload``,
``train_layout``), and the group's engine fields merge over the run's by the rule below
(``deployment.group_engine``, read through ``inputs.engine_for``). The
fields below are read by the passes' options and the micro-batching, which took them from the
deployment-wide ``Deployment.train`` alone; here they come from the group where it gives one:

* batching (:data:`PASS_FIELDS`): ``max_tokens_per_gpu``, ``packing``, ``padded``
  (``group_own._apply_token_budget``, ``packed_lengths``, ``dynamic_bsz``, ``group_passes``);
* the trainer's passes (``pass_options.step_options``): ``fused_loss``, ``router_dtype``,
  ``ep_dispatcher``, ``moe_permute_fusion``, ``kernels``, ``recompute_early_stop``,
  ``module_ckpt``, ``disable_dropout`` (``model_dropout``).

Rule (a stated choice, the engine's): of these fields, the ones a group's layout gives are
the group's, whatever their value; the others are the deployment's, so a group that gives
``train: {tp: 4}`` keeps the run's token budget and dispatcher, and one that gives
``train: {padded: false}`` runs unpadded under a deployment-wide ``padded: true``. What a
layout gives is what its input names (pydantic's ``model_fields_set``; a Run or deployment
file keeps it, :mod:`rlmcost.deployment.given`).
A group's own trainer layout is its trainer's otherwise: its micro-batch sizes a packed token
budget (``TrainLayout.token_budget``), its degrees and ZeRO stage say whether the framework runs
a Hugging Face model there (``pass_options.runs_hf_model``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.deployment.given import PASS_FIELDS, layered, overrides
from rlmcost.deployment.group_engine import engine_overrides
from rlmcost.deployment.kinds import PHASE_OFFLOADS
from rlmcost.deployment.spec import Offload, TrainLayout
from rlmcost.frameworks.presets import behaviour
from rlmcost.memo import per_object
from rlmcost.perf.ckpt_early_stop import EARLY_STOP_NOTE, stop_note
from rlmcost.placement.model_dropout import dropout_note, trains_with_dropout
from rlmcost.placement.pass_options import router_fp64, worker_notes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.device_groups import DeviceGroup, Placement
    from rlmcost.placement.jobs import GroupEstimate
    from rlmcost.specs.model import ModelSpec


def _merged(base: TrainLayout, own: TrainLayout | None, micro_batch: bool) -> TrainLayout:
    """``base`` with the :data:`PASS_FIELDS` ``own`` gives (and its micro-batch where
    ``micro_batch`` and ``own`` gives one: a forward layout giving ``tp`` alone keeps the
    run's forward micro-batch, as its layout does, ``deployment.given.layered``)."""
    if own is None:
        return base
    update = overrides(base, own, (*PASS_FIELDS, "micro_batch") if micro_batch else PASS_FIELDS)
    return base.model_copy(update=update) if update else base


def phase_offloads_run(dep: Deployment, offload: tuple[Offload, ...],
                       generates: bool) -> tuple[Offload, ...]:  # fmt: skip
    """``offload`` as a group's trainer runs it: without the between-phases kinds
    (:data:`~rlmcost.deployment.kinds.PHASE_OFFLOADS`) on a group that does not generate
    where the framework moves the states only around a colocated engine's refit
    (``Behaviour.phase_offload_colocated``: NeMo RL, ``nemo_rl/algorithms/grpo.py``
    ``refit_policy_generation``, ``offload_before_refit`` / ``offload_after_refit`` under
    ``colocated_inference`` @7ea279abf)."""
    beh = behaviour(dep.framework)
    if generates or beh is None or not beh.phase_offload_colocated:
        return offload
    return tuple(o for o in offload if o not in PHASE_OFFLOADS)


def trainer_offload_run(dep: Deployment, group: DeviceGroup,
                        generates: bool) -> tuple[Offload, ...]:  # fmt: skip
    """What the trainer on ``group`` keeps in host memory: the group's ``[offload=...]``,
    else its own trainer layout's offload (:func:`group_trainer`: the deployment's where it
    gives none) as :func:`phase_offloads_run` runs it on a group that generates (``generates``)
    or not (``GroupTasks.train_offload``; a plan row's groups, ``plan.rl_groups``)."""
    given = dict(group.settings).get("offload")
    if given is not None:
        return tuple(Offload(w) for w in str(given).split(","))
    return phase_offloads_run(dep, group_trainer(dep, group.name).offload, generates)


def _apart(dep: Deployment, groups: Sequence[GroupEstimate],
           placement: Placement) -> tuple[tuple[str, ...], int]:  # fmt: skip
    """The training groups whose between-phases offloads :func:`phase_offloads_run` leaves
    out (a group of ``placement`` whose ``--groups`` brackets give its offload runs it as
    given: :meth:`~rlmcost.placement.group_own.GroupTasks.train_offload`), and how many
    groups train. Nothing under a framework that runs them everywhere (the rule's flag, read
    first); kept by the identities of what it reads (the deployment's trainer layout and
    groups' own settings, the placement's groups, the group estimates; the framework by
    name): the iteration's note and the notes' view of one evaluation ask the same, and the
    deployments of a query that share these (their validated sections, their estimates)."""
    beh = behaviour(dep.framework)
    if beh is None or not beh.phase_offload_colocated:
        return (), 0  # phase_offloads_run leaves every offload as it is
    return memo.by_identities(_APART, (dep.train, *dep.groups, *placement.groups, *groups),
                              lambda: _apart_of(dep, groups, placement),
                              also=(dep.framework, len(dep.groups), len(groups)))  # fmt: skip


_APART = memo.table()  # by the identities of what _apart_of reads


def _apart_of(dep: Deployment, groups: Sequence[GroupEstimate],
              placement: Placement) -> tuple[tuple[str, ...], int]:  # fmt: skip
    """:func:`_apart`, computed."""
    trainers = [g for g in groups if _kinds(g)[0]]
    names = tuple(g.name for g in trainers  # a group that generates runs them (the rule)
                  if not _kinds(g)[1]
                  and dict(placement.group(g.name).settings).get("offload") is None
                  and (off := _trainer_offload(dep, g.name))
                  and phase_offloads_run(dep, off, False) != off)  # fmt: skip
    return names, len(trainers)


def _trainer_offload(dep: Deployment, group: str) -> tuple[Offload, ...]:
    """:func:`group_trainer`'s offload (the deployment's where the group gives no trainer
    layout: no table looked up)."""
    own = dep.group(group)
    return dep.train.offload if own is None or own.train is None else \
        group_trainer(dep, group).offload  # fmt: skip


@memo.per_instance
def _kinds(g: GroupEstimate) -> tuple[bool, bool]:
    """Whether group estimate ``g`` trains and whether it generates (kept per estimate)."""
    kinds = {j.task.kind for j in g.jobs}
    return Kind.TRAIN in kinds, Kind.GENERATE in kinds


def idle_view(dep: Deployment, groups: Sequence[GroupEstimate],
              placement: Placement) -> Deployment:  # fmt: skip
    """``dep`` as its notes see it: without the between-phases offloads where no training
    group runs them (every one apart from the engines, :func:`_apart`), so that no note
    prices an offload the run leaves out; ``dep`` itself otherwise."""
    names, trainers = _apart(dep, groups, placement)
    if not names or len(names) < trainers:
        return dep
    kept = phase_offloads_run(dep, dep.train.offload, False)
    return dep.model_copy(update={"train": dep.train.model_copy(update={"offload": kept})})


def offloads_apart_note(dep: Deployment, groups: Sequence[GroupEstimate],
                        placement: Placement) -> list[str]:  # fmt: skip
    """The note naming the training groups whose between-phases offloads
    :func:`phase_offloads_run` leaves out (none: no note), as :func:`_apart`."""
    names = _apart(dep, groups, placement)[0]
    if not names:
        return []
    return [f"{dep.framework} moves a policy's states to the host between phases only beside "
            "colocated generation (nemo_rl/algorithms/grpo.py refit_policy_generation: "
            "offload_before_refit under colocated_inference): the -idle offloads are not run "
            f"on {', '.join(names)}, whose GPUs hold no engine"]


@per_object()
def group_trainer(dep: Deployment, group: str) -> TrainLayout:
    """The trainer settings of ``group``'s training jobs: the group's own trainer layout (as
    its layout, ``inputs.layouts_for``: its degrees and ZeRO stage also say whether the
    framework's trainer runs a Hugging Face model, ``pass_options.runs_hf_model``) with the
    deployment's :data:`PASS_FIELDS` where the group's layout does not give them; else the
    deployment's ``train``. Kept per deployment and group."""
    own = dep.group(group)
    if own is None or own.train is None or own.train == dep.train:
        return dep.train
    return layered(own.train, dep.train)


@per_object()
def group_forward(dep: Deployment, group: str) -> TrainLayout:
    """The settings of ``group``'s forwards: the deployment's forward layout
    (``Deployment.forward_layout``) with the group's own forward layout's fields, else its
    trainer layout's (the forwards run on the trainer's workers), micro-batch apart."""
    own = dep.group(group)
    given = None if own is None else own.forward or own.train
    return _merged(dep.forward_layout(), given,
                   micro_batch=own is not None and own.forward is not None)  # fmt: skip


def kind_spec(dep: Deployment, group: str, kind: Kind) -> TrainLayout | None:
    """:func:`group_trainer` for a training task, :func:`group_forward` for a forward, None
    for generation."""
    if kind is Kind.TRAIN:
        return group_trainer(dep, group)
    return group_forward(dep, group) if kind is Kind.FORWARD else None


def given_key(dep: Deployment, group: str, *, engine: bool, trainer: tuple[str, ...],
              forward: bool) -> tuple[frozenset[str], ...] | None:  # fmt: skip
    """Which fields of ``group``'s own settings change what the merges above (and
    ``deployment.group_engine``) give over the run's: of its engine where ``engine``, of its
    trainer layout among ``trainer``, of its forward layout where ``forward``. Two groups of
    equal settings that give different fields merge alike under one deployment where these
    are equal, so the kept estimates (``placement.group_key``) hold them beside the group's
    settings; None where they are all empty (the settings' values say it all)."""
    own = dep.group(group)
    if own is None:
        return None
    layout = own.forward or own.train  # the forwards' (group_forward)
    parts = (
        engine_overrides(dep.engine, own.engine) if engine and own.engine else frozenset(),
        frozenset(overrides(dep.train, own.train, trainer)) if own.train else frozenset(),
        frozenset(overrides(dep.forward_layout(), layout, type(layout).model_fields))
        if forward and layout else frozenset(),
    )  # fmt: skip
    return parts if any(parts) else None


@per_object()
def group_deployment(dep: Deployment, group: str) -> Deployment:
    """``dep`` as ``group``'s passes see it: its ``train`` the group's
    (:func:`group_trainer`); ``dep`` itself where the group changes nothing."""
    train = group_trainer(dep, group)
    return dep if train is dep.train else dep.model_copy(update={"train": train})


def group_deployments(dep: Deployment) -> tuple[Deployment, ...]:
    """``dep`` and, once each, the group views that differ from it (for the notes)."""
    out = [dep]
    for g in dep.groups:
        view = group_deployment(dep, g.members)
        if view is not dep and view.train not in [d.train for d in out]:
            out.append(view)
    return tuple(out)


def group_worker_notes(dep: Deployment, kl: bool, moe: bool = True,
                       stops: tuple[str, ...] = (EARLY_STOP_NOTE,)) -> tuple[str, ...]:  # fmt: skip
    """``pass_options.worker_notes`` of the deployment and of its groups' views, once each."""
    views = group_deployments(dep)
    return tuple(dict.fromkeys(n for d in views for n in worker_notes(d, kl, moe, stops)))


def train_notes(specs: Mapping[Role, ModelSpec], dep: Deployment) -> tuple[tuple[str, ...], ...]:
    """Of the query's trained models (actor, critics: the frozen ones never recompute), once
    each: where the checkpoint's early stop ends their rerun (``perf.ckpt_early_stop.stop_note``:
    no dense layer, an op saving after the FFN's down projection, their config's dropout as
    ``dep`` trains it, or neither), and what their config's dropout does
    (``model_dropout.dropout_note``)."""
    trained = [s for r, s in specs.items() if r in (Role.ACTOR, Role.CRITIC, Role.COST_CRITIC)]
    stops = {stop_note(s.arch(), trains_with_dropout(dep, s)) for s in trained}
    drops = dict.fromkeys(n for s in trained if (n := dropout_note(dep, s)) is not None)
    return tuple(sorted(stops)), tuple(drops)


def any_router_fp64(dep: Deployment) -> bool:
    """Whether the deployment's trainer or a group's runs its MoE router in fp64."""
    return any(router_fp64(d) for d in group_deployments(dep))
