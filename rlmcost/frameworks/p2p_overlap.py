"""A Megatron trainer's ``overlap_p2p_comm`` from a framework's config keys.

Megatron's interleaved schedule hides its pipeline sends behind the opposite pass when
``overlap_p2p_comm`` (:mod:`rlmcost.perf.megatron_pipe`); each framework's default is
``Behaviour.megatron_overlap_p2p``. Where a config states it, the importer passes it on as
``--pp-overlap-p2p`` / ``--no-pp-overlap-p2p`` (the trainer layout's ``pp_overlap_p2p``):

* verl: ``actor_rollout_ref.actor.megatron.override_transformer_config.overlap_p2p_comm``;
  verl's own value (VPP > 1) is set first and the override dict updates it
  (verl/models/mcore/config_converter.py lines 49-95 @b178a3cd, ``base_config.update(
  override_transformer_config_kwargs)``; the same rule since 35555d8ae, 2025-03-07).
* slime: Megatron-LM's ``--no-overlap-p2p-communication`` (``store_false``, dest
  ``overlap_p2p_comm``: megatron/training/arguments.py); no slime script passes it
  (THUDM/slime @624b824a8, so Megatron-LM's on applies).
* NeMo RL: none. Its ``megatron_cfg`` keys reach the ``TransformerConfig`` one by one (tp, pp,
  cp, EP, router, dispatcher, ...: nemo_rl/models/policy/megatron_policy_worker.py at v0.3.0,
  policy/workers/ at v0.4.0-v0.6.0, nemo_rl/models/megatron/setup.py at v0.7.0 and
  @7ea279abf); none of them is ``overlap_p2p_comm``, ``comm_overlap`` or
  ``virtual_pipeline_model_parallel_size`` (git grep over nemo_rl/ at each tag), so the
  Megatron-Bridge model provider's VP (None) and Megatron-core's False apply at every release.
  After v0.7.0 (main @7ea279abf) ``policy.megatron_cfg.model_overrides`` is merged onto the
  provider (``setup.py`` ``_merge_model_overrides``), so ``model_overrides.overlap_p2p_comm``
  and ``model_overrides.virtual_pipeline_model_parallel_size`` reach Megatron there; both are
  read (:mod:`rlmcost.frameworks.virtual_pipeline`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

SLIME_OFF = "no-overlap-p2p-communication"
"""slime's (Megatron-LM's) switch that turns the overlap off."""


def import_overlap(r: Reader, q: ImportedQuery, key: str, negated: bool = False) -> None:
    """``--pp-overlap-p2p`` or ``--no-pp-overlap-p2p`` where ``r`` gives ``key``
    (``negated``: a ``store_false`` switch, true turns the overlap off); nothing where unset,
    so the framework's default applies (module docstring)."""
    if r.raw(key, None) is None:
        return
    on = r.flag(key, False) != negated
    q.set("--pp-overlap-p2p" if on else "--no-pp-overlap-p2p")
