"""One device group's tasks, their layouts and sizes, and each invocation's own bytes per device.

Each invocation runs on its group's devices in its kind's layout there (``inputs.layouts_for``; a
per-GPU token budget sets its micro-batch). Its own memory per device is
``parallel.memory.memory_per_rank`` (compiled; a framework's TP-replicated Gated DeltaNet whole,
:meth:`GroupTasks.mixer_replicated`) on the most loaded pipeline stage, with the deployment's terms
(:mod:`rlmcost.deployment.memory`: logits peak, LoRA adapters, offload) unless ideal. The rest of
the group: :mod:`rlmcost.placement.group_memory`.
"""

from __future__ import annotations

from typing import Any

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.choices import Head
from rlmcost.compiled.memory import memory_per_stage
from rlmcost.deployment.given import layered
from rlmcost.deployment.memory import Placed, offloaded, with_logits_peak, with_lora
from rlmcost.deployment.spec import LoraSpec, Offload, TrainLayout
from rlmcost.deployment.terms import lora_params
from rlmcost.errors import SpecError
from rlmcost.frameworks.buffers import OVER_BUDGET_REFUSED
from rlmcost.frameworks.presets import behaviour
from rlmcost.memo import per_object
from rlmcost.parallel.breakdown import DataShare, MemoryBreakdown, Mode, data_share
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.zero import optimizer_bytes_per_param
from rlmcost.placement.act_offload_job import host_copy_bytes
from rlmcost.placement.breakdown_ops import with_terms
from rlmcost.placement.device_groups import DeviceGroup, Task
from rlmcost.placement.dropout_memory import with_dropout_masks
from rlmcost.placement.fp8_memory import with_fp8_weights
from rlmcost.placement.glu_kernel import fused_glu
from rlmcost.placement.grad_buffer import grad_dtype
from rlmcost.placement.group_key import per_query, task_key
from rlmcost.placement.group_sizes import GroupSizes, counts_table
from rlmcost.placement.group_train import group_trainer, kind_spec, trainer_offload_run
from rlmcost.placement.head_peak import grads_after_head, head_apart, train_copies
from rlmcost.placement.inputs import Setup, engine_for, layouts_for
from rlmcost.placement.module_ckpt_memory import module_ckpt_applies, per_module_stages
from rlmcost.placement.mtp import with_mtp_bytes
from rlmcost.placement.packed_lengths import memory_inputs
from rlmcost.placement.speculative import with_draft
from rlmcost.placement.task_workload import task_workload, with_stored_teacher
from rlmcost.placement.vision import tower_activation_bytes
from rlmcost.specs.workload import Workload

MODE = {Kind.GENERATE: Mode.GENERATE, Kind.FORWARD: Mode.FORWARD, Kind.TRAIN: Mode.TRAIN}
_STAGE_ORDER = {s: i for i, s in enumerate(Stage)}


@per_object()
def _group_tasks(tasks: tuple[Task, ...], name: str) -> tuple[Task, ...]:
    """The tasks of group ``name`` in stage order, then by index (kept per task tuple: the
    placements' tasks are shared by the deployments of a query)."""
    return tuple(sorted((t for t in tasks if t.group == name),
                        key=lambda t: (_STAGE_ORDER[t.stage], t.index)))  # fmt: skip


