"""verl's batching beyond the trainer's: DAPO's dynamic sampling rounds, the log-prob
forwards' micro-batches and how the FSDP workers' passes hold their sequences and activations
(padding, PrefixGrouper, activation offload), as
:func:`rlmcost.frameworks.verl.import_verl` reads them (keys of
verl/trainer/config/ppo_trainer.yaml and the DAPO recipe's dapo_trainer.yaml)."""

from __future__ import annotations

from fractions import Fraction

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

ACTOR = "actor_rollout_ref.actor"
ROLLOUT = "actor_rollout_ref.rollout"
MODEL = "actor_rollout_ref.model"


def dynamic_sampling(r: Reader, q: ImportedQuery, kl: bool) -> bool:
    """DAPO's dynamic sampling as verl's DAPO trainer runs it (recipe/dapo/dapo_ray_trainer.py
    ``fit`` at volcengine/verl b25bb7d4f; docs/algo/dapo.md "Dynamic Sampling"): each round
    generates ``data.gen_batch_size`` prompts x ``rollout.n`` in one generate call (the
    dataloader's batch, ray_trainer.py ``_create_dataloader``), drops the groups whose
    ``filter_groups.metric`` is equal over all responses (std 0), and starts another round until
    ``data.train_batch_size`` groups are kept (at most ``max_num_gen_batches``); it trains
    those. That is rlmcost's dapo with ``--oversample`` = rounds x gen / train and one call of
    gen x n / replicas sequences per engine replica per round (``--sequences-per-call``). The
    rounds follow from the share of groups kept, which no config says: one round is assumed
    (the fewest), stated in the notes. True when the config turns it on."""
    if not r.flag("algorithm.filter_groups.enable", False):
        return False
    if q.algorithm != "rlvr":
        raise SpecError(
            f"{r.where}: algorithm.filter_groups.enable with adv_estimator "
            f"{r.text('algorithm.adv_estimator', 'gae')!r} and reward_model.enable "
            f"{r.flag('reward_model.enable', False)}: rlmcost models dynamic sampling on "
            "GRPO-style estimators with a reward function (its dapo); turn filter_groups off"
        )
    train = r.integer("data.train_batch_size", 1024)
    gen = r.integer("data.gen_batch_size", train)
    cap = r.integer("algorithm.filter_groups.max_num_gen_batches", 0, lo=0)
    r.raw("algorithm.filter_groups.metric")
    rho = Fraction(max(gen, train), train)
    q.algorithm = "dapo"
    q.convert(f"data.gen_batch_size={gen}", "--oversample", rho,
              f"generated / trained prompts: max(gen_batch_size, train_batch_size) / "
              f"train_batch_size = {float(rho):g}, one sampling round", default=None)  # fmt: skip
    gpus = r.integer("trainer.n_gpus_per_node", 8) * r.integer("trainer.nnodes", 1)
    replicas = max(1, gpus // r.integer(f"{ROLLOUT}.tensor_model_parallel_size", 2))
    per_call = -(-gen * r.integer(f"{ROLLOUT}.n", 1) // replicas)
    q.set("--sequences-per-call", per_call)
    q.note(f"filter_groups (DAPO dynamic sampling): rounds of {gen} prompts until {train} "
           "groups with differing rewards are kept" + (f", at most {cap}" if cap else "")
           + "; one round assumed (the share kept is not in the config; k rounds: "
           f"--oversample {{k x {gen} / {train}}}); a round is one generate call, {per_call} "
           f"sequences on each of {replicas} engine replicas (--sequences-per-call; recompute "
           "it if --gpus or --rollout-tp change)")
    if kl:
        q.note("KL with filter_groups: rlmcost's dapo has no reference (its forward not counted)")
    return True


def forward_batching(r: Reader, q: ImportedQuery) -> None:
    """The old-log-prob forward's batching (verl/workers/fsdp_workers.py and
    megatron_workers.py ``compute_log_prob`` at volcengine/verl b25bb7d4f read
    ``rollout.log_prob_use_dynamic_bsz``, ``log_prob_max_token_len_per_gpu`` and
    ``log_prob_micro_batch_size_per_gpu``; rollout.yaml defaults the first two to the actor's
    use_dynamic_bsz and ppo_max_token_len_per_gpu): --forward-max-tokens-per-gpu or
    --forward-micro-batch when it differs from the trainer's. rlmcost gives every forward one
    batching; the reference's own keys (``ref.log_prob_*``) are said in a note."""
    dynamic = r.flag(f"{ROLLOUT}.log_prob_use_dynamic_bsz", r.flag(f"{ACTOR}.use_dynamic_bsz",
                                                                     False))  # fmt: skip
    if dynamic:
        train = r.integer(f"{ACTOR}.ppo_max_token_len_per_gpu", 16384)
        budget = r.integer(f"{ROLLOUT}.log_prob_max_token_len_per_gpu", train)
        if budget != train:
            q.convert(f"{ROLLOUT}.log_prob_max_token_len_per_gpu={budget}",
                      "--forward-max-tokens-per-gpu", budget,
                      "tokens per micro-batch per GPU of the log-prob forwards")  # fmt: skip
        key, mine = "ref.log_prob_max_token_len_per_gpu", budget
    else:
        per_gpu = r.integer(f"{ROLLOUT}.log_prob_micro_batch_size_per_gpu", None)
        if per_gpu is not None and per_gpu != r.raw(f"{ACTOR}.ppo_micro_batch_size_per_gpu"):
            q.convert(f"{ROLLOUT}.log_prob_micro_batch_size_per_gpu={per_gpu}",
                      "--forward-micro-batch", per_gpu,
                      "sequences per micro-batch per GPU of the log-prob forwards")  # fmt: skip
        key, mine = "ref.log_prob_micro_batch_size_per_gpu", per_gpu
    ref = r.integer(f"actor_rollout_ref.{key}", None)
    if ref is not None and mine is not None and ref != int(mine):
        q.note(f"actor_rollout_ref.{key} {ref}: the reference forward batched as the "
               f"old-log-prob forward ({mine}); rlmcost gives every forward one batching")


def passes(r: Reader, q: ImportedQuery, strategy: str, day: str | None = None) -> None:
    """How the FSDP workers run their passes: PrefixGrouper (:func:`prefix_grouper`), activation
    offload (:func:`activation_offload`) and the padding. ``model.use_remove_padding``: False
    makes the FSDP workers run the model on the padded
    (batch, prompt + response) tensors (verl/workers/actor/dp_actor.py ``_forward_micro_batch``
    @b25bb7d4f, "not using rmpad"): ``--padded``. Its default is the verl of ``day``'s (None:
    the current verl's): False through v0.6.1, True from v0.7.0
    (:data:`~rlmcost.frameworks.verl_versions.REMOVE_PADDING`, PR 4461). The Megatron workers
    pack the sequences either way (verl/models/mcore/model_forward.py ``gptmodel_forward``,
    ``pack_seqs=True``)."""
    from rlmcost.frameworks.verl_versions import REMOVE_PADDING

    default = day is None or day >= REMOVE_PADDING
    given = r.has(f"{MODEL}.use_remove_padding")
    rmpad = r.flag(f"{MODEL}.use_remove_padding", default)
    grouper = prefix_grouper(r, q, strategy, rmpad)
    activation_offload(r, q, strategy)
    if strategy == "megatron":
        return
    if rmpad:
        q.note("use_remove_padding: padding removed; rlmcost's sequences are S + T tokens "
               "without padding already" + ("" if given else " (verl's default from v0.7.0, "
                                            "PR 4461: model/hf_model.yaml)"))  # fmt: skip
        return
    q.set("--padded")
    q.note("use_remove_padding false" + ("" if given else " (verl's default through v0.6.1)")
           + ": the FSDP workers run each micro-batch on the padded (batch, prompt + "
           "response) tensors; --padded prices every sequence of the training and log-prob "
           "passes at the prompt + the longest response"
           + (" (the critic's; the actor's and reference's rows are PrefixGrouper's)"
              if grouper else ""))  # fmt: skip


def prefix_grouper(r: Reader, q: ImportedQuery, strategy: str, rmpad: bool) -> bool:
    """``actor.use_prefix_grouper`` (PR 4368): ``--prefix-grouper`` where verl's FSDP actor takes
    that path, True then. ``DataParallelPPOActor._forward_micro_batch``
    (verl/workers/actor/dp_actor.py @b178a3cd) runs it only without ``use_remove_padding``,
    Ulysses, fused kernels and dynamic batching (``can_use_pg``) and falls back silently
    otherwise; the Megatron workers do not read the key. Either way a note says so."""
    if not r.flag(f"{ACTOR}.use_prefix_grouper", False):
        return False
    blockers = [key for key, on in (
        ("use_remove_padding", rmpad),
        ("ulysses_sequence_parallel_size > 1",
         r.integer(f"{ACTOR}.ulysses_sequence_parallel_size", 1) > 1),
        ("use_fused_kernels", r.flag(f"{MODEL}.use_fused_kernels", False)),
        ("use_dynamic_bsz", r.flag(f"{ACTOR}.use_dynamic_bsz", False)),
    ) if on]  # fmt: skip
    if strategy == "megatron":
        q.note("use_prefix_grouper: read by verl's FSDP actor only (dp_actor.py); the Megatron "
               "workers pack the sequences as before")  # fmt: skip
        return False
    if blockers:
        q.note(f"use_prefix_grouper with {', '.join(blockers)}: verl's actor falls back to its "
               "usual passes (dp_actor.py _forward_micro_batch, can_use_pg), as priced")
        return False
    q.set("--prefix-grouper")
    q.note("use_prefix_grouper: the actor's and reference's log-prob forwards and updates run "
           "one row per group of each micro-batch, the prompt once (--prefix-grouper; "
           "rlmcost.placement.prefix_grouper)")  # fmt: skip
    return True


def group_of_one(r: Reader, q: ImportedQuery) -> None:
    """A group method with ``rollout.n=1``, as verl runs it: ``--group 1`` (rlmcost takes it
    under ``--framework verl``, :data:`rlmcost.frameworks.presets.GROUP_OF_ONE`) and a note.

    verl's group estimators take a group of one as mean 0 (GRPO's: std 1; verl/trainer/ppo/
    core_algos.py ``compute_grpo_outcome_advantage`` @b178a3cd lines 314-316, RLOO's line
    511), so each response's advantage is its own score: REINFORCE without a baseline. The
    step's invocations do not depend on the baseline: the method's own at K = 1. Refused
    where verl refuses it (``grpo_passk``: "Pass@k requires at least 2 samples per group",
    line 405) and for DAPO's dynamic sampling, which keeps only groups whose rewards differ
    (a group of one never does)."""
    est = r.text("algorithm.adv_estimator", "gae")
    if est == "grpo_passk" or q.algorithm == "dapo":
        why = ("verl refuses it (core_algos.py compute_grpo_passk_outcome_advantage: \"Pass@k "
               "requires at least 2 samples per group\")" if est == "grpo_passk" else
               "filter_groups keeps only groups whose rewards differ, which a group of one "
               "never has")  # fmt: skip
        raise SpecError(f"{r.where}: {ROLLOUT}.n=1 with adv_estimator {est}: {why}; give "
                        f"{ROLLOUT}.n=2 or more after the script")  # fmt: skip
    what = ("REINFORCE++ whitens the advantages over the batch, no group (core_algos.py "
            "compute_reinforce_plus_plus_outcome_advantage @b178a3cd)"
            if est == "reinforce_plus_plus" else
            "verl's group estimators take a group of one as mean 0 (GRPO's: and std 1; "
            "core_algos.py compute_grpo_outcome_advantage @b178a3cd), so each response's "
            "advantage is its own score (REINFORCE without a baseline)")  # fmt: skip
    q.note(f"{ROLLOUT}.n=1 with adv_estimator {est}: {what}; priced as {q.algorithm}'s "
           "invocations at --group 1, which rlmcost takes under --framework verl (the "
           "invocations do not depend on the baseline)")


def activation_offload(r: Reader, q: ImportedQuery, strategy: str) -> None:
    """``model.enable_activation_offload``: verl's FSDP workers offload the update's saved
    activations layer by layer (verl/workers/fsdp_workers.py ``enable_activation_offloading``
    @b178a3cd, the actor's and, from ``critic.model``, the critic's): ``--activation-offload``;
    the Megatron workers do not read it. rlmcost gives the actor and critic one trainer layout,
    so a critic that differs is said in a note."""
    actor = r.flag(f"{MODEL}.enable_activation_offload", False)
    critic = r.flag("critic.model.enable_activation_offload", False)
    if strategy == "megatron":
        if actor or critic:
            q.note("enable_activation_offload: read by verl's FSDP workers only; not priced")
        return
    if actor:
        q.set("--activation-offload")
        q.note("enable_activation_offload: each update's saved activations go to pinned host "
               "memory layer by layer and come back for the backward, two layers' on the GPU "
               "(verl/utils/activation_offload.py; --activation-offload: rlmcost.parallel."
               "act_offload, the copies beyond the compute rlmcost.perf.act_offload)")
    if critic != actor and q.algorithm in ("ppo", "vapo"):
        q.note(f"critic.model.enable_activation_offload {critic}: rlmcost gives the critic the "
               f"actor's trainer layout ({actor})")

