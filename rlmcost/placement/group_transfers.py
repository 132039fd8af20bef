"""One device group's transfers in an iteration: resharding a model between its training
layout and a second layout (``transfer.reshard_bytes_per_device``), the framework's refit of
an engine on the trainer's GPUs (:mod:`rlmcost.perf.refit`), vLLM's sleep/wake of the engine's
weights, the Ray controller's per-iteration overhead, and the offload switches between models
(``transfer.offload_switch_time_s``). Each is a :class:`~rlmcost.placement.jobs.Transfer` with
its bound (bytes over the link) and, where the deployment predicts it, its predicted seconds
and interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.compiled.blocks import params
from rlmcost.deployment.kinds import EngineKind
from rlmcost.frameworks.preset_model import Behaviour
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.controller_data import controller_data_s, padded_batch_bytes
from rlmcost.perf.refit import Refit, controller_s, refit_s, sleep_wake_s, spread_of
from rlmcost.perf.rl_step import link_transfer_s
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.jobs import Job, Transfer
from rlmcost.placement.speculative import draft_weight_bytes
from rlmcost.placement.transfer import (
    group_link_bytes_per_s,
    offload_switch_time_s,
    reshard_bytes_per_device,
)


def transfers(g: GroupModel, jobs: Sequence[Job]) -> list[Transfer]:
    out: list[Transfer] = []
    bw = group_link_bytes_per_s(g.s.hardware, g.gpus, collective=True)
    dep = g.s.deployment
    beh = None if dep.ideal else behaviour(dep.framework)
    engine = g.engine_task
    refit_here = beh is not None and engine is not None and g.trains_here(engine.role)
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
            per_device = reshard_bytes_per_device(destination, g.resident(t.role).weights)
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
                    link_transfer_s(per_device, g.s.hardware, g.gpus),
                )
            )
    if engine is not None and g.engine.sleep and len(g.tasks) > 1:
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
    gen = next((t for t in g.tasks if t.kind is Kind.GENERATE), None)
    if beh is not None and beh.ray_controller and gen is not None:
        nbytes = padded_batch_bytes_of(g) if beh.padded_batch else 0
        cross = max(0.0, 1 - g.s.hardware.gpus_per_node / g.gpus)

        def seconds(end: str) -> float:
            return controller_s(end) + controller_data_s(nbytes, cross, end)

        what = f"; the batch padded to S + T through the driver, {nbytes / 1e9:.1f} GB" \
            if nbytes else ""  # fmt: skip
        out.append(
            Transfer(
                "controller",
                f"controller ({dep.framework}, Ray): dispatch, data movement, rewards{what}",
                g.group.name, nbytes, -(-nbytes // g.gpus), 0.0, gen.stage, gen.index,
                predicted_s=seconds("value"),
                spread=spread_of(seconds, "STEP_OVERHEAD_RESIDUAL_S, DATAPROTO_SERDE_BYTES_PER_S"),
            )
        )  # fmt: skip
    if g.s.placement.offload and len({t.role for t in g.tasks}) > 1:
        order = list(g.tasks)
        # a framework that swaps the reference through the policy's model prices that swap
        # in the reference forward (Behaviour.reference_swap, group_passes.reference_swap_s_of)
        swap = beh is not None and beh.reference_swap and g.trains_here(Role.ACTOR) is not None
        for prev, nxt in zip([order[-1], *order[:-1]], order, strict=True):
            if prev.role is nxt.role or (swap and {prev.role, nxt.role} == _SWAPPED):
                continue
            load = g.resident(nxt.role).total
            back = g.resident(prev.role).total if g.trains_here(prev.role) else 0
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
    return out


_SWAPPED = {Role.ACTOR, Role.REFERENCE}


def _refit(g: GroupModel, job: Job, mechanism: str, bw: float) -> Transfer:
    """The framework's refit of the engine on the trainer's GPUs (:mod:`rlmcost.perf.refit`);
    its bound is the reshard the layouts need (0 when the engine keeps the training layout)."""
    t = job.task
    arch = g.s.arch(t.role)
    nbytes = int(params(arch, t.invocation.model_head)) * g.s.workload.weight_dtype.bytes
    sent = job.own.weights - draft_weight_bytes(g, t)  # the draft is not refitted
    per_device = reshard_bytes_per_device(sent, g.resident(t.role).weights) \
        if g.two_layouts(t) else 0  # fmt: skip
    mech = Refit(mechanism)
    return Transfer(
        "weight-sync", f"refit {t.role}: trainer -> engine ({mech})", g.group.name, nbytes,
        -(-nbytes // g.gpus), per_device / bw, t.stage, t.index,
        predicted_s=refit_s(mech, nbytes),
        spread=spread_of(lambda end: refit_s(mech, nbytes, end=end), f"{mech} refit constants"),
    )  # fmt: skip


def padded_batch_bytes_of(g: GroupModel) -> int:
    """What the driver moves per step for the iteration's invocations (:func:`~rlmcost.perf.
    controller_data.padded_batch_bytes`): B x K sequences at the workload's S + T (rho B K
    generated under dapo's oversampling); the actor's forward returns log-probs and entropies,
    any other forward one fp32 tensor."""
    w = g.s.workload
    forwards = [2 if t.role is Role.ACTOR else 1 for t in g.s.tasks if t.kind is Kind.FORWARD]
    trains = sum(1 for t in g.s.tasks if t.kind is Kind.TRAIN)
    generated = int(w.sequences * Fraction(str(g.s.values.get("rho", 1))))  # dapo: rho B K
    return padded_batch_bytes(w.sequences, w.prompt_len, w.response_len, forwards, trains,
                              generated)  # fmt: skip


def _colocated_refit(g: GroupModel, beh: Behaviour | None) -> str:
    """The framework's colocated refit; its Megatron-core one when it has one and the
    trainer's layout uses tp, pp or ep (:class:`~rlmcost.frameworks.preset_model.Behaviour`)."""
    assert beh is not None
    b = g.s.base
    if beh.megatron_colocated and max(b.tp, b.pp, b.ep) > 1:
        return beh.megatron_colocated
    return beh.colocated
