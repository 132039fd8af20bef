"""verl's PrefixGrouper (``actor.use_prefix_grouper``): the policy's and the reference's
teacher-forced passes compute a group's shared prompt once.

What verl runs (volcengine/verl b178a3cd, PR 4368): ``DataParallelPPOActor._forward_micro_batch``
(verl/workers/actor/dp_actor.py) takes the PrefixGrouper path only where it can
(``can_use_pg``: no ``use_remove_padding``, no Ulysses, no fused kernels, no dynamic batching;
otherwise it falls back silently), for the actor's log-prob forward and update and for the
reference (fsdp_workers.py copies the flag to ``ref``), not the critic. Each micro-batch of
``ppo_micro_batch_size_per_gpu`` (or ``log_prob_micro_batch_size_per_gpu``) sequences, in the
batch's order (a group's ``rollout.n`` responses adjacent, ``uid`` runs), becomes one row per run
of equal ``uid``: the unpadded prompt, then each of the run's responses at its own length
(verl/trainer/ppo/prefix_grouper_utils.py ``build_pg_from_micro_batch``, the ``prefix_grouper``
package's ``concat_input``), the rows right-padded to the micro-batch's longest
(``padding_mask``). Attention is split in two (prefix_grouper/forward.py): the prefixes' causal
self-attention, and each response's queries over its prefix's keys and its own, padded to the
micro-batch's longest response.

What rlmcost prices (modelling choices, stated in the output): one rank's sequences in groups
of K adjacent, dealt from a group's first (verl's ``balance_batch`` with PrefixGrouper keeps a
group on one rank); a micro-batch split through a group gives each part a row of its own
(``uid`` runs) with its own copy of the prompt. A row's width is the prompt plus its responses,
the widest row being the prompt plus the longest min(K, micro-batch) responses of the heaviest
micro-batch share of the task's quantile lengths (:func:`~rlmcost.placement.dynamic_bsz.
rank_share`), a group's responses taken alike in length (their prompt sets how hard it is; an
upper estimate where they vary independently). Every row of every micro-batch is priced at
that width (linear layers, norms, the LM head and the activations), and the attention in
padded pairs: a prompt's causal square per row, each response's rectangle over the prompt and
its own causal square at the micro-batch's longest response. Its work drops by the prompt
copies each row spares (:func:`spared_work`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Role
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.placement.dynamic_bsz import equivalent_packed, rank_share
from rlmcost.placement.group_key import per_query
from rlmcost.placement.group_train import kind_spec
from rlmcost.placement.task_work import work_over_lengths

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.deployment.spec import TrainLayout
    from rlmcost.parallel.layout import Layout
    from rlmcost.perf.rl_step import Packed
    from rlmcost.placement.device_groups import Task

ROLES = (Role.ACTOR, Role.REFERENCE)
"""The models whose passes verl groups: the actor's and the reference's (both a
``DataParallelPPOActor``); the critic and reward models run their own workers."""


@dataclass(frozen=True)
class Rows:
    """One rank's micro-batches of grouped rows, per mini-batch (or per forward)."""

    micro_batches: int
    rows: int  # rows in all (group parts)
    most: int  # rows of the fullest micro-batch
    width: int  # tokens of every row: the prompt + the widest row's responses
    longest: int  # the longest response of a micro-batch (the suffixes' padded length)
    sequences: int  # the rank's sequences


