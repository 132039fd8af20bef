"""The topologies the RL planner searches: families of device groups, as users run them.

A family says which models share a device group and whether rollout overlaps training; the
search then sizes its groups (:func:`group_counts`) and lays out each group. The families:

* ``baseline``: every model and the engines on all GPUs, one after another (verl's hybrid
  engine, ``verl/trainer/config/ppo_trainer.yaml`` actor_rollout_ref; NeMo RL
  ``generation.colocated.enabled: true``);
* ``split``: the engines on R GPUs of their own, every model on the rest (NeMo RL
  ``generation.colocated.enabled: false`` with ``generation.colocated.resources``; TRL
  ``use_vllm=True, vllm_mode="server"``, ``trl/trainer/grpo_config.py``);
* ``roles``: OpenRLHF's Ray role groups (``openrlhf/cli/train_ppo_ray.py``): the vLLM
  engines, then one group per model, with ``--colocate_actor_ref`` putting actor and
  reference together and ``--colocate_critic_reward`` critic and reward (each variant with
  and without the switch; a model the algorithm lacks has no group);
* ``async-split``, ``async-roles``: the same groups, rollout overlapping training with
  staleness k (the base Run's, default 1): slime's ``--rollout-num-gpus`` engines apart from
  the Megatron trainer (``slime/utils/arguments.py``), AReaL (Fu et al. 2025,
  arXiv:2505.24298), OpenRLHF ``--async_train``; each batch drains to its longest sample;
* ``async-stream``: the split overlapped, the engines streaming across weight updates
  (``--partial-rollout``, :mod:`rlmcost.placement.streaming`): slime's fully-async rollout
  (``examples/fully_async``, ``slime/rollout/fully_async_rollout.py`` with
  ``--partial-rollout``), NeMo RL's async GRPO with ``in_flight_weight_updates`` (every async
  recipe of examples/configs/recipes/llm/performance at v0.5.0 and v0.6.0 sets it), AReaL's
  interruptible rollout;
* the Table IX configurations (``ac-shared``, ``disaggregated``, ``hybrid``, ``fusion``,
  ``async``, ``combined``; :mod:`rlmcost.placement.configs`), whose group sizes the
  evaluation's split search picks for each layout (:mod:`rlmcost.placement.allocate`).

* ``async-colocated``: every model and the engine on one group, rollout overlapping training
  on the same GPUs (NeMo RL's async GRPO colocated with Megatron generation; a base Run with
  ``--engine megatron`` only, :mod:`rlmcost.plan.mcore`, which also names the families searched
  for that engine).

``--groups rollout=?,actor+reference=?`` is a family of its own (``groups``): the counts
marked ``?`` are searched, the others kept.

A base Run's ``--partial-rollout`` holds for the families that overlap rollout with training
and is dropped for the synchronous ones, which have no weight update mid-rollout to stream
across (:func:`family_base`, said in the plan's notes); ``async-stream`` sets it. Light to
import (no numpy).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    from rlmcost.algorithms.model import Algorithm
    from rlmcost.run.spec import Run

ROLLOUT = "rollout"
OWN = ("baseline", "split", "roles", "async-split", "async-roles", "async-stream",
       "async-colocated")
"""The families this module builds (the Table IX configurations come from placement/)."""

DEFAULT_FAMILIES = ("baseline", "split", "roles", "async-split", "async-roles")
"""What `rlmcost plan` searches without ``--placements`` or ``--framework``."""

APART = ("split", "roles", "async-split", "async-roles", "async-stream")
"""The families of device groups apart, whose groups a pool may put on different accelerators
(:mod:`rlmcost.plan.pool`); the others run on one."""

FRAMEWORK_FAMILIES: dict[str, tuple[str, ...]] = {
    # verl runs actor, rollout and reference in one worker group (hybrid engine):
    # verl/trainer/config/ppo_trainer.yaml actor_rollout_ref; its 3D-HybridEngine reshards
    # between the generation and training layouts (Table IX hybrid)
    "verl": ("baseline", "hybrid"),
    # openrlhf/cli/train_ppo_ray.py: role groups (--colocate_actor_ref,
    # --colocate_critic_reward), --colocate_all_models, --async_train
    "openrlhf": ("roles", "baseline", "async-roles"),
    # TRL grpo_config.py vllm_mode: "colocate" or "server" (engines apart)
    "trl": ("baseline", "split"),
    # NeMo RL generation.colocated.enabled true/false (examples/configs/grpo_math_1B.yaml);
    # grpo.async_grpo with in_flight_weight_updates (nemo_rl/algorithms/async_utils.py)
    "nemo-rl": ("baseline", "split", "async-stream"),
    # slime/utils/arguments.py: --colocate, else --rollout-num-gpus apart; async training
    # (train_async.py) overlaps rollout one step behind; examples/fully_async streams
    "slime": ("split", "baseline", "async-split", "async-stream"),
}
"""The families each framework can launch (:func:`framework_families`)."""

LAUNCHED_BY: dict[str, str] = {
    # OpenRLHF's Ray role groups, sync and --async_train: openrlhf/cli/train_ppo_ray.py
    "roles": "openrlhf",
    "async-roles": "openrlhf",
    # slime's --rollout-num-gpus engines apart, trained one step behind: slime/train_async.py
    "async-split": "slime",
    # slime's fully-async rollout with --partial-rollout: examples/fully_async
    "async-stream": "slime",
}
"""The framework that launches a family the default framework cannot (the rest, and the
Table IX configurations, stay on the default): without ``--framework`` the plan evaluates
each of these families under its launcher's preset and semantics."""


