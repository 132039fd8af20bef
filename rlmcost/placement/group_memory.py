"""What the devices of one group hold while each of its invocations runs, besides its own bytes.

Every model placed on the group stays resident (weights; gradients and Adam states for the ones
it trains), a trainable model read but not trained there keeps the bf16 shadow copy M_sh, and
an invocation in a layout other than its model's training layout adds its own copy (the second
layout of hybrid execution). With ``offload`` the idle models wait in host memory. Generation
admits only as many sequences as the KV cache left on the device holds; the rest waits for
free slots (waves). Under stage fusion the streamed assessment's buffer lives beside the KV
cache and the interleaved training pipelines' activations beside each other. The iteration's
batch of samples sits beside the forwards and the update as the framework keeps it (rollout
buffers, :meth:`GroupMemory.rollout_buffers`).
"""

from __future__ import annotations

from collections.abc import Iterable

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.deployment.buffers import RolloutBuffers
from rlmcost.deployment.kinds import PHASE_OFFLOADS, EngineKind
from rlmcost.deployment.terms import engine_slots, overhead_bytes, pool_tokens
from rlmcost.frameworks.presets import behaviour
from rlmcost.memo import kept_property
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.parallel.layout import ZeroStage
from rlmcost.placement.breakdown_ops import STATES, TERMS, breakdown, with_terms
from rlmcost.placement.device_groups import Task
from rlmcost.placement.engine_budget import engine_budget, kv_terms, running_cap
from rlmcost.placement.group_batch import rollout_buffers_of
from rlmcost.placement.group_engine import GroupEngine
from rlmcost.placement.group_key import per_query, task_key
from rlmcost.placement.head_peak import hf_trainer
from rlmcost.placement.hybrid_workspace import workspace_bytes
from rlmcost.placement.paged import Paged
from rlmcost.placement.prefix_share import engine_share
from rlmcost.placement.reference_swap import idle_host_bytes, swapped_reference
from rlmcost.placement.sglang_admit import TokenPool

_ROLLOUT, _ENGINE, _BUFFERS, _OVERHEAD = (TERMS.index(n) for n in ("rollout", "engine", "buffers",
                                                                   "overhead"))
assert TERMS[:3] == STATES  # GroupMemory.states: a model's states are the first three terms
_NO_TRANSIENTS = (0,) * (len(TERMS) - len(STATES))
_PAGED = (EngineKind.VLLM, EngineKind.SGLANG, EngineKind.MEGATRON)
"""Engines with a KV pool that admits sequences as blocks or token slots free up."""


def _transients(m: MemoryBreakdown) -> tuple[int, ...]:
    """``m``'s activations, logits and buffers as :meth:`GroupMemory.fused_extra`'s terms."""
    return (m.activations, 0, m.logits, m.buffers, 0, 0, 0)


def switches(kinds: Iterable[Kind]) -> bool:
    """The GPUs of a group running invocations of ``kinds`` switch between generation and
    training (a colocated RL group): the caching allocator's larger slack without expandable
    segments (:meth:`~rlmcost.deployment.spec.Overhead.allocator_slack_for`)."""
    kinds = set(kinds)
    return Kind.GENERATE in kinds and Kind.TRAIN in kinds


