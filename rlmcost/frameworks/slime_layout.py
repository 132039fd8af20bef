"""slime import: the Megatron trainer's layout, the SGLang engines and the placement, split
from :mod:`rlmcost.frameworks.slime` by purpose.

Sources (THUDM/slime at 624b824a): ``slime/utils/arguments.py`` (``slime_validate_args``:
what ``--colocate`` turns on), ``slime/ray/placement_group.py`` (``_get_placement_group_layout``:
the GPUs of the actor and of the engines; the critic on the actor's), ``slime/backends/
megatron_utils/arguments.py`` (``_set_default_megatron_args``: the distributed optimizer and
bf16 always), ``slime/backends/megatron_utils/actor.py`` (the log-prob forwards it runs),
``train_async.py`` (rollout one step ahead of training).
"""

from __future__ import annotations

from rlmcost.choices import EpDispatcher
from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.cpu_optimizer import hybrid_cpu_optimizer
from rlmcost.frameworks.fp8_train import import_fp8
from rlmcost.frameworks.megatron_split import set_split
from rlmcost.frameworks.moe_capacity import import_capacity
from rlmcost.frameworks.moe_dispatcher import MEGATRON_DEFAULT, import_dispatcher
from rlmcost.frameworks.p2p_overlap import SLIME_OFF, import_overlap
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.slime_args import ARGUMENTS, CRITIC, WHERE
from rlmcost.frameworks.slime_engine import engine
from rlmcost.frameworks.units import whole_steps

_MEGATRON = "slime/backends/megatron_utils/arguments.py _set_default_megatron_args"
_PLACEMENT = "slime/ray/placement_group.py _get_placement_group_layout"
_ACTOR = "slime/backends/megatron_utils/actor.py"

_IDLE = ("optimizer-idle", "params-idle", "grads-idle")
"""slime's ``--offload-train``: torch_memory_saver releases every GPU tensor of the Megatron
process (parameters, gradient buffers, optimizer states) while the engines generate and
restores it for training (slime/backends/megatron_utils/actor.py ``sleep``/``wake_up``;
docs/en/blogs/release_v0.1.0.md, "Fully Offloading Megatron"): rlmcost's between-phases
offload of all three."""


def actor_gpus(r: Reader) -> int:
    """``--actor-num-nodes x --actor-num-gpus-per-node`` (defaults 1 x 8, arguments.py)."""
    return r.integer("actor-num-nodes", 1) * r.integer("actor-num-gpus-per-node", 8)


