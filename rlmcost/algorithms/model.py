"""Invocation, Algorithm and derive(): an RL algorithm as a list of model invocations.

Token counts are short formulas over the workload letters (``"B*K"``, ``"S + T"``), kept as
text so that this module stays free of sympy (the CLI imports it at start-up); ``cost`` parses
them with sympy. Allowed names are :data:`NAMES`. A variant is its base plus or minus some
invocations (:func:`derive`), and it records exactly which, so the difference is testable.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from typing import Any

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.choices import Head
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

NAMES: dict[str, str] = {
    "B": "prompts per iteration (preference pairs or examples for offline methods)",
    "K": "responses sampled per prompt (group size)",
    "S": "prompt tokens",
    "T": "response tokens",
    "E_ppo": "epochs: passes of Training over each rollout batch",
    "N_mini": "mini-batches per epoch: sequential optimizer steps",
    "rho": "oversampling factor: sequences generated per sequence kept for Training",
    "N_step": "reasoning steps a process reward model scores (one prefix pass each)",
    "T_j": "tokens the judge generates per verdict",
}
"""Every name a token-count formula may use, with its meaning."""

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_FORMULA = re.compile(r"^[A-Za-z_0-9+*/() ]+$")
TRAINABLE = (Role.ACTOR, Role.CRITIC, Role.COST_CRITIC)


def formula_names(text: str) -> set[str]:
    """The workload names a formula uses: ``formula_names("B*K*rho") == {"B", "K", "rho"}``."""
    return set(_IDENT.findall(text))


@dataclass(frozen=True)
class Invocation:
    """One use of one model in one stage of every iteration.

    ``sequences`` sequences each of ``prompt`` context tokens then ``response`` tokens:
    generated for ``GENERATE`` (prefill of the prompt, one decode step per response token),
    teacher-forced for ``FORWARD`` and ``TRAIN`` (m = prompt + response). ``TRAIN`` repeats
    ``passes`` times (PPO epochs) in ``steps`` sequential optimizer steps each (mini-batches).
    ``FORWARD`` with ``prefixes`` = n scores n prefixes of lengths prompt + j response / n,
    j = 1..n (a process reward model that scores each reasoning step with its own pass).
    """

    role: Role
    stage: Stage
    kind: Kind
    sequences: str = "B*K"
    prompt: str = "S"
    response: str = "T"
    passes: str = "1"
    steps: str = "1"
    prefixes: str = "1"
    head: Head | None = None  # None: the role's head (Role.head)
    note: str = ""

    def __post_init__(self) -> None:
        for what in ("sequences", "prompt", "response", "passes", "steps", "prefixes"):
            text = getattr(self, what)
            bad = formula_names(text) - set(NAMES)
            if not _FORMULA.match(text) or bad:
                raise SpecError(
                    f"invocation {self.role}/{self.kind}: {what}={text!r} may use only "
                    f"+ * / ( ), integers and {', '.join(NAMES)}"
                )
        if (self.kind is Kind.VERIFY) != (self.role is Role.VERIFIER):
            raise SpecError("the verifier role and the verify kind go together (a program)")
        if self.kind is Kind.TRAIN and self.role not in TRAINABLE:
            raise SpecError(
                f"{self.role} is frozen; only {', '.join(TRAINABLE)} take training steps"
            )
        if self.kind is Kind.GENERATE and self.role not in (Role.ACTOR, Role.JUDGE):
            raise SpecError(f"{self.role} does not generate; only the actor and a judge do")
        if self.kind is not Kind.TRAIN and (self.passes, self.steps) != ("1", "1"):
            raise SpecError("passes and steps (epochs, mini-batches) apply to train only")
        if self.kind is not Kind.FORWARD and self.prefixes != "1":
            raise SpecError("prefixes (per-step scoring) apply to forward only")

    @property
    def model_head(self) -> Head:
        """The output head this invocation runs: given, or the role's."""
        return self.head or self.role.head

    @property
    def names(self) -> set[str]:
        """Workload names this invocation's token counts use."""
        out: set[str] = set()
        for text in (
            self.sequences,
            self.prompt,
            self.response,
            self.passes,
            self.steps,
            self.prefixes,
        ):
            out |= formula_names(text)
        return out

    def describe(self) -> str:
        """One line: ``actor generate B*K x (S | T)``, with the repeats that apply."""
        if self.kind is Kind.VERIFY:
            return f"{self.role} checks {self.sequences} responses (CPU program, not modelled)"
        if self.kind is Kind.GENERATE:
            tokens = f"({self.prompt} | {self.response} generated)"
        else:
            tokens = f"({self.prompt} + {self.response})"
        text = f"{self.role} {self.kind} {self.sequences} x {tokens}"
        if self.prefixes != "1":
            text += f", {self.prefixes} prefixes each"
        if self.passes != "1":
            text += f", {self.passes} epochs"
        if self.steps != "1":
            text += f" of {self.steps} steps"
        return text + (f"  [{self.note}]" if self.note else "")


