"""slime import: the arguments of slime's ``train.py`` / ``train_async.py`` (Megatron-LM's
arguments plus slime's own) as an rlmcost query.

Source: THUDM/slime at commit 624b824a (2026-08-21), ``slime/utils/arguments.py``
(the arguments, their defaults and ``slime_validate_args``), ``slime/ray/placement_group.py``
(which GPUs each part takes), ``slime/backends/megatron_utils/arguments.py`` (the Megatron
defaults slime forces) and ``slime/backends/megatron_utils/actor.py`` (which forwards run).

Units (arguments.py help texts):

* ``--rollout-batch-size`` counts prompts; ``--n-samples-per-prompt`` samples each, so one
  rollout makes rollout_batch_size x n_samples_per_prompt samples (``--batch``, ``--group``);
* ``--global-batch-size`` counts samples ("the gbs is of sample, not of prompts"), so the
  optimizer steps per rollout are rollout_batch_size x n_samples_per_prompt /
  global_batch_size (``--mini-batches``); ``--num-steps-per-rollout`` gives that count;
* ``--micro-batch-size`` is samples per GPU; with ``--use-dynamic-batch-size``,
  ``--max-tokens-per-gpu`` is tokens per GPU after the context-parallel split
  (slime/utils/dp_schedule.py packs ``max_tokens_per_gpu x cp_size`` per bin).

The placement, engine and trainer layout are read in :mod:`rlmcost.frameworks.slime_layout`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.argv import parse_argv, word_list
from rlmcost.frameworks.ckpt_quant import rollout_quant, split_quantized
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.miles_lora import miles_lora
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.slime_args import ARGS, ARGUMENTS, COST_FREE, CRITIC, SHAPE, WHERE
from rlmcost.frameworks.slime_layout import layout, placement
from rlmcost.frameworks.slime_opd import import_opd
from rlmcost.frameworks.units import whole_steps
from rlmcost.frameworks.virtual_pipeline import slime_virtual_stages

if TYPE_CHECKING:
    from rlmcost.specs.model import ModelSpec

_ENTRY = ("train.py", "train_async.py")
_PREFIX = ("python", "python3", "-u", "--")

_ESTIMATORS = {
    "grpo": "rlvr", "gspo": "rlvr", "cispo": "rlvr", "reinforce_plus_plus": "rlvr",
    "reinforce_plus_plus_baseline": "rlvr", "ppo": "vapo",
}  # fmt: skip
"""``--advantage-estimator`` (arguments.py choices) -> rlmcost's algorithm. slime scores with
reward functions or a reward service (``--rm-type``, ``--rm-url``, ``--custom-rm-path``;
slime/rollout/rm_hub/), never a reward model on its GPUs, so GRPO-like runs are rlmcost's rlvr
(GRPO with a verifier) and ppo its vapo (PPO's critic, a verifier), as the verl, NeMo RL, TRL
and OpenRLHF importers map verifier rewards. Every estimator but ppo runs the same invocations
(no critic: ``args.use_critic = advantage_estimator == "ppo"``, slime_validate_args); they
differ in the advantage and the loss only."""

def split_command(argv: list[str]) -> tuple[list[str], bool]:
    """The argument tokens after the entry script, and whether it is ``train_async.py``.

    Everything up to and including a ``train.py`` / ``train_async.py`` token is skipped (a
    ``ray job submit ... -- python3 train.py`` prefix too); without one, a leading
    ``python``/``python3``/``-u``/``--`` is."""
    tokens = list(argv)
    for i, tok in enumerate(tokens):
        if Path(tok).name in _ENTRY:
            return tokens[i + 1 :], Path(tok).name == "train_async.py"
    while tokens and tokens[0] in _PREFIX:
        tokens.pop(0)
    return tokens, False


def parse_args(argv: list[str]) -> tuple[dict[str, Any], bool]:
    """The arguments as a mapping of raw values, and whether the entry is train_async.py."""
    tokens, is_async = split_command(argv)
    return parse_argv(tokens, ARGS, WHERE), is_async


def import_slime(
    argv: list[str], model: str | ModelSpec | None = None, prompt_len: int | None = None
) -> ImportedQuery:
    """The rlmcost query of a slime ``train.py`` / ``train_async.py`` command line
    (``model``: the actor's model, overriding ``--hf-checkpoint``: a name, config.json or
    spec; ``prompt_len``: prompt tokens where ``--rollout-max-prompt-len`` is not given)."""
    args, is_async = parse_args(word_list(argv, WHERE))
    r = Reader(args, WHERE)
    q = ImportedQuery("slime", "train_async.py arguments" if is_async else "train.py arguments")
    q.note(f"read as slime's {ARGUMENTS} and slime/ray/placement_group.py define them")
    spec = _model(r, q, model)
    layers = spec.n_layers
    if spec.linear_layers:  # (rlmcost.perf.linear_mixer; Behaviour.linear_mixer_tp_replicated)
        q.note(f"{spec.linear_layers} Gated DeltaNet layers: slime's Megatron spec runs them as "
               "nn.Linear layers inside HuggingfaceAttention, the input gathered over the TP "
               "group and every head on every TP rank (slime_plugins/models/qwen3_5.py, "
               "hf_attention.py; miles the same), priced so (rlmcost.perf.linear_mixer) and "
               "held whole in each rank's weights, gradients and optimizer states")
    has_ref = _algorithm(r, q)
    teacher = import_opd(r, q)  # --use-opd: a teacher beside the reference (slime_opd)
    steps = _workload(r, q, prompt_len)
    steps = layout(r, q, steps)
    slime_virtual_stages(r, q, layers)
    _old_logprobs(r, q, steps)
    placement(r, q, is_async, has_ref, teacher)
    miles_lora(r, q)
    q.ignored = [f"--{k}" for k in r.unread(tuple(COST_FREE))]
    q.near = {f"--{k}": f"--{v}" for k, v in r.near_misses(tuple(COST_FREE)).items()}
    return q


def _model(r: Reader, q: ImportedQuery, given: str | ModelSpec | None) -> ModelSpec:
    """The actor's model: ``given``, else ``--hf-checkpoint`` (a folder with a config.json on
    this machine, else its last path part as a built-in name or Hugging Face id), else the
    one built-in whose shape the Megatron model arguments (``--num-layers``, ``--hidden-size``,
    ...) give; the shape arguments are checked against the model either way."""
    from rlmcost.specs.registry import get_model, is_path, models

    ckpt = r.text("hf-checkpoint", None)
    shape = {k: r.raw(k) for k in SHAPE}
    gqa = r.flag("group-query-attention", False)
    r.flag("multi-latent-attention", False)
    spec: ModelSpec
    if given is not None:
        spec = get_model(given)
        q.set("--model", given if isinstance(given, str) else spec.name)
    elif ckpt and is_path(ckpt) and (Path(ckpt) / "config.json").exists():
        q.convert(f"--hf-checkpoint {ckpt}", "--model", ckpt, "its config.json")
        spec = get_model(ckpt)
    else:
        name = Path(ckpt.rstrip("/")).name if ckpt else ""
        named = _builtin(name)
        if named is not None:
            spec = named
            q.convert(f"--hf-checkpoint {ckpt}", "--model", spec.name,
                      f"the built-in model of Hugging Face name {name}")  # fmt: skip
        else:
            same = [m for m in models() if not _mismatch(m, shape, gqa)]
            if len(same) > 1 and len({m.arch().with_(name="") for m in same}) == 1:
                names = ", ".join(m.name for m in same)
                q.note(f"the Megatron model arguments give the shape of {names}, which differ "
                       f"only in their context: {same[0].name} taken (give --model for another)")
                same = same[:1]
            if len(same) != 1 or not any(v is not None for v in shape.values()):
                what = (f"--hf-checkpoint {ckpt} is not a built-in model" if ckpt
                        else "no --hf-checkpoint names the model")  # fmt: skip
                raise SpecError(
                    f"{WHERE}: {what} and the Megatron model arguments match {len(same)} "
                    "built-in models; give `rlmcost import slime --model NAME|config.json -- ...`"
                )
            spec = same[0]
            q.convert("--num-layers, --hidden-size, ... (Megatron model arguments)", "--model",
                      spec.name, "the built-in model of that shape")  # fmt: skip
    rollout_quant(q, ckpt)  # the rollout serves --hf-checkpoint whatever the model says
    bad = _mismatch(spec, shape, gqa)
    if bad:
        q.note(f"the Megatron model arguments differ from {spec.name}: {bad}; rlmcost costs "
               f"{spec.name} (give --model with a config.json of the trained shape)")  # fmt: skip
    return spec


def _builtin(name: str) -> ModelSpec | None:
    """The built-in model of that name or Hugging Face id, or of that name without a
    quantized checkpoint's suffix (``Qwen3-4B-FP8``: :mod:`~rlmcost.frameworks.ckpt_quant`)
    or a precision word (``DeepSeek-R1-bf16``, a dequantized copy: ``DTYPE_SUFFIX``), else
    None."""
    from rlmcost.frameworks.model_path import DTYPE_SUFFIX
    from rlmcost.specs.registry import get_model

    for n in dict.fromkeys((name, split_quantized(name)[0], DTYPE_SUFFIX.sub("", name))):
        try:
            return get_model(n) if n else None
        except SpecError:
            continue
    return None


def _mismatch(spec: Any, shape: dict[str, Any], gqa: bool) -> str:
    """The Megatron shape arguments given that disagree with ``spec`` ('' when none)."""
    want: dict[str, int] = {
        "num-layers": spec.n_layers, "hidden-size": spec.d_model,
        "num-attention-heads": spec.n_heads, "vocab-size": spec.vocab,
        "num-experts": spec.n_experts,
    }  # fmt: skip
    if spec.n_experts:
        want |= {"moe-ffn-hidden-size": spec.d_expert, "moe-router-topk": spec.top_k}
    if not spec.n_experts or spec.first_dense_layers:
        want["ffn-hidden-size"] = spec.d_ff
    if spec.kv_lora_rank is None:
        want["num-query-groups"] = spec.n_kv_heads if gqa else spec.n_heads
    out = []
    for key, value in want.items():
        raw = shape.get(key)
        if key == "num-query-groups" and not gqa:
            raw = shape.get("num-attention-heads")
        if key == "num-experts" and raw is None:
            raw = 0 if any(shape.get(k) is not None for k in ("num-layers", "hidden-size")) \
                else None  # fmt: skip
        if raw is not None and int(raw) != value:
            out.append(f"--{key} {raw} (model: {value})")
    return ", ".join(out)


def _algorithm(r: Reader, q: ImportedQuery) -> bool:
    """Algorithm, reference and reward; True when the reference model runs."""
    if r.text("loss-type", "policy_loss") == "sft_loss":  # slime's scripts/run-*-sft.sh
        raise SpecError(f"{WHERE}: --loss-type sft_loss: supervised fine-tuning ({ARGUMENTS} "
                        "--loss-type), which rlmcost does not price; rlmcost import slime reads "
                        "RL launches")  # fmt: skip
    est = r.text("advantage-estimator", "grpo", tuple(_ESTIMATORS))
    q.algorithm = _ESTIMATORS[est]
    if est not in ("grpo", "ppo"):
        q.note(f"--advantage-estimator {est}: no critic (use_critic is ppo only, {ARGUMENTS} "
               "slime_validate_args); the invocations of GRPO (rlmcost's rlvr)")  # fmt: skip
    n = r.integer("n-samples-per-prompt", 1)
    if n < 2 and q.algorithm != CRITIC:
        raise SpecError(f"{WHERE}: --n-samples-per-prompt {n} with --advantage-estimator {est}: "
                        "rlmcost's group-baseline algorithms need at least 2 samples per prompt")
    kl_coef = r.number("kl-coef", 0.0)
    kl_loss = r.flag("use-kl-loss", False)
    loss_coef = r.number("kl-loss-coef", 0.0)
    if kl_coef and loss_coef:
        raise SpecError(f"{WHERE}: --kl-coef and --kl-loss-coef are both set; slime allows "
                        "one (slime_validate_args)")  # fmt: skip
    has_ref = kl_coef != 0 or kl_loss
    q.set("--kl" if has_ref else "--no-kl")
    if kl_loss and not loss_coef and not kl_coef:
        q.note("--use-kl-loss with --kl-loss-coef 0: slime still loads the reference and runs "
               "its forward (slime/ray/placement_group.py with_ref = kl_coef != 0 or "
               "use_kl_loss; actor.py computes ref_log_probs): --kl")  # fmt: skip
    rm = r.text("rm-type", None)
    url = r.text("rm-url", None)
    custom = r.text("custom-rm-path", None)
    what = f"--rm-type {rm}" if rm else ("--custom-rm-path" if custom else "the default reward")
    if url:
        what += f", --rm-url {url} (a reward server outside the cluster)"
    q.note(f"{what}: rewards from a function or service (slime/rollout/rm_hub/), no reward "
           f"model on the cluster's GPUs: rlmcost's {q.algorithm} scores with a verifier")
    if r.flag("use-rollout-logprobs", False):
        q.set("--no-recompute-logprobs")
        q.note("--use-rollout-logprobs: the engine's log-probs are the old ones, no actor "
               "forward (--no-recompute-logprobs)")  # fmt: skip
    return has_ref


def _old_logprobs(r: Reader, q: ImportedQuery, steps: int) -> None:
    """Whether the actor recomputes the old log-probs before training: not with
    ``--use-rollout-logprobs``, nor where ``can_reuse_log_probs_in_loss`` holds (slime/backends/
    megatron_utils/actor.py line 461: one optimizer step per rollout, policy loss, kl_coef 0,
    no critic, no old-actor copy, not gspo, routing replay only from the rollout), where the
    first training forward's log-probs serve as the old ones; else it recomputes them."""
    if "--no-recompute-logprobs" in dict(q.flags):  # --use-rollout-logprobs
        return
    est = r.text("advantage-estimator", "grpo", tuple(_ESTIMATORS))
    replay_ok = r.flag("use-rollout-routing-replay", False) or not r.flag("use-routing-replay",
                                                                         False)  # fmt: skip
    reuse = (steps == 1 and r.number("kl-coef", 0.0) == 0 and q.algorithm != CRITIC
             and est != "gspo" and not r.flag("keep-old-actor", False) and replay_ok
             and r.text("loss-type", "policy_loss") == "policy_loss")  # fmt: skip
    if reuse:
        q.set("--no-recompute-logprobs")
        q.note("one optimizer step per rollout: slime reuses the training forward's log-probs "
               "as the old ones, no separate forward (actor.py can_reuse_log_probs_in_loss, "
               "since slime bf9b1a3b, 2026-05-09)")  # fmt: skip
    else:
        q.set("--recompute-logprobs")


