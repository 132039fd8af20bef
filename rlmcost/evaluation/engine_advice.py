"""The changes of a co-located engine's memory that the fit advice tries first, as users of
co-located engines do (:func:`rlmcost.evaluation.advice.suggestions`): ``--sleep`` (the engine
frees its KV cache and offloads its weights while another model runs: vLLM's sleep mode,
SGLang's ``release_memory_occupation``) where it keeps its reservation beside the other phases,
and a smaller ``--gpu-memory-utilization`` (the engine's reservation) where the phases that hold
it fit beside a smaller one; each with the framework's own switch for it, and its source
(:data:`SWITCHES`). A framework with no sleep for its engine is not offered ``--sleep``; rlmcost's
bare layout (``--framework none``) is offered both, with no framework switch to name.

The reservation offered is the largest at which every phase holding the engine fits
(:func:`rlmcost.placement.iteration_advice.recommended_fraction`, down to the hundredth),
computed from an evaluation of the deployment it is added to (so with the other changes of a
combination in it), and checked by evaluating it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rlmcost.deployment.kinds import EngineKind, Offload
from rlmcost.deployment.spec import Deployment
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Layout

Change = tuple[str, Layout, Deployment]  # (flags, layout, deployment)

SLEEP_FLAG = "--sleep"
FRACTION_FLAG = "--gpu-memory-utilization"
POOL_FLAG = "--kv-buffer-gib"  # a Megatron engine's (rlmcost.evaluation.pool_advice)


@dataclass(frozen=True)
class Switch:
    """A framework's own switches for an engine: ``sleep`` (None: it has none), the
    reservation's key (``{f}`` the fraction), the source of both, ``one_group``: whether the
    sleep needs every model on the engine's GPUs (OpenRLHF's ``--colocate_all_models``), and
    the trainer's own sleep beside it: the states it moves to the host between phases
    (``idle``, rlmcost's ``--offload`` kinds) and its switch (``idle_flag``)."""

    sleep: str | None
    fraction: str
    source: str
    one_group: bool = False
    idle: tuple[Offload, ...] = ()
    idle_flag: str = ""


_VERL = Switch(
    "actor_rollout_ref.rollout.free_cache_engine=True",
    "actor_rollout_ref.rollout.gpu_memory_utilization={f}",
    "verl/trainer/config/ppo_trainer.yaml: rollout.free_cache_engine, "
    "rollout.gpu_memory_utilization, actor.fsdp_config",
    idle=(Offload.PARAMS_IDLE, Offload.OPTIMIZER_IDLE),
    idle_flag="actor_rollout_ref.actor.fsdp_config.param_offload=True optimizer_offload=True")
"""verl's switches, the same keys for its vLLM and SGLang rollouts."""

SWITCHES: dict[tuple[str, EngineKind], Switch] = {
    ("verl", EngineKind.VLLM): _VERL,
    ("verl", EngineKind.SGLANG): replace(_VERL, source=_VERL.source.replace(
        "gpu_memory_utilization,", "gpu_memory_utilization (SGLang's mem_fraction_static),")),
    ("openrlhf", EngineKind.VLLM): Switch(
        "--vllm_enable_sleep with --colocate_all_models (--vllm.enable_sleep, "
        "--train.colocate_all since ed62d0e2)",
        "--vllm_gpu_memory_utilization {f}",
        "openrlhf/cli/train_ppo_ray.py, openrlhf/utils/deepspeed/deepspeed_utils.py "
        "offload_deepspeed_states @3c3be623",
        one_group=True, idle=(Offload.OPTIMIZER_IDLE, Offload.GRADS_IDLE),
        idle_flag="--deepspeed_enable_sleep (--ds.enable_sleep; ZeRO-3 on DeepSpeed <= 0.17.5, "
                  "none under --adam_offload)"),
    ("trl", EngineKind.VLLM): Switch(
        "vllm_enable_sleep_mode=True with vllm_mode='colocate' (TRL 0.23.0, PR 3968)",
        "vllm_gpu_memory_utilization={f}",
        "trl/trainer/grpo_config.py"),
    ("nemo-rl", EngineKind.VLLM): Switch(
        "policy.generation.colocated.enabled: true (vLLM sleeps while the policy trains)",
        "policy.generation.vllm_cfg.gpu_memory_utilization: {f}",
        "NeMo RL examples/configs/grpo_math_1B.yaml; its colocated policy moves its optimizer "
        "and model to the host around generation (dtensor_policy_worker.py "
        "offload_before_refit, offload_after_refit)",
        idle=(Offload.OPTIMIZER_IDLE, Offload.PARAMS_IDLE),
        idle_flag=""),
    ("nemo-rl", EngineKind.MEGATRON): Switch(
        "policy.generation.mcore_generation_config.kv_cache_management_mode: offload",
        "policy.generation.mcore_generation_config.buffer_size_gb: {f}",
        "NeMo RL's mcore_generation_config, Megatron-core's inference config.py: "
        "rlmcost.deployment.megatron_engine"),
    ("slime", EngineKind.SGLANG): Switch(
        "--offload-rollout (on with --colocate)",
        "--sglang-mem-fraction-static {f}",
        "slime/utils/arguments.py; slime/backends/megatron_utils/actor.py sleep/wake_up",
        idle=(Offload.OPTIMIZER_IDLE, Offload.PARAMS_IDLE, Offload.GRADS_IDLE),
        idle_flag="--offload-train (on with --colocate)"),
}
"""(framework, engine) -> its switches; a pair not here has no sleep of its own (NeMo RL's
generation backends are vLLM and Megatron-core, OpenRLHF and TRL run vLLM alone). A Megatron
engine's pool and sleep are offered by :mod:`rlmcost.evaluation.pool_advice`, named here."""


def _switch(dep: Deployment) -> Switch | None:
    return SWITCHES.get((dep.framework or "none", dep.engine.kind))


def _bare(dep: Deployment) -> bool:
    return (dep.framework or "none") == "none"


def reserving(estimate: Any) -> bool:
    """Whether ``estimate`` runs an engine with a reservation of its own (vLLM, SGLang) that
    it evaluated (not the ideal run)."""
    dep = estimate.deployment
    return (not dep.ideal and dep.engine.kind in (EngineKind.VLLM, EngineKind.SGLANG)
            and getattr(estimate, "evaluation", None) is not None)  # fmt: skip


def beside_others(estimate: Any) -> bool:
    """Whether a phase other than generation holds the engine's memory (its group also runs
    the trainer or the forwards, and the engine does not sleep)."""
    from rlmcost.algorithms.kinds import Kind

    return any(j.memory.engine > 0 for g in estimate.evaluation.groups for j in g.jobs
               if j.task.kind is not Kind.GENERATE)  # fmt: skip


def sleep_offered(estimate: Any) -> bool:
    """Whether ``--sleep`` is worth trying on ``estimate``: its engine keeps its reservation
    beside another phase and its framework has a sleep for it (every model on the engine's
    GPUs where the framework needs that: :attr:`Switch.one_group`)."""
    if not reserving(estimate) or estimate.deployment.engine.sleep:
        return False
    switch = _switch(estimate.deployment)
    if not _bare(estimate.deployment) and (switch is None or switch.sleep is None):
        return False
    if switch is not None and switch.one_group and len(estimate.evaluation.groups) > 1:
        return False
    return beside_others(estimate)


def slept(layout: Layout, dep: Deployment) -> Change:
    """``--sleep`` over ``layout`` and ``dep``."""
    engine = dep.engine.model_copy(update={"sleep": True})
    return SLEEP_FLAG, layout, dep.model_copy(update={"engine": engine})


def fraction_change(result: Any, layout: Layout, dep: Deployment) -> Change | None:
    """``--gpu-memory-utilization`` at the largest reservation at which ``result`` (an
    evaluation of ``layout`` and ``dep``) fits where its engine is held
    (``recommended_gpu_memory_utilization``), over ``layout`` and ``dep``; None where there is
    none, it is not below the reservation in effect, or ``result`` already fits."""
    if result is None or result.fits or not reserving(result):
        return None
    f = result.evaluation.recommended_gpu_memory_utilization
    if f is None or f <= 0 or f >= current_fraction(result):
        return None
    engine = dep.engine.model_copy(update={"gpu_memory_utilization": f})
    return f"{FRACTION_FLAG} {f:.2f}", layout, dep.model_copy(update={"engine": engine})


def current_fraction(estimate: Any) -> float:
    """The engine's ``gpu_memory_utilization`` in effect: given, else the default for where it
    runs (``placement.group_engine.GroupEngine.engine_fraction``: co-located with a trainer,
    or on GPUs of its own: SGLang's own there, the least over the groups)."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.deployment.spec import ENGINE_COLOCATED_FRACTION, ENGINE_DEDICATED_FRACTION

    given = estimate.deployment.engine.gpu_memory_utilization
    if given is not None:
        return float(given)
    shared = any({Kind.GENERATE, Kind.TRAIN} <= {j.task.kind for j in g.jobs}
                 for g in estimate.evaluation.groups)  # fmt: skip
    if shared:
        return ENGINE_COLOCATED_FRACTION
    from rlmcost.placement.group_engine import sglang_default

    own = [f for g in estimate.evaluation.groups
           if (f := sglang_default(estimate.evaluation, g)) is not None]  # fmt: skip
    return min(own) if own else ENGINE_DEDICATED_FRACTION


def engine_changes(estimate: Any) -> list[Change]:
    """The single engine changes worth trying on ``estimate`` (module docstring)."""
    if not reserving(estimate):
        return []
    out = [slept(estimate.layout, estimate.deployment)] if sleep_offered(estimate) else []
    f = fraction_change(estimate, estimate.layout, estimate.deployment)
    return out + ([f] if f is not None else [])


def framework_switches(flags: str, dep: Deployment, before: Deployment) -> str:
    """The framework's own switches for the engine changes among ``flags`` (a suggestion's
    on ``before``, making ``dep``), with their source; empty where there are none or none is
    named. The trainer's sleep is named where the change put its states on the host."""
    switch = _switch(dep)
    if switch is None:
        return ""
    words = flags.split()
    said = [switch.sleep] if SLEEP_FLAG in words and switch.sleep else []
    if switch.idle_flag and set(switch.idle) <= set(dep.train.offload) and not set(
            switch.idle) <= set(before.train.offload):  # fmt: skip
        said.append(switch.idle_flag)
    for flag in (FRACTION_FLAG, POOL_FLAG):  # the reservation: a fraction or a pool in GiB
        if flag in words:
            said.append(switch.fraction.format(f=words[words.index(flag) + 1]))
    if not said:
        return ""
    return f"{dep.framework}: {', '.join(said)} ({switch.source})"


