"""The seven configurations of Table IX as placements of an algorithm's invocations (§IV).

* Baseline: one group "all"; invocations one after another (Table IX caption).
* AC shared: one group; the critic's invocations fold into the actor's network pi_SH, whose
  generate and train invocations also run the d x 1 value head (§IV-A).
* Disaggregated: one group per model (actor: its generation and training; critic; reward;
  reference; ...), so a stage's models run concurrently (§IV-B).
* Hybrid: one group; each invocation kind has its own layout (TP generation, TP/PP assessment,
  ZeRO-3 training; DeepSpeed-Chat Hybrid Engine, verl 3D-HybridEngine), with resharding (§IV-D).
* Stage fusion: one group; Assessment consumes finished samples while Generation decodes and
  the training pipelines that share a group interleave (RLHFuse, Zhong et al. 2024,
  arXiv:2409.13221; §IV-C).
* Asynchronous: a rollout group (Generation and Assessment) and a trainer group (Training)
  overlap under staleness k >= 1 (AReaL, Fu et al. 2025, arXiv:2505.24298; Noukhovitch et al.
  2024, arXiv:2410.18252; §IV-E); a trainable model read on the rollout side keeps a
  persistent inference copy there, the shadow M_sh. With the deployment's ``partial_rollout``
  (AReaL's interruptible generation, verl fully-async ``partial_rollout``) the engines stream
  across batches instead of draining each one (:mod:`rlmcost.placement.streaming`).
* Combined: asynchronous with one group per model and side (the rollout engines; each
  assessment model; each trained model's trainer) and hybrid layouts (Table IX caption:
  "asynchronous overlap with disaggregated model placement and hybrid intra-model
  parallelism, following the RLHFuse execution model").

User groups (``--groups``, partial colocation) combine with hybrid, fusion, async and combined.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import TRAINABLE, Algorithm
from rlmcost.errors import SpecError
from rlmcost.memo import memoized
from rlmcost.placement.device_groups import DeviceGroup, Member, Placement
from rlmcost.placement.kinds import CUSTOM, Config

_WITH_GROUPS = (Config.HYBRID, Config.FUSION, Config.ASYNC, Config.COMBINED)
_ASYNC = (Config.ASYNC, Config.COMBINED)


def _model_invocations(alg: Algorithm) -> list:
    return [i for i in alg.invocations if i.kind is not Kind.VERIFY]


def _one_group(alg: Algorithm) -> tuple[DeviceGroup, ...]:
    return (DeviceGroup("all", tuple(Member(r) for r in alg.model_roles)),)


def _per_model(alg: Algorithm) -> tuple[DeviceGroup, ...]:
    return tuple(DeviceGroup(str(r), (Member(r),)) for r in alg.model_roles)


def _exact(inv) -> Member:  # noqa: ANN001 - an Invocation
    return Member(inv.role, inv.kind, inv.stage)


def _rollout_trainer(alg: Algorithm) -> tuple[DeviceGroup, ...]:
    invs = _model_invocations(alg)
    rollout = [i for i in invs if i.stage is not Stage.TRAINING]
    trainer = [i for i in invs if i.stage is Stage.TRAINING]
    return (
        DeviceGroup("rollout", tuple(dict.fromkeys(_exact(i) for i in rollout))),
        DeviceGroup("trainer", tuple(dict.fromkeys(_exact(i) for i in trainer))),
    )


def _per_model_and_side(alg: Algorithm) -> tuple[DeviceGroup, ...]:
    """Combined: the rollout engines, each assessment model, each trained model's trainer."""
    groups: dict[str, list[Member]] = {}
    for inv in _model_invocations(alg):
        if inv.stage is Stage.GENERATION:
            name = "rollout"
        elif inv.stage is Stage.ASSESSMENT:
            name = f"{inv.role}-infer" if inv.role in TRAINABLE else str(inv.role)
        else:
            name = f"{inv.role}-train"
        members = groups.setdefault(name, [])
        if _exact(inv) not in members:
            members.append(_exact(inv))
    return tuple(DeviceGroup(name, tuple(ms)) for name, ms in groups.items())


