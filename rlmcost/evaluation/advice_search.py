"""The layout changes the fit advice tries (more TP or CP, each degree one the model takes, with
what its framework needs beside it) and the bounded search over combinations when no single
change makes a deployment fit (:func:`rlmcost.evaluation.advice.suggestions`).

A degree change is written as the command line lays a trainer out: a query that gives a degree
(``--tp/--pp/--cp/--ep``) lays the trainer out whole, the degrees it leaves out at rlmcost's
defaults (``cli/_deploy_build.build_deployment``, ``frameworks.preset_model.LAYOUT_FIELDS``), so
the flags of a change name every degree of the layout in effect that is not the default, and
the forwards that ran on the trainer's layout follow it
(``deployment.batching.following_batching``), as the flags make them. NeMo RL's DTensor
policy refuses context parallelism with sequence packing
(``deployment.megatron_engine.check_dtensor_packing``; its DTensor CP recipes turn packing off,
dapo-qwen2.5-7b-16n4g-fsdp2cp2.v2.yaml @7ea279abf), so a CP change there carries ``--no-packing``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlmcost.deployment.kinds import LogitsMode
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage

Change = tuple[str, Layout, Deployment]  # (flags, layout, deployment)

DEGREE_FLAGS = ("--cp ", "--tp ")
"""The changes that take GPUs from data parallelism (a degree ladder each: the smallest that
fits is kept, and the combination search starts from each)."""

APART = (*DEGREE_FLAGS, "--rollout-tp", "--kv-buffer-gib", "--sleep", "--gpu-memory-utilization")
"""Changes not merged into the combination of the others: the degrees (each tried under it in
turn) and the engine's (``_merge`` keeps the engine)."""


