"""Megatron's virtual-pipeline size (model chunks per pipeline rank, the interleaved 1F1B)
read from a framework's config into the algorithm commands' ``--virtual-stages``.

Megatron's rules (NVIDIA/Megatron-LM @d98e8a64dd):

* ``megatron/training/arguments.py`` ``validate_args`` (lines 927-1008): at most one of
  ``--num-layers-per-virtual-pipeline-stage`` N, ``--num-virtual-stages-per-pipeline-rank``
  and ``--pipeline-model-parallel-layout``; from N, the layers (+1 with
  ``--account-for-embedding-in-pipeline-split``, +1 with ``...-loss-...``) must divide by pp
  and the layers per rank by N, and v = layers / (pp x N); N together with
  ``--decoder-first/last-pipeline-num-layers`` is refused (use the stages-per-rank form);
  v = 1 becomes None (no interleaving); with v set, pp > 1 where ``overlap_p2p_comm`` and
  pp > 2 where not. ``--virtual-pipeline-model-parallel-size`` was the argument's name before
  commit dcef906978 (2021-02-13) and is no Megatron-LM argument now.
* ``megatron/core/parallel_state.py`` ``initialize_model_parallel``: any virtual size that is
  not None (1 included) needs pp > 1 (RuntimeError); ``pipeline_parallel/schedules.py``
  ``get_forward_backward_func`` then runs the interleaved schedule for every v not None, so a
  v of 1 runs the interleaved code over one chunk: the 1F1B's bubble and sends (rlmcost's 1F1B).

Per framework:

* verl: ``actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size`` is v itself;
  the actor-and-reference worker passes the actor's to ``mpu.initialize_model_parallel`` and
  each model's own to its provider (verl/workers/megatron_workers.py lines 209 and 287
  @b178a3cd; ref's key defaults to the actor's, trainer/config/ref/megatron_ref.yaml:23); the
  critic's worker initializes with ``critic.megatron``'s (line 1023). verl turns
  ``overlap_p2p_comm`` on with v > 1 (verl/models/mcore/config_converter.py:49), the verl
  preset's default (:mod:`rlmcost.frameworks.p2p_overlap`).
* slime: Megatron-LM's arguments above, the layer count from ``--num-layers`` (else the
  model's); no slime script at THUDM/slime @624b824a8 passes any of them (git grep).
* NeMo RL: no key reaches Megatron's virtual size at any release v0.1.0-v0.7.0 (git grep
  'virtual_pipeline' over nemo_rl/: none up to v0.6.0; at v0.7.0 only guards that read it),
  so NeMo RL never interleaves there. At main @7ea279abf,
  ``policy.megatron_cfg.model_overrides.virtual_pipeline_model_parallel_size`` is merged onto
  the Megatron-Bridge provider (nemo_rl/models/megatron/setup.py ``_merge_model_overrides``),
  whose ``initialize_megatron`` passes it to ``initialize_model_parallel``
  (Megatron-Bridge src/megatron/bridge/training/initialize.py:808 @067f987d); the
  first-class-looking ``policy.megatron_cfg.virtual_pipeline_model_parallel_size`` is read only
  by guards (router_replay.py:65, megatron_policy_worker.py:640) and never copied onto the
  model. NeMo RL's ``overlap_p2p_comm`` stays Megatron-core's False unless
  ``model_overrides.overlap_p2p_comm`` sets it.
* Megatron-Bridge recipes: rlmcost has no importer for them.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.p2p_overlap import import_overlap
from rlmcost.frameworks.result import ImportedQuery

NOTE = "virtual pipeline:"
"""How the import note that states the interleaved schedule begins (:func:`choices`)."""

VERL_KEY = "megatron.virtual_pipeline_model_parallel_size"
"""verl's key under ``actor_rollout_ref.actor`` / ``.ref`` and ``critic``."""

SLIME_KEYS = ("num-layers-per-virtual-pipeline-stage", "num-virtual-stages-per-pipeline-rank")
SLIME_OLD = "virtual-pipeline-model-parallel-size"
"""Megatron-LM's name of the size before dcef906978 (module docstring)."""

NEMO_KEY = "policy.megatron_cfg.model_overrides.virtual_pipeline_model_parallel_size"
NEMO_GUARD = "policy.megatron_cfg.virtual_pipeline_model_parallel_size"


def choices(notes: list[str] | tuple[str, ...]) -> list[str]:
    """The import notes that state a virtual-pipeline size: a run's choices."""
    return [n for n in notes if n.startswith(NOTE)]


def set_virtual_stages(q: ImportedQuery, v: int, given: str, pp: int, where: str) -> None:
    """``--virtual-stages v`` from ``given`` (the key and value), refused at ``pp`` 1 as
    Megatron-core's ``initialize_model_parallel`` refuses any virtual size there."""
    if pp <= 1:
        raise SpecError(f"{where}: {given} needs pipeline_model_parallel_size > 1 (Megatron-core's "
                        "initialize_model_parallel refuses a virtual size at pp 1); unset it "
                        "or raise pp")  # fmt: skip
    how = (f"{v} model chunks per pipeline rank: Megatron's interleaved 1F1B" if v > 1 else
           "one chunk per rank: Megatron's interleaved code over one chunk, the 1F1B")
    q.convert(given, "--virtual-stages", v, how, default=1)
    q.note(f"{NOTE} {given}: {how} (--virtual-stages {v})")


