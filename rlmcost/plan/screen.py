"""The RL planner's screen: a memory and a time lower bound for every candidate at once.

:func:`screen` takes the candidates of a query as numpy arrays (one entry per candidate: GPUs,
the actor's training group, the engines' group, the family's kind, tp/pp/cp/sp, ZeRO, ckpt,
micro-batch, offload, engine TP) and the query's constants (:class:`Query`) and returns, per
candidate, bytes per device and seconds per iteration that the exact evaluation
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment`) never goes below:

* memory: the trainer's model states (weights, gradients and the optimizer, each unless kept
  in host memory through the step, :mod:`rlmcost.plan.offloads`; a between-phases offload
  leaves them all in the update) sharded over the most data-parallel replicas its group can
  have, plus the activations of one sequence per replica, from the compiled training-step
  sweep (:func:`rlmcost.compiled.sweep_train_steps`), plus a Megatron engine's KV pool where
  it stays beside the trainer on the trainer's group (``--no-sleep``), and one engine shard's
  weights; every evaluation holds at least the larger of the two on some device (the Table IX
  configurations, whose trainers the evaluation lays out, only the engine's);
* time: a roofline over the iteration's work W (the project's exact FLOP count of
  generation, assessment and training, :attr:`PlacementEstimate.work_flops`, which no
  layout of one family changes — ``ac-shared`` shares the actor's trunk with the critic and
  so does less; :func:`query` reads it from one exact evaluation), at the dense datasheet
  peak of the compute dtype, and the decode steps' weight reads at HBM bandwidth, composed
  as the schedule composes the groups (:mod:`rlmcost.placement.iteration`: inside a group
  one task after another, a synchronous loop waits for generation before training, an
  asynchronous one takes the busiest group per iteration):

  - every family: W / (GPUs x peak) (the iteration's MFU is at most 1);
  - the decode: (T_max - 1) steps (none for a streaming rollout, ``--partial-rollout``), each
    reading one TP shard of the engine's weights per device, |M| x bytes / (engine TP x HBM
    bandwidth) (``rollout.DecodeCost``; T_max at least the median response's decoded tokens,
    ``turns.least_decoded``; 0 for MoE models, whose steps may read only the routed experts),
    plus the seconds the generating group spends beside it on units no layout changes
    (:attr:`Query.group_s`: the Ray controller, the refit; every unit's prediction is at
    least its bound, and a group runs its units one after another);
  - one group (``baseline``): decode + W_train / (GPUs x peak) (it decodes, then trains);
  - engines apart, synchronous (``split``, ``roles``): the larger of the generating group's
    busy time (the decode above) and the cycle of the decode steps and the actor's refit into
    the engines (:func:`refit_apart_s`), which the next generation waits for (the Ray
    controller runs on the engines' group meanwhile; the critic's update may overlap the
    refit);
  - engines apart, asynchronous (``async-*``): the largest of decode, W_gen / (R x peak) and
    W_train / ((GPUs - R) x peak) (the period is at least each group's busy time);
  - the Table IX configurations (their split is the evaluation's): the first two only;
  - one group under staleness (``async-colocated``, NeMo RL's async GRPO colocated with
    Megatron generation): the group's layout-free units plus W_train / (GPUs x peak) (its
    generation, forwards and update run one after another on the same GPUs; no decode steps,
    as a sample in flight may resume across a step).

A Megatron engine in the trainer's own layout (engine TP :data:`~rlmcost.plan.mcore.
SHARED_LAYOUT`) holds no weights of its own (the memory bound's engine term is 0) and reads
the trainer's TP x PP shard per decode step at least; the replica rule leaves it alone.

Host memory is not screened (it only prunes less; the exact evaluation drops a node over its
host, :mod:`rlmcost.placement.host_memory`). ``tests/test_plan_screen.py`` checks both bounds
on random candidates; float64 (bytes exact below 2^53); throughput: benchmarks/bench_plan.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.parallel.packed_weights import FORMATS
from rlmcost.plan.families import ROLLOUT
from rlmcost.plan.screen_refit import distinct, refit_apart_s
from rlmcost.plan.screen_terms import (
    fp8_train_peak,
    group_s,
    kv_kept,
    refit_apart,
    sequences,
    w4a4_peak,
)

if TYPE_CHECKING:
    import numpy as np

    from rlmcost.plan.rl_candidates import RLCandidate
    from rlmcost.run.spec import Run

ONE, APART, APART_STALE, OTHER, ONE_STALE = 0, 1, 2, 3, 4
"""The family kinds of the time bound (module docstring): one group; engines on R GPUs of
their own, synchronous or asynchronous; a Table IX configuration (split unknown); one group
under staleness (``async-colocated``)."""

FIELDS = ("gpus", "train_gpus", "rollout_gpus", "kind", "tp", "pp", "cp", "sp", "zero", "ckpt",
          "micro_batch", "offload", "rollout_tp", "own", "kv_pool", "ep")  # fmt: skip
"""The arrays :func:`screen` reads (``zero``/``ckpt``: enum codes, ``compiled.sweep.codes``;
``offload``: bits 1, 2, 4 for the optimizer, gradients and parameters kept on the host
(:func:`rlmcost.plan.offloads.mask`; a between-phases offload leaves the update's peak);
``own``: a group with a layout of its own, which the memory bound leaves alone; ``kv_pool``:
a Megatron engine's KV pool per GPU on the actor's training group, bytes, 0 elsewhere;
``ep``: the trainer's EP where the plan searches it, 0 for the base Run's)."""

MEMORY_TERMS = ("weights", "gradients", "optimizer", "activations", "engine weights",
                "engine KV pool")  # fmt: skip


@dataclass(frozen=True)
class Query:
    """What the screen holds fixed for one base Run (float64-safe numbers).

    ``work``, ``work_gen``, ``work_train``: FLOPs of the iteration, of its generation and
    training stages (FLOP = one add or one multiply, the project's exact count);
    ``decode_steps``: sequential decode steps at least (T_max - 1); ``engine_weight_bytes``:
    the engine's weights, |M| x the engine dtype's bytes (the weight dtype's unless
    ``--rollout-dtype``); ``refit_bytes``: |M| x the weight dtype's; ``decode_weight_bytes``: what a
    decode step reads of them at least (the same; 0 for MoE, module docstring);
    ``tokens``: prompt + response tokens trained per iteration (the throughput objective);
    ``sequences``: the most sequences one generation invocation samples (B K for most
    algorithms; the engine replica rule, :func:`rejected`); ``group_s``: the
    predicted seconds of the units the evaluation schedules on the group that generates,
    beside the generation, which no layout changes (``placement/group_jobs.py``
    ``transfers``): the Ray single-controller frameworks' per-iteration overhead
    (``perf/refit.py`` ``controller_s``) and, where that group also trains the actor, the
    framework's refit of the full model (``refit_s`` of |M| x the weight dtype's bytes);
    ``refit_apart``: the mechanism of the refit into engines apart (:func:`refit_apart_s`)."""

    arch: Any  # ArchNumbers of the actor
    hardware: Any  # HardwareSpec
    dtypes: Any  # the workload with the base Run's dtypes
    seq_len: int  # prompt + the least longest response
    ep: int
    etp: int | None
    lora: bool
    work: float
    work_gen: float
    work_train: float
    decode_steps: int
    engine_weight_bytes: float
    decode_weight_bytes: float
    refit_bytes: float  # the model in the trainer's weight dtype, what a refit sends
    tokens: int
    sequences: int  # the most sequences a generation invocation samples (0: not known)
    group_s: float  # the generating group's layout-free units (controller, refit), predicted
    refit_apart: str | None  # the framework's refit into engines on GPUs of their own
    pool: tuple[Any, ...] = ()  # a pool's accelerators (HardwareSpec): bounds take the fastest
    kv_kept: bool = False  # a Megatron engine's KV pool stays beside training (no --sleep)
    engine_ep: int = 0  # a Megatron engine's --rollout-ep (0: not one; its PP, EP the trainer's)
    act_offload: bool = False  # the update's activations to host (parallel.act_offload): none

    engine_dtype: Any = None  # the engine's own dtype (EngineSpec.dtype), None: the workload's
    fp4_peak: float = 0.0  # a W4A4 engine's FP4 peak, an FP8 trainer's FP8 (screen_terms), 0

    @property
    def peak(self) -> float:
        """Dense datasheet peak of the compute dtype, FLOP/s per device (over a pool, the
        fastest accelerator's: a lower bound must hold whichever a group runs on; with an
        engine dtype, the faster of the two, as generation computes in it; a W4A4 engine's
        FP4 peak where higher, as its packed GEMMs compute at it)."""
        dtypes = [self.dtypes.compute_dtype] + ([self.engine_dtype] if self.engine_dtype else [])
        return max(self.fp4_peak, *(float(h.peak(d)) for h in (self.hardware, *self.pool)
                                    for d in dtypes))  # fmt: skip

    @property
    def hbm_bandwidth(self) -> float:
        """HBM bandwidth per device, B/s (over a pool, the fastest accelerator's)."""
        return max(float(h.hbm_bandwidth_bytes_per_s) for h in (self.hardware, *self.pool))


@dataclass
class Screen:
    """Per candidate: the memory bound (bytes per device) and the time bound (seconds per
    iteration); :meth:`binding` names the memory bound's largest term where asked."""

    memory: np.ndarray
    parts: tuple[np.ndarray, ...]  # the terms of MEMORY_TERMS, per candidate
    time: np.ndarray

    def binding(self, index: Any) -> tuple[np.ndarray, np.ndarray]:
        """The largest memory term (its index into :data:`MEMORY_TERMS`) and its bytes, for
        the candidates at ``index``."""
        import numpy as np

        stack = np.stack([np.broadcast_to(p, self.memory.shape)[index] for p in self.parts])
        which = np.argmax(stack, axis=0)
        return which, np.take_along_axis(stack, which[None], 0)[0]


def query(base: Run, estimate: Any | None = None, pool: tuple[Any, ...] = ()) -> Query:
    """The screen's constants of ``base``; the work terms from ``estimate``, an exact
    evaluation of any deployment of ``base`` (none: work 0, the time bound then only reads
    the decode)."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.kinds import Stage
    from rlmcost.compiled import arch_numbers
    from rlmcost.deployment.resolve import resolve_workload
    from rlmcost.evaluation.deployment import spec_params
    from rlmcost.frameworks.presets import group_of_one
    from rlmcost.placement.lengths import parse_length_dist
    from rlmcost.placement.turns import least_decoded
    from rlmcost.plan.rl_candidates import actor_spec
    from rlmcost.specs import get_hardware

    spec = actor_spec(base)
    alg = get_algorithm(base.algorithm.name)
    w, t = base.workload, base.deployment.train
    wl = resolve_workload(alg, None, w.prompts, w.samples_per_prompt, w.prompt_len, w.response_len,
                          group_of_one(base.deployment.framework, alg) is not None)  # K = 1
    dtypes = wl.model_copy(update=w.dtypes())
    a = arch_numbers(spec)
    # the longest of n >= 1 responses is at least the distribution's median (n = 1)
    longest = parse_length_dist(w.length_dist).lengths(1, wl.response_len)[0]
    stages = estimate.stages if estimate is not None else {}

    def work(stage: Any = None) -> float:
        if estimate is None:
            return 0.0
        if stage is None:
            return float(estimate.work_flops)
        return float(stages[stage].work_flops) if stage in stages else 0.0

    generates = Stage.GENERATION in stages and stages[Stage.GENERATION].work_flops > 0
    # a streaming rollout (--partial-rollout) has no longest sample per iteration: no steps
    decoded = least_decoded(longest, w.turns, w.observation_tokens)  # multi-turn: l - k O
    steps = max(0, decoded - 1) if generates and not base.deployment.partial_rollout else 0
    e, ideal, n = base.deployment.engine, base.deployment.ideal, spec_params(spec)
    names = (base.cluster.hardware, *dict(pool))  # the accelerators a group may run on
    eng_dtype, refit = None if ideal else e.dtype, float(n * dtypes.weight_dtype.bytes)
    engine = float(n * (FORMATS[e.weight_format] if e.weight_format and not ideal  # all 4-bit:
                        else (eng_dtype or dtypes.weight_dtype).bytes))  # still a lower bound
    return Query(
        arch=a, hardware=get_hardware(base.cluster.hardware), dtypes=dtypes,
        seq_len=wl.prompt_len + longest, ep=t.ep, etp=t.etp,
        lora=base.deployment.lora is not None, work=work(), work_gen=work(Stage.GENERATION),
        work_train=work(Stage.TRAINING), decode_steps=steps,
        engine_weight_bytes=engine, decode_weight_bytes=0.0 if a.moe else engine,
        refit_bytes=refit, engine_dtype=eng_dtype,
        tokens=int(estimate.tokens_per_iteration) if estimate is not None else 0,
        sequences=sequences(estimate),
        group_s=group_s(estimate),
        refit_apart=refit_apart(estimate),
        pool=tuple(get_hardware(h) for h, _ in pool),
        kv_kept=kv_kept(base), act_offload=not ideal and t.activation_offload,
        engine_ep=e.ep * (str(e.kind) == "megatron"),
        fp4_peak=0.0 if ideal else max(w4a4_peak(e.weight_format, names),
                                       fp8_train_peak(t.fp8, names)),
    )  # fmt: skip


def rejected(q: Query, c: dict[str, np.ndarray]) -> np.ndarray:
    """Candidates the evaluation rejects: more engine replicas (the engines' GPUs over the
    engine TP: all GPUs in one group, R apart) than the sequences to sample
    (``placement/group_jobs.py`` ``_generate``: "N sequences cannot feed the M generation
    replicas"). The Table IX configurations, sized by the evaluation, are left alone."""
    import numpy as np

    if not q.sequences:
        return np.zeros(c["gpus"].shape, dtype=bool)
    engines = np.where(c["kind"] == ONE, c["gpus"], c["rollout_gpus"])
    etp = c["rollout_tp"]
    replicas = engines // np.maximum(etp, 1)  # a Megatron engine in the trainer's layout: 0
    return (c["kind"] != OTHER) & (c["kind"] != ONE_STALE) & (etp > 0) & \
        (replicas > q.sequences)  # fmt: skip


def screen(q: Query, c: dict[str, np.ndarray]) -> Screen:
    """Both bounds of every candidate of ``c`` (1-D arrays named by :data:`FIELDS`)."""
    import numpy as np

    from rlmcost.compiled import sweep_train_steps

    f64 = np.float64
    gpus = c["gpus"].astype(f64)
    shared = c["rollout_tp"] == 0  # a Megatron engine in the trainer's layout (plan.mcore)
    etp = engine_tp(c)
    # the trainer's terms depend on its layout alone: sweep each distinct layout once
    layout = ("train_gpus", "tp", "pp", "cp", "sp", "zero", "ckpt", "micro_batch", "ep")
    key = np.zeros(gpus.shape, dtype=np.int64)
    for name, bits in zip(layout[:-1], (24, 8, 8, 8, 1, 2, 2, 10), strict=True):
        key = (key << bits) | c[name].astype(np.int64)  # 63 bits
    if c["ep"].any():  # a searched EP: keyed on the distinct layouts' index (no overflow)
        key = (distinct(key)[0].astype(np.int64) << 16) | c["ep"].astype(np.int64)
    back, first = distinct(key)
    u = {name: c[name].ravel()[first] for name in layout}
    tp, pp, cp = u["tp"].astype(f64), u["pp"].astype(f64), u["cp"].astype(f64)
    dp = u["train_gpus"].astype(f64) / (tp * pp * cp)  # the most replicas (EP folded in)
    ep = np.where(u["ep"] == 0, q.ep, u["ep"])  # the base Run's where not searched
    s = sweep_train_steps(q.arch, q.hardware, sequences=dp, seq_len=q.seq_len, dp=dp, tp=tp,
                          pp=pp, cp=cp, ep=ep, etp=q.etp, sp=u["sp"], zero=u["zero"],
                          ckpt=u["ckpt"], micro_batch=u["micro_batch"],
                          workload=q.dtypes)  # fmt: skip
    kept = c["offload"].astype(np.int64)  # bits of the states kept on the host (plan.offloads)
    mine = c["kind"] != OTHER  # a Table IX configuration lays its trainer out itself
    weights = np.where(kept & 4, 0.0, s.weights[back]) * mine
    activations = s.activations[back] * (mine & (not q.act_offload))  # two layers' at most
    gradients = np.where((kept & 2) | q.lora, 0.0, s.gradients[back]) * mine
    optimizer = np.where((kept & 1) | q.lora, 0.0, s.optimizer[back]) * mine
    kv = c["kv_pool"].astype(f64) * float(q.kv_kept)  # beside the trainer, on its group
    trainer = weights + gradients + optimizer + activations + kv
    ep = np.maximum(np.where(c["ep"] == 0, q.ep, c["ep"]), q.engine_ep) * c["pp"]
    split = etp * ep if q.engine_ep else etp  # Megatron: the trainer's PP and EP (merged cfg)
    engine = np.where(shared, 0.0, q.engine_weight_bytes / split)  # one engine shard's weights
    memory = np.where(c["own"].astype(bool), 0.0, np.maximum(trainer, engine))
    parts = (weights, gradients, optimizer, activations, engine, kv)
    return Screen(memory, parts, time_bound(q, c["kind"], gpus, c["rollout_gpus"].astype(f64),
                                            etp, c["train_gpus"].astype(f64)))  # fmt: skip


def engine_tp(c: dict[str, np.ndarray]) -> np.ndarray:
    """The engine TP per candidate of ``c`` as the bounds take it: its own, or the trainer's TP
    x PP for a Megatron engine in the trainer's layout (its shard per device at least)."""
    import numpy as np

    return np.where(c["rollout_tp"] == 0, c["tp"] * c["pp"], c["rollout_tp"]).astype(np.float64)


def time_bound(q: Query, kind: np.ndarray, gpus: np.ndarray, rollout: np.ndarray,
               etp: np.ndarray, train_gpus: np.ndarray) -> np.ndarray:  # fmt: skip
    """Seconds per iteration no evaluation goes below (module docstring), per candidate
    (``train_gpus``: the actor's training group; ``rollout``: R, 0 where not apart)."""
    import numpy as np

    peak = q.peak
    everything = q.work / (gpus * peak)
    steps = q.decode_steps * q.decode_weight_bytes / (etp * q.hbm_bandwidth)
    decode = q.group_s + steps  # the generating group's busy time
    trainers = np.maximum(gpus - rollout, 1.0)
    apart_train = q.work_train / (trainers * peak)
    one = decode + q.work_train / (gpus * peak)
    # the cycle generation -> actor update -> refit -> next generation
    sync = np.maximum(decode, steps + refit_apart_s(q, gpus, train_gpus, rollout, etp))
    stale = np.maximum(np.maximum(decode, q.work_gen / (np.maximum(rollout, 1.0) * peak)),
                       apart_train)  # fmt: skip
    other = decode
    one_stale = q.group_s + q.work_train / (gpus * peak)
    by_kind = np.choose(np.asarray(kind, dtype=np.int64), [one, sync, stale, other, one_stale])
    return np.maximum(everything, by_kind)


def candidate_arrays(cands: list[RLCandidate]) -> dict[str, Any]:
    """The candidates as the arrays :func:`rlmcost.plan.screen.screen` reads
    (:data:`~rlmcost.plan.screen.FIELDS`)."""
    import numpy as np

    from rlmcost.deployment.megatron_engine import kv_buffer_bytes
    from rlmcost.plan.offloads import mask

    zeros, ckpts = list(ZeroStage), list(Checkpointing)
    rows = []
    for c in cands:
        kind, rollout = _kind(c)
        kv = kv_buffer_bytes(c.kv_gib) if c.kv_gib is not None and kind in (ONE, ONE_STALE) \
            else 0  # fmt: skip
        rows.append((c.gpus, c.train_gpus, rollout, kind, c.tp, c.pp, c.cp, c.sp,
                     zeros.index(c.zero), ckpts.index(c.ckpt), c.micro_batch, mask(c.offload),
                     c.rollout_tp, c.family == "groups" and "[" in c.groups, kv,
                     c.ep or 0))  # fmt: skip
    table = np.array(rows, dtype=np.int64).reshape(len(rows), len(FIELDS))
    return {name: table[:, i] for i, name in enumerate(FIELDS)}


def _kind(c: RLCandidate) -> tuple[int, int]:
    """The time bound's family kind of ``c`` and its engines' GPUs (0 where none apart)."""
    if c.family == "baseline":
        return ONE, 0
    if c.family == "async-colocated":
        return ONE_STALE, 0
    if not c.groups:  # a Table IX configuration: the evaluation sizes its groups
        return OTHER, 0
    first, _, rest = c.groups.partition(",")
    name, _, count = first.partition("=")
    if name != ROLLOUT or not rest or "[" in count:
        return OTHER, 0
    return (APART_STALE if c.stale else APART), int(count.partition("@")[0])