@dataclass(frozen=True)
class Family:
    """One topology: the Run's ``placement`` (a Table IX name, or None for user groups), its
    groups' members in ``--groups`` spelling (empty: the placement's own groups) with each
    group's count (None: searched) and bracket settings, and whether rollout overlaps
    training under staleness."""

    name: str
    placement: str | None
    members: tuple[str, ...] = ()
    fixed: tuple[int | None, ...] = ()
    settings: tuple[str, ...] = ()
    stale: bool = False
    hardware: tuple[str | None, ...] = ()  # ``--groups rollout=?@h20``: kept accelerators
    stream: bool = False  # the engines stream across weight updates (--partial-rollout)

    def text(self, counts: tuple[int, ...], hardware: tuple[str, ...] = ()) -> str:
        """The ``--groups`` text of these counts (``hardware``: each group's accelerator,
        ``@h20``; empty: the family's own, else the run's)."""
        parts = []
        for i, (m, n) in enumerate(zip(self.members, counts, strict=True)):
            s = self.settings[i] if self.settings else ""
            hw = hardware[i] if hardware else (self.hardware[i] if self.hardware else None)
            at = f"@{hw}" if hw else ""
            parts.append(f"{m}={n}{at}" + (f"[{s}]" if s else ""))
        return ",".join(parts)

    def trainer_index(self) -> int:
        """The group that trains the actor (its members name ``actor`` or ``actor:train``)."""
        for i, m in enumerate(self.members):
            words = m.split("+")
            if "actor" in words or "actor:train" in words or "policy" in words:
                return i
        return len(self.members) - 1


def framework_families(name: str | None) -> tuple[str, ...]:
    """The families framework ``name`` can launch (:data:`FRAMEWORK_FAMILIES`); SpecError
    naming the choices for an unknown one."""
    key = str(name).lower()
    if key not in FRAMEWORK_FAMILIES:
        have = ", ".join(FRAMEWORK_FAMILIES)
        raise SpecError(f"--framework {name}: the plan knows the topologies of {have}")
    return FRAMEWORK_FAMILIES[key]