class GroupTasks(GroupSizes):
    """The tasks of one group on ``gpus`` devices: layouts, sizes and own bytes (memoized)."""

    def __init__(self, setup: Setup, group: DeviceGroup, gpus: int):
        self.s = setup
        self.group = group
        self.gpus = gpus
        self._lengths: dict[int, tuple[int, ...]] = {}
        self._counts = counts_table(setup)
        self._seq: dict[int, int] = {}
        self._longest: dict[int, int] = {}  # GroupSizes.longest, per task
        self._batch: dict[int, int] = {}  # GroupSizes.batch, per task
        self._trains: dict[Role, Task | None] = {}  # GroupMemory.trains_here, per role
        self._resident: dict[Role, tuple[int, int, int]] = {}  # GroupMemory.states, per role
        self.kept: dict[tuple[Any, ...], Any] = {}  # other per-task values derived once
        self.tasks = _group_tasks(setup.tasks, group.name)
        self.layouts = layouts_for(setup, group.name, self.tasks, gpus)
        self._check_group_options()
        self._apply_forward_sharding()
        for t in self.tasks:
            self.batch(t)  # the batch knobs' checks, before any size is derived from them
        self._apply_token_budget()
        self._mem: dict[tuple, MemoryBreakdown] = {}
        self._host: dict[tuple, int] = {}
        self.problems: list[str] = []
        self._before_offload: dict[int, MemoryBreakdown] = {}

    def _check_group_options(self) -> None:
        """SpecError for a ``--groups`` option that none of the group's invocations uses:
        checkpointing or offload on a group that trains nothing, ZeRO or a micro-batch on a
        group that only generates (an engine holds whole TP shards, batches by its KV pool)."""
        own = self.s.deployment.group(self.group.name)
        offload = own is not None and own.train is not None and own.train.offload
        if not self.group.settings and not offload:
            return  # no option given on the group
        kinds = {t.kind for t in self.tasks}
        given = dict(self.group.settings)
        if offload:
            given.setdefault("offload", ",".join(own.train.offload))  # type: ignore[union-attr]
        unused = set()
        if Kind.TRAIN not in kinds:
            unused |= {"ckpt", "offload"}
        if kinds <= {Kind.GENERATE}:
            unused |= {"zero", "micro_batch", "cp"}
        for key in (k for k in given if k in unused):
            runs = ", ".join(sorted(str(k) for k in kinds)) or "nothing"
            spelled = "mb" if key == "micro_batch" else key
            raise SpecError(
                f"--groups: {self.group.name}[{spelled}={given[key]}] does not apply: the group "
                f"runs only {runs}; drop {spelled}= there or put it on a group that trains"
            )

    def forward_zero(self, task: Task) -> ZeroStage | None:
        """The ZeRO stage a forward-only use of a model runs under, as the frameworks shard
        it (None: the layout ``layouts_for`` gave stands): the group's ``[zero=N]``, else its
        own forward or trainer layout, else the deployment's forward layout
        (:meth:`~rlmcost.deployment.spec.Deployment.forward_layout`: the trainer's). OpenRLHF
        wraps the reference and reward in the actor's DeepSpeed strategy
        (``openrlhf/trainer/ray/launcher.py``: ``--zero_stage`` applies to every DeepSpeed
        model, ZeRO-3 shards their parameters); verl's reference worker is FSDP
        (``verl/workers/fsdp_workers.py``, ``actor_rollout_ref.ref.fsdp_config``); NeMo RL's
        reference runs in the policy's DTensor/Megatron sharding
        (``nemo_rl/models/policy/dtensor_policy_worker.py``: ``init_reference_model``). Under
        ZeRO-3/FSDP the resident weights are 1/dp per device plus the gathered layers during
        the forward (``parallel.memory``: buffers); under ZeRO-0..2 whole. The paper's
        idealized iteration and hybrid execution keep their own rule (no ZeRO for forwards
        outside a training group)."""
        if task.kind is not Kind.FORWARD or self.group.layout(Kind.FORWARD) is not None:
            return None
        settings = dict(self.group.settings)
        if "zero" in settings:
            return ZeroStage(settings["zero"])  # type: ignore[arg-type]
        dep = self.s.deployment
        if dep.ideal or self.s.placement.hybrid:
            return None
        return self._forward_layout().zero

    def _forward_layout(self) -> TrainLayout:
        """The layout the group's forwards shard by: its own forward layout, else its own
        trainer layout (the forwards run on the trainer's workers), over the deployment's
        forward layout (``deployment.given.layered``: the fields it does not give are the run's).
        """
        dep = self.s.deployment
        own = dep.group(self.group.name)
        given = None if own is None else own.forward or own.train
        return dep.forward_layout() if given is None else layered(given, dep.forward_layout())

    def _apply_forward_sharding(self) -> None:
        """Forward-only invocations in the ZeRO stage :meth:`forward_zero` gives and the
        hybrid shard of the same layout (``TrainLayout.zero_shard``; verl builds one FSDP
        mesh per ``ActorRolloutRefWorker`` from ``actor.fsdp_config.fsdp_size`` and wraps the
        reference in it too: verl/workers/fsdp_workers.py ``create_device_mesh``)."""
        shard = self._forward_layout().zero_shard
        for t in self.tasks:
            zero = self.forward_zero(t)
            lay = self.layouts[t.index]
            if zero is not None and lay.zero is not zero:
                lay = lay.with_(zero=zero)
            if t.kind is Kind.FORWARD and self.group.layout(Kind.FORWARD) is None and \
                    lay.zero_shard != shard:  # fmt: skip
                lay = lay.with_(zero_shard=shard)
            self.layouts[t.index] = lay

    def _apply_token_budget(self) -> None:
        """Dynamic batching (verl ``ppo_max_token_len_per_gpu``, ``log_prob_max_token_len_
        per_gpu``) and packing (NeMo RL; ``TrainLayout.token_budget``): a micro-batch holds
        as many padded sequences as the per-GPU token budget allows (a GPU of a
        context-parallel group holds 1 / P_c of each sequence). A sequence longer than the
        budget runs alone in a micro-batch of its own (slime ``build_dp_schedule``), whose
        tokens set the peak; a SpecError under a framework that refuses it
        (:data:`~rlmcost.frameworks.buffers.OVER_BUDGET_REFUSED`: verl)."""
        dep = self.s.deployment
        if dep.ideal:
            return
        for t in self.tasks:
            spec = kind_spec(dep, self.group.name, t.kind)  # the group's own (group_train)
            seq = self.seq_len(t)
            budget = spec.token_budget(seq) if spec is not None else None
            if budget is None:
                continue
            layout = self.layouts[t.index]
            per_gpu = -(-seq // layout.cp)
            refused = OVER_BUDGET_REFUSED.get(dep.framework or "")
            if budget < per_gpu and refused is not None:
                raise SpecError(
                    f"--max-tokens-per-gpu {budget} is below one sequence "
                    f"({per_gpu} tokens per GPU of a {seq}-token sequence), which "
                    f"{dep.framework} refuses ({refused}); give at least {per_gpu} or "
                    "shorter sequences"
                )
            if budget < per_gpu:  # alone past the budget: said in a note (length_notes)
                self.kept[("over budget", t.index)] = (budget, per_gpu, seq)
            micro_batch = max(1, budget // per_gpu)
            if layout.micro_batch != micro_batch:  # else the same layout
                self.layouts[t.index] = layout.with_(micro_batch=micro_batch)

    def own(self, task: Task, sequences: int | None = None) -> MemoryBreakdown:
        """The invocation's bytes per device in its layout (the most loaded pipeline stage),
        with the deployment's terms (:mod:`rlmcost.deployment.memory`) unless ideal."""
        key = (task.index, sequences)
        if key in self._mem:
            return self._mem[key]
        tk = None
        if sequences is None and task.kind is not Kind.GENERATE and self.s.groups_seen is not None:
            # kept for the groups of the same key but for the engine (``group_key.task_key``)
            tk = task_key(self, task, self.layouts[task.index])
        if tk is not None:
            self._mem[key], self._host[key], before = per_query(self.s, ("own", tk),
                                                                lambda: self._own(task, None))
            if before is not None:
                self._before_offload[task.index] = before
            return self._mem[key]
        return self._own(task, sequences)[0]

    def _own(self, task: Task, sequences: int | None) -> tuple[Any, int, Any]:
        """:meth:`own` computed (kept): the bytes, host bytes and bytes before offload."""
        key = (task.index, sequences)
        arch, n = self.s.arch(task.role), sequences or self.batch(task)
        layout, seq = memory_inputs(self, task, n)  # verl: micro-batches of the real lengths
        workload = self.workload(task)  # the trainer's kernels' gated FFN: training alone reads
        glu = task.kind is Kind.TRAIN and fused_glu(self.s.deployment, self.train_layout(), arch)
        per_stage = memory_per_stage(
            arch, layout, MODE[task.kind], n, seq, workload, task.invocation.model_head,
            self.mixer_replicated(task), glu,
        )  # fmt: skip
        if task.kind is Kind.TRAIN and layout.ckpt is Checkpointing.FULL and \
                module_ckpt_applies(self.s.deployment, self.train_layout(), layout, arch):
            per_stage = per_module_stages(per_stage, arch, layout, n, seq, workload)  # NeMo RL
        if task.kind is Kind.TRAIN:  # the vision tower's saved activations, first stage
            share = data_share(layout, n, seq)
            tower = tower_activation_bytes(
                self.s.specs[task.role], workload, layout, share, seq,
                self.train_layout().freeze_vision_tower,
            )  # fmt: skip
            first = per_stage[0]
            per_stage[0] = with_terms(first, activations=first.activations + tower)
            per_stage = with_dropout_masks(self, task, per_stage, layout, n, seq)  # its masks
        per_stage = with_mtp_bytes(self, task, per_stage, layout, n, seq, workload)  # last stage
        per_stage = with_fp8_weights(self, task, per_stage, layout.tp, workload)  # TE's casts
        per_stage = with_stored_teacher(self, task, per_stage)  # NeMo RL's fp32 teacher
        placed = [self._deployed(task, m, layout, data_share(layout, n, seq)) for m in per_stage]
        best = max(placed, key=lambda p: p.device.total)
        m = best.device
        if task.value_head:  # d x 1 value head, replicated: weights, gradients, Adam's K
            d = int(arch.d_model)
            train = task.kind is Kind.TRAIN
            stored = workload.stored_dtype if train else workload.weight_dtype
            w, k = stored.bytes, optimizer_bytes_per_param(stored)
            m = with_terms(m, weights=m.weights + w * d,
                gradients=m.gradients + (workload.gradient_dtype.bytes * d if train else 0),
                optimizer=m.optimizer + (k * d if train else 0),
            )
        if task.kind is Kind.GENERATE:  # a speculative engine's draft (placement.speculative)
            m = with_draft(self, task, m, sequences or self.batch(task))
        host = best.host + host_copy_bytes(arch, layout, n, seq, workload.activation_dtype, glu)
        self._mem[key] = m
        self._host[key] = host
        return m, host, self._before_offload.get(task.index)

    def mixer_replicated(self, task: Task) -> bool:
        """Whether the task's model states hold each linear-attention layer's Gated DeltaNet
        whole on every TP rank: a training or forward pass on the trainer of a framework that
        builds the mixer from plain ``nn.Linear`` (``Behaviour.linear_mixer_tp_replicated``:
        slime's and miles's ``HuggingfaceAttention``, :mod:`rlmcost.perf.linear_mixer`), as
        its pass time prices it (:func:`~rlmcost.placement.pass_options.step_options`); an
        engine's generation splits the heads over its TP."""
        if task.kind is Kind.GENERATE or self.s.deployment.ideal:
            return False
        beh = behaviour(self.s.deployment.framework)
        return beh is not None and beh.linear_mixer_tp_replicated

    def known_own(self, task: Task, own: MemoryBreakdown, host: int) -> None:
        """Take ``own(task)`` and its host bytes as already computed for the same task in
        the same layout and deployment terms (``group_jobs``: a forward job's own numbers
        kept per ``group_key.forward_key``)."""
        self._mem.setdefault((task.index, None), own)
        self._host.setdefault((task.index, None), host)

    def workload(self, task: Task) -> Workload:
        """The dtypes ``task`` runs with: a training task stores its parameters and gradients
        in its trainer's ``param_dtype`` (:meth:`train_layout`; fp32 under FSDP mixed
        precision), its gradients in Megatron-core's fp32 buffer where its framework keeps one
        (:func:`~rlmcost.placement.grad_buffer.grad_dtype`); generation holds and multiplies
        its weights in the engine's ``dtype`` (:class:`~rlmcost.deployment.spec.EngineSpec`;
        FP8 W8A8 at the FP8 peak), its KV cache
        and activations in the workload's, a Gated DeltaNet state and the sliding-window
        layers as the engine keeps them (:mod:`rlmcost.deployment.engine_kv`:
        ``state_dtype``, ``kv_window``, ``kv_swa_pool``); every other in the workload's
        weight dtype. Kept per task."""
        key = ("workload", task.index)
        try:
            return self.kept[key]
        except KeyError:
            out = self.kept[key] = self._workload(task)
            return out

    def _workload(self, task: Task) -> Workload:
        train = self.train_layout()
        grads = grad_dtype(self.s.deployment, train) if task.kind is Kind.TRAIN else None
        return task_workload(self.s, self.group.name, task, train.param_dtype, grads)

    def train_layout(self) -> TrainLayout:
        """The group's own trainer layout over the deployment's, else the deployment's."""
        return group_trainer(self.s.deployment, self.group.name)

    def host(self, task: Task, sequences: int | None = None) -> int:
        """Bytes per device of the task's model states kept in host memory (offload)."""
        self.own(task, sequences)
        return self._host[(task.index, sequences)]

    def _deployed(self, task: Task, m: MemoryBreakdown, layout: Layout,
                  share: DataShare) -> Placed:  # fmt: skip
        """One stage's breakdown with the deployment's logits peak, LoRA and offload
        (``layout`` and ``share``: the ones its memory is priced with)."""
        dep = self.s.deployment
        if dep.ideal:
            return Placed(m)
        arch = self.s.arch(task.role)
        train = task.kind is Kind.TRAIN
        if task.kind is not Kind.GENERATE and task.invocation.model_head is Head.LM:
            vocab, beh = -(-int(arch.vocab) // layout.tp), behaviour(dep.framework)
            copies = train_copies(beh, layout)
            tokens = share.tokens_per_micro_batch
            m = with_logits_peak(m, tokens, vocab, train, dep, self.s.workload, copies)
            if train:  # the rebuilt layer as memory_per_stage prices it (fused_glu)
                glu, wl = fused_glu(dep, self.train_layout(), arch), self.workload(task)
                m = head_apart(m, beh, arch, layout, tokens, wl, glu)
                m = grads_after_head(m, beh, arch, layout, share, wl, glu)
        if dep.lora is not None and task.role in self.s.trained_roles \
                and not self.lora_fused(task):  # fmt: skip
            m = with_lora(m, self.adapters(task), layout, train, self.workload(task))
        if dep.lora is not None and self.shares_base(task):
            m = with_terms(m, weights=0)  # the actor's base weights, without its adapters
        offload = self.train_offload()
        if train and offload:
            self._before_offload[task.index] = m
            return offloaded(m, offload, layout)
        return Placed(m)

    def train_offload(self) -> tuple[Offload, ...]:
        """What the group's trainer keeps in host memory: the group's ``[offload=...]``, else
        its own trainer layout's offload, else the deployment's (``train.offload``) less the
        ``-idle`` kinds on a group without an engine under ``Behaviour.phase_offload_colocated``
        (NeMo RL runs them beside colocated generation only); kept."""
        if ("offload",) not in self.kept:
            self.kept[("offload",)] = self._train_offload()
        return self.kept[("offload",)]

    def _train_offload(self) -> tuple[Offload, ...]:
        return trainer_offload_run(self.s.deployment, self.group,
                                   any(t.kind is Kind.GENERATE for t in self.tasks))

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

    def lora_fused(self, task: Task) -> bool:
        """The task's generation holds no adapters of its own: DeepSpeed's Hybrid Engine at
        inference TP > 1 adds each layer's LoRA product into its gathered base weights before
        slicing the TP shard (deepspeed/runtime/hybrid_engine.py ``generate`` at 9408a86:
        ``_fuse_lora`` then ``apply_tensor_parallelism``), so the adapters stay in the actor's
        ZeRO-3 partition (its resident states) and in the gathered layers while they are
        sliced (:func:`~rlmcost.placement.hybrid_workspace.gathered_layers_bytes`)."""
        return (
            task.kind is Kind.GENERATE
            and not self.s.deployment.ideal
            and engine_for(self.s, self.group.name).kind.hybrid_engine
            and self.layouts[task.index].tp > 1
        )

    def shares_base(self, task: Task) -> bool:
        """Under LoRA the reference is the actor's base model without adapters (verl
        ``ref_in_actor``): no weights of its own when it is the actor's model and the actor
        is resident on the same group. Not under DeepSpeed-Chat's Hybrid Engine: its
        rlhf_engine.py ``_init_ref`` loads the reference as a model of its own (ZeRO-3 when
        the actor is)."""
        return (
            not (engine_for(self.s, self.group.name).kind.hybrid_engine
                 and not self.s.deployment.ideal)
            and task.role is Role.REFERENCE
            and self.s.specs[Role.REFERENCE].name == self.s.specs[Role.ACTOR].name
            and any(t.role is Role.ACTOR for t in self.tasks)
        )
