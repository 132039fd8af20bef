"""What each device group of an RL plan row runs, and the values its ``--groups`` brackets give.

A row's ``tp``, ``pp``, ``cp``, ``ep``, ``zero``, ``ckpt``, ``micro_batch`` and ``offload`` are
the run-wide trainer layout of its Run, and ``rollout_tp`` the run-wide engine TP; a group's
bracket goes over them on that group (``placement.inputs._replica``,
``placement.group_own.GroupTasks.train_offload``), a hybrid placement trains at TP 1 under
ZeRO-3 over its group, and a group apart from the engines under NeMo RL leaves out the
between-phases offloads. :func:`group_layouts` says, per group of the row's evaluation, what
its jobs run (the row's ``group_layouts`` in ``--json``): read from the evaluation's own jobs,
the layout each train, forward and generate job was priced with, and the offload its trainer
keeps on the host. :func:`bracket_values` gives the values the brackets of a row's
``--groups`` text give, :func:`run_values` the values its groups run (``rlmcost plan``'s
table marks a cell where one differs from the run-wide value it shows, ``1*``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.parallel.layout import Layout
    from rlmcost.placement.estimate import PlacementEstimate

TRAINED = ("dp", "tp", "pp", "cp", "ep", "sp", "zero", "ckpt", "micro_batch")
"""The fields of a group's ``train`` entry (its ``offload`` besides), named as a row names them
(``dp``: the data-parallel replicas filling the group)."""

FORWARD = ("dp", "tp", "pp", "cp", "ep", "sp", "zero", "micro_batch")
"""The fields of a group's ``forward`` entry (a forward pass holds no recomputation)."""

ENGINE = ("dp", "tp", "pp", "ep")
"""The fields of a group's ``engine`` entry besides its ``kind`` (``dp``: its replicas)."""