def row_counts(sequences: int, micro_batch: int, group: int) -> tuple[int, int, int]:
    """(micro-batches, rows in all, rows of the fullest micro-batch) of ``sequences`` in groups
    of ``group`` adjacent ones from a group's first, split into micro-batches of
    ``micro_batch``: each micro-batch has a row per group it holds part of.

    >>> row_counts(20, 16, 5)  # groups 0-2 and part of 3 | the rest of group 3
    (2, 5, 4)
    >>> row_counts(32, 8, 4)  # whole groups: 2 rows per micro-batch
    (4, 8, 2)
    """
    parts = -(-sequences // micro_batch)
    total = most = 0
    for j in range(parts):
        lo, hi = j * micro_batch, min(sequences, (j + 1) * micro_batch)
        n = (hi - 1) // group - lo // group + 1
        total += n
        most = max(most, n)
    return parts, total, most


def rows_of(prompt: int, responses: tuple[int, ...], sequences: int, micro_batch: int,
            group: int) -> Rows:  # fmt: skip
    """:class:`Rows` of one rank's ``sequences`` (module docstring) whose responses follow the
    quantile lengths ``responses``.

    >>> rows_of(100, (10, 20, 30, 40), 8, 4, 2)  # a row: 100 + the share's top two, 40 + 30
    Rows(micro_batches=2, rows=4, most=2, width=170, longest=40, sequences=8)
    """
    parts, total, most = row_counts(sequences, micro_batch, group)
    share = rank_share(responses, micro_batch)
    width = prompt + sum(share[-min(group, micro_batch):])
    return Rows(parts, total, most, width, share[-1], sequences)


def pairs_of(r: Rows, prompt: int) -> int:
    """Attention pairs of ``r``'s rows, in squared lengths as :func:`~rlmcost.perf.rl_step.packed`
    counts them (a causal sequence of x tokens: x^2): per row its prompt's, per sequence its
    response's rectangle over the prompt (2 S R) and its own (R^2), R the micro-batch's longest.

    >>> pairs_of(Rows(2, 4, 2, 170, 40, 8), 100)  # 4 x 100^2 + 8 x (2 x 100 x 40 + 40^2)
    116800
    """
    R = r.longest
    return r.rows * prompt * prompt + r.sequences * (2 * prompt * R + R * R)


def check(train: TrainLayout, where: str) -> None:
    """Refuse a layout verl's PrefixGrouper path does not run on (``can_use_pg`` and the FSDP
    worker): the passes would fall back and the price would be wrong."""
    if not train.prefix_grouper:
        return
    why = [w for w, bad in (
        ("needs --padded (verl takes it only without use_remove_padding)", not train.padded),
        ("runs without --max-tokens-per-gpu (verl's use_dynamic_bsz turns it off)",
         train.max_tokens_per_gpu is not None),
        ("runs without --packing", train.packing),
        ("runs without context parallelism (verl's Ulysses turns it off): give --cp 1",
         train.cp > 1),
        ("runs on verl's FSDP workers only: give --tp 1 --pp 1", train.tp > 1 or train.pp > 1),
    ) if bad]  # fmt: skip
    if why:
        raise SpecError(f"--prefix-grouper ({where}): PrefixGrouper " + "; ".join(why))


def _on(g: Any) -> bool:
    """Some trainer or forward layout of group ``g``'s deployment sets ``prefix_grouper``, not
    in the paper's ideal run: kept per group model (its tasks' merged layouts are looked up
    only then; the group estimate's hot path pays a dict look-up)."""
    kept = g.kept
    if _ON not in kept:
        dep = g.s.deployment
        on = dep.train.prefix_grouper or (dep.forward is not None and dep.forward.prefix_grouper)
        for own in dep.groups:
            on = on or (own.train is not None and own.train.prefix_grouper) or (
                own.forward is not None and own.forward.prefix_grouper)
        kept[_ON] = on and not dep.ideal
    return kept[_ON]


_ON = ("prefix grouper on",)


def check_task(g: Any, task: Task) -> None:
    """:func:`check` on the layout of a forward or update of the actor or the reference on
    group ``g``, at the group's set-up (its batch checks: ``GroupSizes.batch``), so an
    estimate meets it before any of its sizes."""
    if not _on(g) or task.role not in ROLES:
        return
    spec = kind_spec(g.s.deployment, g.group.name, task.kind)
    if spec is not None:
        check(spec, f"group {g.group.name}")


def grouped(g: Any, task: Task) -> Rows | None:
    """The task's :class:`Rows` where PrefixGrouper runs it (a forward or update of the actor
    or the reference whose layout sets ``prefix_grouper``; called where :func:`_on`), else
    None; kept per query."""
    if task.role not in ROLES:
        return None
    dep = g.s.deployment
    spec = kind_spec(dep, g.group.name, task.kind)
    if spec is None or not spec.prefix_grouper:
        return None
    layout = g.layouts[task.index]
    per_rank = -(-g.batch(task) // layout.dp)
    group = max(1, int(g.s.values["K"]))
    prompt = g.seq_len(task) - g.longest(task)
    key = ("prefix-grouper", task.invocation, task.kind, per_rank, layout.micro_batch, group)
    responses = g.lengths(task)
    return per_query(g.s, key, lambda: rows_of(prompt, responses, per_rank,
                                               layout.micro_batch, group))  # fmt: skip


def grouped_packed(g: Any, task: Task) -> tuple[Packed, int] | None:
    """The packed equivalent of the task's grouped rows on every rank over its optimizer
    steps (one for a forward), and its sequences per micro-batch
    (:func:`~rlmcost.placement.dynamic_bsz.equivalent_packed`); None where it does not apply."""
    r = grouped(g, task) if _on(g) else None
    if r is None:
        return None
    steps = g.mini_batches(task)
    prompt = g.seq_len(task) - g.longest(task)
    return equivalent_packed(r.rows * r.width, pairs_of(r, prompt), r.micro_batches,
                             g.layouts[task.index].dp, steps)  # fmt: skip


def spared_work(g: Any, task: Task, arch: Arch) -> int:
    """Exact FLOPs the task's rows spare against its sequences apart (0 where PrefixGrouper
    does not run it), W(t) being the task's work on one sequence of response t
    (:func:`~rlmcost.placement.task_work.work_over_lengths`, the training passes included):

    * each sequence beyond its row's first drops its prompt: W(0) (the prompt's tokens and
      their attention among themselves);
    * counted ``full`` (every query meets every key of its forward, as FlopCounterMode counts
      a plain causal forward), a sequence apart also counts its prompt's queries against its
      response's keys, which a row's prompt, run without its responses, never meets: S t pairs
      a sequence, at one pair's FLOPs (W's second difference in t, halved). ``causal``
      counting has no such pairs (the prompt's and the response's pairs telescope)."""
    r = grouped(g, task) if _on(g) else None
    if r is None:
        return 0
    layout = g.layouts[task.index]
    steps = g.mini_batches(task)
    copies = max(0, g._int(task.invocation.sequences) - r.rows * layout.dp * steps)
    w0, w1, w2 = (work_over_lengths(task, arch, g.s.values, (t,), g.s.counting)
                  for t in (0, 1, 2))  # fmt: skip
    out = copies * w0
    if g.s.counting is AttnCounting.FULL:
        prompt = g.seq_len(task) - g.longest(task)
        out += (w2 - 2 * w1 + w0) * prompt * sum(g.lengths(task)) // 2
    return out


def memory_rows(g: Any, task: Task) -> tuple[Layout, int] | None:
    """The layout and sequence length of the task's fullest grouped micro-batch (its rows at
    the width) for its memory; None where PrefixGrouper does not run it."""
    r = grouped(g, task) if _on(g) else None
    if r is None:
        return None
    return g.layouts[task.index].with_(micro_batch=r.most), r.width


NOTE = ("PrefixGrouper (--prefix-grouper; verl actor.use_prefix_grouper): the actor's and the "
        "reference's log-prob forwards and updates run one row per group part of a "
        "micro-batch, the prompt once and the part's responses after it, every row at the "
        "widest (the prompt + the micro-batch share's longest min(K, micro-batch) responses, "
        "a group's responses taken alike in length), attention in padded pairs "
        "(rlmcost.placement.prefix_grouper)")
"""The output's note where a trainer layout sets ``prefix_grouper``."""
