"""One RL iteration of an algorithm on real models and hardware: per-stage work, depth, memory
per device (does it fit?) and a roofline lower bound of time (`rlmcost ppo|grpo|dpo|...`).

Placement (the baseline every number here assumes): co-located. Every model of the algorithm
(actor, critic, reward, reference, ...) stays resident on the same ``gpus`` devices with the
same layout for the whole iteration, and the invocations run one after another. So

* memory per device of an invocation = its own :func:`~rlmcost.parallel.memory.memory_per_rank`
  (weights, gradients, optimizer states, activations, KV cache, logits, buffers) plus the
  resident model states of every other model (weights; gradients and Adam states for the
  trainable ones). A stage needs the largest of its invocations; it fits when that is at most
  the device's HBM capacity (the datasheet number: usable memory is a few GB less).
* depth of a stage = the sum of its invocations' depths (Table IV ‡, co-located); the
  disaggregated max is reported beside it.
* time of a stage = the sum of its invocations' roofline bounds (:mod:`rlmcost.timing`) on all
  ``gpus`` devices:

  - generate: a prefill (all prompt tokens, weights read once) then T decode steps, each
    reading the rank's weights and its KV cache at the step's context once; with P_p
    pipeline stages a token passes every stage in turn, so a step streams P_p stage shares
    (the whole TP shard), whatever the micro-batching;
  - forward: its FLOPs versus reading the weights once;
  - train: per optimizer step, its FLOPs versus reading weights twice (forward, backward),
    writing and reading the gradients, and reading and writing the optimizer states;
  - forward and train stretch by the pipeline bubble of their micro-batches (1F1B: (P_p - 1)
    / m, :mod:`rlmcost.parallel.pipeline`); every kind's FLOPs count as the busiest data
    rank sees them (ceil(n / (P_d P_e)) sequences), so data parallelism wider than the batch
    buys nothing.

Work and depth come from :mod:`rlmcost.algorithms.cost` with the real architectures (exact
ints); teacher-forced attention is counted full (every query-key pair, as PyTorch's
FlopCounterMode counts) unless ``counting="causal"``, which the time bound then uses too.
Under ZeRO-3 a step reads the rank's parameter shard here; the all-gathers' traffic is
communication, which this time model leaves out. Bytes use the workload's dtypes (default
bf16 weights, gradients, activations and KV cache; fp32 Adam states and logits).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from rlmcost import blocks as bl
from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.cost import count, invocation_cost, resolve_values
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.algorithms.options import (
    DEFAULT_BATCH,
    DEFAULT_HARDWARE,
    DEFAULT_PROMPT_LEN,
    DEFAULT_RESPONSE_LEN,
    KNOBS,
    Options,
    configure,
)
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.memory import MemoryBreakdown, Mode, data_share, memory_per_rank
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.parallel.validate import check_layout
from rlmcost.specs import HardwareSpec, ModelSpec, Workload, get_hardware, get_model
from rlmcost.specs.validation import build
from rlmcost.timing import FORWARD, PEAK, PREFILL, TRAIN, Efficiency, PhaseTime, Roofline

PLACEMENT = (
    "co-located: every model resident on the same GPUs with the same layout for the whole "
    "iteration; invocations run one after another"
)
CONVENTION = (
    "FLOP = one add or one multiply (matrix products only); depth = GEMM reduction levels; "
    "time = roofline lower bound (datasheet dense peak, HBM bandwidth; no communication)"
)

_MODE = {Kind.GENERATE: Mode.GENERATE, Kind.FORWARD: Mode.FORWARD, Kind.TRAIN: Mode.TRAIN}
_STATE_FIELDS = ("weights", "gradients", "optimizer")


@dataclass(frozen=True)
class InvocationEstimate:
    """One invocation: exact work and depth, memory per device (co-residents included), time."""

    invocation: Invocation
    model: str
    sequences: int
    work_flops: int
    depth: int
    memory: MemoryBreakdown
    time: PhaseTime

    def to_json(self) -> dict[str, Any]:
        inv = self.invocation
        return {
            "role": str(inv.role),
            "kind": str(inv.kind),
            "model": self.model,
            "what": inv.describe(),
            "sequences": self.sequences,
            "work_flops": self.work_flops,
            "depth": self.depth,
            "memory_bytes_per_device": self.memory.total,
            **self.time.to_json(),
        }


@dataclass(frozen=True)
class StageEstimate:
    """One stage: sums of work and time, co-located depth, the peak invocation's memory."""

    stage: Stage
    invocations: tuple[InvocationEstimate, ...]
    hbm_bytes: int
    share: float = 0.0

    @property
    def work_flops(self) -> int:
        return sum(i.work_flops for i in self.invocations)

    @property
    def depth(self) -> int:
        """Co-located: the invocations run one after another (Table IV ‡)."""
        return sum(i.depth for i in self.invocations)

    @property
    def depth_disaggregated(self) -> int:
        """Each invocation on its own devices at the same time: the longest chain."""
        return max(i.depth for i in self.invocations)

    @property
    def peak(self) -> InvocationEstimate:
        """The invocation that needs the most memory per device."""
        return max(self.invocations, key=lambda i: i.memory.total)

    @property
    def memory_bytes_per_device(self) -> int:
        return self.peak.memory.total

    @property
    def fits(self) -> bool:
        return self.memory_bytes_per_device <= self.hbm_bytes

    @property
    def shortfall_bytes(self) -> int:
        """Bytes per device beyond the HBM capacity (0 when it fits)."""
        return max(0, self.memory_bytes_per_device - self.hbm_bytes)

    @property
    def time(self) -> PhaseTime:
        total = PhaseTime()
        for inv in self.invocations:
            total = total + inv.time
        return total

    def to_json(self) -> dict[str, Any]:
        breakdown = self.peak.memory.to_json()
        breakdown.pop("total")
        return {
            "work_flops": self.work_flops,
            "depth": self.depth,
            "depth_disaggregated": self.depth_disaggregated,
            "memory_bytes_per_device": self.memory_bytes_per_device,
            "memory_breakdown_bytes": breakdown,
            "peak_invocation": self.peak.invocation.describe(),
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            **self.time.to_json(),
            "share": self.share,
            "invocations": [i.to_json() for i in self.invocations],
        }