def verl_virtual_stages(r: Reader, q: ImportedQuery, actor: str, pp: int) -> None:
    """verl's actor size (``actor``: the actor's key prefix), with notes where the reference
    or critic sets another (rlmcost prices one trainer layout)."""
    key = f"{actor}.{VERL_KEY}"
    v = r.integer(key, None)
    for name, other in (("ref", _other(r, actor.replace(".actor", ".ref") + f".{VERL_KEY}")),
                        ("critic", _other(r, f"critic.{VERL_KEY}"))):
        if other is not None and other != v:
            q.note(f"{name}.{VERL_KEY}={other} differs from the actor's {v}: rlmcost runs every "
                   "trainer model on the actor's layout")  # fmt: skip
    if v is not None:
        set_virtual_stages(q, v, f"{key}={v}", pp, r.where)


def _other(r: Reader, key: str) -> int | None:
    """A reference's or critic's size for a note only: None where unset or not a number
    (verl's own ``${oc.select:...actor...}`` default, trainer/config/ref/megatron_ref.yaml:23,
    is the actor's)."""
    try:
        return r.integer(key, None)
    except SpecError:
        return None


def slime_virtual_stages(r: Reader, q: ImportedQuery, layers: int) -> None:
    """slime's (Megatron-LM's) arguments, Megatron-LM's rule (module docstring); ``layers``:
    the model's, where ``--num-layers`` is not given."""
    if r.raw(SLIME_OLD) is not None:
        raise SpecError(f"{r.where}: --{SLIME_OLD} is no Megatron-LM argument since 2021 "
                        f"(dcef906978); use --{SLIME_KEYS[0]} or --{SLIME_KEYS[1]}")
    per_stage, per_rank = (r.integer(k, None) for k in SLIME_KEYS)
    given = [f"--{k}" for k, x in zip(SLIME_KEYS, (per_stage, per_rank), strict=True)
             if x is not None]  # fmt: skip
    if not given:
        return
    if len(given) > 1 or r.raw("pipeline-model-parallel-layout") is not None:
        raise SpecError(f"{r.where}: give one of {', '.join(given)} and "
                        "--pipeline-model-parallel-layout (Megatron-LM asserts it)")
    pp = r.integer("pipeline-model-parallel-size", 1)
    if per_rank is not None:
        v, given_text = per_rank, f"--{SLIME_KEYS[1]} {per_rank}"
    else:
        v, given_text = _from_layers(r, per_stage, layers, pp), f"--{SLIME_KEYS[0]} {per_stage}"
    if v == 1:  # Megatron-LM: None, no interleaving
        q.convert(given_text, "--virtual-stages", 1, "one chunk per rank: Megatron-LM sets no "
                  "virtual size (1F1B)", default=1)  # fmt: skip
        return
    overlap = not r.flag("no-overlap-p2p-communication", False)
    if pp <= (1 if overlap else 2):
        raise SpecError(f"{r.where}: {given_text} gives {v} virtual stages, which need "
                        f"--pipeline-model-parallel-size > {1 if overlap else 2}"
                        f"{'' if overlap else ' without p2p overlap'} (Megatron-LM asserts "
                        f"it); got {pp}")  # fmt: skip
    set_virtual_stages(q, v, given_text, pp, r.where)


def _from_layers(r: Reader, per_stage: int, layers: int, pp: int) -> int:
    """v = layers / (pp x per_stage), Megatron-LM's rule with its refusals."""
    if any(r.raw(f"decoder-{k}-pipeline-num-layers") is not None for k in ("first", "last")):
        raise SpecError(f"{r.where}: --{SLIME_KEYS[0]} with an uneven first/last stage: "
                        f"Megatron-LM asks for --{SLIME_KEYS[1]} there")  # fmt: skip
    n = r.integer("num-layers", None) or layers
    n += sum(r.flag(f"account-for-{k}-in-pipeline-split", False) for k in ("embedding", "loss"))
    if n % pp or (n // pp) % per_stage:
        raise SpecError(f"{r.where}: --{SLIME_KEYS[0]} {per_stage}: {n} layers over pp {pp} "
                        f"must give a multiple of {per_stage} per rank (Megatron-LM asserts "
                        "it)")  # fmt: skip
    return n // pp // per_stage


def nemo_rl_virtual_stages(r: Reader, q: ImportedQuery, pp: int) -> None:
    """NeMo RL's ``model_overrides`` size (main only) and the guard-only key (module
    docstring)."""
    v = r.integer(NEMO_KEY, None)
    guard = r.integer(NEMO_GUARD, None)
    if v is not None and guard is not None:
        raise SpecError(f"{r.where}: {NEMO_KEY} conflicts with {NEMO_GUARD} (NeMo RL's "
                        "_validate_model_override_conflicts refuses both); keep the override")
    if guard is not None:
        q.note(f"{NEMO_GUARD}={guard}: NeMo RL copies no such key onto the model (only "
               "model_overrides.virtual_pipeline_model_parallel_size); 1F1B")  # fmt: skip
    if v is not None:
        set_virtual_stages(q, v, f"{NEMO_KEY}={v}", pp, r.where)
    import_overlap(r, q, "policy.megatron_cfg.model_overrides.overlap_p2p_comm")