def layout(r: Reader, q: ImportedQuery, steps: int | None) -> int:
    """The trainer's parallel layout, precision, recomputation, batching and optimizer;
    returns the optimizer steps per rollout (Megatron's default global batch when slime's
    arguments leave it open)."""
    tp = r.integer("tensor-model-parallel-size", 1)
    pp = r.integer("pipeline-model-parallel-size", 1)
    cp = r.integer("context-parallel-size", 1)
    ep = r.integer("expert-model-parallel-size", 1)
    etp = r.integer("expert-tensor-parallel-size", None)  # None: TP (Megatron-core)
    gpus = actor_gpus(r)
    if gpus % (tp * pp * cp):
        raise SpecError(f"{WHERE}: the actor's {gpus} GPUs (--actor-num-nodes x "
                        f"--actor-num-gpus-per-node) are not a multiple of tensor x pipeline x "
                        f"context parallel = {tp} x {pp} x {cp}")  # fmt: skip
    for flag, v in (("--tp", tp), ("--pp", pp), ("--cp", cp), ("--ep", ep)):
        if v > 1:
            q.set(flag, v)
    if ep > 1 and etp is not None and etp != tp:  # the expert grid only
        q.set("--etp", etp)
    if r.flag("sequence-parallel", False) and tp > 1:
        q.set("--sp")
    r.flag("use-distributed-optimizer", False)
    q.convert("(slime sets use_distributed_optimizer)", "--zero", "1",
              f"Megatron's distributed optimizer always ({_MEGATRON})")  # fmt: skip
    fp16 = r.flag("fp16", False)
    r.flag("bf16", False)
    q.convert("--fp16" if fp16 else "(slime sets bf16 = not fp16)", "--param-dtype",
              "fp16" if fp16 else "bf16", f"16-bit model, fp32 main params ({_MEGATRON})")
    _grad_buffer(r, q, fp16)
    q.set("--ckpt", _recompute(r, q))
    dp = gpus // (tp * pp * cp)
    steps = _batching(r, q, steps, dp)
    if r.text("moe-router-dtype", None) == "fp64":
        q.set("--router-dtype", "fp64")
    if r.raw("num-experts") and not r.flag("moe-permute-fusion", False):  # Megatron-LM's
        q.set("--no-moe-permute-fusion")  # store_true; slime's scripts/models/*.sh pass it
    # unset: Megatron-LM's argument default allgather (priced only with EP; moe_dispatcher)
    unset = EpDispatcher.ALLGATHER if ep > 1 else EpDispatcher.ALLTOALL
    how = import_dispatcher(r, q, "", MEGATRON_DEFAULT, ep, unset, sep="-")
    import_capacity(r, q, "moe-expert-capacity-factor", "moe-pad-expert-input-to-capacity", how)
    import_overlap(r, q, SLIME_OFF, negated=True)  # Megatron-LM's store_false (p2p_overlap)
    import_fp8(r, q, ("fp8-format", "fp8-recipe", "fp8-param-gather"), "delayed")  # Megatron-LM's
    set_split(r, q, pp, {"first": "decoder-first-pipeline-num-layers",
                         "last": "decoder-last-pipeline-num-layers",
                         "embedding": "account-for-embedding-in-pipeline-split",
                         "loss": "account-for-loss-in-pipeline-split",
                         "layout": "pipeline-model-parallel-layout"})  # fmt: skip
    if r.flag("use-rollout-routing-replay", False):
        q.set("--routing-replay")
    if r.flag("no-bias-swiglu-fusion", False):  # Megatron-LM's store_false, on unless given
        q.convert("--no-bias-swiglu-fusion", "--no-swiglu-fusion", None, "Megatron-LM's "
                  "bias_swiglu_fusion off (megatron/training/arguments.py), which "
                  "core_transformer_config_from_args passes on as TransformerConfig."
                  "bias_activation_fusion: the unfused act(gate) * up keeps 4 d_ff a token for "
                  "the backward, not 3 (rlmcost.placement.glu_kernel)", default=False)
    return steps


def _grad_buffer(r: Reader, q: ImportedQuery, fp16: bool) -> None:
    """Megatron-core's gradient buffer as Megatron-LM's ``validate_args`` sets it
    (megatron/training/arguments.py @1dcf0daf lines 710-723; rlmcost.placement.grad_buffer):
    for bf16 fp32 unless ``--grad-reduce-in-bf16`` or ``--main-grads-dtype bf16``, which
    Megatron refuses beside ``--accumulate-allreduce-grads-in-fp32``; for fp16 fp32 only with
    ``--accumulate-allreduce-grads-in-fp32``."""
    given = r.flag("accumulate-allreduce-grads-in-fp32", False)
    bf16_reduce = r.flag("grad-reduce-in-bf16", False)
    main = r.text("main-grads-dtype", "fp32", ("fp32", "bf16"))
    if fp16:
        fp32, how = given, "--fp16: fp32 only with --accumulate-allreduce-grads-in-fp32"
    elif given and main == "bf16":
        raise SpecError(f"{WHERE}: --main-grads-dtype bf16 with "
                        "--accumulate-allreduce-grads-in-fp32: Megatron-LM's validate_args "
                        "refuses it (main grads can only be fp32 then); drop one")  # fmt: skip
    else:
        fp32 = not bf16_reduce and main == "fp32"
        how = "bf16: Megatron-LM turns accumulate_allreduce_grads_in_fp32 on unless " \
            "--grad-reduce-in-bf16 or --main-grads-dtype bf16"  # fmt: skip
    words = [f for f, on in (("--accumulate-allreduce-grads-in-fp32", given),
                             ("--grad-reduce-in-bf16", bf16_reduce),
                             (f"--main-grads-dtype {main}", main != "fp32")) if on]
    q.convert(" ".join(words) or "(Megatron-LM's default)", "--grad-reduce-dtype",
              "fp32" if fp32 else "param", f"Megatron-core's gradient buffer, {how} "
              "(megatron/training/arguments.py validate_args, training.py get_model "
              "grad_reduce_in_fp32 @1dcf0daf)")  # fmt: skip