@dataclass(frozen=True)
class Estimate:
    """One iteration of ``algorithm``: per-stage estimates and the totals (``to_json``)."""

    algorithm: Algorithm
    models: dict[Role, str]
    hardware: HardwareSpec
    layout: Layout
    workload: Workload
    knobs: dict[str, int | Fraction]
    options: Options
    stages: dict[Stage, StageEstimate]
    calibration: str
    counting: AttnCounting = AttnCounting.FULL
    notes: tuple[str, ...] = field(default=())

    @property
    def gpus(self) -> int:
        return self.layout.n_gpus

    @property
    def model(self) -> str:
        return self.models[Role.ACTOR]

    @property
    def work_flops(self) -> int:
        return sum(s.work_flops for s in self.stages.values())

    @property
    def time_lower_bound_s(self) -> float:
        return sum(s.time.bound_s for s in self.stages.values())

    @property
    def depth(self) -> int:
        return sum(s.depth for s in self.stages.values())

    @property
    def fits(self) -> bool:
        return all(s.fits for s in self.stages.values())

    @property
    def shortfall_bytes(self) -> int:
        return max(s.shortfall_bytes for s in self.stages.values())

    @property
    def dominant_stage(self) -> Stage:
        """The stage with the largest share of the iteration's time bound."""
        return max(self.stages.values(), key=lambda s: s.time.bound_s).stage

    def inputs(self) -> dict[str, Any]:
        """The resolved inputs, defaults included, as plain values."""
        w = self.workload
        knobs = {k: _plain(v) for k, v in self.knobs.items()}
        return {
            "B": w.prompts,
            "K": w.samples_per_prompt if "K" in self.algorithm.names else None,
            "S": w.prompt_len,
            "T": w.response_len,
            **knobs,
            "dtypes": {
                "weights": str(w.weight_dtype),
                "activations": str(w.activation_dtype),
                "kv_cache": str(w.kv_dtype),
                "logits": str(w.logits_dtype),
                "optimizer": "fp32 (mixed-precision Adam: master weights, m, v)",
                "compute": str(w.compute_dtype),
            },
        }

    def to_json(self) -> dict[str, Any]:
        """The stable schema of ``--json`` (keys may be added, never renamed)."""
        lay = self.layout
        return {
            "algorithm": self.algorithm.name,
            "model": self.model,
            "hardware": self.hardware.name,
            "gpus": self.gpus,
            "stages": {str(s): e.to_json() for s, e in self.stages.items()},
            "iteration": {
                "work_flops": self.work_flops,
                "time_lower_bound_s": self.time_lower_bound_s,
                "depth": self.depth,
                "dominant_stage": str(self.dominant_stage),
            },
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "hbm_bytes_per_device": self.hardware.hbm_bytes,
            "summary": self.algorithm.summary,
            "citation": self.algorithm.citation,
            "offline": self.algorithm.offline,
            "models": {str(r): m for r, m in self.models.items()},
            "inputs": self.inputs(),
            "options": {k: _plain(v) for k, v in self.options.given().items()},
            "layout": {
                "dp": lay.dp,
                "tp": lay.tp,
                "pp": lay.pp,
                "cp": lay.cp,
                "ep": lay.ep,
                "zero": str(lay.zero),
                "ckpt": str(lay.ckpt),
                "micro_batch": lay.micro_batch,
            },
            "placement": PLACEMENT,
            "calibration": self.calibration,
            "attention_counting": str(self.counting),
            "convention": CONVENTION,
            "notes": list(self.notes),
        }


