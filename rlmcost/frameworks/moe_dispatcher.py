"""A Megatron-core trainer's MoE token dispatcher from a framework's config keys.

NeMo RL (``policy.megatron_cfg.moe_token_dispatcher_type`` / ``moe_enable_deepep`` /
``moe_flex_dispatcher_backend``), verl (``actor.megatron.override_transformer_config`` keys of
the same names) and slime (``--moe-token-dispatcher-type``, ``--moe-enable-deepep``,
``--moe-flex-dispatcher-backend``) hand Megatron-core's ``TransformerConfig`` fields through,
so one reading serves the three importers (:func:`read_dispatcher`). Megatron-core
(megatron/core/transformer/transformer_config.py @d98e8a64dd):

* ``moe_token_dispatcher_type``: ``allgather`` (its default, line 891), ``alltoall`` or
  ``flex``; ``moe_flex_dispatcher_backend`` (line 898): ``deepep`` (default), ``hybridep``
  or ``ncclep``;
* ``moe_enable_deepep`` (deprecated) requires ``flex`` and sets the backend to ``deepep``
  (``__post_init__``, lines 1743-1752; a ValueError otherwise, here a :class:`SpecError`).

The mapping to :class:`~rlmcost.choices.EpDispatcher` (priced in
:mod:`rlmcost.perf.ep_dispatch`): alltoall -> ``alltoall``; allgather -> ``allgather``;
flex + deepep -> ``deepep``; flex + hybridep -> ``deepep`` (choice: HybridEP, DeepEP's
NVIDIA branch for GB200, is hierarchical like DeepEP's normal kernels, RDMA across nodes and
NVLink inside them, deepseek-ai/DeepEP hybrid-ep docs/README_Hybrid-EP.md "Hierarchical
Communication Design"; inside one NVLink domain both are the NVLink all-to-all, as every
GB200 row's EP group is); flex + ncclep is refused (NCCL EP's transport is not modelled).

Where a config leaves the type unset, the framework's own default applies (``default``): NeMo
RL before v0.6 and verl set ``alltoall`` through the model provider (Megatron-Bridge
``qwen_provider.py`` / ``deepseek_provider.py`` ``moe_token_dispatcher_type: str = "alltoall"``
at NeMo RL v0.4.0 / v0.5.0's pins 62f4704b8 / 1e9a459b4; verl ``models/mcore/
config_converter.py:89`` and ``workers/megatron_workers.py:218`` @b178a3cd), NeMo RL from
v0.6.0 in its base configs (``grpo_math_1B.yaml``), slime leaves Megatron-LM's argument
default, ``allgather`` (its model scripts, ``scripts/models/qwen3-30B-A3B.sh:40`` @624b824a,
pass ``alltoall``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import EpDispatcher
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

NEMO_RL_DEFAULT = ("NeMo RL's: its base config's from v0.6.0 (grpo_math_1B.yaml), the "
                   "Megatron-Bridge model provider's before")
VERL_DEFAULT = "verl's (models/mcore/config_converter.py:89, workers/megatron_workers.py:218)"
MEGATRON_DEFAULT = "Megatron-LM's argument default (transformer_config.py:891)"
"""Whose default an unset type takes (module docstring), as the import notes say it."""

UNSET = "moe_token_dispatcher_type unset:"
"""How an import note that states an implicit dispatcher begins (:func:`implicit_choices`)."""

KINDS = ("alltoall", "allgather", "flex")
BACKENDS = ("deepep", "hybridep", "ncclep")


def read_dispatcher(
    kind: str | None, deepep: bool, backend: str | None, default: EpDispatcher, where: str,
    source: str = "",
) -> tuple[EpDispatcher, str | None]:
    """The dispatcher the config's keys select (module docstring) and a note stating how it
    was read (None for an explicit ``alltoall``). ``kind`` None: unset, ``default`` applies
    (``source`` says whose default it is); ``where`` names the config in errors."""
    if kind is None:
        if deepep:
            raise SpecError(f"{where}: moe_enable_deepep needs moe_token_dispatcher_type flex "
                            "(Megatron-core raises otherwise); set it to flex")  # fmt: skip
        return default, (f"{UNSET} {default}, {source} "
                         "(rlmcost.frameworks.moe_dispatcher)")  # fmt: skip
    if kind not in KINDS:
        raise SpecError(f"{where}: moe_token_dispatcher_type {kind!r}: use one of "
                        f"{', '.join(KINDS)}")  # fmt: skip
    if kind != "flex":
        if deepep:
            raise SpecError(f"{where}: moe_enable_deepep needs moe_token_dispatcher_type flex, "
                            f"not {kind} (Megatron-core raises otherwise)")  # fmt: skip
        if kind == "alltoall":
            return EpDispatcher.ALLTOALL, None
        return EpDispatcher.ALLGATHER, (
            "moe_token_dispatcher_type allgather: the tokens of the expert-TP x EP group "
            "all-gathered on every rank, the outputs reduce-scattered back")
    if backend is not None and backend not in BACKENDS:
        raise SpecError(f"{where}: moe_flex_dispatcher_backend {backend!r}: use one of "
                        f"{', '.join(BACKENDS)}")  # fmt: skip
    if deepep and backend == "hybridep":
        raise SpecError(f"{where}: moe_enable_deepep with moe_flex_dispatcher_backend hybridep: "
                        "Megatron-core takes one backend; drop one")  # fmt: skip
    backend = "deepep" if deepep or backend is None else backend
    if backend == "ncclep":
        raise SpecError(f"{where}: moe_flex_dispatcher_backend ncclep (NCCL EP) is not "
                        "modelled; give --ep-dispatcher alltoall or deepep")  # fmt: skip
    if backend == "hybridep":
        return EpDispatcher.DEEPEP, (
            "moe_token_dispatcher_type flex with HybridEP: timed as DeepEP's normal kernels "
            "(RDMA once per remote node, NVLink forwarding; inside one NVLink domain the "
            "NVLink all-to-all), its SM share not modelled")
    return EpDispatcher.DEEPEP, (
        "moe_token_dispatcher_type flex with DeepEP: a token over the NIC once per remote "
        "node holding one of its experts, then NVLink forwarding (rlmcost.perf.ep_dispatch); "
        "its SM share not modelled")


def import_dispatcher(
    r: Reader, q: ImportedQuery, prefix: str, source: str, ep: int,
    default: EpDispatcher = EpDispatcher.ALLTOALL, sep: str = "_",
) -> EpDispatcher:  # fmt: skip
    """Read the dispatcher from ``r``'s keys ``{prefix}moe_token_dispatcher_type``,
    ``moe_enable_deepep`` and ``moe_flex_dispatcher_backend`` (words joined by ``sep``: "-"
    for slime's flags; ``default`` where the type is unset, ``source`` whose) into ``q``:
    ``--ep-dispatcher`` where it is not rlmcost's ``alltoall``, the note where the trainer runs
    EP (``ep`` > 1, the only case rlmcost prices one)."""
    kind, deepep, backend = (prefix + k.replace("_", sep) for k in (
        "moe_token_dispatcher_type", "moe_enable_deepep", "moe_flex_dispatcher_backend"))
    how, note = read_dispatcher(r.text(kind, None), r.flag(deepep, False),
                                r.text(backend, None), default, r.where, source)  # fmt: skip
    if how is not EpDispatcher.ALLTOALL:
        q.set("--ep-dispatcher", str(how))
    if note and ep > 1:
        q.note(note)
    return how


def implicit_choices(notes: tuple[str, ...] | list[str]) -> list[str]:
    """The import notes that state a dispatcher the config leaves implicit: a run's choices
    (``validate --rl`` rows list them)."""
    return [n for n in notes if n.startswith(UNSET)]