def searched_families(placements: tuple[str, ...] | None, groups: str | None,
                      framework: str | None, engine: str | None = None, *,
                      offline: bool = False) -> tuple[str, ...]:  # fmt: skip
    """The families a plan searches, as `rlmcost plan` and :func:`rlmcost.plan` choose them:
    ``placements`` where given; else none beside ``groups`` (the groups are the family);
    else, for ``engine`` ``megatron``, NeMo RL's with it
    (:data:`~rlmcost.plan.mcore.MEGATRON_FAMILIES`; SpecError under another framework);
    else those ``framework`` launches (:func:`framework_families`); else
    :data:`DEFAULT_FAMILIES`. For an ``offline`` algorithm (DPO and its family: no generation
    in the loop) the chosen families keep those of :data:`OFFLINE_FAMILIES` (every other one
    runs a rollout group or overlaps rollout with training, which the evaluation rejects:
    ``placement.configs``)."""
    if placements is not None:
        return placements
    if groups is not None:
        return ()
    chosen = _chosen(framework, engine)
    if offline:
        return tuple(f for f in chosen if f in OFFLINE_FAMILIES) or ("baseline",)
    return chosen


OFFLINE_FAMILIES = ("baseline", "disaggregated", "hybrid", "fusion")
"""The families an offline algorithm's plan searches of those chosen: no rollout group, no
overlap (Table IX: async and combined overlap generation, which an offline method does
not run in its loop)."""


def _chosen(framework: str | None, engine: str | None) -> tuple[str, ...]:
    """:func:`searched_families`' choice without ``placements`` nor ``groups``."""
    from rlmcost.plan.mcore import MEGATRON, MEGATRON_FAMILIES

    if engine is not None and str(engine) == MEGATRON:
        if framework not in (None, "none", "nemo-rl"):
            raise SpecError(f"--engine megatron with --framework {framework}: Megatron "
                            "generation is NeMo RL's (--framework nemo-rl); the plan searches "
                            "its topologies, " + ", ".join(MEGATRON_FAMILIES))  # fmt: skip
        return MEGATRON_FAMILIES
    if framework is not None and str(framework) != "none":
        return framework_families(str(framework))
    return DEFAULT_FAMILIES


def launcher_bases(base: Run, families: tuple[str, ...],
                   build: Callable[[str], Run]) -> dict[str, Run] | None:  # fmt: skip
    """Each family the default framework cannot launch -> the base Run of the framework that
    does (:data:`LAUNCHED_BY`), ``build(framework)`` from the same query, with the algorithm
    (its knobs: KL, recomputed log-probs, the reward kind) held at ``base``'s, so every row
    answers the same question and only the deployment differs; None when no family needs
    another framework. Callers apply it without a framework of their own (nor the ideal
    run): `rlmcost plan` and :func:`rlmcost.plan` alike. SpecError for a family ``base``'s
    engine cannot run (:func:`rlmcost.plan.mcore.check_families`)."""
    from rlmcost.plan.mcore import check_families

    check_families(base, families)
    runs: dict[str, Run] = {}
    algorithm = base.to_json()["algorithm"]
    for fw in dict.fromkeys(LAUNCHED_BY[f] for f in families if f in LAUNCHED_BY):
        runs[fw] = build(fw).replace(algorithm=algorithm)
    return {f: runs[LAUNCHED_BY[f]] for f in families if f in LAUNCHED_BY} or None


def _roles_variants(alg: Algorithm) -> list[tuple[str, ...]]:
    """OpenRLHF's groups of ``alg``'s models: each colocation switch on and off."""
    from rlmcost.algorithms.kinds import Role

    roles = [str(r) for r in alg.model_roles]
    pairs = [(str(Role.ACTOR), str(Role.REFERENCE)), (str(Role.CRITIC), str(Role.REWARD))]
    usable = [p for p in pairs if p[0] in roles and p[1] in roles]
    out = []
    for switches in product((True, False), repeat=len(usable)):
        groups: list[str] = []
        placed: set[str] = set()
        for on, (a, b) in zip(switches, usable, strict=True):
            if on:
                groups.append(f"{a}+{b}")
                placed |= {a, b}
        groups += [r for r in roles if r not in placed]
        # the actor's group first after the engines, then the order OpenRLHF lists them
        groups.sort(key=lambda g: 0 if g.split("+")[0] == str(Role.ACTOR) else 1)
        out.append((ROLLOUT, *groups))
    return out