def _recompute(r: Reader, q: ImportedQuery) -> str:
    """Megatron's ``--recompute-granularity`` (full | selective; ``--recompute-activations``
    is selective) with ``--recompute-method`` / ``--recompute-num-layers``."""
    granularity = r.text("recompute-granularity", None, ("full", "selective"))
    if r.flag("recompute-activations", False) and granularity is None:
        granularity = "selective"
    method = r.text("recompute-method", None, ("uniform", "block"))
    layers = r.integer("recompute-num-layers", None)
    if granularity == "full" and method == "block":
        q.note(f"--recompute-method block --recompute-num-layers {layers}: only that many "
               "layers per stage recomputed; rlmcost recomputes every layer")  # fmt: skip
    elif granularity == "full" and layers and layers > 1:
        q.note(f"--recompute-num-layers {layers} (uniform): checkpoints every {layers} "
               "layers; rlmcost keeps one input per layer")  # fmt: skip
    return granularity or "none"


def _batching(r: Reader, q: ImportedQuery, steps: int | None, dp: int) -> int:
    mbs = r.integer("micro-batch-size", 1)
    if r.flag("use-dynamic-batch-size", False):
        budget = r.integer("max-tokens-per-gpu", None)
        if budget is None:
            raise SpecError(f"{WHERE}: --use-dynamic-batch-size needs --max-tokens-per-gpu "
                            "(slime_validate_args asserts it)")  # fmt: skip
        q.convert(f"--max-tokens-per-gpu {budget}", "--max-tokens-per-gpu", budget,
                  "tokens per micro-batch per GPU after the context-parallel split "
                  "(slime/utils/dp_schedule.py: max_tokens_per_gpu x cp_size per bin)")
        forward = r.integer("log-probs-max-tokens-per-gpu", None)
        if forward is not None and forward != budget:
            q.convert(f"--log-probs-max-tokens-per-gpu {forward}", "--forward-max-tokens-per-gpu",
                      forward, "tokens per micro-batch per GPU of the log-prob forwards")
    else:
        r.integer("max-tokens-per-gpu", None)
        q.convert(f"--micro-batch-size {mbs}", "--micro-batch", mbs,
                  "samples per GPU per forward/backward", default=1)  # fmt: skip
    if steps is not None:
        return steps
    gbs = mbs * dp
    samples = r.integer("rollout-batch-size", 1) * r.integer("n-samples-per-prompt", 1)
    steps = whole_steps(samples, gbs, "rollout_batch_size x n_samples_per_prompt",
                        "Megatron's default global batch (micro_batch_size x data-parallel "
                        "ranks)", WHERE)  # fmt: skip
    q.convert("no --global-batch-size", "--mini-batches", steps,
              f"Megatron's default global batch, micro-batch x data-parallel ranks = {mbs} x "
              f"{dp} = {gbs} samples: {samples:,} / {gbs} = {steps} optimizer steps",
              default=1)  # fmt: skip
    return steps


def _optimizer_offload(r: Reader, q: ImportedQuery, offload: list[str]) -> None:
    """Megatron's ``--optimizer-cpu-offload`` at ``--optimizer-offload-fraction`` (Megatron's
    default 1): :func:`rlmcost.frameworks.cpu_optimizer.hybrid_cpu_optimizer`."""
    if not r.flag("optimizer-cpu-offload", False):
        r.raw("optimizer-offload-fraction")
        return
    if not r.flag("use-precision-aware-optimizer", False):  # megatron/training/arguments.py
        raise SpecError(f"{WHERE}: --optimizer-cpu-offload needs --use-precision-aware-"
                        "optimizer (Megatron-LM's argument check refuses it without)")
    fraction = r.number("optimizer-offload-fraction", 1.0)
    hybrid_cpu_optimizer(q, offload, fraction, f"{WHERE}: --optimizer-offload-fraction")