def _fields(layout: Layout, names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(layout, name)
        out[name] = value if isinstance(value, (bool, int)) else str(value)
    return out


def group_layouts(e: PlacementEstimate) -> list[dict[str, Any]]:
    """Per group of evaluation ``e``: its name, GPUs and accelerator, and what its jobs run
    (None where it runs no job of the kind): ``train``, the layout of its train jobs with the
    offload list its trainer keeps on the host (comma-separated, as a row's ``offload``;
    :func:`~rlmcost.placement.group_train.trainer_offload_run`); ``forward``, its forward
    jobs' (log-probs, values, rewards); ``engine``, its generation's engine kind and layout.
    A plan's Runs give every model the trainer's TP (``tp_per_model`` off), so the jobs of one
    kind on a group share one layout: the first job's is the group's."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.deployment.group_engine import group_engine
    from rlmcost.placement.group_train import trainer_offload_run

    dep = e.deployment
    out = []
    for g in e.groups:
        first: dict[Any, Layout] = {}
        for j in g.jobs:
            first.setdefault(j.task.kind, j.layout)
        train = first.get(Kind.TRAIN)
        fwd = first.get(Kind.FORWARD)
        gen = first.get(Kind.GENERATE)
        entry: dict[str, Any] = {"name": g.name, "gpus": g.gpus, "hardware": g.hardware,
                                 "train": None, "forward": None, "engine": None}  # fmt: skip
        if train is not None:
            offload = trainer_offload_run(dep, e.placement.group(g.name), gen is not None)
            entry["train"] = {**_fields(train, TRAINED),
                              "offload": ",".join(str(o) for o in offload)}  # fmt: skip
        if fwd is not None:
            entry["forward"] = _fields(fwd, FORWARD)
        if gen is not None:
            own = dep.group(g.name)
            kind = dep.engine.kind if own is None or own.engine is None else \
                group_engine(dep, g.name).kind  # fmt: skip
            entry["engine"] = {"kind": str(kind), **_fields(gen, ENGINE),
                               **engine_memory_of(dep, g.name, train is not None,
                                                  _sglang_default(e, g))}  # fmt: skip
        out.append(entry)
    return out


def _sglang_default(e: Any, g: Any) -> float | None:
    from rlmcost.placement.group_engine import sglang_default

    return sglang_default(e, g)


def engine_memory_of(dep: Any, name: str, trains: bool,
                     own_default: float | None = None) -> dict[str, float | None]:
    """The reservation (``gpu_memory_utilization``) and KV pool (``kv_buffer_gib``) the
    evaluation sizes the engine of group ``name`` of deployment ``dep`` by: its own or the
    run's where given, else the default for where it runs, as the evaluation takes them
    (``placement.group_engine.GroupEngine.engine_fraction``: ``ENGINE_COLOCATED_FRACTION``
    0.5 beside a trainer, verl's ppo_trainer.yaml; ``ENGINE_DEDICATED_FRACTION`` 0.9 alone,
    vLLM's EngineArgs, or ``own_default`` where given: SGLang's own,
    ``placement.group_engine.sglang_default``;
    a Megatron engine's pool ``MEGATRON_KV_BUFFER_GIB``, NeMo RL's
    ``buffer_size_gb``, :func:`rlmcost.deployment.megatron_engine.kv_buffer_bytes`); None for
    what its engine does not reserve (an engine in the trainer's layout, a Megatron engine's
    fraction) and under the idealized iteration (no reservation)."""
    from rlmcost.deployment.engine import ENGINE_COLOCATED_FRACTION, ENGINE_DEDICATED_FRACTION
    from rlmcost.deployment.group_engine import group_engine
    from rlmcost.deployment.kinds import EngineKind
    from rlmcost.deployment.megatron_engine import MEGATRON_KV_BUFFER_GIB

    own = dep.group(name)
    eng = dep.engine if own is None or own.engine is None else group_engine(dep, name)
    out: dict[str, float | None] = {"gpu_memory_utilization": None, "kv_buffer_gib": None}
    if dep.ideal:
        return out
    if eng.kind is EngineKind.MEGATRON:
        out["kv_buffer_gib"] = MEGATRON_KV_BUFFER_GIB if eng.kv_buffer_gib is None else \
            eng.kv_buffer_gib  # fmt: skip
    elif not eng.kind.in_trainer_layout:
        frac = eng.gpu_memory_utilization
        out["gpu_memory_utilization"] = frac if frac is not None else \
            ENGINE_COLOCATED_FRACTION if trains else own_default or \
            ENGINE_DEDICATED_FRACTION  # fmt: skip
    return out


def row_engine_memory(e: PlacementEstimate, rollout_tp: int) -> dict[str, Any]:
    """A row's engine TP (``rollout_tp``, the candidate's), reservation and KV pool: the
    Run's where it gives them (a candidate's own, else its base Run's, e.g. a framework
    preset's ``--gpu-memory-utilization 0.7``, as the row's command says them); where it
    leaves them unset, what the evaluation took for its generating groups
    (:func:`engine_memory_of`: 0.5 beside a trainer, 0.9 alone), where they agree; else None
    (each group's is in ``group_layouts``). All None where no group generates (an offline
    method: DPO): no engine runs, whatever the Run says of one."""
    from rlmcost.algorithms.kinds import Kind

    dep = e.deployment
    used = [engine_memory_of(dep, g.name, any(j.task.kind is Kind.TRAIN for j in g.jobs),
                             _sglang_default(e, g))
            for g in e.groups if any(j.task.kind is Kind.GENERATE for j in g.jobs)]  # fmt: skip
    if not used:
        return {"rollout_tp": None, "gpu_memory_utilization": None, "kv_buffer_gib": None}
    out: dict[str, Any] = {"gpu_memory_utilization": dep.engine.gpu_memory_utilization,
                           "kv_buffer_gib": dep.engine.kv_buffer_gib}  # fmt: skip
    for key, given in out.items():
        values = {u[key] for u in used}
        if given is None and len(values) == 1:
            out[key] = values.pop()
    return {"rollout_tp": rollout_tp, **out}


def bracket_values(groups: str) -> dict[str, set[str]]:
    """Trainer layout field -> the values the brackets of ``groups`` (a row's ``--groups``
    text) give the groups that train or run forwards (a group that only generates: its
    ``tp=`` and ``ep=`` are its engine's, the row's engine tp), as :func:`spelled` writes
    them."""
    if "[" not in groups:
        return {}
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.placement.groups import parse_groups

    out: dict[str, set[str]] = {}
    for g in parse_groups(groups):
        if all(m.kind is Kind.GENERATE for m in g.members):
            continue
        for field, value in g.settings:
            out.setdefault(field, set()).add(spelled(field, value))
    return out


RUN_SHARED = ("tp", "pp", "cp", "sp", "ep")
"""The fields a row's cell shows for its train and forward jobs alike (a forward job's
``zero`` and ``micro_batch`` follow the framework's forward batching, not the row's)."""

RUN_TRAINED = ("zero", "ckpt", "micro_batch", "offload")
"""The fields a row's cell shows for its train jobs alone."""


def run_values(row: dict[str, Any]) -> dict[str, set[str]]:
    """Field -> the values the groups of ``row`` (a plan row as ``--json`` gives it) run, as
    :func:`spelled` writes them: its ``group_layouts`` (:func:`group_layouts`, what each
    group's jobs were priced with: a bracket's value, a hybrid placement's TP 1 under ZeRO-3)
    and the values its ``--groups`` brackets give (:func:`bracket_values`, for a row without
    ``group_layouts``); ``rollout_tp``: its engines' TPs, where the row names one."""
    out = {k: set(v) for k, v in bracket_values(row.get("groups") or "").items()}
    for g in row.get("group_layouts") or ():
        for kind, names in (("train", RUN_SHARED + RUN_TRAINED), ("forward", RUN_SHARED)):
            for name in names if g[kind] is not None else ():
                out.setdefault(name, set()).add(spelled(name, g[kind][name]))
        if g["engine"] is not None and row.get("rollout_tp") is not None:
            out.setdefault("rollout_tp", set()).add(str(g["engine"]["tp"]))
    return out


def spelled(field: str, value: Any) -> str:
    """A trainer layout value as :func:`bracket_values` compares it: its text, an offload
    list's kinds in a fixed order (``params,optimizer`` is ``optimizer,params``)."""
    if field == "offload":
        return ",".join(sorted(k for k in str(value).split(",") if k))
    return str(value)