def _check_rollout_apart(alg: Algorithm, placement: Placement) -> None:
    """Asynchrony overlaps rollout with training, so they must sit on different groups (but on
    NeMo RL's Megatron generation: :func:`build`'s ``colocated``)."""
    tasks = placement.tasks(alg)
    gen = {t.group for t in tasks if t.kind is Kind.GENERATE and t.role is Role.ACTOR}
    train = {t.group for t in tasks if t.kind is Kind.TRAIN and t.role is Role.ACTOR}
    shared = gen & train
    if shared:
        raise SpecError(
            f"--placement {placement.name}: the actor generates and trains on the same group "
            f"({', '.join(sorted(shared))}), so rollout cannot overlap training; give the "
            "rollout its own group, e.g. --groups rollout=16,actor+reference=32,critic+reward=16, "
            "or generate with --engine megatron, which stands down for each training step "
            "(NeMo RL's async GRPO colocated with Megatron generation, PR 2884)"
        )


@memoized()
def build(
    config: Config | str | None,
    alg: Algorithm,
    *,
    staleness: int | None = None,
    groups: tuple[DeviceGroup, ...] | None = None,
    offload: bool = False,
    colocated: bool = False,
) -> Placement:
    """The placement of ``alg`` under ``config`` (None: the user's ``groups``, synchronous).

    ``colocated``: the engine may generate on the actor's training GPUs under async (NeMo RL's
    async GRPO colocated with Megatron generation, PR 2884 at 8863ebeff: the engine stands
    down for each training step, ``blocks_training``, and its samples in flight resume after
    it), so the actor's generation and training may share a group; without it that is an
    error (rollout must overlap training).

    ``staleness``: k for async and combined (default 1; k >= 1 required); an error for any
    other configuration unless 0. ``groups`` (``--groups``): the user's device groups; they
    combine with hybrid, fusion, async and combined. SpecError for combinations that cannot
    work (module docstring).
    """
    try:
        cfg = Config(config) if config is not None else None
    except ValueError:
        raise SpecError(f"--placement {config!r}: use one of "
                        f"{', '.join(c.value for c in Config)}") from None  # fmt: skip
    if cfg is None and groups is None:
        cfg = Config.BASELINE
    if cfg in _ASYNC:
        k = 1 if staleness is None else staleness
        if not isinstance(k, int) or k < 1:
            raise SpecError(
                f"--placement {cfg} needs --staleness k >= 1 (rollout reads weights up to k "
                "iterations old); k = 0 is the synchronous loop: use --placement "
                "disaggregated or baseline"
            )
        if alg.offline or Stage.GENERATION not in alg.stages:
            raise SpecError(
                f"--placement {cfg} overlaps rollout with training, but {alg.name} is offline "
                "(no Generation stage); use baseline, disaggregated, hybrid or fusion"
            )
    else:
        if staleness not in (None, 0):
            where = cfg or "--groups alone"
            raise SpecError(
                f"--staleness {staleness} applies to --placement async or combined, not {where}; "
                "drop it or pick one of those"
            )
        k = 0
    if cfg is Config.AC_SHARED and Role.CRITIC not in alg.roles:
        raise SpecError(
            f"--placement ac-shared shares the critic's backbone with the actor, but "
            f"{alg.name} has no critic; use ppo, vapo or safe-rlhf, or another placement"
        )
    if groups is not None:
        if cfg is not None and cfg not in _WITH_GROUPS:
            raise SpecError(
                f"--groups sets the device groups itself; it combines with --placement "
                f"{', '.join(_WITH_GROUPS)}, not {cfg}; drop one of the two"
            )
        name = CUSTOM if cfg is None else f"{cfg}+groups"
        placement = Placement(
            name,
            groups,
            hybrid=cfg in (Config.HYBRID, Config.COMBINED),
            fusion=cfg is Config.FUSION,
            staleness=k,
            offload=offload,
        )
        placement.tasks(alg)  # every invocation placed exactly once
        if cfg in _ASYNC and not colocated:
            _check_rollout_apart(alg, placement)
        return placement
    assert cfg is not None
    layout_groups = {
        Config.BASELINE: _one_group,
        Config.AC_SHARED: _one_group,
        Config.DISAGGREGATED: _per_model,
        Config.HYBRID: _one_group,
        Config.FUSION: _one_group,
        Config.ASYNC: _rollout_trainer,
        Config.COMBINED: _per_model_and_side,
    }[cfg](alg)
    placement = Placement(
        str(cfg),
        layout_groups,
        hybrid=cfg in (Config.HYBRID, Config.COMBINED),
        fusion=cfg is Config.FUSION,
        staleness=k,
        shared_backbone=cfg is Config.AC_SHARED,
        offload=offload,
    )
    placement.tasks(alg)
    return placement