@dataclass(frozen=True)
class Algorithm:
    """An RL (or preference-optimization) algorithm: its invocations per iteration.

    ``offline``: generation happens before the training loop (DPO, Table IV †); the loop has
    no Generation stage. ``default_group``: K when the user gives none (1 = one response per
    prompt). ``base`` / ``added`` / ``removed``: the algorithm this one was derived from and
    what :func:`derive` changed relative to it.
    """

    name: str
    summary: str
    citation: str
    invocations: tuple[Invocation, ...]
    offline: bool = False
    default_group: int = 1
    min_group: int = 1  # smallest K the method's baseline makes sense with
    base: str | None = None
    added: tuple[Invocation, ...] = field(default=(), repr=False)
    removed: tuple[Invocation, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.invocations:
            raise SpecError(f"algorithm {self.name} has no invocations")
        if self.offline and any(i.stage is Stage.GENERATION for i in self.invocations):
            raise SpecError(f"offline algorithm {self.name} cannot generate in its loop")
        if "K" not in self.names and self.default_group != 1:
            raise SpecError(f"{self.name} samples no groups (no K); default_group must be 1")
        if self.default_group < self.min_group:
            raise SpecError(f"{self.name}: default_group must be at least min_group")

    @property
    def stages(self) -> tuple[Stage, ...]:
        """The stages with at least one invocation, in iteration order."""
        present = {i.stage for i in self.invocations}
        return tuple(s for s in Stage if s in present)

    def stage(self, stage: Stage) -> tuple[Invocation, ...]:
        """The invocations of one stage, in listed order."""
        return tuple(i for i in self.invocations if i.stage is stage)

    @property
    def roles(self) -> tuple[Role, ...]:
        """Roles used, in first-use order."""
        return tuple(dict.fromkeys(i.role for i in self.invocations))

    @property
    def model_roles(self) -> tuple[Role, ...]:
        """Roles backed by a neural network (all but the verifier)."""
        return tuple(r for r in self.roles if r is not Role.VERIFIER)

    @property
    def scored(self) -> bool:
        """True when something scores the responses for a policy gradient (a reward, cost or
        process reward model, a judge, a verifier); False for on-policy distillation, whose
        signal is its teacher's log-probs (no advantage, no importance ratio), and for the
        offline preference methods, whose pairs carry their preference."""
        scorers = (Role.REWARD, Role.COST, Role.PRM, Role.JUDGE, Role.VERIFIER)
        return any(i.role in scorers for i in self.invocations)

    @property
    def trained_roles(self) -> tuple[Role, ...]:
        """Roles that take training steps (their Adam states stay resident)."""
        return tuple(dict.fromkeys(i.role for i in self.invocations if i.kind is Kind.TRAIN))

    @property
    def names(self) -> set[str]:
        """Workload names any invocation uses (which knobs apply to this algorithm)."""
        out: set[str] = set()
        for inv in self.invocations:
            out |= inv.names
        return out

    def find(self, role: Role, stage: Stage | None = None, kind: Kind | None = None) -> Invocation:
        """The one invocation of ``role`` (in ``stage``, of ``kind``); SpecError otherwise."""
        hits = [
            i
            for i in self.invocations
            if i.role is role and stage in (None, i.stage) and kind in (None, i.kind)
        ]
        if len(hits) != 1:
            raise SpecError(
                f"{self.name}: {len(hits)} invocations of {role}"
                + (f" in {stage}" if stage else "")
                + (f" of kind {kind}" if kind else "")
                + "; expected exactly one"
            )
        return hits[0]


def derive(
    base: Algorithm,
    name: str,
    summary: str,
    citation: str,
    *,
    add: Iterable[Invocation] = (),
    remove: Iterable[Invocation] = (),
    replace_: Mapping[Invocation, Invocation] | None = None,
    offline: bool | None = None,
    default_group: int | None = None,
    min_group: int | None = None,
) -> Algorithm:
    """A variant of ``base``: ``remove`` some invocations, ``replace_`` some in place, ``add``
    others at the end of their stage. The result records what was removed and added, so
    ``variant = base - removed + added`` holds as multisets (tests check it, and that the
    costs differ by exactly the cost of those invocations).
    """
    remove = tuple(remove)
    add = tuple(add)
    replace_ = dict(replace_ or {})
    invs = list(base.invocations)
    for inv in remove + tuple(replace_):
        if inv not in invs:
            raise SpecError(f"{name}: {inv.describe()} is not an invocation of {base.name}")
    for inv in remove:
        invs.remove(inv)
    invs = [replace_.get(i, i) for i in invs]
    for inv in add:
        last = max(
            (k for k, i in enumerate(invs) if _order(i.stage) <= _order(inv.stage)), default=-1
        )
        invs.insert(last + 1, inv)
    return Algorithm(
        name=name,
        summary=summary,
        citation=citation,
        invocations=tuple(invs),
        offline=base.offline if offline is None else offline,
        default_group=base.default_group if default_group is None else default_group,
        min_group=base.min_group if min_group is None else min_group,
        base=base.name,
        added=add + tuple(replace_.values()),
        removed=remove + tuple(replace_),
    )


def _order(stage: Stage) -> int:
    return list(Stage).index(stage)


def difference(variant: Algorithm, base: Algorithm) -> tuple[Counter, Counter]:
    """(added, removed) invocations of ``variant`` relative to ``base``, as multisets."""
    have, had = Counter(variant.invocations), Counter(base.invocations)
    return have - had, had - have


def with_changes(inv: Invocation, **changes: Any) -> Invocation:
    """A copy of ``inv`` with some fields changed."""
    return replace(inv, **changes)