def families(alg: Algorithm, names: tuple[str, ...]) -> list[Family]:
    """The families ``names`` of ``alg`` (module docstring); SpecError for an unknown name."""
    from rlmcost.placement.kinds import Config

    table_ix = {c.value for c in Config}
    out: list[Family] = []
    every_model = "+".join(str(r) for r in alg.model_roles)
    for name in names:
        if name == "baseline":
            out.append(Family(name, "baseline"))
        elif name in ("split", "async-split", "async-stream"):
            stale = name.startswith("async")
            out.append(Family(name, "async" if stale else None, (ROLLOUT, every_model),
                              (None, None), stale=stale, stream=name == "async-stream"))
        elif name in ("roles", "async-roles"):
            stale = name.startswith("async")
            for members in _roles_variants(alg):
                if members == (ROLLOUT, every_model) and ("async-split" if stale else "split") \
                        in names:  # fmt: skip
                    continue  # e.g. GRPO's rollout / actor+reference: the split itself
                out.append(Family(name, "async" if stale else None, members,
                                  (None,) * len(members), stale=stale))  # fmt: skip
        elif name == "async-colocated":
            from rlmcost.plan.mcore import family

            out.append(family(every_model))
        elif name in table_ix:
            out.append(Family(name, name, stale=name in ("async", "combined")))
        else:
            have = ", ".join([*OWN, *(c for c in table_ix if c != "baseline")])
            raise SpecError(f"--placements: unknown placement family {name!r}; use any of: "
                            f"{have}")  # fmt: skip
    return out


def free_groups(text: str) -> Family:
    """``--groups`` with counts to search: ``rollout=?,actor+reference=?,critic+reward=8``
    (``?``: searched; a number: kept; ``[tp=4]`` settings and ``@h20`` accelerators pass
    through). SpecError for bad syntax (:func:`rlmcost.placement.groups.parse_groups`
    checks the members and accelerators)."""
    from rlmcost.placement.groups import _split_top, group_hardware, parse_groups

    members, fixed, settings, hardware = [], [], [], []
    for chunk in _split_top(text):
        chunk = chunk.strip()
        spec = ""
        if chunk.endswith("]") and "[" in chunk:
            chunk, _, spec = chunk[:-1].partition("[")
        left, eq, right = chunk.partition("=")
        if not eq:
            raise SpecError(f"--groups {text!r}: {chunk!r} needs '=GPUS' or '=?', e.g. "
                            "rollout=?,actor+reference=?")  # fmt: skip
        right, at, hw = right.strip().partition("@")
        hardware.append(group_hardware(hw, text) if at else None)
        right = right.strip()
        members.append(left.strip())
        fixed.append(None if right == "?" else _count(right, text))
        settings.append(spec)
    # the members and settings as the evaluation will read them (one-line errors up front)
    parse_groups(",".join(f"{m}=1" + (f"[{s}]" if s else "")
                          for m, s in zip(members, settings, strict=True)))  # fmt: skip
    kept = tuple(hardware) if any(hardware) else ()
    return Family("groups", None, tuple(members), tuple(fixed), tuple(settings), hardware=kept)


def _count(word: str, text: str) -> int:
    try:
        n = int(word)
    except ValueError:
        n = 0
    if n < 1:
        raise SpecError(f"--groups {text!r}: a count is a positive whole number or '?', "
                        f"not {word!r}")  # fmt: skip
    return n