class GroupMemory(GroupEngine):
    """A group's residency, host memory, generation engine and fused transients."""

    # -- residency ------------------------------------------------------------------------------

    def trains_here(self, role: Role) -> Task | None:
        """The group's task that trains ``role``, if any (kept per model)."""
        try:
            return self._trains[role]
        except KeyError:
            out = self._trains[role] = next(
                (t for t in self.tasks if t.role is role and t.kind is Kind.TRAIN), None
            )
            return out

    @kept_property
    def roles(self) -> tuple[Role, ...]:
        """The models of the group's tasks, in the tasks' order (each once)."""
        return tuple(dict.fromkeys(t.role for t in self.tasks))

    @kept_property
    def switching(self) -> bool:
        """:func:`switches` of the group's tasks' kinds."""
        return switches(t.kind for t in self.tasks)

    def switching_at(self, task: Task) -> bool:
        """Whether ``task``'s allocations meet blocks cached by the other kind of invocation
        (:attr:`switching`), except a generation on DeepSpeed's Hybrid Engine whose actor
        trains under ZeRO-3: the engine empties PyTorch's cache as it enters generation
        (deepspeed/runtime/hybrid_engine.py at the DeepSpeed-Chat release, DeepSpeed
        47f9f13bd: ``eval()`` runs ``gc.collect(); empty_cache()`` when ``Z3_enabled``, and
        ``generate()`` again after gathering the inference-TP shards, before ``_generate``;
        ppo_trainer.py ``generate_experience`` calls ``eval()`` first), so the trainer's freed
        blocks are back with the driver and generation allocates as a process of one
        pattern (:data:`~rlmcost.deployment.overhead.ALLOCATOR_SLACK`). Training after it
        keeps the switching slack: ``train()`` empties nothing."""
        if not self.switching or task.kind is not Kind.GENERATE:
            return self.switching
        train = self.trains_here(task.role)
        return not (self.engine.kind.hybrid_engine and train is not None
                    and self.layouts[train.index].zero is ZeroStage.OS_G_P)  # fmt: skip

    def resident(self, role: Role) -> MemoryBreakdown:
        """The states ``role`` keeps on each device of the group all iteration (built from
        :meth:`states` when a caller asks)."""
        return breakdown((*self.states(role), 0, 0, 0, 0, 0, 0, 0))

    @kept_property
    def residents(self) -> dict[Role, MemoryBreakdown]:
        """:meth:`resident` of each of the group's models, in :attr:`roles` order."""
        return {r: self.resident(r) for r in self.roles}

    def states(self, role: Role) -> tuple[int, int, int]:
        """:meth:`resident` as its :data:`STATES` terms (weights, gradients, optimizer bytes
        per device, the first three of :data:`TERMS`; every other term is 0), kept per model:
        a model trained here keeps its update's states, any other its first task's weights."""
        try:
            return self._resident[role]
        except KeyError:
            train = self.trains_here(role)
            if train is not None:
                own = self.own(train)
                out = self._resident[role] = (own.weights, own.gradients, own.optimizer)
            else:
                first = next(t for t in self.tasks if t.role is role)
                out = self._resident[role] = (self.own(first).weights, 0, 0)
            return out

    def phase_offloaded(self, role: Role, task: Task) -> tuple[int, int, int] | None:
        """The states of ``role`` waiting in host memory while ``task`` runs (as
        :meth:`states`), under the group trainer's between-phases offload
        (:data:`~rlmcost.deployment.kinds.PHASE_OFFLOADS`; verl ``fsdp_config.param_offload``
        / ``optimizer_offload``, ``verl/workers/fsdp_workers.py``; NeMo RL
        ``offload_before_refit`` / ``offload_after_refit``,
        ``nemo_rl/models/policy/dtensor_policy_worker.py``): the optimizer states and the
        gradient buffer outside ``role``'s update, the parameter shard outside ``role``'s own
        forwards and update (its generation runs in the engine's copy). None (nothing away)
        for a model the group does not train; kept per model and task."""
        key = ("away", role, task.index)
        try:
            return self.kept[key]
        except KeyError:
            out = self.kept[key] = self._phase_offloaded(role, task)
            return out

    def _phase_offloaded(self, role: Role, task: Task) -> tuple[int, int, int] | None:
        train = self.trains_here(role)
        if train is None or task is train or self.s.deployment.ideal:
            return None
        names = {PHASE_OFFLOADS[o] for o in self.train_offload() if o in PHASE_OFFLOADS}
        if not names:
            return None
        if task.role is role and task.kind is not Kind.GENERATE:
            names.discard("weights")
        w, g, o = self.states(role)
        return (w if "weights" in names else 0, g if "gradients" in names else 0,
                o if "optimizer" in names else 0)  # fmt: skip

    def present(self, role: Role, task: Task) -> tuple[int, int, int]:
        """The states of ``role`` on each device while ``task`` runs (as :meth:`states`):
        resident, less what waits in host memory between phases (:meth:`phase_offloaded`),
        less the gradients outside ``role``'s update where its trainer frees them there
        (:meth:`grads_freed`)."""
        here = self.states(role)
        if here[1] and self.grads_freed(role, task):
            here = (here[0], 0, here[2])
        away = self.phase_offloaded(role, task)
        if away is None:
            return here
        return (here[0] - away[0], here[1] - min(here[1], away[1]), here[2] - away[2])

    def grads_freed(self, role: Role, task: Task) -> bool:
        """``role`` holds no gradients while ``task`` runs: it trains here, ``task`` is not its
        update, and the framework's FSDP trainer (a layout without TP, PP or EP where the
        framework has a Megatron-core backend, ``Behaviour.megatron_colocated``) ends each
        update by setting the gradients to None (``Behaviour.grads_freed_after_update``; verl
        ``dp_actor.update_policy``: ``actor_optimizer.zero_grad()``, set_to_none; Megatron's
        gradient buffer is persistent and only zeroed)."""
        train = self.trains_here(role)
        if train is None or task is train or self.s.deployment.ideal:
            return False
        beh = behaviour(self.s.deployment.framework)
        if beh is None or not beh.grads_freed_after_update:
            return False
        return hf_trainer(beh, self.layouts[train.index])

    @kept_property
    def shadows(self) -> tuple[Role, ...]:
        trained_elsewhere = {t.role for t in self.s.tasks if t.kind is Kind.TRAIN}
        return tuple(
            r
            for r in self.roles
            if r in trained_elsewhere and self.trains_here(r) is None
        )

    def two_layouts(self, task: Task) -> bool:
        """The task runs its model in a layout other than the model's training layout here."""
        train = self.trains_here(task.role)
        return (
            train is not None
            and task.kind is not Kind.TRAIN
            and not self.same_model(task, train)
        )

    def with_residents(self, task: Task, own: MemoryBreakdown) -> MemoryBreakdown:
        """``own`` plus the other models resident on the group (none when offloading); the
        task's own model keeps its states, and a second layout adds its own copy. Deployed:
        plus an awake engine's reservation while another task runs, a Hybrid Engine's
        DeepSpeed-Inference workspace (:mod:`rlmcost.placement.hybrid_workspace`), and the
        per-process overhead (:func:`~rlmcost.deployment.terms.overhead_bytes`)."""
        mine, two, rest = self._beside(task)
        # term by term (exact ints, so the order of the additions is immaterial): the
        # model's states present beside (two layouts) or at most once with the own bytes
        o = tuple(own.__dict__.values())
        if two:
            terms = [mine[0] + o[0] + rest[0], mine[1] + o[1] + rest[1],
                     mine[2] + o[2] + rest[2]]  # fmt: skip
        else:
            terms = [max(mine[0], o[0]) + rest[0], max(mine[1], o[1]) + rest[1],
                     max(mine[2], o[2]) + rest[2]]  # fmt: skip
        terms += map(int.__add__, o[3:], rest[3:])
        dep = self.s.deployment
        if dep.ideal:
            return breakdown(terms)
        terms[_ROLLOUT] = self.rollout_buffers(task).device
        engine = self.engine_task
        pool = 0  # the engine's preallocated bytes: no allocator slack on them
        if engine is not None and task.kind is not Kind.GENERATE and not self.engine.sleep:
            terms[_ENGINE] = pool = self.reservation
        elif engine is task:
            pool = own.total
        terms[_BUFFERS] += self.refit_extra(task, own, sum(terms))  # its own tasks' (or 0)
        workspace, gathered = workspace_bytes(self, task, own)  # workspace: no allocator slack
        terms[_ENGINE] += workspace + gathered
        pool += workspace
        terms[_OVERHEAD] = overhead_bytes(sum(terms) - pool, self.gpus, dep.overhead,
                                          self.switching_at(task), self.sglang_gpus)  # fmt: skip
        return breakdown(terms)

    def _beside(self, task: Task) -> tuple[tuple[int, int, int], bool, tuple[int, ...]]:
        """What :meth:`with_residents` adds to any own bytes of ``task``, kept per task: its
        model's states present (as :meth:`states`), whether it runs a second layout, and the
        sum of the other models present and the fused transients, every term in
        :data:`TERMS` order (exact ints: the sum's order is immaterial)."""
        key = ("beside", task.index)
        try:
            return self.kept[key]
        except KeyError:
            tk = None
            if self.s.groups_seen is not None and self._engine_free:
                # kept for the groups of the same key but for the engine (group_key.task_key)
                tk = task_key(self, task, self.layouts[task.index])
            if tk is not None:
                out = per_query(self.s, ("beside", tk), lambda: self._beside_of(task))
            else:
                out = self._beside_of(task)
            self.kept[key] = out
            return out

    def _beside_of(self, task: Task) -> tuple[tuple[int, int, int], bool, tuple[int, ...]]:
        w = g = o = 0
        if not self.s.placement.offload:
            for r in self.roles:
                if r is not task.role:
                    rw, rg, ro = self.present(r, task)
                    w, g, o = w + rw, g + rg, o + ro
        rest = (w, g, o, *self.fused_extra(task))
        swap = swapped_reference(self) if task.role is Role.REFERENCE else 0  # in the policy's
        mine = (swap, 0, 0) if swap else self.present(task.role, task)  # parameter storage
        return mine, self.two_layouts(task), rest

    @kept_property
    def _engine_free(self) -> bool:
        """No model's resident bytes here come from its generation (which reads the engine):
        each model present trains here or has a first task that does not generate."""
        return all(self.trains_here(r) is not None or next(
            t for t in self.tasks if t.role is r).kind is not Kind.GENERATE for r in self.roles)

    def host_bytes(self, task: Task) -> int:
        """Host memory per device while ``task`` runs: offloaded trainer states of the
        group's models (kept there, or waiting there between phases), idle models under
        ``offload_idle``, a swapped reference's copy (:mod:`rlmcost.placement.reference_swap`),
        what the engine parks there (``GroupEngine.engine_parked``)."""
        if self.s.deployment.ideal:
            return 0
        total, swap = self._host_kept, swapped_reference(self)  # NeMo RL's reference copy
        for role in self.roles:
            idle = self.s.placement.offload and role is not task.role  # or the swapped copy:
            total += idle_host_bytes(self, role, task, swap) if idle or swap and role is \
                Role.REFERENCE else sum(self.phase_offloaded(role, task) or ())  # fmt: skip
        if self.engine_task is not None and task.kind is not Kind.GENERATE:
            total += self.engine_parked  # a sleeping engine's weights, a Megatron engine's copy
        return total + self.rollout_buffers(task).host

    @kept_property
    def _host_kept(self) -> int:
        """The trainers' states kept in host memory (offload), whatever task runs."""
        return sum(self.host(t) for t in map(self.trains_here, self.roles) if t is not None)

    def rollout_buffers(self, task: Task) -> RolloutBuffers:
        """The iteration's batch of samples while ``task`` runs, as the deployment's framework
        keeps it (:func:`~rlmcost.deployment.buffers.rollout_buffer_bytes`): on each device
        and in host memory per device, during the forwards and the update of an algorithm
        that generates (none while generating: the batch is assembled after it, and freed
        after the update). The batch is the task's sequences at their response lengths; the
        reference's log-probs exist when the algorithm runs a reference, values and GAE
        advantages when it runs a critic, routed-expert ids under ``routing_replay`` of an
        MoE actor. Kept per task for the group."""
        key = ("rollout", task.index)
        if key not in self.kept:
            self.kept[key] = rollout_buffers_of(self, task)
        return self.kept[key]

    def fused_extra(self, task: Task) -> tuple[int, ...]:
        """Under stage fusion, the transients that live beside the task's: the largest
        assessment buffer while generation streams, the other interleaved training
        pipelines' activations while training (the terms of :data:`TERMS` after
        :data:`STATES`: activations, kv_cache (0), logits, buffers, engine, overhead and
        rollout (0))."""
        if not self.s.placement.fusion or task.kind not in (Kind.GENERATE, Kind.TRAIN):
            return _NO_TRANSIENTS
        if task.kind is Kind.GENERATE:
            streamed = [_transients(self.own(t)) for t in self.tasks
                        if t.stage is Stage.ASSESSMENT]  # fmt: skip
            return max(streamed, key=sum, default=_NO_TRANSIENTS)
        a = lg = b = 0
        for t in self.tasks:
            if t.kind is Kind.TRAIN and t is not task:
                m = self.own(t)
                a, lg, b = a + m.activations, lg + m.logits, b + m.buffers
        return (a, 0, lg, b, 0, 0, 0)

    def engine_memory(self, task: Task, share: int) -> tuple[int, MemoryBreakdown]:
        """The engine's sequences at once per replica and its bytes per device: it reserves
        ``gpu_memory_utilization`` of the device (:func:`~rlmcost.deployment.terms.
        reservation_bytes`); the weights and the engine's workspace come out of it (vLLM: its
        start-up profile run, :mod:`rlmcost.placement.engine_budget`), and the rest is
        the KV-cache pool (:func:`~rlmcost.deployment.terms.kv_pool_bytes`), which holds
        :func:`~rlmcost.deployment.terms.engine_slots` sequences. When the pool cannot hold one
        sequence the bytes are what one sequence needs, and the group reports the problem."""
        one, pool = engine_budget(self, task)
        layout = self.layouts[task.index]
        tokens = -(-self.seq_len(task) // layout.cp)
        eng = self.engine
        slots = engine_slots(*kv_terms(self, task, one, pool), tokens, eng.kv_block_tokens,
                             running_cap(self, task), share)  # fmt: skip
        if slots == 0:
            self.problems.append(
                f"{task.label()} on {self.group.name}: the engine's reservation "
                f"({self.engine_fraction:g} of the device, {self.reservation / 2**30:.1f} GiB) "
                f"leaves {max(pool, 0) / 2**30:.2f} GiB for the KV cache, less than one "
                f"sequence's {one.kv_cache / 2**30:.2f} GiB; raise --gpu-memory-utilization or "
                "--rollout-tp" if eng.kind is not EngineKind.MEGATRON else f"{task.label()} on "
                f"{self.group.name}: the engine's KV pool ({pool / 2**30:.2f} GiB, "
                "--kv-buffer-gib) holds less than "
                f"one sequence's {one.kv_cache / 2**30:.2f} GiB; raise --kv-buffer-gib"
            )
            return 1, one
        return slots, with_terms(one, kv_cache=pool)

    def engine_pool(self, task: Task) -> Paged | TokenPool | None:
        """The engine replica's KV pool: :meth:`engine_memory`'s pool per device in sequence
        tokens (x CP: a device holds 1/CP of each). vLLM: in whole blocks
        (:func:`~rlmcost.deployment.terms.pool_tokens`, :mod:`rlmcost.placement.paged`);
        SGLang: in token slots (page size 1, ``max_total_num_tokens``) with the requests'
        ``max_new_tokens``, the task's longest response (:mod:`rlmcost.placement.sglang_admit`).
        Either shares a group's cached prompt S where the engine caches prefixes (a judge's
        S + T none: :mod:`rlmcost.placement.prefix_share`). None for static batchers."""
        kind = self.engine.kind
        if self.engine_task is not task or kind not in _PAGED:
            return None
        one, pool = engine_budget(self, task)
        cp = self.layouts[task.index].cp
        block = 1 if kind is EngineKind.SGLANG else self.engine.kv_block_tokens
        tokens = pool_tokens(*kv_terms(self, task, one, pool), -(-self.seq_len(task) // cp), block)
        k = self.s.workload.samples_per_prompt if task.invocation.prompt == "S" else 1
        share = engine_share(self.engine, k, block * cp, self.s.counting)
        if kind is EngineKind.SGLANG:
            max_new = self._int_at(task.invocation.response, self.longest(task))
            return TokenPool(tokens * cp, max_new, self.s.counting, share=share,
                             lpm=self.engine.schedule_policy == "lpm")
        return Paged(tokens * cp, block * cp, self.s.counting, share)

    def slots(self, task: Task, replicas: int, share: int) -> int:
        """Sequences one replica keeps in flight: all of its share, or what the HBM left after
        everything else on the device holds (KV cache, logits, buffers grow per sequence)."""
        hbm = self.s.capacity_bytes

        def total(per_replica: int) -> int:
            return self.with_residents(task, self.own(task, per_replica * replicas)).total

        if share == 1 or total(share) <= hbm:
            return share
        one, two = total(1), total(2)
        if one > hbm:
            return share  # not even one sequence fits: report the whole batch's shortfall
        per_seq = max(1, two - one)
        slots = min(share, 1 + (hbm - one) // per_seq)
        while slots > 1 and total(slots) > hbm:
            slots -= 1
        return slots