def _workload(r: Reader, q: ImportedQuery, prompt_len: int | None) -> int | None:
    """Batch, group, lengths and optimizer steps per rollout (None: Megatron's default
    global batch, micro-batch x data-parallel ranks, resolved with the layout)."""
    prompts = r.integer("rollout-batch-size", None)
    if prompts is None:
        raise SpecError(f"{WHERE}: give --rollout-batch-size (prompts per rollout; required "
                        "by slime)")  # fmt: skip
    n = r.integer("n-samples-per-prompt", 1)
    samples = prompts * n
    q.convert(f"--rollout-batch-size {prompts}", "--batch", prompts,
              "prompts per rollout (slime counts prompts)")  # fmt: skip
    q.convert(f"--n-samples-per-prompt {n}", "--group", n,
              f"samples per prompt: {prompts:,} x {n} = {samples:,} samples per rollout")
    gbs = r.integer("global-batch-size", None)
    per = r.integer("num-steps-per-rollout", None)
    if per is not None:
        if per > samples:  # slime's global batch samples // per would be 0 samples
            raise SpecError(f"{WHERE}: --num-steps-per-rollout {per:,} is more than the "
                            f"{samples:,} samples of a rollout; give at most {samples:,}")
        derived = samples // per
        if gbs is not None and gbs != derived:
            raise SpecError(f"{WHERE}: --global-batch-size {gbs} is not rollout_batch_size x "
                            f"n_samples_per_prompt // num_steps_per_rollout = {derived}")
        gbs = derived
    steps = None
    if gbs is not None:
        steps = whole_steps(samples, gbs, "rollout_batch_size x n_samples_per_prompt",
                            "global_batch_size", WHERE)  # fmt: skip
        given = f"--num-steps-per-rollout {per}" if per else f"--global-batch-size {gbs}"
        q.convert(given, "--mini-batches", steps, f"counts samples: {samples:,} / {gbs:,} = "
                  f"{steps} optimizer steps per rollout", default=1)  # fmt: skip
    over = r.integer("over-sampling-batch-size", None)
    dynamic = r.text("dynamic-sampling-filter-path", None)
    if over is not None and over > prompts or dynamic:
        q.note("--over-sampling-batch-size / --dynamic-sampling-filter-path: DAPO-style "
               "dynamic sampling; rlmcost's dapo models the oversampling (--oversample), this "
               "query generates one rollout batch per step")  # fmt: skip
    t = r.integer("rollout-max-response-len", None)
    if t is None:
        q.note("no --rollout-max-response-len: rlmcost's default response length")
    else:
        q.convert(f"--rollout-max-response-len {t}", "--response-len", t, "tokens (the maximum)")
    s = r.integer("rollout-max-prompt-len", None)
    context = r.integer("rollout-max-context-len", None)
    if prompt_len is not None:
        q.convert("--prompt-len of the import", "--prompt-len", prompt_len, "tokens, as given")
    elif s is not None:
        q.convert(f"--rollout-max-prompt-len {s}", "--prompt-len", s, "tokens (the maximum)")
    else:
        q.note("no --rollout-max-prompt-len: slime does not bound the prompts"
               + (f" (--rollout-max-context-len {context} bounds prompt + response)"
                  if context else "")
               + "; rlmcost's default prompt length (give `rlmcost import slime --prompt-len`)")
    if context is not None and t is not None and (s or prompt_len or 0) + t > context:
        q.note(f"--rollout-max-context-len {context} is below prompt + response; SGLang stops "
               "a sample at the context length, rlmcost costs the full response")  # fmt: skip
    return steps
