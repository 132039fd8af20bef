"""One device group's jobs: each invocation's work, depth, memory, time and prediction, and the
group's transfers, from what the group holds (:class:`~rlmcost.placement.group_cost.GroupModel`).

* work: exact FLOPs over the sequences' own response lengths (``task_work.work_over_lengths``);
* depth: the longest sequence sets it (padded batches); generation's depth is the rollout
  timeline's longest slot chain (``rollout``);
* time: a roofline lower bound like ``reports.estimate`` (compute at the dense datasheet peak,
  HBM at its bandwidth; forward reads the weights once, a training step reads weights twice
  and gradients and Adam states twice), with the decode timeline for generation, the pipeline
  bubble of the layout's schedule for training (Narayanan et al. 2021: (p - 1)/m), and, for
  generate and forward under ZeRO-3, the parameter gathers at link bandwidth. Intra-model
  communication of training is left out, as in ``reports.estimate``.

Beside the bound every job carries a prediction (``predicted_s``; the bound stays in
``time``): generation through the rollout timeline with the engine model of
:mod:`rlmcost.perf.generation` (kernels by shape, TP all-reduces, per-step overhead, chunked
prefill), forwards and training steps with :mod:`rlmcost.perf.rl_step` (per-kernel efficiency,
exposed communication, bubbles, the optimizer; packed: ``group_passes``), never below the
bound; each job has the phase name the frameworks print (``PHASES``). Framework behaviours:
static batchers (HF ``generate``, DeepSpeed-Chat's Hybrid Engine, an engine handed
``sequences_per_call`` at a time) pad each batch, in admission order, to its longest (more
sequences than slots batch continuously inside, the next call starting when it returns: verl's
DAPO rounds); the Hybrid Engine generates a rank's batch in one call; DeepSpeed-Chat trains no
faster than its blog's rate and waits for every ZeRO-3 gather (:func:`dschat_floor_s`), AReaL's
realhf no faster than its paper's (``group_realhf``); vLLM admits by paged KV blocks and
preempts (``placement.paged``; recomputations join the work), SGLang by token slots against
its ``new_token_ratio`` reservation and retracts (``placement.sglang_admit``; the same way).
The group's transfers (resharding, refit, sleep/wake, controller, offload): ``group_transfers``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.arch import Arch
from rlmcost.deployment.engine_kv import cache_options
from rlmcost.deployment.kinds import EngineKind
from rlmcost.errors import SpecError
from rlmcost.memo import memoized
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.packed_weights import engine_packed
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.perf.deepspeed_chat import hybrid_engine_launch_s
from rlmcost.perf.eager_launch import eager_launch_s
from rlmcost.perf.efficiency import Device
from rlmcost.perf.engine_host import host_options
from rlmcost.perf.generation import CHUNK_TOKENS, Engine, EngineOptions
from rlmcost.placement.act_offload_job import activation_offload_s
from rlmcost.placement.admission import in_arrival
from rlmcost.placement.device_groups import DeviceGroup, Task
from rlmcost.placement.engine_budget import RUNNING, batched_tokens, cap_source, running_cap
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.group_decode import decode_cost
from rlmcost.placement.group_dschat import (
    dschat_floor_s,
    dschat_forward_floor_s,
    dschat_gathers_s,
    dschat_group,
)
from rlmcost.placement.group_gate import framework_stream
from rlmcost.placement.group_idle import verifier_states
from rlmcost.placement.group_key import forward_key, per_query, recall, task_key
from rlmcost.placement.group_passes import (
    packed_layout,
    packed_loss_s_of,
    packing,
    pass_packing,
    predict_forward,
    predict_train,
    reference_swap_s_of,
    train_head_s,
)
from rlmcost.placement.group_realhf import areal_server_lengths, realhf_task_floor_s
from rlmcost.placement.group_transfers import transfers
from rlmcost.placement.group_turns import decoded, with_turns
from rlmcost.placement.init_peak import group_init
from rlmcost.placement.inputs import Setup
from rlmcost.placement.jobs import GroupEstimate, Job
from rlmcost.placement.mtp import with_mtp
from rlmcost.placement.prefix_grouper import spared_work
from rlmcost.placement.reference_swap import device_residents
from rlmcost.placement.rollout import timeline
from rlmcost.placement.speculative import speculation_for
from rlmcost.placement.streaming import stream
from rlmcost.placement.task_work import depth_of, frozen_at, work_over_lengths
from rlmcost.placement.turn_kv import observed_pool
from rlmcost.placement.vision import with_vision
from rlmcost.timing import FORWARD, TRAIN, PhaseTime


def job(g: GroupModel, task: Task) -> Job:
    """``task`` evaluated on its group, a multi-turn rollout's observations and tool wait
    (:mod:`rlmcost.placement.group_turns`), the vision tower's and the MTP block's work
    included (:mod:`rlmcost.placement.vision`, :mod:`rlmcost.placement.mtp`)."""
    return with_mtp(g, task, with_vision(g, task, with_turns(g, task, _job(g, task),
                                                             engine_model)))


def _job(g: GroupModel, task: Task) -> Job:
    inv = task.invocation
    arch = g.s.arch(task.role)
    layout = g.layouts[task.index]
    lengths = g.lengths(task)
    work = work_over_lengths(task, arch, g.s.values, lengths, g.s.counting)
    work -= spared_work(g, task, arch)  # verl's PrefixGrouper: a group's prompt once
    model = g.s.specs[task.role].name
    n = g._int(inv.sequences)
    if task.kind is Kind.GENERATE:
        return _generate(g, task, arch, layout, decoded(g, task, lengths), work, model, n)
    depth = depth_of(inv, arch, frozen_at(g.s.values, g.longest(task)))
    if task.kind is Kind.FORWARD:
        if g.s.groups_seen is None:  # nothing kept (memo.plain): no key to make
            own, host, time, bound, pred, parts = _forward(g, task, work)
        else:
            key = (forward_key(g, task, layout), reference_swap_s_of(g, task))  # (its doc)
            own, host, time, bound, pred, parts = per_query(g.s, key,
                                                            lambda: _forward(g, task, work))
        g.known_own(task, own, host)
        return Job(
            task, model, layout, n, work, depth, own, g.with_residents(task, own), time, bound,
            predicted_s=pred, predicted_ideal_s=pred, predicted_parts_s=dict(parts),
            tokens=packing(g, task)[2],
        )  # fmt: skip
    own = g.own(task)
    shared = None if g.s.groups_seen is None else task_key(g, task, layout)  # None: not shared
    if shared is None:
        numbers = _train(g, task, work)
    else:
        numbers = per_query(g.s, ("train", shared), lambda: _train(g, task, work))
    time, bound, bubble, micro_batches, pred, pred_ideal, parts = numbers
    return Job(
        task, model, layout, n, work, depth, own, g.with_residents(task, own), time, bound,
        bubble, micro_batches, predicted_s=pred, predicted_ideal_s=pred_ideal,
        predicted_parts_s=dict(parts), tokens=packing(g, task)[2],
    )  # fmt: skip


def _train(g: GroupModel, task: Task, work: int) -> tuple[Any, ...]:
    """A training job's own numbers: its time (the roofline bound with the pipeline bubble
    and the exposed offload traffic), the bound without the bubble, the bubble fraction,
    micro-batches, prediction, prediction without the bubble and its parts (kept per
    ``group_key.task_key``: the memory beside it is the group's)."""
    layout = g.layouts[task.index]
    inv = task.invocation
    own = g.own(task)
    roof = g.pass_roofline(layout.n_gpus)  # an FP8 trainer's at its FP8 peak
    steps = g._int(inv.passes) * g._int(inv.steps)
    step_bytes = 2 * g.weights_read(task) + 2 * own.gradients + 2 * own.optimizer
    busy = work * g.load_factor(task) / steps
    ideal = roof.phase(busy, step_bytes, TRAIN).times(steps)
    share = data_share(layout, g.batch(task), g.seq_len(task))
    bubble = bubble_fraction(
        layout.schedule, layout.pp, share.micro_batches, layout.virtual_stages
    )
    time = ideal.scaled(1 + bubble)
    host_s = steps * g.offload_traffic_bytes(task) / g.s.host_bytes_per_s
    per_host = min(g.gpus, g.s.hardware.host_gpus)
    cpu_s = steps * g.host_adam_s(task, per_host)  # after the transfer
    if host_s:  # exposed: the step waits for its states (ZeRO-Offload overlaps little)
        time = PhaseTime(time.compute_s, time.memory_s, time.bound_s + host_s,
                         time.compute_bound_s)  # fmt: skip
    step, per_step = predict_train(g, task)
    floor_s = steps * dschat_floor_s(g, task, per_step, step.micro_batches)
    realhf_s = realhf_task_floor_s(g, task)  # AReaL's trainer at its measured rate
    loss_s = steps * packed_loss_s_of(g, task, step.micro_batches)  # NeMo RL, per sequence
    pageable_s = g.pageable_offload_s(task)  # NeMo RL's optimizer through pageable memory
    act_s = activation_offload_s(g, task, step, per_step, steps)  # verl's activation offload
    model_s = max(steps * step.step_s + loss_s, floor_s, realhf_s) + host_s + cpu_s + \
        pageable_s + act_s  # fmt: skip
    pred = max(model_s, time.bound_s)
    parts = {
        **{f"compute_{k}_s": steps * v for k, v in step.compute_s.items()},
        **{f"exposed_{k}_s": steps * v for k, v in step.exposed_comm_s.items()},
        "bubble_s": steps * step.bubble_s,
        "optimizer_s": steps * step.optimizer_s,
        "offload_s": float(host_s),
        "pageable_offload_s": pageable_s, "activation_offload_s": act_s,
        "cpu_adam_s": float(cpu_s),
        "dschat_achieved_rate_s": floor_s, "realhf_achieved_rate_s": realhf_s,
        "logprob_head_s": steps * train_head_s(g, task, per_step),
        "packed_loss_s": loss_s,
        "optimizer_steps": steps,
        "sequences_per_step": per_step.sequences,
        "packed_seq_len": per_step.seq_len,
    }
    return (time, ideal.bound_s, bubble, share.micro_batches, pred,
            max(pred - steps * step.bubble_s, ideal.bound_s), parts)  # fmt: skip


def _forward(g: GroupModel, task: Task, work: int) -> tuple[Any, ...]:
    """A forward job's own numbers: its own and host bytes, time (the roofline bound, at least the
    parameter gathers' link time: one ZeRO-3 gather per micro-batch, and under a token budget
    the micro-batches are the packed ones the prediction runs, not the longest sequence's),
    the bound, prediction and its parts (kept per ``group_key.forward_key``)."""
    layout = g.layouts[task.index]
    own, host = g.own(task), g.host(task)
    share = data_share(layout, g.batch(task), g.seq_len(task))
    base = g.pass_roofline(layout.n_gpus).phase(work * g.load_factor(task), g.weights_read(task),
                                                FORWARD)  # fmt: skip
    p = pass_packing(g, task)
    budgeted = packed_layout(g, task, p.seq_len)
    if budgeted is not layout:  # a token budget: its packed micro-batches
        share = data_share(budgeted, p.sequences, p.seq_len)
    link = share.micro_batches * g.gather_s(task)
    time = _at_least(base, link)
    fwd = predict_forward(g, task)
    swap = reference_swap_s_of(g, task)  # NeMo RL's reference through the host
    pred = max(fwd.time_s, time.bound_s, realhf_task_floor_s(g, task)) + swap
    if dschat_group(g):  # the measured rate, and the gathers wait in line (group_dschat)
        compute = max(fwd.compute_s, dschat_forward_floor_s(g, task))
        pred = max(pred, compute + dschat_gathers_s(g, task, share.micro_batches))
    parts = {**fwd.to_json(), **({"reference_swap_s": swap} if swap else {})}
    return own, host, time, base.bound_s, pred, parts


# -- generation ----------------------------------------------------------------------------


def engine_model(g: GroupModel, task: Task) -> Engine:
    """The generation replica's engine model (its TP and EP degrees; vLLM prefills in chunks of
    its ``max_num_batched_tokens``, Megatron-core of its ``max_tokens``: :func:`~rlmcost.
    placement.engine_budget.batched_tokens`); HF
    ``generate`` and an engine with ``enforce_eager`` run eager kernels: a step lasts at least
    their launch time (``eager_launch_s``, dense and MoE layers apart; the Hybrid Engine's
    measured, ``deepspeed_chat.hybrid_engine_launch_s``); vLLM's per-request host work is on
    the step's critical path (``VLLM_HOST_S_PER_SEQUENCE``) when the framework calls
    ``LLM.generate`` in process, a floor under the step when it streams (``partial_rollout``:
    an ``AsyncLLM``), Megatron-core's own on the path either way, absent on SGLang (its
    overlap scheduler) and static batchers (no per-request state); host terms at the
    hardware's host speed (``engine_host.host_options``), eager launches too; cache: engine_kv."""
    layout, wl, arch = g.layouts[task.index], g.workload(task), g.s.arch(task.role)
    inv = task.invocation
    launch = hybrid_engine_launch_s(arch) if g.engine.kind.hybrid_engine else 0.0
    if g.engine.kind is EngineKind.HF or (g.engine.eager and not g.s.deployment.ideal):
        launch = eager_launch_s(arch)
    kind = g.engine.kind
    if kind is EngineKind.VLLM and layout.attention_dp > 1 and not arch.is_moe:
        raise SpecError(f"--dp-attention {layout.attention_dp} with vLLM and {arch.name}, a dense "
                        "model: vLLM's data-parallel ranks share only an expert group (docs/"
                        "serving/data_parallel_deployment.md), so a dense model's are independent "
                        f"replicas; give --rollout-tp {layout.tp // layout.attention_dp} without "
                        "--dp-attention")  # fmt: skip
    host = host_options(g.s.hardware.host_time_factor, not g.s.deployment.partial_rollout, kind)
    options = EngineOptions(
        step_overhead_s=host.step_overhead_s, per_sequence_s=host.per_sequence_s,
        overlapped_s_per_sequence=host.overlapped_s_per_sequence,
        launch_s=launch * g.s.hardware.host_time_factor,
        chunk_tokens=batched_tokens(g) if kind in ("vllm", "megatron") else CHUNK_TOKENS,
        attention_dp=layout.attention_dp, packed=engine_packed(wl),  # DP attention, 4-bit weights
        **cache_options(g.engine.kind, arch, g.s.workload.weight_dtype, g.s.deployment.ideal,
                        lambda: (g._int_at(inv.prompt, g.longest(task)), g.seq_len(task))),
    )  # fmt: skip
    return _engine(
        arch, Device(g.s.hardware, wl.compute_dtype), layout.tp, layout.ep, wl.kv_dtype.bytes,
        wl.activation_dtype.bytes, options, task.value_head, speculation_for(g, task),
    )  # fmt: skip


_engine = memoized()(Engine)
"""One engine model per distinct arguments (its kernel times are pure; shared, they are
computed once for every deployment that runs the same replica)."""


def static_batches(lengths: Sequence[int], slots: int) -> tuple[int, ...]:
    """Response lengths as a static batcher runs them (HF ``generate``, DeepSpeed-Chat):
    batches of ``slots`` sequences in admission order, each padded to its longest, so that
    no slot is refilled before its batch ends.

    >>> static_batches((5, 1, 3, 2), 2)
    (5, 5, 3, 3)
    """
    out: list[int] = []
    for i in range(0, len(lengths), slots):
        batch = lengths[i:i + slots]
        out += [max(batch)] * len(batch)
    return tuple(out)


def _unadmitted(padded: tuple[int, ...], order: list[int]) -> tuple[int, ...]:
    """``padded`` (admission order) placed back so that ``timeline``, which admits
    ``lengths[order[i]]`` i-th, admits them in this order and the static batches stay whole.

    >>> _unadmitted((5, 5, 3, 3), [2, 0, 3, 1])
    (5, 3, 5, 3)
    """
    out = [0] * len(padded)
    for i, j in enumerate(order):
        out[j] = padded[i]
    return tuple(out)


def _generate(
    g: GroupModel, task: Task, arch: Arch, layout: Layout, lengths: tuple[int, ...], work: int,
    model: str, n: int,
) -> Job:  # fmt: skip
    inv = task.invocation
    replicas = layout.dp
    if n < replicas:
        raise SpecError(
            f"{n} sequences cannot feed the {replicas} generation replicas of group "
            f"{task.group}; use a larger batch or fewer GPUs there"
        )
    prompt = g._int_at(inv.prompt, g.longest(task))
    responses = lengths if inv.response == "T" else (g._int(inv.response),) * n
    mine = areal_server_lengths(g, responses, replicas)  # whole groups under AReaL's manager
    # a streaming rollout lets ``rollout_in_flight`` batches into the engines at once
    depth = g.s.deployment.rollout_in_flight if g.s.deployment.partial_rollout else 1
    if g.engine_task is task:
        slots, own = g.engine_memory(task, len(mine) * depth)
    elif g.engine.kind.hybrid_engine and not g.s.deployment.ideal:
        # DeepSpeed-Chat generates each rank's whole batch in one generate() call
        # (ppo_trainer.py generate_experience): it fits or the run does not
        slots = max(1, min(len(mine), g.engine.max_seqs))
        own = g.own(task, slots * replicas)
    else:
        slots = g.slots(task, replicas, len(mine))
        own = g.own(task, slots * replicas)
    memory = g.with_residents(task, own)
    cost = decode_cost(g, task, arch, layout, prompt)
    call = g.engine.sequences_per_call
    rounds, by_call = None, False  # calls larger than the slots: continuous batching inside
    # vLLM / SGLang: KV blocks / tokens admit, preempt or retract (a stream keeps its slots)
    paged = None if g.s.deployment.partial_rollout else g.engine_pool(task)
    paged = observed_pool(g, task, paged, replicas)  # multi-turn: observations in the KV
    cap = max(1, min(len(mine) * depth, running_cap(g, task)))
    if paged is not None and (call is None or call > slots):
        rounds, slots = call, cap  # the pool, not a full-length reservation, limits
    elif g.engine.kind.static and not g.s.deployment.ideal:
        order, arrival = in_arrival(mine)
        mine = _unadmitted(static_batches(arrival, max(1, min(slots, g.engine.max_seqs))),
                           order)  # fmt: skip
    elif call is not None and call > slots and not g.s.deployment.ideal:
        rounds = call
    elif call is not None and not g.s.deployment.ideal:  # calls one after another
        by_call, slots = call <= slots, max(1, min(slots, call))
        order, arrival = in_arrival(mine)
        mine = _unadmitted(static_batches(arrival, slots), order)
    tl = timeline(
        arch, prompt, mine, slots, cost, g.roofline(layout.n_gpus // replicas, task),
        engine_model(g, task), rounds, paged,
    )  # fmt: skip
    if tl.capped and (by_call or tl.capped == RUNNING):  # the calls, or what the cap is of
        tl = replace(tl, capped="call" if by_call else cap_source(g, task))
    time = tl.time
    pred = max(tl.predicted_s, time.bound_s)
    latency, parts = None, {"decode_s": tl.predicted_decode_s, "prefill_s": tl.predicted_prefill_s}
    if g.s.deployment.partial_rollout:  # the engines stream across batches (``streaming``)
        if g.engine.kind.static:
            raise SpecError(f"--partial-rollout streams samples through a continuous-batching "
                            f"engine; {g.engine.kind} runs static batches: use vllm or sglang")
        st = stream(arch, prompt, mine, slots, cost, g.roofline(layout.n_gpus // replicas, task),
                    engine_model(g, task), g.s.counting, depth,
                    framework_stream(g.s, mine, replicas, depth, g.engine))  # fmt: skip
        time, pred, latency = st.time, max(st.predicted_s, st.time.bound_s), st.version_gate
        parts = {"decode_s": st.decode_s, "prefill_s": st.prefill_s,
                 "reprefill_s": st.reprefill_s}  # fmt: skip
    ideal = time.bound_s
    work += replicas * (tl.recompute_flops - tl.shared_flops)  # re-prefills, shared prompts
    return Job(
        task, model, layout, n, work, tl.depth, own, memory, time, ideal, timeline=tl,
        predicted_s=pred, predicted_ideal_s=pred, predicted_parts_s=parts,
        tokens=n * prompt + sum(responses), version_gate=latency,
    )  # fmt: skip


# -- transfers ------------------------------------------------------------------------------


def estimate(g: GroupModel) -> GroupEstimate:
    jobs = tuple(job(g, t) for t in g.tasks)
    init = group_init(g, jobs)  # adds "does not fit at init" to g.problems
    return GroupEstimate(
        g.group.name, g.gpus, jobs, device_residents(g), g.shadows, tuple(transfers(g, jobs)),
        g.s.capacity_bytes, tuple(dict.fromkeys(g.problems)),
        {j.task.index: g.host_bytes(j.task) for j in jobs}, g.s.hardware.name, init,
        verifier_states(g), tuple((j.phase, *g.kept[("over budget", j.task.index)])
                                  for j in jobs if ("over budget", j.task.index) in g.kept),
        g.sglang_gpus,
    )  # fmt: skip


def _at_least(t: PhaseTime, seconds: float) -> PhaseTime:
    if seconds <= t.bound_s:
        return t
    return PhaseTime(t.compute_s, t.memory_s, seconds, 0.0)


def estimate_group(setup: Setup, group: DeviceGroup, gpus: int) -> GroupEstimate:
    """One group on ``gpus`` devices of its own accelerator (``Setup.on``; SpecError when its
    layouts cannot use them); kept across the deployments of a query that give it the same
    inputs (``group_key``)."""
    return recall(setup, group, gpus, lambda: estimate(GroupModel(setup.on(group), group, gpus)))
