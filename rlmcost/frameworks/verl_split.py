"""verl's split-placement example as `rlmcost import verl` reads it: the launch of its own
trainer script, ``python3 main_ppo_split.py key=value ...`` (volcengine/verl
examples/split_placement @b178a3cd), priced as rlmcost device groups (``--groups``).

What the example runs (line numbers of that commit):

* its config: ``@hydra.main(config_path="config", config_name="ppo_trainer_split")``
  (main_ppo_split.py line 95), the file config/ppo_trainer_split.yaml beside the script, whose
  Hydra defaults put it over verl's ppo_trainer.yaml;
* two resource pools of the same size (lines 156-167): on one node, half its GPUs each
  (``nnodes // 2 == 0 and n_gpus_per_node // 2 > 0``); else whole nodes, ``nnodes // 2`` each
  (an odd node count leaves one node idle);
* ``actor_rollout_ref_pool``: the actor with its rollout (verl's hybrid engine: one worker
  generates and trains, as in main_ppo) and the reference where the config keeps one
  (``need_reference_policy``, lines 169-177); ``critic_pool``: the critic and the reward model
  where ``reward_model.enable`` (lines 185-193);
* its loop (split_monkey_patch.py ``fit``): generation, then the old log-probs (line 135),
  the reference (141), the values (147) and the reward model (156), each called and waited
  for in turn; then ``update_actor`` (188) and ``update_critic`` (195) both called before
  either result is taken (lines 199, 204), so the two updates overlap (the README's steps 2-3:
  the workers' updates registered ``blocking=False``).

rlmcost's groups run a stage's units on different groups side by side
(:mod:`rlmcost.placement.schedule`): the two updates as verl overlaps them, and also the
critic pool's forwards beside the actor pool's, which verl runs in turn; a note says so (the
estimate is low by up to those forwards' time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.result import ImportedQuery

ENTRY = "main_ppo_split.py"
"""The example's trainer script, which the launch line runs by its file name."""

CONFIG = "ppo_trainer_split"
"""Its Hydra config name, in its folder ``config`` (main_ppo_split.py line 95 @b178a3cd)."""

SOURCE = "verl examples/split_placement/main_ppo_split.py @b178a3cd"


def split_pools(per_node: int, nodes: int, where: str) -> tuple[int, int]:
    """GPUs per node and nodes of each of the example's two pools for ``trainer.n_gpus_per_node
    = per_node`` and ``trainer.nnodes = nodes`` (main_ppo_split.py lines 158-167); SpecError
    where a pool would have no GPU (verl's ``resource_pool_spec`` then holds none)."""
    if nodes // 2 == 0 and per_node // 2 > 0:
        return per_node // 2, nodes
    if nodes // 2 == 0:
        raise SpecError(f"{where}: trainer.n_gpus_per_node={per_node} with trainer.nnodes="
                        f"{nodes} leaves the split's pools no GPU ({SOURCE} lines 158-167 "
                        "halve one node's GPUs, else the nodes); give 2 or more GPUs")
    return per_node, nodes // 2


def split_groups(q: ImportedQuery, pool: tuple[int, int], given: tuple[int, int],
                 critic_ckpt: str | None) -> None:
    """``--groups`` (and ``--gpus``) for the example's pools of ``pool`` (GPUs per node, nodes)
    each, the script giving ``given`` (GPUs per node, nodes), on ``q`` imported with one pool's
    GPUs as the trainer's (the workers' data-parallel checks see their pool); its notes.
    ``critic_ckpt``: the critic's own ``--ckpt`` where its FSDP worker's
    ``critic.model.enable_gradient_checkpointing`` differs from the actor's (its group's
    ``ckpt`` key; None: the actor's)."""
    per_pool = pool[0] * pool[1]
    flags = dict(q.flags)
    actor = f"rollout+{q.trainer_roles(critic=False)}"  # the critic's pool is its own
    reward = q.algorithm == "ppo" or flags.get("--reward", "rule") != "rule"  # a model scores
    critic = "+".join(r for r, on in (("critic", q.algorithm in ("ppo", "vapo")),
                                      ("reward", reward)) if on)  # fmt: skip
    if not critic:
        raise SpecError(f"{SOURCE}: adv_estimator without a critic and no reward model leaves "
                        "the critic pool nothing to run; rlmcost prices the split's PPO "
                        "(algorithm.adv_estimator=gae)")
    q.conversions = [c for c in q.conversions if c.flag != "--gpus"]
    q.convert(f"trainer.n_gpus_per_node={given[0]} x trainer.nnodes={given[1]}", "--gpus",
              2 * per_pool, f"two pools of {pool[0]} x {pool[1]} GPUs (main_ppo_split.py "
              "resource_pool_spec, lines 158-167)"
              + (f"; {given[0] * given[1] - 2 * per_pool} GPU(s) left idle (an odd node count)"
                 if given[0] * given[1] != 2 * per_pool else ""))  # fmt: skip
    own = f"[ckpt={critic_ckpt}]" if critic_ckpt else ""
    if critic_ckpt:  # its own group, so its own layout: not the actor's, as colocated
        q.notes = [n for n in q.notes if not n.startswith("critic.model.enable_gradient_ch")]
        q.note(f"critic.model.enable_gradient_checkpointing: the critic's group trains with "
               f"--ckpt {critic_ckpt} (its group's ckpt key), the actor's with its own")
    q.convert("main_ppo_split.py mapping", "--groups",
              f"{actor}={per_pool},{critic}={per_pool}{own}",
              "actor_rollout_ref_pool: the actor, its rollout (hybrid engine) and the reference "
              "where kept; critic_pool: the critic and the reward model where enabled (lines "
              "169-193)")  # fmt: skip
    q.note(f"verl's split placement ({SOURCE}): the actor pool and the critic pool, "
           f"{per_pool} GPUs each; update_actor and update_critic overlap (split_monkey_patch.py "
           "lines 188-204, with the README's blocking=False), as rlmcost runs one stage's units "
           "on different groups; rlmcost also runs the critic pool's forwards (values"
           + (", reward model" if "reward" in critic else "") + ") beside the actor's old "
           "log-prob forward, which verl's driver calls in turn (lines 135-156): the "
           "estimate is low by up to those forwards' time")