def _plain(v: object) -> object:
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else float(v)
    return v


# --------------------------------------------------------------------------------------------
# Resolving the inputs
# --------------------------------------------------------------------------------------------


def resolve_workload(
    alg: Algorithm,
    workload: Workload | None = None,
    batch: int | None = None,
    group: int | None = None,
    prompt_len: int | None = None,
    response_len: int | None = None,
) -> Workload:
    """The workload: ``workload`` (or the defaults: B = 64, K = the algorithm's default group,
    S = T = 1024) with the given fields replaced. SpecError for a group on an algorithm that
    samples none (the offline family) and for non-positive counts."""
    samples_group = "K" in alg.names
    if group is not None and not samples_group:
        raise SpecError(
            f"{alg.name} samples no groups of responses (its data are fixed "
            f"{'pairs' if '2*B' in {i.sequences for i in alg.invocations} else 'examples'}); "
            "drop --group"
        )
    for name, v in (
        ("batch", batch),
        ("group", group),
        ("prompt_len", prompt_len),
        ("response_len", response_len),
    ):
        if v is not None and (not isinstance(v, int) or v < 1):
            raise SpecError(f"{name}={v} must be a positive integer")
    base = workload or Workload(
        prompts=DEFAULT_BATCH,
        samples_per_prompt=alg.default_group,
        prompt_len=DEFAULT_PROMPT_LEN,
        response_len=DEFAULT_RESPONSE_LEN,
    )
    changes = {
        k: v
        for k, v in (
            ("prompts", batch),
            ("samples_per_prompt", group),
            ("prompt_len", prompt_len),
            ("response_len", response_len),
        )
        if v is not None
    }
    resolved = build(Workload, {**base.model_dump(), **changes}, "workload")
    if not samples_group and resolved.samples_per_prompt != 1:
        raise SpecError(f"{alg.name} samples no groups; use a workload with samples_per_prompt=1")
    if resolved.samples_per_prompt < alg.min_group:
        raise SpecError(
            f"{alg.name} needs --group >= {alg.min_group} (its baseline compares the responses "
            f"to one prompt); got {resolved.samples_per_prompt}"
        )
    return resolved