def degree_changes(layout: Layout, dep: Deployment, gpus_per_node: int, binding: str,
                   widths: tuple[int, ...]) -> list[Change]:  # fmt: skip
    """``--cp`` at each power of two above the layout's while DP gives the ranks (where the
    activations or the logits bind: ring attention splits each sequence's activations over
    the CP ranks, Liu et al. 2023, arXiv:2310.01889), and ``--tp`` at each power of two up to
    a node that divides ``widths`` (the model's heads, KV heads and FFN widths:
    :func:`~rlmcost.parallel.validate.tp_widths`), smallest first. None for a layout with
    Megatron-core's uneven pipeline split (no single flag gives it back)."""
    train = dep.train
    if train.pp_split is not None or dep.groups:
        return []
    out = []
    cp, dp = layout.cp * 2, layout.dp // 2
    while binding in ("activations", "logits") and dp >= 1 and layout.dp % (cp // layout.cp) == 0:
        out.append(relaid(layout.with_(cp=cp, dp=dp), dep, "cp"))
        cp, dp = cp * 2, dp // 2
    tp, dp = layout.tp * 2, layout.dp // 2
    while tp <= gpus_per_node and dp >= 1 and layout.dp % (tp // layout.tp) == 0:
        if all(w % tp == 0 for w in widths):
            out.append(relaid(layout.with_(tp=tp, dp=dp), dep, "tp"))
        tp, dp = tp * 2, dp // 2
    return out


def relaid(layout: Layout, dep: Deployment, changed: str) -> Change:
    """The change to ``layout``'s degrees (``changed`` the one that moved) as its flags, the
    layout and the deployment the flags make (module docstring)."""
    data = dep.to_json()
    train = data["train"]
    batching = following(data)
    train.update(tp=layout.tp, pp=layout.pp, cp=layout.cp)
    words = [f"--{changed} {getattr(layout, changed)}"]
    if dtensor_packing(dep) and layout.cp > 1:
        train["packing"] = False
        batching = None if batching is None else {**batching, "packing": False}
        if isinstance(data.get("forward"), dict):
            data["forward"]["packing"] = False
        words.append("--no-packing")
    for name in ("tp", "pp", "cp", "ep", "etp"):
        value = train.get(name)
        if name != changed and value not in (None, 1):
            words.append(f"--{name} {value}")
    if train.get("sp"):
        words.append("--sp")
    if batching is not None:
        data["forward"] = {**train, "offload": [], **batching}
    return " ".join(words), layout, Deployment.model_validate(data)


def following(data: dict[str, Any]) -> dict[str, Any] | None:
    """The batching of deployment ``data``'s forward layout where it ran on the trainer's."""
    from rlmcost.deployment.batching import following_batching

    return following_batching(data.get("forward"), data["train"])


def dtensor_packing(dep: Deployment) -> bool:
    """Whether ``dep`` packs sequences on NeMo RL's DTensor policy (its ZeRO-3 trainer), where
    CP needs packing off (``megatron_engine.check_dtensor_packing``)."""
    layouts = (dep.train, dep.forward_layout())
    return (dep.framework == "nemo-rl" and not dep.ideal and dep.train.zero is ZeroStage.OS_G_P
            and any(t.packing for t in layouts))  # fmt: skip


def combined(run: Callable[..., Any], layout: Layout, dep: Deployment, tried: list[Change],
             limit: int, sleep: bool | None = None) -> list[tuple[str, Any]]:  # fmt: skip
    """When no single change fits: (flags, evaluation) of the combinations that fit, found by
    a bounded search. On a vLLM or SGLang engine (``sleep`` not None: whether ``--sleep`` is
    offered), first its own changes with the state changes, pared
    (:func:`rlmcost.evaluation.engine_advice.engine_combined`: what users of co-located
    engines change first, at most 2 + 2 x state changes evaluations). Then every state change
    at once (``--zero``, ``--offload``, ``--ckpt``,
    ``--micro-batch``, ``--logits``, ``--offload-idle``: the strongest combination without
    taking GPUs from DP); then, for CP and for TP, the smallest degree of ``tried`` under
    which all of them fit, pared to the pairs of that degree and one state change that fit
    (all of them where no pair does). At most 1 + degrees + state changes evaluations."""
    states = [c for c in tried if not c[0].startswith(APART)]
    if sleep is not None:
        from rlmcost.evaluation.engine_advice import engine_combined

        engine = engine_combined(lambda lay, d: _try(run, lay, d), layout, dep, states, sleep)
        if engine:
            return engine
    lay, d, text = merged(layout, dep, states)
    if len(states) >= 2:
        result = _fitting(run, lay, d)
        if _fits(result):
            return [(text, result)]
    found: list[tuple[str, Any]] = []
    for kind in DEGREE_FLAGS:
        for flags, degree_layout, degree_dep in (c for c in tried if c[0].startswith(kind)):
            lay, d, text = merged(degree_layout, degree_dep, states)
            result = _fitting(run, lay, d)
            if not states or not _fits(result):
                continue
            pairs = [(f"{flags} {s}", r) for s, r in
                     ((s, _fitting(run, _merge_layout(degree_layout, sl), _merge(degree_dep, sd)))
                      for s, sl, sd in states) if _fits(r)]  # fmt: skip
            found += pairs or [(f"{flags} {text}", result)]
            break
    return found[:limit]


def merged(layout: Layout, dep: Deployment, changes: list[Change]) -> tuple[Layout, Deployment,
                                                                             str]:  # fmt: skip
    """``changes`` merged over ``layout`` and ``dep``, and their flags (each flag once, at its
    last value: ``--offload``'s last is its longest list)."""
    chosen: dict[str, str] = {}
    for f, candidate_layout, candidate in changes:
        layout = _merge_layout(layout, candidate_layout)
        dep = _merge(dep, candidate)
        name, _, value = f.partition(" ")
        chosen[name] = value
    if "--offload" in chosen:  # the whole list the changes leave (each names the kinds in
        chosen["--offload"] = ",".join(dep.train.offload)  # effect plus its own)
    return layout, dep, " ".join(f"{k} {v}".strip() for k, v in chosen.items())


def _fits(result: Any) -> bool:
    return result is not None and bool(result.fits)


def _merge_layout(a: Layout, b: Layout) -> Layout:
    return a.with_(
        zero=max(a.zero, b.zero, key=lambda z: int(z.value)),
        ckpt=b.ckpt if b.ckpt is Checkpointing.FULL else a.ckpt,
        micro_batch=min(a.micro_batch, b.micro_batch),
    )


def _merge(a: Deployment, b: Deployment) -> Deployment:
    train = a.train.model_copy(
        update={
            "zero": max(a.train.zero, b.train.zero, key=lambda z: int(z.value)),
            "offload": tuple(dict.fromkeys((*a.train.offload, *b.train.offload))),
            "ckpt": b.train.ckpt if b.train.ckpt is Checkpointing.FULL else a.train.ckpt,
            "micro_batch": min(a.train.micro_batch, b.train.micro_batch),
        }
    )
    return a.model_copy(
        update={
            "train": train,
            "offload_idle": a.offload_idle or b.offload_idle,
            "logits": b.logits if b.logits is LogitsMode.FUSED else a.logits,
        }
    )


def _try(run: Callable[..., Any], layout: Layout, deployment: Deployment) -> Any:
    try:
        return run(layout=layout, deployment=deployment)
    except SpecError:
        return None


def _fitting(run: Callable[..., Any], layout: Layout, deployment: Deployment) -> Any:
    """:func:`_try`, first for memory and fit alone (:mod:`rlmcost.placement.untimed`): a change
    that fits is evaluated in full, one that does not is the untimed evaluation (its ``fits``
    and bytes the full one's, its seconds meaningless), for callers that read only its fit."""
    from rlmcost.placement.untimed import untimed

    with untimed():
        probe = _try(run, layout, deployment)
    return _try(run, layout, deployment) if _fits(probe) else probe
