"""One device group on real hardware: its invocations' work, depth, memory per device, time.

Every invocation runs on its group's devices in the layout its kind gets there
(``inputs.layout_for``). Per invocation:

* work: exact FLOPs over the sequences' own response lengths (``inputs.work_over_lengths``);
* depth: the longest sequence sets it (padded batches); generation's depth is the rollout
  timeline's longest slot chain (``rollout``);
* memory per device (``parallel.memory.memory_per_rank``, compiled: bf16 weights, gradients,
  activations and KV cache, fp32 Adam states and logits), plus what else the group holds:
  every model placed there stays resident (weights; gradients and Adam states for the ones it
  trains), a trainable model read but not trained there keeps the bf16 shadow copy M_sh, and
  an invocation in a layout other than its model's training layout adds its own copy (the
  second layout of hybrid execution). With ``offload`` the idle models wait in host memory.
  Generation admits only as many sequences as the KV cache left on the device holds; the rest
  waits for free slots (waves). Under stage fusion the streamed assessment's buffer lives
  beside the KV cache and the interleaved training pipelines' activations beside each other;
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
exposed communication, bubbles, the optimizer; packed sequences), never below the bound. Each
job has the phase name the frameworks print (``PHASES``).

The group's transfers (``transfer``): resharding before an invocation in a second layout, and
the offload switches between models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from fractions import Fraction

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.compiled.invocation import work_head_per_token, work_prefill
from rlmcost.compiled.memory import memory_per_rank, memory_per_stage
from rlmcost.deployment.memory import Placed, offloaded, with_logits_peak, with_lora
from rlmcost.deployment.spec import (
    ENGINE_COLOCATED_FRACTION,
    ENGINE_DEDICATED_FRACTION,
    EngineSpec,
    LoraSpec,
    Offload,
)
from rlmcost.deployment.terms import (
    engine_slots,
    kv_pool_bytes,
    lora_params,
    overhead_bytes,
    reservation_bytes,
)
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import MemoryBreakdown, Mode, data_share
from rlmcost.parallel.comm import group_is_intra_node
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import Engine
from rlmcost.perf.rl_step import forward_time, link_transfer_s, packed, train_time
from rlmcost.placement.groups import DeviceGroup, Task
from rlmcost.placement.inputs import (
    Setup,
    count_of,
    depth_of,
    engine_for,
    frozen_values,
    layout_for,
    work_over_lengths,
)
from rlmcost.placement.jobs import GroupEstimate, Job, Transfer
from rlmcost.placement.rollout import DecodeCost, decode_flops, replica_lengths, timeline
from rlmcost.placement.transfer import (
    group_link_bytes_per_s,
    offload_switch_time_s,
    reshard_bytes_per_device,
)
from rlmcost.timing import FORWARD, TRAIN, PhaseTime, Roofline

_MODE = {Kind.GENERATE: Mode.GENERATE, Kind.FORWARD: Mode.FORWARD, Kind.TRAIN: Mode.TRAIN}
_STATES = ("weights", "gradients", "optimizer")
EMPTY = MemoryBreakdown(0, 0, 0, 0, 0, 0, 0)


def _add(*parts: MemoryBreakdown) -> MemoryBreakdown:
    return MemoryBreakdown(
        **{f.name: sum(getattr(p, f.name) for p in parts) for f in fields(MemoryBreakdown)}
    )


def _only(m: MemoryBreakdown, names: Sequence[str]) -> MemoryBreakdown:
    return MemoryBreakdown(
        **{f.name: getattr(m, f.name) if f.name in names else 0 for f in fields(m)}
    )


class _Group:
    """Evaluates the tasks of one group on ``gpus`` devices (memoized per call)."""

    def __init__(self, setup: Setup, group: DeviceGroup, gpus: int):
        self.s = setup
        self.group = group
        self.gpus = gpus
        self.tasks = tuple(
            sorted(
                (t for t in setup.tasks if t.group == group.name),
                key=lambda t: (list(Stage).index(t.stage), t.index),
            )
        )
        self.layouts = {
            t.index: layout_for(setup, group.name, t.role, t.kind, gpus) for t in self.tasks
        }
        self._apply_token_budget()
        self._mem: dict[tuple, MemoryBreakdown] = {}
        self._host: dict[tuple, int] = {}
        self.problems: list[str] = []
        self._before_offload: dict[int, MemoryBreakdown] = {}

    def _apply_token_budget(self) -> None:
        """Dynamic batching (verl ``ppo_max_token_len_per_gpu``, ``log_prob_max_token_len_
        per_gpu``): a micro-batch holds as many padded sequences as the per-GPU token budget
        allows (a GPU of a context-parallel group holds 1 / P_c of each sequence)."""
        dep = self.s.deployment
        if dep.ideal:
            return
        for t in self.tasks:
            spec = {Kind.TRAIN: dep.train, Kind.FORWARD: dep.forward_layout()}.get(t.kind)
            if spec is None or spec.max_tokens_per_gpu is None:
                continue
            layout = self.layouts[t.index]
            seq = self.seq_len(t)
            per_gpu = -(-seq // layout.cp)
            if spec.max_tokens_per_gpu < per_gpu:
                raise SpecError(
                    f"--max-tokens-per-gpu {spec.max_tokens_per_gpu} is below one sequence "
                    f"({per_gpu} tokens per GPU of a {seq}-token sequence); give at least "
                    f"{per_gpu} or shorter sequences"
                )
            self.layouts[t.index] = layout.with_(micro_batch=spec.max_tokens_per_gpu // per_gpu)

    # -- sizes ---------------------------------------------------------------------------------

    def _int(self, text: str, values: Mapping[str, object] | None = None) -> int:
        value = count_of(text, frozen_values(values or self.s.values, keep_t=True))
        if not isinstance(value, int) or value < 1:
            raise SpecError(
                f"{self.s.alg.name}: {text} = {value} is not a positive whole number of "
                "sequences/tokens; adjust the batch, group or --oversample"
            )
        return int(value)

    def lengths(self, task: Task) -> tuple[int, ...]:
        n = self._int(task.invocation.sequences)
        return self.s.lengths.lengths(n, self.s.response)

    def seq_len(self, task: Task) -> int:
        """Padded context of the task's sequences: prompt + the longest response."""
        inv = task.invocation
        values = {**self.s.values, "T": max(self.lengths(task))}
        return self._int(inv.prompt, values) + self._int(inv.response, values)

    def batch(self, task: Task) -> int:
        """Sequences in memory at once (per optimizer step for train)."""
        inv = task.invocation
        n = self._int(inv.sequences)
        if inv.kind is Kind.TRAIN:
            steps = self._int(inv.steps)
            if n % steps:
                raise SpecError(
                    f"{self.s.alg.name}: {steps} mini-batches must divide the {n} training "
                    "sequences; change --mini-batches"
                )
            return n // steps
        if inv.kind is Kind.FORWARD:
            prefixes = self._int(inv.prefixes)
            if prefixes > 1 and self._int(inv.response) % prefixes:
                raise SpecError(
                    f"{self.s.alg.name}: {prefixes} PRM steps must divide the "
                    f"{self._int(inv.response)} response tokens; change --prm-steps"
                )
            return n * prefixes
        return n

    def own(self, task: Task, sequences: int | None = None) -> MemoryBreakdown:
        """The invocation's bytes per device in its layout (the most loaded pipeline stage),
        with the deployment's terms (:mod:`rlmcost.deployment.memory`) unless ideal."""
        key = (task.index, sequences)
        if key not in self._mem:
            arch = self.s.arch(task.role)
            layout = self.layouts[task.index]
            per_stage = memory_per_stage(
                arch,
                layout,
                _MODE[task.kind],
                sequences or self.batch(task),
                self.seq_len(task),
                self.s.workload,
                task.invocation.model_head,
            )
            placed = [self._deployed(task, m, sequences) for m in per_stage]
            best = max(placed, key=lambda p: p.device.total)
            m = best.device
            if task.value_head:  # d x 1 value head, replicated, 2 + 2 + 12 bytes per parameter
                d = int(arch.d_model)
                w = self.s.workload.weight_dtype.bytes
                train = task.kind is Kind.TRAIN
                m = replace(
                    m,
                    weights=m.weights + w * d,
                    gradients=m.gradients + (w * d if train else 0),
                    optimizer=m.optimizer + (12 * d if train else 0),
                )
            self._mem[key] = m
            self._host[key] = best.host
        return self._mem[key]

    def host(self, task: Task, sequences: int | None = None) -> int:
        """Bytes per device of the task's model states kept in host memory (offload)."""
        self.own(task, sequences)
        return self._host[(task.index, sequences)]

    def _deployed(self, task: Task, m: MemoryBreakdown, sequences: int | None) -> Placed:
        """One stage's breakdown with the deployment's logits peak, LoRA and offload."""
        dep = self.s.deployment
        if dep.ideal:
            return Placed(m)
        layout = self.layouts[task.index]
        arch = self.s.arch(task.role)
        train = task.kind is Kind.TRAIN
        if task.kind is not Kind.GENERATE and task.invocation.model_head is Head.LM:
            share = data_share(layout, sequences or self.batch(task), self.seq_len(task))
            vocab = -(-int(arch.vocab) // layout.tp)
            m = with_logits_peak(
                m, share.tokens_per_micro_batch, vocab, train, dep, self.s.workload
            )
        if dep.lora is not None and task.role in self.s.trained_roles:
            m = with_lora(m, self.adapters(task), layout, train, self.s.workload)
        if dep.lora is not None and self.shares_base(task):
            m = replace(m, weights=0)  # the actor's base weights, without its adapters
        if train and dep.train.offload:
            self._before_offload[task.index] = m
            return offloaded(m, dep.train.offload, layout)
        return Placed(m)

    def offload_traffic_bytes(self, task: Task) -> int:
        """Host-link bytes per device and optimizer step of an offloading trainer: the
        gradient shard out and the updated weight shard back (optimizer offload: CPU Adam,
        Ren et al. 2021 §4), the gradient shard out (gradient offload), the weight shard in
        for the forward and again for the backward (parameter offload)."""
        self.own(task)
        before = self._before_offload.get(task.index)
        if before is None:
            return 0
        offload = self.s.deployment.train.offload
        grads_out = Offload.OPTIMIZER in offload or Offload.GRADS in offload
        return (
            (before.gradients if grads_out else 0)
            + (before.weights if Offload.OPTIMIZER in offload else 0)
            + (2 * before.weights if Offload.PARAMS in offload else 0)
        )

    def adapters(self, task: Task) -> int:
        """LoRA parameters on one rank of the task's layout: attention adapters on every layer,
        FFN adapters on the dense FFN layers (routed experts get none), split over the TP x PP
        ranks like the matrices they adapt (rounded up)."""
        arch = self.s.arch(task.role)
        lora = self.s.deployment.lora
        assert lora is not None
        layout = self.layouts[task.index]

        def part(names: tuple[str, ...]) -> LoraSpec:
            return lora.model_copy(update={"targets": tuple(t for t in lora.targets if t in names)})

        ffn_layers = int(arch.n_dense_layers) if arch.is_moe else int(arch.n_layers)
        d, q, kv = int(arch.d_model), int(arch.q_width), int(arch.kv_width)
        total = lora_params(d, q, kv, 0, 2, int(arch.n_layers), part(("q", "k", "v", "o")))
        total += lora_params(
            d, q, kv, int(arch.d_ff), arch.ffn_kind.projections, ffn_layers,
            part(("gate", "up", "down")),
        )  # fmt: skip
        return -(-total // (layout.tp * layout.pp))

    def shares_base(self, task: Task) -> bool:
        """Under LoRA the reference is the actor's base model without adapters (verl
        ``ref_in_actor``): no weights of its own when it is the actor's model and the actor
        is resident on the same group."""
        return (
            task.role is Role.REFERENCE
            and self.s.specs[Role.REFERENCE].name == self.s.specs[Role.ACTOR].name
            and any(t.role is Role.ACTOR for t in self.tasks)
        )

    # -- residency ------------------------------------------------------------------------------

    def trains_here(self, role: Role) -> Task | None:
        return next((t for t in self.tasks if t.role is role and t.kind is Kind.TRAIN), None)

    def resident(self, role: Role) -> MemoryBreakdown:
        """The states ``role`` keeps on each device of the group all iteration."""
        train = self.trains_here(role)
        if train is not None:
            return _only(self.own(train), _STATES)
        first = next(t for t in self.tasks if t.role is role)
        return _only(self.own(first), ("weights",))

    @property
    def shadows(self) -> tuple[Role, ...]:
        trained_elsewhere = {t.role for t in self.s.tasks if t.kind is Kind.TRAIN}
        return tuple(
            r
            for r in dict.fromkeys(t.role for t in self.tasks)
            if r in trained_elsewhere and self.trains_here(r) is None
        )

    def two_layouts(self, task: Task) -> bool:
        """The task runs its model in a layout other than the model's training layout here."""
        train = self.trains_here(task.role)
        return (
            train is not None
            and task.kind is not Kind.TRAIN
            and self.layouts[task.index] != self.layouts[train.index]
        )

    def with_residents(self, task: Task, own: MemoryBreakdown) -> MemoryBreakdown:
        """``own`` plus the other models resident on the group (none when offloading); the
        task's own model keeps its states, and a second layout adds its own copy. Deployed:
        plus an awake engine's reservation while another task runs, and the per-process
        overhead (:func:`~rlmcost.deployment.terms.overhead_bytes`)."""
        others = (
            []
            if self.s.placement.offload
            else [
                self.resident(r)
                for r in dict.fromkeys(t.role for t in self.tasks)
                if r is not task.role
            ]
        )
        mine = self.resident(task.role)
        if self.two_layouts(task):
            combined = _add(mine, own)
        else:
            combined = MemoryBreakdown(
                **{
                    f.name: max(getattr(mine, f.name), getattr(own, f.name))
                    if f.name in _STATES
                    else getattr(own, f.name)
                    for f in fields(own)
                }
            )
        total = _add(combined, *others, self.fused_extra(task))
        dep = self.s.deployment
        if dep.ideal:
            return total
        engine = self.engine_task
        pool = 0  # the engine's preallocated bytes: no allocator slack on them
        if engine is not None and task.kind is not Kind.GENERATE and not self.engine.sleep:
            total = replace(total, engine=self.reservation)
            pool = self.reservation
        elif engine is task:
            pool = own.total
        slack = overhead_bytes(total.total - pool, self.gpus, dep.overhead)
        return replace(total, overhead=slack)

    def host_bytes(self, task: Task) -> int:
        """Host memory per device while ``task`` runs: offloaded trainer states of the
        group's models, idle models under ``offload_idle``, a sleeping engine's weights."""
        if self.s.deployment.ideal:
            return 0
        total = 0
        for role in dict.fromkeys(t.role for t in self.tasks):
            train = self.trains_here(role)
            if train is not None:
                total += self.host(train)
            if self.s.placement.offload and role is not task.role:
                total += self.resident(role).total
        engine = self.engine_task
        if engine is not None and task.kind is not Kind.GENERATE and self.engine.sleep:
            total += self.engine_weights
        return total

    # -- the generation engine -------------------------------------------------------------------

    @property
    def engine_task(self) -> Task | None:
        """The group's generation task, run by an inference engine when deployed."""
        if self.s.deployment.ideal:
            return None
        return next((t for t in self.tasks if t.kind is Kind.GENERATE), None)

    @property
    def engine(self) -> EngineSpec:
        return engine_for(self.s, self.group.name)

    @property
    def engine_fraction(self) -> float:
        """``gpu_memory_utilization``: given, else the default for where the engine runs."""
        given = self.engine.gpu_memory_utilization
        if given is not None:
            return given
        trains = any(t.kind is Kind.TRAIN for t in self.tasks)
        return ENGINE_COLOCATED_FRACTION if trains else ENGINE_DEDICATED_FRACTION

    @property
    def reservation(self) -> int:
        return reservation_bytes(self.engine_fraction, self.s.capacity_bytes)

    @property
    def engine_weights(self) -> int:
        task = self.engine_task
        return 0 if task is None else self.own(task, self.replicas(task)).weights

    def replicas(self, task: Task) -> int:
        layout = self.layouts[task.index]
        return layout.dp * layout.ep

    def fused_extra(self, task: Task) -> MemoryBreakdown:
        """Under stage fusion, the transients that live beside the task's: the largest
        assessment buffer while generation streams, the other interleaved training
        pipelines' activations while training."""
        if not self.s.placement.fusion:
            return EMPTY
        if task.kind is Kind.GENERATE:
            streamed = [
                _only(self.own(t), ("activations", "logits", "buffers"))
                for t in self.tasks
                if t.stage is Stage.ASSESSMENT
            ]
            return max(streamed, key=lambda m: m.total, default=EMPTY)
        if task.kind is Kind.TRAIN:
            return _add(
                EMPTY,
                *(
                    _only(self.own(t), ("activations", "logits", "buffers"))
                    for t in self.tasks
                    if t.kind is Kind.TRAIN and t is not task
                ),
            )
        return EMPTY

    # -- time -----------------------------------------------------------------------------------

    def roofline(self, gpus: int) -> Roofline:
        return Roofline(self.s.hardware, gpus, self.s.workload.compute_dtype, self.s.efficiency)

    def weights_read(self, task: Task) -> int:
        """Weight bytes a device multiplies with in one pass: its TP/PP shard, gathered when
        ZeRO-3 shards it (the bytes the HBM streams). A decode step passes every pipeline
        stage in turn, so generation streams the whole TP shard however many stages hold it."""
        layout = self.layouts[task.index].with_(zero=ZeroStage.NONE)
        if task.kind is Kind.GENERATE:
            layout = layout.with_(pp=1)
        return self._raw(task, layout).weights

    def _raw(self, task: Task, layout: Layout) -> MemoryBreakdown:
        """The paper's breakdown of the task in ``layout`` (no deployment terms)."""
        return memory_per_rank(
            self.s.arch(task.role),
            layout,
            _MODE[task.kind],
            self.batch(task),
            self.seq_len(task),
            self.s.workload,
            task.invocation.model_head,
        )

    def load_factor(self, task: Task) -> Fraction:
        """Busiest data rank's share over the even share: P_d P_e ceil(n / (P_d P_e)) / n, so
        data parallelism wider than the batch buys nothing."""
        layout = self.layouts[task.index]
        n = self.batch(task)
        shards = layout.dp * layout.ep
        return Fraction(shards * -(-n // shards), n)

    def gather_s(self, task: Task) -> float:
        """Link seconds of one ZeRO-3 parameter gather for a forward pass (0 without ZeRO-3)."""
        layout = self.layouts[task.index]
        z = layout.dp * layout.cp * layout.ep
        if layout.zero is not ZeroStage.OS_G_P or z == 1:
            return 0.0
        hw = self.s.hardware
        intra = group_is_intra_node(layout, ("dp", "cp", "ep"), hw.gpus_per_node)
        bw = hw.intra_node_bandwidth_bytes_per_s if intra else hw.inter_node_bandwidth_bytes_per_s
        return self.weights_read(task) * (z - 1) / z / bw

    def engine_memory(self, task: Task, share: int) -> tuple[int, MemoryBreakdown]:
        """The engine's sequences at once per replica and its bytes per device: it reserves
        ``gpu_memory_utilization`` of the device (:func:`~rlmcost.deployment.terms.
        reservation_bytes`); the weights and the workspace of one sequence per replica (the
        transient buffer of a prefill, the sampler's logits) come out of it, and the rest is
        the KV-cache pool (:func:`~rlmcost.deployment.terms.kv_pool_bytes`), which holds
        :func:`~rlmcost.deployment.terms.engine_slots` sequences. When the pool cannot hold one
        sequence the bytes are what one sequence needs, and the group reports the problem."""
        replicas = self.replicas(task)
        one = self.own(task, replicas)
        workspace = one.activations + one.logits + one.buffers
        pool = kv_pool_bytes(self.reservation, one.weights, workspace)
        layout = self.layouts[task.index]
        tokens = -(-self.seq_len(task) // layout.cp)
        eng = self.engine
        slots = engine_slots(
            pool, one.kv_cache, tokens, eng.block_size, eng.max_num_seqs, share
        )
        if slots == 0:
            self.problems.append(
                f"{task.label()} on {self.group.name}: the engine's reservation "
                f"({self.engine_fraction:g} of the device, {self.reservation / 2**30:.1f} GiB) "
                f"leaves {max(pool, 0) / 2**30:.2f} GiB for the KV cache, less than one "
                f"sequence's {one.kv_cache / 2**30:.2f} GiB; raise --gpu-memory-utilization or "
                "--rollout-tp"
            )
            return 1, one
        return slots, replace(one, kv_cache=pool)

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

    def job(self, task: Task) -> Job:
        inv = task.invocation
        arch = self.s.arch(task.role)
        layout = self.layouts[task.index]
        lengths = self.lengths(task)
        work = work_over_lengths(task, arch, self.s.values, lengths, self.s.counting)
        model = self.s.specs[task.role].name
        n = self._int(inv.sequences)
        if task.kind is Kind.GENERATE:
            return self._generate(task, arch, layout, lengths, work, model, n)
        values = {**self.s.values, "T": max(lengths)}
        depth = depth_of(inv, arch, frozen_values(values, keep_t=True))
        own = self.own(task)
        memory = self.with_residents(task, own)
        roof = self.roofline(layout.n_gpus)
        if task.kind is Kind.FORWARD:
            share = data_share(layout, self.batch(task), self.seq_len(task))
            base = roof.phase(work * self.load_factor(task), self.weights_read(task), FORWARD)
            link = share.micro_batches * self.gather_s(task)
            time = _at_least(base, link)
            fwd = self.predict_forward(task)
            pred = max(fwd.time_s, time.bound_s)
            return Job(
                task, model, layout, n, work, depth, own, memory, time, base.bound_s,
                predicted_s=pred, predicted_ideal_s=pred, predicted_parts_s=fwd.to_json(),
                tokens=sum(self.packed_lengths(task)),
            )  # fmt: skip
        steps = self._int(inv.passes) * self._int(inv.steps)
        step_bytes = 2 * self.weights_read(task) + 2 * own.gradients + 2 * own.optimizer
        busy = work * self.load_factor(task) / steps
        ideal = roof.phase(busy, step_bytes, TRAIN).times(steps)
        share = data_share(layout, self.batch(task), self.seq_len(task))
        bubble = bubble_fraction(
            layout.schedule, layout.pp, share.micro_batches, layout.virtual_stages
        )
        time = _scaled(ideal, 1 + bubble)
        host_s = steps * self.offload_traffic_bytes(task) / self.s.host_bytes_per_s
        if host_s:  # exposed: the step waits for its states (ZeRO-Offload overlaps little)
            time = PhaseTime(time.compute_s, time.memory_s, time.bound_s + host_s,
                             time.compute_bound_s)  # fmt: skip
        step, per_step = self.predict_train(task)
        model_s = steps * step.step_s + host_s
        pred = max(model_s, time.bound_s)
        parts = {
            **{f"compute_{k}_s": steps * v for k, v in step.compute_s.items()},
            **{f"exposed_{k}_s": steps * v for k, v in step.exposed_comm_s.items()},
            "bubble_s": steps * step.bubble_s,
            "optimizer_s": steps * step.optimizer_s,
            "offload_s": host_s,
            "optimizer_steps": steps,
            "sequences_per_step": per_step.sequences,
            "packed_seq_len": per_step.seq_len,
        }
        return Job(
            task, model, layout, n, work, depth, own, memory, time, ideal.bound_s, bubble,
            share.micro_batches, predicted_s=pred,
            predicted_ideal_s=max(pred - steps * step.bubble_s, ideal.bound_s),
            predicted_parts_s=parts, tokens=sum(self.packed_lengths(task)),
        )  # fmt: skip

    # -- prediction -----------------------------------------------------------------------------

    def packed_lengths(self, task: Task) -> tuple[int, ...]:
        """Token counts (prompt + response) of the task's sequences, one per sequence (PRM
        prefixes count as whole sequences)."""
        inv = task.invocation
        lengths = self.lengths(task)
        prompt = self._int(inv.prompt, {**self.s.values, "T": max(lengths)})
        if inv.response == "T":
            out = tuple(prompt + t for t in lengths)
        else:
            out = (self.seq_len(task),) * len(lengths)
        return out * (self.batch(task) // len(out) if task.kind is Kind.FORWARD else 1)

    def _packed_layout(self, task: Task, seq: int) -> Layout:
        """The task's layout with a token budget's micro-batch recomputed for packed
        sequences of ``seq`` tokens."""
        layout = self.layouts[task.index]
        dep = self.s.deployment
        if dep.ideal:
            return layout
        spec = dep.train if task.kind is Kind.TRAIN else dep.forward_layout()
        if spec.max_tokens_per_gpu is None:
            return layout
        return layout.with_(micro_batch=max(1, spec.max_tokens_per_gpu // -(-seq // layout.cp)))

    def predict_forward(self, task: Task):  # noqa: ANN201 - rl_step.ForwardTime
        p = packed(self.packed_lengths(task))
        return forward_time(
            self.s.arch(task.role), self._packed_layout(task, p.seq_len), p.sequences,
            p.seq_len, self.s.hardware, self.s.workload, task.invocation.model_head,
        )  # fmt: skip

    def predict_train(self, task: Task):  # noqa: ANN201 - (StepTime, Packed per step)
        """One optimizer step's prediction and the packed sequences it runs."""
        inv = task.invocation
        steps = self._int(inv.steps)
        p = packed(self.packed_lengths(task))
        per_step = replace(p, sequences=-(-p.sequences // steps))
        step = train_time(
            self.s.arch(task.role), self._packed_layout(task, p.seq_len), per_step.sequences,
            p.seq_len, self.s.hardware, self.s.workload, inv.model_head,
        )  # fmt: skip
        return step, per_step

    def engine_model(self, task: Task) -> Engine:
        """The generation replica's engine model (its TP and EP degrees)."""
        layout = self.layouts[task.index]
        wl = self.s.workload
        return Engine(
            self.s.arch(task.role), Device(self.s.hardware, wl.compute_dtype), tp=layout.tp,
            ep=layout.ep, kv_bytes=wl.kv_dtype.bytes, activation_bytes=wl.activation_dtype.bytes,
            value_head=task.value_head,
        )  # fmt: skip

    def _generate(
        self, task: Task, arch: Arch, layout: Layout, lengths: tuple[int, ...], work: int,
        model: str, n: int,
    ) -> Job:  # fmt: skip
        inv = task.invocation
        replicas = layout.dp * layout.ep
        if n < replicas:
            raise SpecError(
                f"{n} sequences cannot feed the {replicas} generation replicas of group "
                f"{task.group}; use a larger batch or fewer GPUs there"
            )
        prompt = self._int(inv.prompt, {**self.s.values, "T": max(lengths)})
        responses = lengths if inv.response == "T" else (self._int(inv.response),) * n
        mine = replica_lengths(responses, replicas)
        if self.engine_task is task:
            slots, own = self.engine_memory(task, len(mine))
        else:
            slots = self.slots(task, replicas, len(mine))
            own = self.own(task, slots * replicas)
        memory = self.with_residents(task, own)
        one_seq = memory_per_rank(
            arch, layout.with_(pp=1), Mode.GENERATE, replicas, self.seq_len(task),
            self.s.workload, inv.model_head,
        )  # the KV cache a step reads passes every pipeline stage too  # fmt: skip
        tokens = -(-self.seq_len(task) // layout.cp)
        f0, f1 = decode_flops(arch)
        if task.value_head:
            f0 += work_head_per_token(arch, Head.VALUE)
        gather_s = self.gather_s(task)
        cost = DecodeCost(
            f0=f0,
            f1=f1,
            prefill_flops=work_prefill(arch, prompt, 1, self.s.counting),
            weight_bytes=float(self.weights_read(task)),
            kv_bytes_per_token=one_seq.kv_cache / tokens,
            gather_s=gather_s,
        )
        tl = timeline(
            arch, prompt, mine, slots, cost, self.roofline(layout.n_gpus // replicas),
            self.engine_model(task),
        )  # fmt: skip
        ideal = tl.time.bound_s
        pred = max(tl.predicted_s, ideal)
        parts = {"decode_s": tl.predicted_decode_s, "prefill_s": tl.predicted_prefill_s}
        return Job(
            task, model, layout, n, work, tl.depth, own, memory, tl.time, ideal, timeline=tl,
            predicted_s=pred, predicted_ideal_s=pred, predicted_parts_s=parts,
            tokens=n * prompt + sum(responses),
        )  # fmt: skip

    # -- transfers ------------------------------------------------------------------------------

    def transfers(self, jobs: Sequence[Job]) -> list[Transfer]:
        out: list[Transfer] = []
        bw = group_link_bytes_per_s(self.s.hardware, self.gpus)
        for job in jobs:
            t = job.task
            if self.two_layouts(t):
                per_device = reshard_bytes_per_device(
                    job.own.weights, self.resident(t.role).weights
                )
                out.append(
                    Transfer(
                        "reshard",
                        f"{t.role}: training layout -> {t.kind} layout "
                        f"(tp={job.layout.tp}, pp={job.layout.pp})",
                        self.group.name,
                        per_device * self.gpus,
                        per_device,
                        per_device / bw,
                        t.stage,
                        t.index,
                        link_transfer_s(per_device, self.s.hardware, self.gpus),
                    )
                )
        engine = self.engine_task
        if engine is not None and self.engine.sleep and len(self.tasks) > 1:
            # vLLM sleep mode level 1: weights to host after generation, back before it
            w = self.engine_weights
            out.append(
                Transfer(
                    "offload",
                    f"engine sleep/wake: {engine.role} weights to host and back",
                    self.group.name,
                    2 * w * self.gpus,
                    2 * w,
                    2 * w / self.s.host_bytes_per_s,
                    engine.stage,
                    engine.index,
                )
            )
        if self.s.placement.offload and len({t.role for t in self.tasks}) > 1:
            order = list(self.tasks)
            for prev, nxt in zip([order[-1], *order[:-1]], order, strict=True):
                if prev.role is nxt.role:
                    continue
                load = self.resident(nxt.role).total
                back = self.resident(prev.role).total if self.trains_here(prev.role) else 0
                out.append(
                    Transfer(
                        "offload",
                        f"load {nxt.role}, write back {prev.role}" if back else f"load {nxt.role}",
                        self.group.name,
                        (load + back) * self.gpus,
                        load + back,
                        offload_switch_time_s(load, back, self.s.host_bytes_per_s),
                        nxt.stage,
                        nxt.index,
                    )
                )
        return out

    def estimate(self) -> GroupEstimate:
        jobs = tuple(self.job(t) for t in self.tasks)
        resident = {r: self.resident(r) for r in dict.fromkeys(t.role for t in self.tasks)}
        return GroupEstimate(
            self.group.name,
            self.gpus,
            jobs,
            resident,
            self.shadows,
            tuple(self.transfers(jobs)),
            self.s.capacity_bytes,
            tuple(dict.fromkeys(self.problems)),
            {j.task.index: self.host_bytes(j.task) for j in jobs},
        )


def _at_least(t: PhaseTime, seconds: float) -> PhaseTime:
    if seconds <= t.bound_s:
        return t
    return PhaseTime(t.compute_s, t.memory_s, seconds, 0.0)


def _scaled(t: PhaseTime, factor: Fraction) -> PhaseTime:
    return t.scaled(factor)


def evaluate_group(setup: Setup, group: DeviceGroup, gpus: int) -> GroupEstimate:
    """One group on ``gpus`` devices (SpecError when its layouts cannot use them)."""
    return _Group(setup, group, gpus).estimate()
