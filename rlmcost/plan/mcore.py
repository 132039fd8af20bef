"""NeMo RL's Megatron generation in the RL planner (a base Run with ``--engine megatron``).

The topologies NeMo RL launches with ``policy.generation.backend: megatron``
(:mod:`rlmcost.deployment.megatron_engine`), as families of :mod:`rlmcost.plan.families`:

* ``baseline``: colocated (``generation.colocated.enabled: true``): the engine decodes from the
  policy's own weights in its training layout (``MegatronGenerationMixin._gen_model``, NeMo RL
  @7ea279abf ``nemo_rl/models/generation/megatron/``), no refit; or, with
  ``mcore_generation_config`` parallel sizes of its own, from a dedicated inference copy
  resharded into at each wake (``dedicated_inference_megatron_cfg``);
* ``split``: not colocated: the engine on GPUs of its own in its own layout
  (``megatron_generation.py`` ``effective_megatron_cfg``), refitted as NeMo RL refits engines
  apart;
* ``async-colocated``: async GRPO on the same GPUs (NeMo RL PR 2884 at 8863ebeff,
  ``grpo.py`` ``async_grpo_train``: the engine stands down for each training step), one group
  holding every model, the step the sum of its phases (``--placement async --groups
  actor+reference=N``).

The families of the other frameworks (OpenRLHF's role groups, slime's engines apart) run vLLM
or SGLang engines and are refused with this engine; ``async-colocated`` is refused with any
other engine (the evaluation's own rule: rollout overlapping training needs groups apart).

The layout space of each family is the trainer's (TP, PP, CP, ZeRO-1 by default,
:func:`trainer_zeros`, ...; for an MoE actor
its expert parallelism too, :func:`expert_degrees`: Megatron-core's
``expert_model_parallel_size``, which the Megatron engine keeps when it shares the layout)
and, where the engine shares the trainer's group, its layout: the trainer's
(:data:`SHARED_LAYOUT`) or a dedicated TP; and the KV pool per GPU, ``--kv-buffer-gib``, over
:data:`POOL_CHOICES_GIB` unless the base Run gives one. Light to import (no numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.plan.families import Family
    from rlmcost.run.spec import Run

MEGATRON = "megatron"
ASYNC_COLOCATED = "async-colocated"

MEGATRON_FAMILIES = ("baseline", "split", ASYNC_COLOCATED)
"""What `rlmcost plan` searches for a base Run with ``--engine megatron`` (module docstring)."""

POOL_CHOICES_GIB = (5.0, 10.0, 20.0)
"""The KV pools per GPU (GiB) the plan tries when the base Run gives no ``--kv-buffer-gib``:
NeMo RL's ``buffer_size_gb`` (examples/configs/grpo_math_1B.yaml: 10), Megatron-core's own
``InferenceConfig.buffer_size_gb`` default (20) and half NeMo RL's, for a trainer that leaves
little room beside a persisting pool. A bound of the search space, not a cost constant."""

SHARED_LAYOUT = 0
"""A candidate's engine TP when the Megatron engine decodes in the trainer's own layout (no
``--rollout-tp``): the screen takes its weights as the trainer's and its TP as tp x pp."""


def is_megatron(base: Run) -> bool:
    """Whether ``base`` generates with NeMo RL's Megatron-core engine."""
    return str(base.deployment.engine.kind) == MEGATRON


def check_families(base: Run, names: tuple[str, ...]) -> None:
    """SpecError (one line) for a family ``base``'s engine cannot run: with ``--engine
    megatron`` the families another framework launches (their engines are vLLM's); without it,
    ``async-colocated``."""
    from rlmcost.plan.families import LAUNCHED_BY

    if is_megatron(base):
        other = [n for n in names if n in LAUNCHED_BY]
        if other:
            raise SpecError(f"--placements {','.join(other)} with --engine megatron: those "
                            "topologies are launched by frameworks whose engines are vLLM's or "
                            "SGLang's; Megatron generation is NeMo RL's: use any of "
                            f"{', '.join(MEGATRON_FAMILIES)}")  # fmt: skip
    elif ASYNC_COLOCATED in names:
        raise SpecError(f"--placements {ASYNC_COLOCATED}: rollout overlapping training on the "
                        "same GPUs is NeMo RL's async GRPO colocated with Megatron generation "
                        "(PR 2884); add --engine megatron, or search async-split")  # fmt: skip


