"""One device group's transfers in an iteration: resharding a model between its training
layout and a second layout (``transfer.reshard_bytes_per_device``), the framework's refit of
an engine on the trainer's GPUs (:mod:`rlmcost.perf.refit`), vLLM's sleep/wake of the engine's
weights, the Ray controller's per-iteration overhead, a framework's environment step after
generation (:mod:`rlmcost.perf.nemo_rl_env`), and the offload switches between models
(``transfer.offload_switch_time_s``). Each is a :class:`~rlmcost.placement.jobs.Transfer` with
its bound (bytes over the link) and, where the deployment predicts it, its predicted seconds
and interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import partial

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.compiled.blocks import params
from rlmcost.deployment.kinds import EngineKind
from rlmcost.frameworks.preset_model import Behaviour
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.controller_data import (
    CallBytes,
    controller_data_s,
    driver_results_s,
    padded_call_bytes,
)
from rlmcost.perf.nemo_rl_dispatch import TOPK_LOGITS_K, dispatch_s, sharded_call_bytes
from rlmcost.perf.refit import Refit, controller_s, refit_s, sleep_wake_s, spread_of
from rlmcost.perf.rl_step import link_transfer_s
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.group_key import per_query
from rlmcost.placement.group_passes import packing
from rlmcost.placement.jobs import Job, Transfer, phase_of
from rlmcost.placement.mtp import trained_mtp_params
from rlmcost.placement.speculative import draft_weight_bytes
from rlmcost.placement.transfer import (
    group_link_bytes_per_s,
    offload_switch_time_s,
    reshard_bytes_per_device,
)
from rlmcost.units import format_bytes


def transfers(g: GroupModel, jobs: Sequence[Job]) -> list[Transfer]:
    out: list[Transfer] = []
    bw = group_link_bytes_per_s(g.s.hardware, g.gpus, collective=True)
    dep = g.s.deployment
    beh = None if dep.ideal else behaviour(dep.framework)
    engine = g.engine_task
    refit_here = beh is not None and engine is not None and g.trains_here(engine.role) \
        and g.engine.kind is not EngineKind.MEGATRON  # it reshards on its ranks, or shares
    for job in jobs:
        t = job.task
        if refit_here and t is engine:
            out.append(_refit(g, job, _colocated_refit(g, beh), bw))
            continue
        if g.two_layouts(t):
            destination = job.own.weights - draft_weight_bytes(g, t)  # no draft in refit
            if t.kind is Kind.GENERATE and g.engine.kind is EngineKind.DS_HYBRID:
                # DeepSpeed's Hybrid Engine gathers every layer whole on every rank
                # (GatheredParameters over the ZeRO-3 group), then slices its TP shard
                # (hybrid_engine.py generate: apply_tensor_parallelism)
                arch = g.s.arch(t.role)
                destination = max(destination, params(arch) * g.s.workload.weight_dtype.bytes)
            per_device = reshard_bytes_per_device(destination, g.states(t.role)[0])
            out.append(
                Transfer(
                    "reshard",
                    f"{t.role}: training layout -> {t.kind} layout "
                    f"(tp={job.layout.tp}, pp={job.layout.pp})",
                    g.group.name,
                    per_device * g.gpus,
                    per_device,
                    per_device / bw,
                    t.stage,
                    t.index,
                    link_transfer_s(per_device, g.s.hardware, g.gpus, collective=True),
                    unit=f"{t.role}: training layout -> {t.kind} layout",
                )
            )
    if engine is not None and g.engine.kind is EngineKind.MEGATRON:
        from rlmcost.placement.megatron_suspend import megatron_suspend

        out += megatron_suspend(g, engine)
    elif engine is not None and g.engine.sleep and len(g.tasks) > 1:
        # vLLM sleep mode level 1: weights to host after generation, back before it; level 2
        # (the framework's Behaviour) discards them, the refit reloads them
        w = g.engine_weights
        level = beh.engine_sleep_level if beh is not None else 1
        moved = 0 if level == 2 else 2 * w
        what = "weights discarded (level 2), reloaded by the refit" if level == 2 else \
            "weights to host and back"  # fmt: skip
        out.append(
            Transfer(
                "offload",
                f"engine sleep/wake: {engine.role} {what}",
                g.group.name,
                moved * g.gpus,
                moved,
                moved / g.s.host_bytes_per_s,
                engine.stage,
                engine.index,
                predicted_s=None if dep.ideal else sleep_wake_s(w, level=level),
                spread=None if dep.ideal else spread_of(
                    lambda end: sleep_wake_s(w, end, level), "vLLM sleep/wake constants"),
            )
        )  # fmt: skip
    gen = next((t for t in g.tasks if t.kind is Kind.GENERATE and t.role is Role.ACTOR),
               None)  # the rollout: a judge group has no dispatch  # fmt: skip
    calls = padded_calls_of(g, jobs) if beh is not None and beh.padded_batch else None
    cross = max(0.0, 1 - g.s.hardware.gpus_per_node / g.gpus)
    if beh is not None and beh.ray_controller and gen is not None:
        nbytes = calls.generate if calls is not None else 0

        def seconds(end: str) -> float:
            return controller_s(end) + controller_data_s(nbytes, cross, end)

        what = f"; the generated batch padded to S + T back to the driver, " \
            f"{format_bytes(nbytes)}" if nbytes else ""  # fmt: skip
        out.append(
            Transfer(
                "controller",
                f"controller ({dep.framework}, Ray): dispatch, data movement, rewards{what}",
                g.group.name, nbytes, -(-nbytes // g.gpus), 0.0, gen.stage, gen.index,
                predicted_s=seconds("value"),
                spread=spread_of(seconds, "STEP_OVERHEAD_RESIDUAL_S, DATAPROTO_SERDE_BYTES_PER_S"),
                unit=f"controller ({dep.framework}, Ray)",
            )
        )  # fmt: skip
    if beh is not None and beh.ray_controller and calls is not None:
        out += _call_data(g, jobs, calls, cross)
    if beh is not None and beh.ray_controller and beh.sharded_per_rank:
        out += _sharded_call_data(g, jobs, cross)
    out += [_forward_param_trip(g, job.task) for job in jobs if g.forward_param_trip(job.task)[0]]
    if g.s.placement.offload and len({t.role for t in g.tasks}) > 1:
        order = list(g.tasks)
        # a framework that swaps the reference through the policy's model prices that swap
        # in the reference forward (Behaviour.reference_swap, group_passes.reference_swap_s_of)
        swap = beh is not None and beh.reference_swap and g.trains_here(Role.ACTOR) is not None
        for prev, nxt in zip([order[-1], *order[:-1]], order, strict=True):
            if prev.role is nxt.role or (swap and {prev.role, nxt.role} == _SWAPPED):
                continue
            load = sum(g.states(nxt.role))
            back = sum(g.states(prev.role)) if g.trains_here(prev.role) else 0
            out.append(
                Transfer(
                    "offload",
                    f"load {nxt.role}, write back {prev.role}" if back else f"load {nxt.role}",
                    g.group.name,
                    (load + back) * g.gpus,
                    load + back,
                    offload_switch_time_s(load, back, g.s.host_bytes_per_s),
                    nxt.stage,
                    nxt.index,
                )
            )
    # the environment scores the responses unless a reward model does (its own forward)
    if beh is not None and beh.env_workers and gen is not None \
            and not any(t.role is Role.REWARD for t in g.s.tasks):  # fmt: skip
        out.append(_environment(g, gen, g.s.deployment.env_workers or beh.env_workers))
    return out


_SWAPPED = {Role.ACTOR, Role.REFERENCE}


def _refit(g: GroupModel, job: Job, mechanism: str, bw: float) -> Transfer:
    """The framework's refit of the engine on the trainer's GPUs (:mod:`rlmcost.perf.refit`);
    its bound is the reshard the layouts need (0 when the engine keeps the training layout)."""
    t = job.task
    arch = g.s.arch(t.role)
    mtp = trained_mtp_params(g.s, t.role, g.group.name)  # its trained MTP block goes too
    nbytes = (int(params(arch, t.invocation.model_head)) + mtp) * g.s.workload.weight_dtype.bytes
    sent = job.own.weights - draft_weight_bytes(g, t)  # the draft is not refitted
    per_device = reshard_bytes_per_device(sent, g.states(t.role)[0]) \
        if g.two_layouts(t) else 0  # fmt: skip
    mech = Refit(mechanism)
    return Transfer(
        "weight-sync", f"refit {t.role}: trainer -> engine ({mech})", g.group.name, nbytes,
        -(-nbytes // g.gpus), per_device / bw, t.stage, t.index,
        predicted_s=refit_s(mech, nbytes),
        spread=spread_of(lambda end: refit_s(mech, nbytes, end=end), f"{mech} refit constants"),
    )  # fmt: skip


def _environment(g: GroupModel, gen: Task, workers: int) -> Transfer:
    """The environment step after generation (NeMo RL's math verifier on ``workers`` actors:
    ``Deployment.env_workers``, else ``Behaviour.env_workers``; :mod:`rlmcost.perf.
    nemo_rl_env`): every generated response
    scored, timed in the generation phase, whose timer holds it (``grpo.py`` runs
    ``run_multi_turn_rollout`` under ``timer.time("generation")``). A streaming rollout
    (``Deployment.partial_rollout``: NeMo RL's async GRPO, whose trajectory collector runs
    ``run_async_multi_turn_rollout``) scores each response as it finishes while the others
    generate: only the last one's call is exposed. (Read from the deployment, which the
    group's key holds, not from the placement's staleness, which it leaves out.)"""
    lengths = g.lengths(gen)
    n, mean = len(lengths), sum(lengths) / len(lengths)
    streamed = g.s.deployment.partial_rollout
    scored = 1 if streamed else n

    from rlmcost.perf.nemo_rl_env import math_env_s

    def seconds(end: str) -> float:
        return math_env_s(scored, mean, workers, end)

    what = "the last response scored as it finishes (the others while generating)" \
        if streamed else f"{n} responses scored"  # fmt: skip
    return Transfer(
        "controller",
        f"environment step after generation: {what} ({mean:.0f} tokens on average) on "
        f"{workers} verify actors",
        g.group.name, 0, 0, 0.0, gen.stage, gen.index, predicted_s=seconds("value"),
        spread=spread_of(seconds, "MATH_VERIFY_S_PER_RESPONSE, MATH_VERIFY_S_PER_TOKEN"),
        phase_name=phase_of(gen)[0], host_bound=True, unit="environment step after generation",
    )  # fmt: skip


def padded_calls_of(g: GroupModel, jobs: Sequence[Job] = ()) -> CallBytes:
    """What the driver moves per step, call by call, for the iteration's invocations
    (:func:`~rlmcost.perf.controller_data.padded_call_bytes`): B x K sequences at the
    workload's S + T (rho B K generated under dapo's oversampling); the actor's forward returns
    log-probs and entropies, any other forward one fp32 tensor, from every rank of a data shard
    (``replicas``: the forward's GPUs over its data-parallel degree, for the forwards among
    ``jobs``; 1 for another group's, whose returns this group's calls do not carry)."""
    w = g.s.workload
    layouts = {j.task.index: j.layout for j in jobs}
    forwards = [t for t in g.s.tasks if t.kind is Kind.FORWARD]
    outputs = [2 if t.role is Role.ACTOR else 1 for t in forwards]
    replicas = [layouts[t.index].n_gpus // layouts[t.index].dp if t.index in layouts else 1
                for t in forwards]  # fmt: skip
    trains = sum(1 for t in g.s.tasks if t.kind is Kind.TRAIN)
    generated = int(w.sequences * Fraction(str(g.s.values.get("rho", 1))))  # dapo: rho B K
    return padded_call_bytes(w.sequences, w.prompt_len, w.response_len, outputs, trains,
                             generated, replicas)  # fmt: skip


def _call_data(g: GroupModel, jobs: Sequence[Job], calls: CallBytes,
               cross: float) -> list[Transfer]:  # fmt: skip
    """One transfer per forward or training job of the group: its call's bytes through the
    driver (:mod:`rlmcost.perf.controller_data`), timed in the call's own phase as verl's
    ``marked_timer`` around the worker-group call times them (``ray_trainer.py`` ``fit``)."""
    forwards = [t.index for t in g.s.tasks if t.kind is Kind.FORWARD]
    trains = [t.index for t in g.s.tasks if t.kind is Kind.TRAIN]
    w = g.s.workload
    out = []
    for job in jobs:
        t = job.task
        actor = t.role is Role.ACTOR  # its forward returns log-probs and entropies
        if t.kind is Kind.FORWARD:
            nbytes = calls.forwards[forwards.index(t.index)]
            results = (w.sequences, w.response_len, 2 if actor else 1, actor)
        elif t.kind is Kind.TRAIN:
            nbytes, results = calls.trains[trains.index(t.index)], None
        else:
            continue

        def seconds(end: str, nbytes: int = nbytes,
                    results: tuple[int, int, int, bool] | None = results) -> float:  # fmt: skip
            own = 0.0
            if results is not None:
                n, t_len, outputs, entropy = results
                own = driver_results_s(n, t_len, outputs, entropy, end)
            return controller_data_s(nbytes, cross, end) + own

        back = ""
        if results:
            back = ", its results back and concatenated" + \
                (", the entropies' mean (agg_loss)" if actor else "")  # fmt: skip
        what = f"the batch padded to S + T out{back}, {format_bytes(nbytes)}"
        out.append(_driver_data(g, t, what, nbytes, seconds,
                                "DATAPROTO_SERDE_BYTES_PER_S, RESULT_CONCAT_PER_STATE, "
                                "ENTROPY_MEAN_PER_STATE"))  # fmt: skip
    return out


def _driver_data(g: GroupModel, t: Task, what: str, nbytes: int, seconds: Callable[[str], float],
                 source: str, how: str = "") -> Transfer:  # fmt: skip
    """A controller transfer of ``nbytes`` of a call's data through the driver, timed in the
    call's phase (``seconds(end)``: its time at an interval end; ``source``: the rates').
    ``how`` tells its unit apart from another transfer of the same call's data (the padded
    batch and the per-rank shards of one task are two units: one name would be one unit of
    the schedule, the other's seconds lost from the iteration)."""
    return Transfer("controller", f"driver data of {t.label()}: {what}", g.group.name, nbytes,
                    -(-nbytes // g.gpus), 0.0, t.stage, t.index, predicted_s=seconds("value"),
                    spread=spread_of(seconds, source), phase_name=phase_of(t)[0],
                    unit=f"driver data of {t.label()}{how}")  # fmt: skip


def _sharded_call_data(g: GroupModel, jobs: Sequence[Job], cross: float) -> list[Transfer]:
    """One transfer per forward or training job of the group whose framework sends each
    rank of a data-parallel shard its own copy (``Behaviour.sharded_per_rank``: NeMo RL,
    :mod:`rlmcost.perf.nemo_rl_dispatch`): the job's sequences padded to its longest, once per
    rank of a shard (the layout's GPUs over its data-parallel degree), a forward's log-probs
    back from each, through the driver; timed in the call's own phase (``grpo.py``'s timers
    wrap the policy's calls). Each transfer is a function of the task, its bytes, its
    replicas, the group's name and GPUs and the cross-node fraction alone: kept per query
    under these (the planner's sweep builds 236 distinct of 3,232), one object shared by
    the group estimates that make it."""
    out = []
    taught = _teacher_topk(g)
    for job in jobs:
        t = job.task
        if t.kind not in (Kind.FORWARD, Kind.TRAIN):
            continue
        kept = packing(g, t)  # the lengths and their largest, kept per query
        replicas = job.layout.n_gpus // job.layout.dp
        topk = taught and (t.role is Role.TEACHER or t.kind is Kind.TRAIN and t.role is Role.ACTOR)
        nbytes = sharded_call_bytes(len(kept[0]), kept[3], replicas, t.kind is Kind.TRAIN, topk)
        key = ("sharded call data", t, nbytes, replicas, g.group.name, g.gpus, cross)
        out.append(per_query(g.s, key, partial(_sharded_call, g, t, nbytes, replicas, cross)))
    return out


def _teacher_topk(g: GroupModel) -> bool:
    """Whether a teacher's top-k is the training signal, back from its forward and in the
    student's call: an unscored algorithm's (``Algorithm.scored`` False: on-policy
    distillation, NeMo RL's distillation.py); a teacher beside a scored one returns the
    log-probs of the sampled tokens (MOPD, slime's --use-opd)."""
    return not g.s.alg.scored and any(x.role is Role.TEACHER for x in g.s.tasks)


def _sharded_call(g: GroupModel, t: Task, nbytes: int, replicas: int, cross: float) -> Transfer:
    """:func:`_sharded_call_data`'s transfer of task ``t``."""
    back = ", every rank's log-probs back" if t.kind is Kind.FORWARD else ""
    if t.role is Role.TEACHER and _teacher_topk(g):
        back = f", every rank's top-{TOPK_LOGITS_K} logits and indices back"

    def seconds(end: str) -> float:
        return dispatch_s(nbytes, cross, end)

    what = (f"each data-parallel shard padded to the longest sequence, pickled once per "
            f"rank ({replicas} per shard){back}, {format_bytes(nbytes)}; the longer of the "
            "pickling and the network")  # fmt: skip
    return _driver_data(g, t, what, nbytes, seconds, "DATAPROTO_SERDE and RAY_CROSS_NODE rates",
                        how=", per rank")  # fmt: skip


def _forward_param_trip(g: GroupModel, t: Task) -> Transfer:
    """The trained model's parameter shard to the GPU and back around its forward ``t``, in
    the forward's phase (:meth:`~rlmcost.placement.group_offload.GroupOffload.
    forward_param_trip`: verl's ``compute_log_prob`` loads and offloads it inside
    ``marked_timer("old_log_prob")``); the bound is its bytes at the host link."""
    per_device = g.forward_param_trip(t)[0]

    def seconds(end: str) -> float:
        return g.forward_param_trip(t, end)[1]

    return Transfer("offload", f"{t.role} parameters to the GPU and back around its forward",
                    g.group.name, per_device * g.gpus, per_device,
                    per_device / g.s.host_bytes_per_s, t.stage, t.index,
                    predicted_s=seconds("value"),
                    spread=spread_of(seconds, "PAGEABLE_OFFLOAD_BYTES_PER_S"),
                    phase_name=phase_of(t)[0])  # fmt: skip


def _colocated_refit(g: GroupModel, beh: Behaviour | None) -> str:
    """The framework's colocated refit; its Megatron-core one when it has one and the
    trainer's layout uses tp, pp or ep (:class:`~rlmcost.frameworks.preset_model.Behaviour`)."""
    assert beh is not None
    b = g.s.base
    if beh.megatron_colocated and max(b.tp, b.pp, b.ep) > 1:
        return beh.megatron_colocated
    return beh.colocated
