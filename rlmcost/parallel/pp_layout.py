"""Megatron-core's ``--pipeline-model-parallel-layout``: a string that places every layer on a
(pipeline rank, virtual stage), read as Megatron-core reads it.

Source: NVIDIA/Megatron-LM @d98e8a64dd, ``megatron/core/transformer/
pipeline_parallel_layer_layout.py`` (``PipelineParallelLayerLayout``: ``parse_str_to_list``,
``__init__``, ``validate_layer_layout``, ``get_layer_offset``) and
``docs/user-guide/features/pipeline_parallel_layout.md``:

- Characters: ``E`` embedding, ``t`` transformer (decoder) layer, ``m`` MTP layer, ``L`` loss;
  ``|`` ends a stage; commas are cosmetic; ``(...)*n`` and ``x*n`` repeat (unrolled by the same
  two regular expressions, parentheses first, so they do not nest). Empty stages are allowed.
- The string lists P_p v virtual stages; stage i runs on rank i mod P_p as its virtual stage
  i // P_p (``layout[vpp_rank * P_p + pp_rank]``), so v = stages / P_p, which must be whole;
  a virtual-pipeline size set beside it must equal it (``transformer_config.py``).
- Decoder layer ids run in stage order (``get_layer_offset``: every rank's chunk of virtual
  stage 0, then of stage 1, ...), so a MoE model's first dense layers land where the string
  puts its first ``t`` s.
- Checks (``validate_layer_layout``): the first layer of the flattened list is the embedding,
  the last the loss, each exactly once; as many ``t`` as the model has layers; no ``t`` after
  an ``m``; ``m`` only in a rank's last virtual stage, all of them in one stage. Megatron also
  matches the ``m`` count to ``mtp_num_layers``: ``m`` places nothing here (the MTP block is
  ``--mtp-layers``, priced on the last stage: :mod:`rlmcost.perf.mtp_pass`), its count not
  checked (stated).
- Where the embedding and loss run does not follow ``E`` / ``L``: ``GPTModel`` builds them on
  the first rank's first and the last rank's last virtual stage (``pre_process`` /
  ``post_process``), the markers only have to stand first and last.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial

from rlmcost.frozen import dataclass

LAYER_CHARS = {"E": "embedding", "t": "decoder", "m": "mtp", "L": "loss"}
_NAMES = {name: char for char, name in LAYER_CHARS.items()}
_SOURCE = "Megatron-core pipeline_parallel_layer_layout.py"
_MAX_CHARS = 1_000_000  # a guard against a string like t*10**9, far above any real model


class LayoutError(ValueError):
    """A layout string Megatron-core would refuse; the message is one line."""


@dataclass(frozen=True)
class PipelineLayout:
    """A parsed layout: ``stages[i]`` is virtual stage i's layer characters (rank i mod pp,
    virtual stage i // pp)."""

    text: str
    pp: int
    stages: tuple[str, ...]

    @property
    def virtual_stages(self) -> int:
        return len(self.stages) // self.pp

    def chunk(self, rank: int, vstage: int) -> str:
        return self.stages[vstage * self.pp + rank]

    def chunk_layers(self) -> list[list[int]]:
        """Decoder layers of each rank's virtual stages (``get_num_layers_to_build``)."""
        return [[self.chunk(r, s).count("t") for s in range(self.virtual_stages)]
                for r in range(self.pp)]  # fmt: skip

    def rank_layers(self) -> list[int]:
        """Decoder layers of each of the ``pp`` ranks, all its virtual stages together."""
        return [sum(c) for c in self.chunk_layers()]

    def layer_ids(self) -> list[list[int]]:
        """Each rank's decoder layer ids (``get_layer_id_list``: ids run in stage order)."""
        out: list[list[int]] = [[] for _ in range(self.pp)]
        next_id = 0
        for i, stage in enumerate(self.stages):
            n = stage.count("t")
            out[i % self.pp] += range(next_id, next_id + n)
            next_id += n
        return out

    def positions(self, char: str) -> list[tuple[int, int]]:
        """(rank, virtual stage) of every ``char`` (``E``, ``m`` or ``L``)."""
        return [(i % self.pp, i // self.pp) for i, stage in enumerate(self.stages)
                for c in stage if c == char]  # fmt: skip


def layout_text(value: object) -> str:
    """A layout given as Megatron-core accepts it, a string or a list of per-stage lists of
    layer names (``embedding``, ``decoder``, ``mtp``, ``loss``; the form Megatron-Bridge's
    recipes set), as a string; LayoutError for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(s, list | tuple) for s in value):
        words = [str(w).strip().lower() for s in value for w in s]
        bad = [w for w in words if w not in _NAMES]
        if bad:
            raise LayoutError(f"--pp-layout: '{bad[0]}' is not a layer type; use "
                              f"{', '.join(_NAMES)} ({_SOURCE})")  # fmt: skip
        return "|".join("".join(_NAMES[str(w).strip().lower()] for w in s) for s in value)
    raise LayoutError(f"--pp-layout must be a string or a list of stages, got {value!r:.60}")


def expand(text: str) -> list[str]:
    """The stages of ``text`` (``parse_str_to_list``): commas dropped, ``(...)*n`` then
    ``x*n`` unrolled, split at ``|``; LayoutError naming an unknown character.

    >>> expand("Et*3|(tt|)*2,m|L")
    ['Ettt', 'tt', 'tt', 'm', 'L']
    """
    s = text.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        s = re.sub(pattern, partial(_repeat, budget=[_MAX_CHARS - len(s)]), s)
    stages = s.split("|")
    for stage in stages:
        for c in stage:
            if c not in LAYER_CHARS:
                raise LayoutError(f"--pp-layout '{text:.60}': invalid layer character "
                                  f"'{c}' in stage '{stage:.30}'; known: E, t, m, L, | and "
                                  f"(..)*n ({_SOURCE})")  # fmt: skip
    return stages


def _repeat(x: re.Match[str], budget: list[int]) -> str:
    part, n = x.group(1), int(x.group(2)[:12])  # 12 digits already unroll past the budget
    budget[0] -= len(part) * n
    if budget[0] < 0:
        raise LayoutError(f"--pp-layout: '{part}'*{n} unrolls past {_MAX_CHARS} characters")
    return part * n


@lru_cache(maxsize=256)
def parse(text: str, pp: int) -> PipelineLayout:
    """The layout of ``text`` over ``pp`` ranks; LayoutError when its stages do not divide
    by ``pp`` (``PipelineParallelLayerLayout.__init__``)."""
    stages = expand(text)
    if len(stages) % pp:
        raise LayoutError(f"--pp-layout '{text:.60}' has {len(stages)} stages, not a "
                          f"multiple of pp={pp} ({_SOURCE}); give pp x v stages")  # fmt: skip
    return PipelineLayout(text, pp, tuple(stages))


def implied_virtual_stages(text: str, pp: int) -> int | None:
    """v = stages / pp that the layout sets (Megatron-LM ``arguments.py`` derives the
    virtual-pipeline size from it), or None for a string that does not parse."""
    try:
        return parse(text, pp).virtual_stages
    except LayoutError:
        return None


def layout_problem(text: str, pp: int, n_layers: int, virtual_stages: int) -> str | None:
    """Why Megatron-core refuses ``text`` for ``n_layers`` over ``pp`` ranks with
    ``virtual_stages`` model chunks each (a one-line message), or None
    (``validate_layer_layout`` and the size checks of ``transformer_config.py``)."""
    try:
        lay = parse(text, pp)
    except LayoutError as e:
        return str(e)
    where = f"--pp-layout '{text:.60}'"
    if lay.virtual_stages != virtual_stages:
        return (f"{where} has {len(lay.stages)} stages = pp {pp} x {lay.virtual_stages} "
                f"virtual stages, not {virtual_stages}; set virtual_stages "
                f"{lay.virtual_stages} (schedule interleaved when > 1) or change the layout")
    flat = "".join(lay.stages)
    if flat.count("E") != 1 or flat[:1] != "E":
        return f"{where}: the embedding E must be the first layer, exactly once ({_SOURCE})"
    if flat.count("L") != 1 or flat[-1:] != "L":
        return f"{where}: the loss L must be the last layer, exactly once ({_SOURCE})"
    if flat.count("t") != n_layers:
        return (f"{where} places {flat.count('t')} transformer layers (t), the model has "
                f"{n_layers} ({_SOURCE})")  # fmt: skip
    if "m" in flat and "t" in flat[flat.index("m"):]:
        return f"{where}: decoder layers (t) must come before the MTP layers (m) ({_SOURCE})"
    mtp = {s for _, s in lay.positions("m")}
    if mtp - {lay.virtual_stages - 1} or len({r for r, _ in lay.positions("m")}) > 1:
        return (f"{where}: every MTP layer (m) must be in one rank's last virtual stage "
                f"({_SOURCE})")  # fmt: skip
    return None