def placement(r: Reader, q: ImportedQuery, is_async: bool, has_ref: bool,
              teacher: bool = False) -> None:  # fmt: skip
    """GPUs, groups, offload and the engines, as ``_get_placement_group_layout`` places them:
    with ``--colocate`` the engines share the actor's GPUs (max of the two counts) and
    offload_train / offload_rollout default to on; otherwise the engines take
    ``--rollout-num-gpus`` GPUs of their own beside the actor's, the critic (ppo) on the
    actor's (``result["critic"] = result["actor"]``), an OPD teacher too (``teacher``)."""
    gpus = actor_gpus(r)
    colocate = r.flag("colocate", False)
    rollout = r.integer("rollout-num-gpus", None, lo=0)
    r.integer("num-gpus-per-node", 8)  # how the engines pack onto nodes: no cost of its own
    partial = r.flag("partial-rollout", False)
    every = r.flag("offload", False)
    train = r.raw("offload-train")
    roll = r.raw("offload-rollout")
    train = True if every else (colocate if train is None else train)
    roll = True if every else (colocate if roll is None else roll)
    if q.algorithm == CRITIC and not train:
        train = True
        q.note(f"ppo: slime offloads the trainer between phases whenever it trains a critic "
               f"(use_critic sets offload_train, {ARGUMENTS} slime_validate_args)")
    for key in ("debug-rollout-only", "debug-train-only"):
        if r.flag(key, False):
            q.note(f"--{key}: slime runs one half only; rlmcost costs the whole iteration")
    if r.flag("keep-old-actor", False):
        q.note("--keep-old-actor: a second copy of the actor's weights in host memory (not "
               "modelled)")  # fmt: skip
    engine(r, q)
    tp = r.integer("rollout-num-gpus-per-engine", 1)
    rollout = _external(r, q, rollout, tp)
    offload = list(_IDLE) if train else []
    _optimizer_offload(r, q, offload)
    q.set("--offload", ",".join(offload))
    q.set("--sleep" if roll else "--no-sleep")
    if has_ref or teacher:
        q.set("--offload-idle")
        both = " and the ".join(w for w, on in (("reference's", has_ref), ("teacher's", teacher))
                                if on)  # fmt: skip
        q.note(f"the {both} weights wait in host memory and are copied into the actor's "
               "model for each forward (slime's weights_backuper tags, "
               f"{_ACTOR}): --offload-idle")  # fmt: skip
    if colocate:
        if partial:
            q.note("--partial-rollout: samples aborted at a rollout's end resume in a later "
                   "one; rlmcost streams only under train_async.py")  # fmt: skip
        if is_async:
            raise SpecError(f"{WHERE}: train_async.py refuses --colocate (\"Colocation is not "
                            "supported for async training.\")")  # fmt: skip
        rollout = gpus if rollout is None else rollout
        if rollout == 0 or rollout % tp:
            raise SpecError(f"{WHERE}: --rollout-num-gpus {rollout} must be a positive "
                            f"multiple of --rollout-num-gpus-per-engine {tp}")  # fmt: skip
        if rollout != gpus:
            q.note(f"--colocate with {rollout} engine GPUs and {gpus} actor GPUs: rlmcost "
                   f"puts the engines on all {max(rollout, gpus)} (it colocates on every GPU)")
        _miles_transfer(r, q)  # broadcast only (miles refuses the others with --colocate)
        q.convert("actor_num_nodes x actor_num_gpus_per_node" + (
            " and --rollout-num-gpus" if rollout != gpus else ""), "--gpus",
            max(gpus, rollout), f"engines and trainer on the same GPUs (--colocate; "
            f"{_PLACEMENT}); offload_train={train}, offload_rollout={roll}")  # fmt: skip
        return
    if rollout is None or rollout == 0:
        raise SpecError(f"{WHERE}: without --colocate give --rollout-num-gpus (the engines' "
                        "GPUs beside the actor's) or --rollout-external-engine-addrs")
    _weight_transport(r, q)
    if rollout % tp:
        raise SpecError(f"{WHERE}: --rollout-num-gpus {rollout} is not a multiple of "
                        f"--rollout-num-gpus-per-engine {tp}")  # fmt: skip
    roles = "+".join(["actor", *(["reference"] if has_ref else []),
                      *(["critic"] if q.algorithm == CRITIC else []),
                      *(["teacher"] if teacher else [])])  # fmt: skip
    q.convert("--rollout-num-gpus and the actor's GPUs", "--groups",
              f"rollout={rollout}[tp={tp}],{roles}={gpus}",
              f"the engines on GPUs of their own beside the trainer's ({_PLACEMENT})")
    q.set("--gpus", gpus + rollout)
    if is_async:
        q.set("--placement", "async")
        q.convert("train_async.py", "--staleness", 1, "the next rollout generates while "
                  "this one trains (train_async.py), one step behind")  # fmt: skip
    if partial:
        if is_async:
            q.set("--partial-rollout")
        q.note("--partial-rollout: samples aborted at a rollout's end resume in a later one"
               + ("" if is_async else "; rlmcost streams only under train_async.py"))


