"""One device group on real hardware: what its devices hold, and what each invocation reads.

Every invocation runs on its group's devices in the layout its kind gets there
(``inputs.layout_for``). :class:`GroupModel` answers, per invocation:

* memory per device (``parallel.memory.memory_per_rank``, compiled: bf16 weights, gradients,
  activations and KV cache, fp32 Adam states and logits), plus what else the group holds:
  every model placed there stays resident (weights; gradients and Adam states for the ones it
  trains), a trainable model read but not trained there keeps the bf16 shadow copy M_sh, and
  an invocation in a layout other than its model's training layout adds its own copy (the
  second layout of hybrid execution). With ``offload`` the idle models wait in host memory.
  Generation admits only as many sequences as the KV cache left on the device holds; the rest
  waits for free slots (waves). Under stage fusion the streamed assessment's buffer lives
  beside the KV cache and the interleaved training pipelines' activations beside each other;
* what a pass reads: the weights each device multiplies with (gathered under ZeRO-3), the
  busiest data rank's share, the link seconds of a parameter gather, and the roofline of the
  devices it runs on.

:mod:`rlmcost.placement.group_jobs` turns these into each invocation's work, depth, time and
prediction, and the group's transfers.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from fractions import Fraction

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.choices import Head
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
from rlmcost.placement.groups import DeviceGroup, Task
from rlmcost.placement.inputs import (
    Setup,
    count_of,
    engine_for,
    frozen_values,
    layout_for,
)
from rlmcost.timing import Roofline

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


class GroupModel:
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