def models_given(
    models: Mapping[Role | str, str | ModelSpec] | None,
    critic: str | ModelSpec | None = None,
    reward: str | ModelSpec | None = None,
    ref: str | ModelSpec | None = None,
    judge: str | ModelSpec | None = None,
) -> dict[Role, str | ModelSpec]:
    """The models the user named per role: ``models`` plus the shorthand keyword arguments."""
    given: dict[Role, str | ModelSpec] = {Role(r): m for r, m in (models or {}).items()}
    named = (
        (Role.CRITIC, critic),
        (Role.REWARD, reward),
        (Role.REFERENCE, ref),
        (Role.JUDGE, judge),
    )
    for role, m in named:
        if m is not None:
            given[role] = m
    return given


def uses_model(alg: Algorithm, role: Role) -> bool:
    """True when some model role of ``alg`` is ``role`` or falls back to its model."""
    return any(role in r.chain for r in alg.model_roles)


def resolve_models(
    alg: Algorithm, actor: str | ModelSpec, given: Mapping[Role, str | ModelSpec]
) -> dict[Role, ModelSpec]:
    """A model for every model role of ``alg``: given, else its fallback's (critic -> actor,
    cost critic -> critic, cost/PRM -> reward -> actor, ...). SpecError for a model given
    for a role the algorithm lacks (nor any role falling back to it)."""
    specs: dict[Role, ModelSpec] = {Role.ACTOR: get_model(actor)}
    explicit = {Role(r): get_model(m) for r, m in given.items() if m is not None}

    for role in explicit:
        if role is Role.ACTOR:
            raise SpecError("give the actor as `model`, not among the other roles")
        if not uses_model(alg, role):
            have = ", ".join(str(r) for r in alg.model_roles)
            raise SpecError(
                f"{alg.name} has no {role} model (its models: {have}); drop --"
                f"{'ref' if role is Role.REFERENCE else role}"
            )
    for role in alg.model_roles:
        spec = next((explicit[r] for r in role.chain if r in explicit), specs[Role.ACTOR])
        specs[role] = spec
    return specs