def group_counts(fam: Family, gpus: int, units: tuple[int, ...],
                 shares: tuple[float, ...], actor_shares: tuple[float, ...],
                 exhaustive: bool = False, limit: int | None = None,
                 ) -> list[tuple[int, ...]]:  # fmt: skip
    """The GPU counts of ``fam``'s groups on ``gpus`` devices, each a positive multiple of
    its group's unit (``units``: the engine replica for ``rollout``, the trainer's
    tp*pp*cp times the expert grid's dp unit for the others). The rollout group takes each
    share of ``shares``; of the rest, the actor's group each share of ``actor_shares`` and the
    other groups equal parts (what is left over goes to the actor's group). ``exhaustive``
    (and the ``groups`` family): every split in steps of a common grain
    (:func:`rlmcost.placement.allocate.splits`; at most ``limit`` splits, None: its
    ``MAX_SPLITS``), with the given counts kept."""
    if not fam.members:
        return [()]
    fixed = fam.fixed or (None,) * len(fam.members)
    free = [i for i, n in enumerate(fixed) if n is None]
    left = gpus - sum(n for n in fixed if n is not None)
    if any(n is not None and n % u for n, u in zip(fixed, units, strict=True)) or left < 0:
        return []
    if not free:
        return [tuple(n for n in fixed if n is not None)] if left == 0 else []
    if len(fam.members) == 1:  # one group (async-colocated): every GPU
        return [(left,)] if left % units[0] == 0 else []
    if exhaustive or fam.name == "groups":
        from rlmcost.placement.allocate import MAX_SPLITS, splits

        out = []
        free_units = [units[i] for i in free]
        for part in splits(left, free_units, limit or MAX_SPLITS) if left > 0 else []:
            counts = list(fixed)
            for i, n in zip(free, part, strict=True):
                counts[i] = n
            out.append(tuple(int(c) for c in counts if c is not None))
        return out
    return _shared(fam, gpus, units, shares, actor_shares)


def _shared(fam: Family, gpus: int, units: tuple[int, ...], shares: tuple[float, ...],
            actor_shares: tuple[float, ...]) -> list[tuple[int, ...]]:  # fmt: skip
    """:func:`group_counts` by shares (every group of ``fam`` free)."""
    trainer = fam.trainer_index()
    others = [i for i in range(len(fam.members)) if i not in (0, trainer)]
    out: set[tuple[int, ...]] = set()
    for s in shares:
        r = max(units[0], round(gpus * s / units[0]) * units[0])
        rest = gpus - r
        if rest < sum(units[1:]):
            continue
        for a in actor_shares if others else (1.0,):
            counts = [0] * len(fam.members)
            counts[0] = r
            if others:
                counts[trainer] = max(units[trainer], int(rest * a) // units[trainer]
                                      * units[trainer])  # fmt: skip
                each = (rest - counts[trainer]) // len(others)
                for i in others:
                    counts[i] = each // units[i] * units[i]
            spare = gpus - sum(counts)
            counts[trainer] += spare
            if spare < 0 or any(c < u or c % u for c, u in zip(counts, units, strict=True)):
                continue
            out.add(tuple(counts))
    return sorted(out)


STALE_FAMILIES = ("async-split", "async-roles", "async-stream", "async-colocated", "async",
                  "combined")
"""The families whose rollout overlaps training (the others run the synchronous loop)."""


def family_base(name: str, base: Run) -> Run:
    """The base Run family ``name`` is evaluated under: ``async-stream`` with
    ``--partial-rollout``; a synchronous family (``--groups`` included: the plan gives it no
    staleness) without it, and without ``--in-flight-batches``; the others as given. The same
    Run object when nothing changes."""
    d = base.deployment
    stream = name == "async-stream" or (d.partial_rollout and name in STALE_FAMILIES)
    if stream == d.partial_rollout:
        return base
    return base.replace(deployment={"partial_rollout": stream, "rollout_in_flight": 1})


def stream_notes(base: Run, names: tuple[str, ...]) -> list[str]:
    """The plan's note when ``base``'s ``--partial-rollout`` is dropped for some families."""
    if not base.deployment.partial_rollout:
        return []
    dropped = [n for n in names if n not in STALE_FAMILIES]
    if not dropped:
        return []
    return [f"--partial-rollout dropped for the synchronous families {', '.join(dropped)}: a "
            "rollout streams across weight updates only where it overlaps training (the "
            "asynchronous families keep it)"]