def family(every_model: str) -> Family:
    """The ``async-colocated`` family: one group of every model, staleness k."""
    from rlmcost.plan.families import Family

    return Family(ASYNC_COLOCATED, "async", (every_model,), (None,), stale=True)


def engine_tps(base: Run, fam: Family, etps: tuple[int, ...], given: bool) -> tuple[int, ...]:
    """The engine TPs a candidate of ``fam`` tries: ``etps`` but for a Megatron engine on the
    trainer's group, which tries its trainer's layout (:data:`SHARED_LAYOUT`) first and, unless
    ``--rollout-tp`` is ``given`` (then those only), every dedicated TP beside it."""
    if not is_megatron(base) or _apart(fam):
        return etps
    return etps if given else (SHARED_LAYOUT, *etps)


def _apart(fam: Family) -> bool:
    """The family's engines sit on a group of their own (``rollout=``)."""
    from rlmcost.plan.families import ROLLOUT

    return ROLLOUT in fam.members


def pools(base: Run) -> tuple[float | None, ...]:
    """The KV pools a candidate tries: the base Run's ``--kv-buffer-gib`` where given, else
    :data:`POOL_CHOICES_GIB`; (None,) for other engines."""
    if not is_megatron(base):
        return (None,)
    given = base.deployment.engine.kv_buffer_gib
    return (given,) if given is not None else POOL_CHOICES_GIB


def engine_fields(rollout_tp: int, fraction: float | None, pool: float | None) -> dict[str, Any]:
    """The ``engine`` section of a candidate's Run: its TP (None for the trainer's layout of a
    Megatron engine), and its reservation (``gpu_memory_utilization``) or KV pool
    (``kv_buffer_gib``) where the candidate sets one."""
    out: dict[str, Any] = {"tp": None if rollout_tp == SHARED_LAYOUT else rollout_tp}
    if fraction is not None:
        out["gpu_memory_utilization"] = fraction
    if pool is not None:
        out["kv_buffer_gib"] = pool
    return out


def expert_degrees(base: Run, given: tuple[int, ...] | None, experts: int,
                   node: int) -> tuple[int, ...]:  # fmt: skip
    """The trainer's EP degrees a candidate tries: ``given`` (``--ep``); else, for an MoE actor
    (``experts`` routed experts) generating on a Megatron engine, every power of two up to a
    node that divides the experts (Megatron-core's rule: EP divides the experts); else the base
    Run's own. SpecError for a given degree that does not divide the experts."""
    if given:
        bad = [e for e in given if e > 1 and (not experts or experts % e)]
        if bad:
            what = f"{experts} routed experts" if experts else "no routed experts (dense)"
            raise SpecError(f"--ep {','.join(map(str, bad))}: the actor has {what}; an EP "
                            "degree divides the experts")  # fmt: skip
        return given
    if not is_megatron(base) or not experts:
        return (base.deployment.train.ep,)
    from rlmcost.plan.space import powers_of_two

    return tuple(e for e in powers_of_two(node) if experts % e == 0)


def trainer_zeros(base: Run, zeros: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The ZeRO stages a candidate tries: ``zeros`` (``--zero``) where given; else ZeRO-3
    (FSDP, as verl and OpenRLHF) or, for a Megatron engine, Megatron's distributed optimizer,
    ZeRO-1: NeMo RL's Megatron generation runs on its Megatron policy
    (``megatron_generation.py`` ``effective_megatron_cfg``: colocated, the training model's
    ``megatron_cfg``; the DTensor policy has no Megatron model to wrap), whose
    ``optimizer.use_distributed_optimizer`` defaults to true (``rlmcost import nemo-rl`` reads
    it as ``--zero 1``). A framework whose trainer is always Megatron-core (slime and miles:
    ``Behaviour.hf_trainer`` empty) shards the optimizer alone as well: Megatron-LM's
    distributed optimizer, which slime turns on (``rlmcost import slime`` reads it as
    ``--zero 1``); it has no ZeRO-3."""
    from rlmcost.frameworks.presets import behaviour
    from rlmcost.parallel.layout import ZeroStage

    if zeros is not None:
        return zeros
    beh = behaviour(base.deployment.framework)
    megatron_only = beh is not None and not beh.hf_trainer
    return (ZeroStage.OS,) if is_megatron(base) or megatron_only else (ZeroStage.OS_G_P,)