def resolve_layout(layout: Layout | None, gpus: int | None) -> tuple[Layout, list[str]]:
    """The layout for ``gpus`` devices: when ``gpus`` is given and the layout's degrees
    multiply to fewer, data parallelism fills the rest (dp = gpus / (tp pp cp ep), stated)."""
    layout = layout or Layout()
    notes: list[str] = []
    if gpus is None or gpus == layout.n_gpus:
        return layout, notes
    if gpus < 1:
        raise SpecError(f"gpus={gpus} must be a positive integer")
    rest = layout.tp * layout.pp * layout.cp * layout.ep
    if layout.dp == 1 and gpus % rest == 0:
        notes.append(f"dp = gpus / (tp*pp*cp*ep) = {gpus} / {rest} = {gpus // rest}")
        return layout.with_(dp=gpus // rest), notes
    product = f"dp*tp*pp*cp*ep = {layout.dp}*{layout.tp}*{layout.pp}*{layout.cp}*{layout.ep}"
    fix = f"use --dp {gpus // rest}" if gpus % rest == 0 else f"tp*pp*cp*ep={rest} must divide it"
    raise SpecError(f"{product} = {layout.n_gpus} but gpus = {gpus}; {fix}")


# --------------------------------------------------------------------------------------------
# The estimate
# --------------------------------------------------------------------------------------------


def estimate(
    algorithm: str | Algorithm = "ppo",
    model: str | ModelSpec = "llama-3.1-8b",
    *,
    critic: str | ModelSpec | None = None,
    reward: str | ModelSpec | None = None,
    ref: str | ModelSpec | None = None,
    judge: str | ModelSpec | None = None,
    models: Mapping[Role | str, str | ModelSpec] | None = None,
    workload: Workload | None = None,
    batch: int | None = None,
    group: int | None = None,
    prompt_len: int | None = None,
    response_len: int | None = None,
    layout: Layout | None = None,
    hardware: str | HardwareSpec = DEFAULT_HARDWARE,
    gpus: int | None = None,
    options: Options | None = None,
    efficiency: Efficiency | None = None,
    calibration: str | Path | None = None,
    counting: AttnCounting = AttnCounting.FULL,
) -> Estimate:
    """Work, depth, memory per device, fit and time lower bound of one iteration, per stage.

    ``algorithm``: a name from `rlmcost algorithms` (ppo, grpo, dpo, variants).
    ``model``: the actor (built-in name, alias or config.json path); ``critic``, ``reward``,
    ``ref``, ``judge`` (and ``models`` for any role, e.g. ``{"cost": ...}``) default to the
    actor's model. ``workload`` defaults to B = 64 prompts, K = the algorithm's default group
    (1 for PPO, 8 for GRPO), S = T = 1024 tokens, bf16 / fp32 dtypes; ``batch``, ``group``,
    ``prompt_len``, ``response_len`` override its fields. ``layout`` defaults to one GPU;
    ``gpus`` fills data parallelism when larger than the layout. ``hardware`` defaults to
    h100-sxm. ``options``: epochs, mini-batches, recomputed log-probs, ... (see
    :class:`~rlmcost.algorithms.options.Options`). ``efficiency``: measured efficiencies (an
    :class:`~rlmcost.timing.Efficiency`), or ``calibration``: the path of a profile written
    by `rlmcost calibrate`, checked against ``hardware``; default: the profile shipped for
    ``hardware`` in rlmcost/calibrate/profiles/ if there is one, else the datasheet peaks.
    ``counting``: teacher-forced attention FLOPs ``full`` (every query-key pair, as PyTorch
    counts: the project's convention, the default) or ``causal`` (the unmasked half, what
    causal FlashAttention kernels compute). Full counting includes the masked half that
    causal kernels skip, so at long contexts only ``causal`` makes the time a strict lower
    bound.

    >>> from rlmcost.parallel.layout import Layout
    >>> e = estimate("ppo", "70b", layout=Layout(tp=8))
    >>> e.gpus, e.fits, e.dominant_stage
    (8, False, <Stage.TRAINING: 'training'>)
    """
    alg = configure(get_algorithm(algorithm), options or Options())
    options = options or Options()
    wl = resolve_workload(alg, workload, batch, group, prompt_len, response_len)
    specs = resolve_models(alg, model, models_given(models, critic, reward, ref, judge))
    hw = get_hardware(hardware)
    if calibration is not None and efficiency is not None:
        raise SpecError("give either efficiency or calibration, not both")
    if efficiency is None:
        from rlmcost.calibrate import resolve_profile

        # the given profile, else the one shipped for this hardware, else datasheet peaks
        efficiency = resolve_profile(calibration, hw)
    lay, notes = resolve_layout(layout, gpus)
    for role, spec in specs.items():
        for note in check_layout(spec.arch(), lay, lay.n_gpus):
            notes.append(f"{role} ({spec.name}): {note}")
        mla_note = spec.attention_note()
        if mla_note and mla_note not in notes:
            notes.append(mla_note)
    values = resolve_values(
        alg,
        {"B": wl.prompts, "K": wl.samples_per_prompt, "S": wl.prompt_len, "T": wl.response_len},
        options,
    )
    roofline = Roofline(hw, lay.n_gpus, wl.compute_dtype, efficiency or PEAK)
    archs = {r: s.arch() for r, s in specs.items()}
    ctx = _Context(alg, archs, lay, wl, values, roofline, counting)
    for inv in alg.invocations:
        if inv.kind is not Kind.VERIFY:
            note = specs[inv.role].context_note(ctx.seq_len(inv))
            if note and note not in notes:
                notes.append(note)
    stages: dict[Stage, StageEstimate] = {}
    for stage in alg.stages:
        invs = tuple(
            ctx.invocation(inv, specs[inv.role].name if inv.role in specs else "-")
            for inv in alg.stage(stage)
        )
        stages[stage] = StageEstimate(stage, invs, hw.hbm_bytes)
    total_s = sum(s.time.bound_s for s in stages.values()) or 1.0
    stages = {
        k: StageEstimate(s.stage, s.invocations, s.hbm_bytes, s.time.bound_s / total_s)
        for k, s in stages.items()
    }
    if alg.offline:
        notes.append(
            f"{alg.name} is offline (Table IV †): its responses come from a fixed dataset "
            "generated before training, so the loop has no Generation stage"
        )
    knobs = {k: v for k, v in values.items() if k not in ("B", "K", "S", "T")}
    return Estimate(
        algorithm=alg,
        models={r: s.name for r, s in specs.items()},
        hardware=hw,
        layout=lay,
        workload=wl,
        knobs=knobs,
        options=options,
        stages=stages,
        calibration=(efficiency or PEAK).name,
        counting=counting,
        notes=tuple(notes),
    )


@dataclass
class _Context:
    """What every invocation of one estimate shares; caches memory_per_rank calls."""

    alg: Algorithm
    archs: dict[Role, Any]
    layout: Layout
    workload: Workload
    values: dict[str, object]
    roofline: Roofline
    counting: AttnCounting
    _memory: dict[tuple, MemoryBreakdown] = field(default_factory=dict)

    def _int(self, text: str) -> int:
        value = count(text, self.values)
        if not value.is_Integer or value < 1:
            raise SpecError(
                f"{self.alg.name}: {text} = {value} is not a positive whole number of "
                "sequences/tokens; adjust the batch, group or --oversample"
            )
        return int(value)

    def memory(self, role: Role, mode: Mode, sequences: int, seq_len: int) -> MemoryBreakdown:
        key = (role, mode, sequences, seq_len)
        if key not in self._memory:
            head = next((i.model_head for i in self.alg.invocations if i.role is role), role.head)
            self._memory[key] = memory_per_rank(
                self.archs[role], self.layout, mode, sequences, seq_len, self.workload, head
            )
        return self._memory[key]

    def sequences(self, inv: Invocation) -> int:
        """Sequences the invocation processes at once (per optimizer step for train)."""
        n = self._int(inv.sequences)
        if inv.kind is Kind.TRAIN:
            steps = self._int(inv.steps)
            if n % steps:
                raise SpecError(
                    f"{self.alg.name}: {steps} mini-batches must divide the {n} training "
                    "sequences; change --mini-batches"
                )
            return n // steps
        if inv.kind is Kind.FORWARD:
            prefixes = self._int(inv.prefixes)
            if prefixes > 1 and self._int(inv.response) % prefixes:
                raise SpecError(
                    f"{self.alg.name}: {prefixes} PRM steps must divide the "
                    f"{self._int(inv.response)} response tokens; change --prm-steps"
                )
            return n * prefixes
        return n

    def seq_len(self, inv: Invocation) -> int:
        return self._int(inv.prompt) + self._int(inv.response)

    def resident(self, role: Role) -> MemoryBreakdown:
        """Model states ``role`` keeps on each device all iteration (weights; + gradients and
        Adam states when it trains)."""
        invs = [i for i in self.alg.invocations if i.role is role]
        inv = next((i for i in invs if i.kind is Kind.TRAIN), invs[0])
        full = self.memory(role, _MODE[inv.kind], self.sequences(inv), self.seq_len(inv))
        return MemoryBreakdown(full.weights, full.gradients, full.optimizer, 0, 0, 0, 0)

    def with_residents(self, role: Role | None, own: MemoryBreakdown) -> MemoryBreakdown:
        """``own`` plus every other model's resident states; the invocation's own model
        keeps its resident states too (its Adam states stay while it generates)."""
        values = {f.name: getattr(own, f.name) for f in fields(own)}
        for other in self.alg.model_roles:
            states = self.resident(other)
            for name in _STATE_FIELDS:
                if other is role:
                    values[name] = max(values[name], getattr(states, name))
                else:
                    values[name] += getattr(states, name)
        return MemoryBreakdown(**values)

    def invocation(self, inv: Invocation, model_name: str) -> InvocationEstimate:
        cost = invocation_cost(inv, self.archs.get(inv.role), self.values, self.counting)
        if inv.kind is Kind.VERIFY:
            empty = MemoryBreakdown(0, 0, 0, 0, 0, 0, 0)
            return InvocationEstimate(
                inv,
                model_name,
                self._int(inv.sequences),
                0,
                0,
                self.with_residents(None, empty),
                PhaseTime(),
            )
        seqs, m = self.sequences(inv), self.seq_len(inv)
        own = self.memory(inv.role, _MODE[inv.kind], seqs, m)
        return InvocationEstimate(
            invocation=inv,
            model=model_name,
            sequences=self._int(inv.sequences),
            work_flops=int(cost.work),
            depth=int(cost.depth),
            memory=self.with_residents(inv.role, own),
            time=self.time(inv, own, int(cost.work)),
        )

    def weights_streamed(self, inv: Invocation, own: MemoryBreakdown) -> int:
        """Weight bytes each device reads from HBM per pass. Under ZeRO-3 the device computes
        with every gathered layer of its TP/PP share, not just its resident shard."""
        if self.layout.zero is not ZeroStage.OS_G_P:
            return own.weights
        unsharded = self.layout.with_(zero=ZeroStage.NONE)
        return memory_per_rank(
            self.archs[inv.role],
            unsharded,
            _MODE[inv.kind],
            self.sequences(inv),
            self.seq_len(inv),
            self.workload,
            inv.model_head,
        ).weights

    def pass_bytes(self, inv: Invocation, own: MemoryBreakdown) -> tuple[int, int]:
        """(weights, KV cache) bytes per device that one token's pass through the model
        streams: with pipeline stages the token visits every stage in turn, so it is the TP
        shard of all layers (gathered under ZeRO-3), not the one stage a device holds."""
        if self.layout.pp == 1:
            return self.weights_streamed(inv, own), own.kv_cache
        whole = memory_per_rank(
            self.archs[inv.role],
            self.layout.with_(pp=1, zero=ZeroStage.NONE),
            _MODE[inv.kind],
            self.sequences(inv),
            self.seq_len(inv),
            self.workload,
            inv.model_head,
        )
        return whole.weights, whole.kv_cache

    def load_factor(self, sequences: int) -> Fraction:
        """Busiest data rank's share over the even share: P_d P_e ceil(n / (P_d P_e)) / n."""
        shards = self.layout.dp * self.layout.ep
        return Fraction(shards * -(-sequences // shards), sequences)

    def bubble(self, inv: Invocation) -> Fraction:
        """Pipeline bubble (idle / ideal) of the invocation's micro-batches."""
        lay = self.layout
        micro = data_share(lay, self.sequences(inv), self.seq_len(inv)).micro_batches
        return bubble_fraction(lay.schedule, lay.pp, micro, lay.virtual_stages)

    def time(self, inv: Invocation, own: MemoryBreakdown, work_flops: int) -> PhaseTime:
        """Roofline bound of one invocation (module docstring: the phases)."""
        r = self.roofline
        weights = self.weights_streamed(inv, own)
        busy = work_flops * self.load_factor(self.sequences(inv))
        if inv.kind is Kind.FORWARD:
            return r.phase(busy, weights, FORWARD).scaled(1 + self.bubble(inv))
        if inv.kind is Kind.TRAIN:
            n_steps = self._int(inv.passes) * self._int(inv.steps)
            step_bytes = 2 * weights + 2 * own.gradients + 2 * own.optimizer
            ideal = r.phase(busy / n_steps, step_bytes, TRAIN).times(n_steps)
            return ideal.scaled(1 + self.bubble(inv))
        return self.generation_time(inv, own)

    def generation_time(self, inv: Invocation, own: MemoryBreakdown) -> PhaseTime:
        """Prefill, then one phase per decode step at contexts S+1 .. S+T; each reads the
        rank's weights and its KV cache at that context (the cache grows linearly)."""
        import numpy as np

        arch = self.archs[inv.role]
        n, prompt, response = (
            self._int(inv.sequences),
            self._int(inv.prompt),
            self._int(inv.response),
        )
        weights, kv_cache = self.pass_bytes(inv, own)
        kv_per_token = Fraction(kv_cache, prompt + response)
        load = self.load_factor(n)
        prefill = self.roofline.phase(
            int(bl.work_prefill(arch, prompt, n, self.counting)) * load,
            weights + float(kv_per_token * prompt),
            PREFILL,
        )
        # a decode step's FLOPs are linear in its context: f(c) = f0 + f1 c, exactly
        f1 = int(bl.work_decode_step(arch, 2, n) - bl.work_decode_step(arch, 1, n))
        f0 = int(bl.work_decode_step(arch, 1, n)) - f1
        contexts = np.arange(prompt + 1, prompt + response + 1, dtype=np.float64)
        decode = self.roofline.steps(
            (f0 + f1 * contexts) * float(load), weights + float(kv_per_token) * contexts
        )
        return prefill + decode


# --------------------------------------------------------------------------------------------
# Side by side
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Several algorithms on the same models, workload, layout and hardware."""

    estimates: tuple[Estimate, ...]
    dropped: dict[str, tuple[str, ...]]  # algorithm -> inputs that do not apply to it

    def notes(self) -> list[str]:
        return [
            f"{name}: ignored {', '.join(what)} (does not apply)"
            for name, what in self.dropped.items()
            if what
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithms": [e.to_json() for e in self.estimates],
            "notes": self.notes(),
        }


def applicable(alg: Algorithm, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``kwargs`` of :func:`estimate` without the inputs that do not apply to ``alg`` (a group
    for the offline family, a critic for a critic-free method, a knob it does not use, ...),
    and the names of those dropped."""
    out, dropped = dict(kwargs), []
    if out.get("group") is not None and "K" not in alg.names:
        dropped.append("group")
        out["group"] = None
    for key, role in (
        ("critic", Role.CRITIC),
        ("reward", Role.REWARD),
        ("ref", Role.REFERENCE),
        ("judge", Role.JUDGE),
    ):
        if out.get(key) is not None and not uses_model(alg, role):
            dropped.append(key)
            out[key] = None
    opts: Options | None = out.get("options")
    if opts is not None:
        changes: dict[str, Any] = {}
        for knob in KNOBS:
            if getattr(opts, knob.field) is not None and knob.name not in alg.names:
                changes[knob.field] = None
        has_ref = Role.REFERENCE in alg.roles
        online = not alg.offline
        if opts.recompute_logprobs and not online:
            changes["recompute_logprobs"] = False
        if not opts.kl and not has_ref:
            changes["kl"] = True
        if opts.ref_precomputed and (online or not has_ref):
            changes["ref_precomputed"] = False
        dropped += list(changes)
        out["options"] = replace(opts, **changes)
    return out, dropped


def compare(algorithms: list[str], **kwargs: Any) -> Comparison:
    """:func:`estimate` for each of ``algorithms`` with the same inputs; inputs that do not
    apply to one of them are left out for it and listed in the notes."""
    if not algorithms:
        raise SpecError("give at least one algorithm, e.g. `rlmcost compare ppo grpo dpo`")
    estimates, dropped = [], {}
    for name in dict.fromkeys(algorithms):
        alg = get_algorithm(name)
        kw, gone = applicable(alg, kwargs)
        estimates.append(estimate(alg, **kw))
        dropped[alg.name] = tuple(gone)
    return Comparison(tuple(estimates), dropped)
