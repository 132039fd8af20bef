"""Prefix sharing of a prompt group's K samples in the engine's KV cache (vLLM, SGLang).

GRPO hands the engine K samples of each prompt: one request with ``n = K`` (vLLM V1 fans it
out into K child requests with the same prompt: ``vllm/v1/engine/parallel_sampling.py``
``ParentRequest``) or K requests with the same prompt ids, consecutive in the batch (verl
``batch.repeat(interleave=True)``, NeMo RL ``repeat_interleave``, OpenRLHF's repeated prompts),
so the K samples of a group arrive one after another and land on one engine replica.

**vLLM V1 automatic prefix caching** (vllm-project/vllm ``vllm/v1/core/kv_cache_manager.py``
``get_computed_blocks`` and ``vllm/v1/core/block_pool.py`` at v0.8-v0.11 and 003df296; on by
default, :data:`~rlmcost.perf.rl_constants.VLLM_PREFIX_CACHING_ENABLED`): every *full* block of
a request's tokens is hashed (the hash chains the block's tokens and its parent's hash); a new
request takes the longest run of cached blocks, at most ``num_tokens - 1`` tokens ("when all
tokens hit the cache, we must recompute the last token to obtain logits"), so a sample whose
sibling holds the prompt prefills only ``prompt - B floor((prompt - 1) / B)`` tokens (B the
block size) and holds the shared blocks by reference count (``block_pool.py``
``touch``/``free_blocks``: a block returns to the free queue only when no request holds it).
The blocks are hashed when they are allocated (``allocate_slots`` -> ``cache_blocks``), so a
sibling scheduled in the *same* step finds them too. A preempted sample readmitted while a
sibling still runs finds the full prompt blocks and recomputes only the rest of its context.
A sample holds its own blocks past the shared ones, the group the shared ones once while any
of its samples runs (:class:`GroupHolders`): the admission replays
(:mod:`rlmcost.placement.paged`, :mod:`rlmcost.placement.sglang_admit`) count them so.

**SGLang's radix cache** (sgl-project/sglang ``mem_cache/radix_cache.py``, on unless
``--disable-radix-cache``; v0.4.6.post4): token-granular (page size 1), a request matches its
prompt up to ``input_len - 1`` tokens (``Req.adjust_max_prefix_ids``), and a running
request's tokens are in the tree (``cache_unfinished_req``), locked while it runs. Requests
taken into the *same* prefill batch match before any of them is computed, so under the default
first-come-first-served policy each computes the prompt (``cache_unfinished_req`` then frees the
duplicate slots); a sibling admitted in a later batch hits. Under ``schedule_policy`` lpm
(AReaL's) the queue puts one sample of an uncached group ahead and its siblings behind every
other request, and a sample whose group runs first (:func:`rlmcost.placement.sglang_admit.
lpm_order`): the same hits, reached in another order.

Modelled (:class:`PrefixShare`, :func:`hits`): a sample finds its group's prompt cached when a
sibling is *running* at its admission (vLLM: admitted before it in the same step too). This is
the conservative case: vLLM keeps a freed block's hash in the free queue until the block is
reused, and SGLang's tree keeps evictable nodes, so a group whose samples all left may still
hit; priced as a miss here. The prefill FLOPs of a hit (:func:`tail_flops`) are exact; the
engine's predicted seconds run the tails in the same chunked prefill as the step's whole
prompts (:meth:`~rlmcost.placement.prefills.Prefills.predicted_s`). The draft model of
speculative decoding shares its prefix too; its tail is not counted apart (a fresh prompt's
draft prefill is).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    import numpy as np

    from rlmcost.deployment.engine import EngineSpec

PREFIX_NOTE = (
    "prefix caching: a prompt group's samples share the prompt's cached KV blocks (vLLM V1 "
    "automatic prefix caching, SGLang radix cache), prefilled once and held once while a "
    "sample of the group runs; a sample admitted when none runs prefills it again "
    "(conservative: the engine may still hold the freed blocks)"
)


@dataclass(frozen=True)
class PrefixShare:
    """How one replica's engine shares a group's prompt (module docstring): ``group`` samples
    per prompt, consecutive in arrival order; ``block`` tokens per cached unit (vLLM's block
    size x CP, SGLang 1); ``same_step``: a sibling admitted in the same engine step hits
    (vLLM) or computes the prompt again (SGLang's prefill batch); ``counting``: the attention
    FLOP convention of the tails (:func:`tail_flops`)."""

    group: int
    block: int
    same_step: bool = True
    counting: AttnCounting = AttnCounting.FULL

    def __post_init__(self) -> None:
        if self.group < 1 or self.block < 1:
            raise SpecError(f"prefix sharing needs groups of >= 1 sample and blocks of >= 1 "
                            f"token, got {self.group} and {self.block}")  # fmt: skip

    def hit(self, prompt: int) -> int:
        """Tokens of a group's prompt its samples share: the whole blocks of its first
        ``prompt - 1`` tokens (a new sample recomputes at least its last token, and the block
        it falls in is its own). A readmitted sample is taken to find the same (where the
        prompt fills whole blocks it could find one block more: priced as recomputed).

        >>> PrefixShare(8, 16).hit(100), PrefixShare(8, 16).hit(96), PrefixShare(8, 1).hit(100)
        (96, 80, 99)
        """
        return self.block * ((prompt - 1) // self.block)

    def holders(self) -> GroupHolders:
        """A fresh count of each group's running samples (:class:`GroupHolders`)."""
        return GroupHolders(self.group)


def hits(segments: Sequence[Sequence[int]], prompt: int,
         share: PrefixShare | None) -> list[int]:  # fmt: skip
    """Per segment ``(seq, start, end, ...)`` (a :class:`~rlmcost.placement.paged.Segment`'s
    fields; ``seq`` in arrival order), the tokens of its (re)prefill that its group's cached
    prompt covers: :meth:`PrefixShare.hit` when a sibling runs at its admission (started
    before it, or in the same step before it where ``same_step``, and ends after it), else 0.

    Three samples of one group, the third admitted after the others finished:

    >>> hits([(0, 0, 5, 10), (1, 0, 3, 10), (2, 5, 9, 10)], 10, PrefixShare(3, 4))
    [0, 8, 0]
    """
    out = [0] * len(segments)
    if share is None or share.group == 1:
        return out
    # Segments run in (start, seq) order, so a group's earlier ones started at or before this
    # one: a sibling runs at its admission when the latest end among those that started
    # before it (or, ``same_step``, at its step too) is past its start. Per group: that end
    # over the earlier steps, the step it has reached and the latest end at that step.
    seen: dict[int, tuple[int, int, int]] = {}
    hit, group, same_step = share.hit(prompt), share.group, share.same_step
    keys = [(s[1], s[0]) for s in segments]  # (start, seq)
    for k in sorted(range(len(segments)), key=keys.__getitem__):
        seq, start, end = segments[k][:3]
        g = seq // group
        before, step, at_step = seen.get(g, (-1, start, -1))
        if step < start:
            before, step, at_step = max(before, at_step), start, -1
        if (before > start) or (same_step and at_step > start):
            out[k] = hit
        seen[g] = (before, step, end if end > at_step else at_step)
    return out


def hits_numpy(seq: np.ndarray, start: np.ndarray, end: np.ndarray, hit: int, group: int,
               same_step: bool) -> np.ndarray:  # fmt: skip
    """:func:`hits` of segments given column by column (int64 arrays, any order): ``hit``
    (:meth:`PrefixShare.hit`) where a sibling runs at a segment's admission, else 0. The same
    rule with numpy: the segments ordered by (group, start, seq); per group the latest end of
    the earlier ones (a running maximum, each group lifted above the ones before it by a
    multiple of the latest end), taken before the segment (``same_step``) or before its
    step's first segment."""
    import numpy as np

    k = len(seq)
    if not k:
        return np.zeros(0, dtype=np.int64)
    g = seq // group
    order = np.lexsort((seq, start, g))
    gs, st = g[order], start[order]
    lift = gs * (int(end.max()) + 1)
    latest = np.maximum.accumulate(end[order] + lift)
    before = np.concatenate([[-1], latest[:-1]])  # over the segments before each
    if not same_step:  # before the first segment of its (group, step)
        new = np.concatenate([[True], (gs[1:] != gs[:-1]) | (st[1:] != st[:-1])])
        before = before[np.maximum.accumulate(np.where(new, np.arange(k), 0))]
    out = np.zeros(k, dtype=np.int64)
    out[order] = np.where(before - lift > st, hit, 0)
    return out


def engine_share(engine: EngineSpec, group: int, block: int,
                 counting: AttnCounting) -> PrefixShare | None:  # fmt: skip
    """How ``engine`` shares a prompt among ``group`` samples on one replica, in blocks of
    ``block`` tokens (vLLM's block size x CP; SGLang's radix cache is token-granular); None
    where it does not (``EngineSpec.shares_prefix``) or a group is one sample."""
    from rlmcost.deployment.kinds import EngineKind

    if group < 2 or not engine.shares_prefix:
        return None
    vllm = engine.kind is EngineKind.VLLM
    return PrefixShare(group, block if vllm else 1, vllm, counting)


class GroupHolders:
    """How many samples of each prompt group run (``group`` samples per group, by arrival
    index): the shared prompt blocks are held while a group has one (vLLM ``block_pool.py``
    reference counts; SGLang's radix-tree locks, ``inc_lock_ref``)."""

    def __init__(self, group: int) -> None:
        self.group, self.count, self.live = group, dict[int, int](), 0

    def holds(self, seq: int) -> bool:
        """Whether sample ``seq``'s group has a sample running."""
        return self.count.get(seq // self.group, 0) > 0

    def add(self, seq: int, sign: int = 1) -> None:
        g = seq // self.group
        before = self.count.get(g, 0)
        self.count[g] = before + sign
        self.live += (before == 0) - (before + sign == 0)


@cache
def tail_flops(arch: Arch, context: int, hit: int, counting: AttnCounting) -> int:
    """FLOPs of prefilling a sequence at ``context`` whose first ``hit`` tokens are cached: the
    body on its ``context - hit`` own tokens, their attention to all ``context`` positions (the
    cached ones too), and the LM head on the last (``blocks.work_prefill``, compiled, exact).

    ``causal``: W(context) - W(hit) + head (the pairs of a causal prefix sum telescope, sliding
    windows too). ``full`` (every query meets every key of its forward): W(own) + own x hit
    pairs, one pair's FLOPs over all layers from W's second difference.
    """
    from rlmcost.compiled.blocks import work_prefill

    def w(c: int, how: AttnCounting = counting) -> int:
        return int(work_prefill(arch, c, 1, how))

    if hit <= 0:
        return w(context)
    f1, f2, f3 = (w(c, AttnCounting.FULL) for c in (1, 2, 3))
    head = 3 * f1 - 3 * f2 + f3  # W's constant term: the LM head on the last position
    if counting is AttnCounting.CAUSAL:
        return w(context) - w(hit) + head
    own = context - hit
    return w(own) + (f3 - 2 * f2 + f1) // 2 * own * hit