Try = Callable[[Layout, Deployment], Any]  # (layout, deployment) -> an evaluation or None

DROP_ORDER = ("--offload", "--micro-batch", "--ckpt", "--zero", "--logits", "idle",
              "--offload-idle")
"""The order the pared engine combination drops the state changes in, dearest to the step
first: host offload (PCIe copies each step, CPU Adam), micro-batches of one (smaller kernels),
full recomputation (a second forward in training), ZeRO-3 (a gather a layer), the fused
log-probs, the trainer's states to the host between phases (``idle``: a copy each way a
step), the idle models' copies."""


def trainer_sleep(layout: Layout, dep: Deployment) -> Change | None:
    """The framework's trainer sleep beside its engine's (:attr:`Switch.idle`) as an
    ``--offload`` change over ``dep`` (its kinds added to those in effect); None where the
    framework has none or it is in effect."""
    switch = _switch(dep)
    off = dep.train.offload
    if switch is None or not switch.idle or set(switch.idle) <= set(off):
        return None
    kinds = (*off, *(k for k in switch.idle if k not in off))
    train = dep.train.model_copy(update={"offload": kinds})
    return "--offload " + ",".join(kinds), layout, dep.model_copy(update={"train": train})


def engine_combined(try_: Try, layout: Layout, dep: Deployment, states: list[Change],
                    sleep: bool) -> list[tuple[str, Any]]:  # fmt: skip
    """When no single change fits: the engine's changes with the state changes, pared. Every
    state change at once over the engine asleep (``sleep``) and, where that is not enough, at
    the reservation it leaves room for (:func:`fraction_change`); then each state change
    dropped in :data:`DROP_ORDER` while the rest still fit. At most 2 + 2 x states
    evaluations; ``[(flags, evaluation)]`` of the combination that fits, or none.
    ``states`` are merged by :func:`rlmcost.evaluation.advice_search.merged`."""
    from rlmcost.evaluation.advice_search import merged

    lay0, dep0 = (slept(layout, dep)[1:] if sleep else (layout, dep))

    def attempt(subset: list[Change]) -> tuple[str, Any, float] | None:
        lay, d, text = merged(lay0, dep0, subset)
        words = ([SLEEP_FLAG] if sleep else []) + ([text] if text else [])
        result = try_(lay, d)
        if result is not None and result.fits:
            return " ".join(words), result, 1.0
        smaller = fraction_change(result, lay, d)
        if smaller is None:
            return None
        result = try_(smaller[1], smaller[2])
        if result is None or not result.fits:
            return None
        return " ".join([*words, smaller[0]]), result, float(smaller[0].split()[-1])

    idle = trainer_sleep(layout, dep) if sleep or dep.engine.sleep else None
    states = [*states, idle] if idle is not None else states
    if not sleep and not states:
        return []
    best = attempt(states)
    if best is None:
        return []
    keep = list(states)
    for change in sorted(states, key=_dearest):
        rest = [c for c in keep if c is not change]
        got = attempt(rest)
        if got is not None and got[2] >= best[2]:  # not at a smaller reservation
            keep, best = rest, got
    return [best[:2]]


def _dearest(change: Change) -> tuple[int, int]:
    """A state change's place in :data:`DROP_ORDER` (the longer ``--offload`` list first)."""
    name = change[0].partition(" ")[0]
    kinds = change[2].train.offload
    if name == "--offload" and kinds and all(k.value.endswith("-idle") for k in kinds):
        name = "idle"
    place = DROP_ORDER.index(name) if name in DROP_ORDER else len(DROP_ORDER)
    return place, -len(change[0])