def _external(r: Reader, q: ImportedQuery, rollout: int | None, tp: int) -> int | None:
    """Engines launched outside slime (``--rollout-external-engine-addrs``): slime asks each
    server for its GPU count and sets ``rollout_num_gpus`` to their sum
    (slime/backends/sglang_utils/external.py ``apply_external_engine_info_to_args``); the
    launch line cannot ask, so each engine has ``--rollout-num-gpus-per-engine`` GPUs."""
    addrs = r.raw("rollout-external-engine-addrs")
    if not addrs:
        return rollout
    if r.flag("colocate", False):
        raise SpecError(f"{WHERE}: --rollout-external-engine-addrs runs the engines outside "
                        "slime; drop --colocate")  # fmt: skip
    found = len(addrs) * tp
    q.note(f"--rollout-external-engine-addrs: {len(addrs)} engines launched outside slime, "
           f"{tp} GPUs each (--rollout-num-gpus-per-engine; slime asks the servers, "
           "slime/backends/sglang_utils/external.py): their GPUs beside the actor's")
    return found


def _weight_transport(r: Reader, q: ImportedQuery) -> None:
    """``--update-weight-transport disk``: the trainer writes a Hugging Face checkpoint under
    ``--update-weight-disk-dir`` and every engine reloads it (``update_weights_from_disk``,
    arguments.py help), rlmcost's ``--refit disk``; with ``--update-weight-mode delta`` only
    the changed tensors are written, but each host still reloads its full local checkpoint, so
    the full write is an upper bound. ``nccl`` (the default) is rlmcost's broadcast."""
    mode = r.text("update-weight-mode", "full", ("full", "delta"))
    given = "--update-weight-transport disk"
    if _miles_transfer(r, q) == "disk-delta":  # miles' name for a delta through the disk
        mode, given = "delta", "--update-weight-transfer-mode disk-delta"
    elif r.text("update-weight-transport", "nccl", ("nccl", "disk")) != "disk":
        return
    q.set("--refit", "disk")
    q.note(f"{given}: a checkpoint through shared storage, reloaded by every engine (--refit "
           "disk)" + ("; a delta writes only the changed tensors, rlmcost the full checkpoint "
                      "(an upper bound)" if mode == "delta" else ""))  # fmt: skip


def _miles_transfer(r: Reader, q: ImportedQuery) -> str:
    """miles' ``--update-weight-transfer-mode`` (radixark/miles miles/utils/arguments.py and
    miles/backends/megatron_utils/actor.py @31f1ca961; engines apart only): ``broadcast``
    (the default, slime's NCCL broadcast), ``disk-delta`` (the changed bytes through
    ``--update-weight-disk-dir``, each engine reloading its host-local checkpoint: as slime's
    disk transport with delta mode) or ``p2p`` (``UpdateWeightP2P``: RDMA from the training
    ranks straight to the engines' GPUs), which rlmcost times as the broadcast."""
    how = r.text("update-weight-transfer-mode", "broadcast", ("broadcast", "p2p", "disk-delta"))
    if how != "broadcast" and r.flag("colocate", False):
        raise SpecError(f"{r.where}: --update-weight-transfer-mode {how} is not compatible with "
                        "--colocate (miles/utils/arguments.py); use broadcast or drop --colocate")
    if how == "p2p":
        q.note("--update-weight-transfer-mode p2p: miles' point-to-point RDMA weight transfer "
               "(UpdateWeightP2P), timed as slime's NCCL broadcast (not modelled apart)")
    return str(how)
