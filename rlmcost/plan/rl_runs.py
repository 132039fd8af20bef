"""The Run of a candidate of `rlmcost plan <algorithm>` (:mod:`rlmcost.plan.rl_candidates`):
the base Run with the candidate's deployment and GPUs, the one Run its evaluation and its
row's command and JSON read."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rlmcost.plan.families import Family
from rlmcost.plan.rl_base import run_of_text, text_of

if TYPE_CHECKING:
    from rlmcost.plan.rl_candidates import RLCandidate
    from rlmcost.run.spec import Run


def candidate_run(base: Run, c: RLCandidate) -> Run:
    """The :class:`~rlmcost.run.Run` of candidate ``c``: ``base.replace`` of its sections
    (:func:`candidate_sections`), built from validated parts
    (:func:`rlmcost.run.replacing.replaced`: the same Run for a fraction of its cost)."""
    from rlmcost.run.replacing import replaced

    return replaced(base, **candidate_sections(base, c))


def candidate_sections(base: Run, c: RLCandidate) -> dict[str, Any]:
    """The sections candidate ``c`` changes in ``base`` (:meth:`Run.replace
    <rlmcost.run.spec.Run.replace>`'s keywords): the candidate's
    trainer layout (TP, PP, CP, SP, ZeRO, checkpointing, micro-batch, its offload list: the
    base Run's with the optimizer axis set, :mod:`rlmcost.plan.offloads`),
    engine TP and reservation, placement and groups (staleness: the base Run's, default 1,
    where rollout overlaps training), and GPUs (dp fills them; the trainer's TP holds for
    every model); under NeMo RL's DTensor policy, CP unpacked, as its recipes run it; at a PP
    other than the base's, Megatron-core's even split (no ``pp_split``)."""
    from rlmcost.evaluation.query import groups_from_text
    from rlmcost.plan.mcore import engine_fields

    train = {"tp": c.tp, "pp": c.pp, "cp": c.cp, "sp": c.sp, "zero": str(c.zero),
             "ckpt": str(c.ckpt), "micro_batch": c.micro_batch,
             "offload": list(c.offload),
             **({} if c.ep is None else {"ep": c.ep})}  # fmt: skip
    if c.pp != base.deployment.train.pp:  # a tier's first/last-stage split is its PP's alone
        train["pp_split"] = None  # Megatron-core's even split
    trainer = None  # bracket trainer keys go over the candidate's trainer layout
    if c.groups and "[" in c.groups:
        from rlmcost.deployment.spec import TrainLayout
        from rlmcost.run.spec import merge

        trainer = TrainLayout.model_validate(merge(base.deployment.train.model_dump(mode="json"),
                                                   train))  # fmt: skip
    if trainer is not None:
        groups = [g.model_dump(mode="json") for g in groups_from_text(c.groups, trainer)]
    else:  # the split's groups, parsed once per text (a split's candidates share it)
        groups = [dict(g) for g in _groups_data(c.groups)] if c.groups else []
    cluster: dict[str, Any] = {"gpus": c.gpus, "dp": None}
    if c.hardware:  # a pool: the co-located family's accelerator, or the actor trainer's
        cluster["hardware"] = c.hardware[0] if len(c.hardware) == 1 else \
            c.hardware[_trainer_index(c.groups)]  # fmt: skip
    if c.cp > 1 and base.deployment.framework == "nemo-rl" and str(c.zero) == "3":
        # NeMo RL's DTensor policy refuses CP with packing (megatron_engine.
        # check_dtensor_packing); its DTensor CP recipes disable packing
        # (dapo-qwen2.5-7b-16n4g-fsdp2cp2.v2.yaml over dapo-qwen2.5-7b.v2.yaml @7ea279abf)
        train["packing"] = False
    deployment = {
        "train": train,
        **({"forward": _unpacked_forward(base, train)} if train.get("packing") is False else {}),
        "engine": engine_fields(c.rollout_tp, c.fraction, c.kv_gib),
        "placement": c.placement,
        "groups": groups,
        "staleness": (base.deployment.staleness or 1) if c.stale else None,
    }  # fmt: skip
    return {"deployment": deployment, "cluster": cluster, "tp_per_model": False}


def _unpacked_forward(base: Run, train: dict[str, Any]) -> dict[str, Any] | None:
    """The forward layout of a candidate whose trainer layout ``train`` (over the base's)
    drops packing: that layout without offload, with the base forwards' own batching unpacked
    (what ``replaced_data`` makes of a forward that follows its trainer, packing aside)."""
    from rlmcost.run.spec import merge

    fwd = base.deployment.forward
    if fwd is None:
        return None
    layout = merge(base.deployment.train.model_dump(mode="json"), train)
    return {**layout, "offload": [], "micro_batch": fwd.micro_batch,
            "max_tokens_per_gpu": fwd.max_tokens_per_gpu, "packing": False}  # fmt: skip


def _trainer_index(groups: str) -> int:
    """The group of ``--groups`` text that trains the actor (the families' rule)."""
    from rlmcost.placement.groups import _split_top

    members = tuple(g.split("=", 1)[0] for g in _split_top(groups))
    return Family("groups", None, members).trainer_index()


@lru_cache(maxsize=1024)
def _groups_data(text: str) -> tuple[dict[str, Any], ...]:
    """The Run's JSON of ``--groups`` text without brackets (its groups' own settings none)."""
    from rlmcost.evaluation.query import groups_from_text

    return tuple(g.model_dump(mode="json") for g in groups_from_text(text))


def row_run(base: Run, c: RLCandidate) -> Run:
    """The Run that :func:`~rlmcost.plan.rl_candidates.evaluate_row` evaluates for ``c``:
    :func:`candidate_run` of the base Run's JSON read back (:mod:`rlmcost.plan.rl_base`), as a
    Dask worker reads the base it is sent."""
    return candidate_run(run_of_text(text_of(base)), c)


