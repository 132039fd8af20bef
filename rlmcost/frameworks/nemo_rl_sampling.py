"""NeMo RL import: dynamic sampling (``grpo.use_dynamic_sampling``, DAPO) as rlmcost's dapo, and
the fused linear or chunked log-probs (:func:`fused_logprobs`, :func:`chunked_logprobs`) and the
drafters trained for speculative decoding (:func:`trained_drafters`).

NeMo RL (nemo_rl/algorithms/grpo.py at 7ea279abf): with ``use_dynamic_sampling`` the dataloader
hands each generation round ``int(num_prompts_per_step x batch_multiplier)`` prompts (``setup``:
"generation prompt batch size will equal num_prompts_per_step * batch_multiplier"; a
``batch_multiplier`` other than 1 without it is refused there); ``dynamic_sampling`` keeps the
prompt groups whose rewards differ (std != 0) and, while fewer than ``num_prompts_per_step x
num_generations_per_prompt`` samples are kept, generates another round (at most
``dynamic_sampling_max_gen_batches``); the surplus is sliced off and the step trains that many.
That is rlmcost's dapo with ``--oversample`` = rounds x generated / trained prompts; the rounds
follow from the share of groups kept, which no config says: one round is assumed (the fewest),
stated in a note. A round is one synchronous ``generate`` of all its prompts' samples, so the
engines batch them continuously (no ``--sequences-per-call``)."""

from __future__ import annotations

from fractions import Fraction

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery, option_key


def dynamic_sampling(r: Reader, q: ImportedQuery) -> None:
    """``grpo.use_dynamic_sampling`` and ``grpo.batch_multiplier`` (module docstring): the
    query becomes ``dapo`` with ``--oversample``; nothing when dynamic sampling is off."""
    mult = Fraction(str(r.raw("grpo.batch_multiplier", 1)))
    if not r.flag("grpo.use_dynamic_sampling", False):
        if mult != 1:
            raise SpecError(f"{r.where}: grpo.batch_multiplier {float(mult):g} without "
                            "grpo.use_dynamic_sampling: NeMo RL refuses it (grpo.py setup: "
                            "'batch_multiplier>1 can only be used if use_dynamic_sampling=True'); "
                            "give grpo.batch_multiplier=1 or grpo.use_dynamic_sampling=true "
                            "after the file")  # fmt: skip
        return
    prompts = r.integer("grpo.num_prompts_per_step", 32)
    cap = r.integer("grpo.dynamic_sampling_max_gen_batches", 10, lo=1)
    generated = int(prompts * mult)  # grpo.py setup: int(num_prompts_per_step * multiplier)
    if generated < prompts:
        raise SpecError(f"{r.where}: grpo.batch_multiplier {float(mult):g} generates "
                        f"{generated} prompts a round, fewer than the {prompts} a step trains")
    rho = Fraction(generated, prompts)
    kl = "--kl" in dict(q.flags)  # dapo has no reference: neither --kl nor --no-kl
    q.flags = [(f, v) for f, v in q.flags if option_key(f) != option_key("--kl")]
    q.algorithm = "dapo"
    q.convert(f"grpo.batch_multiplier={float(mult):g}", "--oversample", rho,
              f"generated / trained prompts: int({prompts} x {float(mult):g}) / {prompts} = "
              f"{float(rho):g}, one sampling round", default=None)  # fmt: skip
    q.note(f"grpo.use_dynamic_sampling (DAPO): rounds of {generated} prompts until {prompts} "
           f"groups with differing rewards are kept, at most {cap}; one round assumed (the "
           f"share kept is not in the config; k rounds: --oversample {{k x {generated} / "
           f"{prompts}}})")  # fmt: skip
    if kl:
        q.note("KL with dynamic sampling: rlmcost's dapo has no reference (its forward not "
               "counted)")


def fused_logprobs(r: Reader, q: ImportedQuery, megatron: bool, cp: int) -> None:
    """``policy.megatron_cfg.use_fused_linear_logprobs`` (Megatron only): NeMo RL computes the
    log-probs from the hidden states in chunks of ``fused_linear_logprobs_chunk_size`` tokens,
    never the whole [tokens, vocabulary] logits (nemo_rl/algorithms/grpo.py ``setup``,
    nemo_rl/models/megatron/train.py at 7ea279abf): ``--logits fused``; else DistributedLogprob's
    materialized fp32 log-softmax. NeMo RL refuses it with sequence packing (GRPO) and with
    context parallelism (grpo.py, megatron/setup.py asserts), so the import does too."""
    r.raw("policy.megatron_cfg.fused_linear_logprobs_chunk_size")
    if not (megatron and r.flag("policy.megatron_cfg.use_fused_linear_logprobs", False)):
        q.set("--logits", "materialized")
        chunked_logprobs(r, q, megatron)
        return
    if "--packing" in dict(q.flags) and q.algorithm != "dpo":
        raise SpecError(f"{r.where}: use_fused_linear_logprobs with sequence packing: NeMo RL "
                        "refuses it for GRPO (grpo.py: 'Linear CE fusion loss is not supported "
                        "with sequence packing'); turn one off")  # fmt: skip
    if cp > 1:
        raise SpecError(f"{r.where}: use_fused_linear_logprobs with context parallelism {cp}: "
                        "NeMo RL refuses it (megatron/setup.py); turn one off")
    q.convert("policy.megatron_cfg.use_fused_linear_logprobs=true", "--logits", "fused",
              "log-probs from the hidden states in sequence chunks, no full logits tensor")


def chunked_logprobs(r: Reader, q: ImportedQuery, megatron: bool) -> None:
    """``policy.logprob_chunk_size``: NeMo RL's ``ChunkedDistributedLogprob`` casts and
    log-softmaxes the bf16 logits one sequence chunk at a time, no whole fp32 copy
    (nemo_rl/distributed/model_utils.py @7ea279abf; ``defer_fp32_logits`` required,
    models/megatron/setup.py ``_validate_chunking_config``), in the Megatron worker's loss and
    log-prob forwards alike (algorithms/loss/utils.py ``get_next_token_logprobs_from_logits``:
    only with a vocab-parallel group, and only without top-k/top-p filtering,
    ``need_top_k_or_top_p_filtering``): ``--logits chunked``. The DTensor worker chunks its
    log-prob forward alone (models/automodel/train.py ``LogprobsPostProcessor``), its loss runs
    on the whole fp32 logits: left materialized, said in a note."""
    chunk = r.integer("policy.logprob_chunk_size", None, lo=0)
    if not chunk:
        return
    top_k, top_p = r.raw("policy.generation.top_k"), r.raw("policy.generation.top_p", 1.0)
    if (top_k is not None and int(top_k) > 0) or (top_p is not None and float(top_p) != 1.0):
        q.note(f"policy.logprob_chunk_size={chunk} with top-k/top-p sampling: NeMo RL's "
               "filtered log-probs run unchunked (loss/utils.py); priced materialized")
    elif not megatron:
        q.note(f"policy.logprob_chunk_size={chunk}: the DTensor worker chunks its log-prob "
               "forward only (automodel/train.py), its loss takes the whole fp32 logits; "
               "priced materialized (an upper bound for the forward)")
    else:
        q.convert(f"policy.logprob_chunk_size={chunk}", "--logits", "chunked",
                  "bf16 logits, the fp32 log-softmax one sequence chunk at a time")
        q.convert(f"policy.logprob_chunk_size={chunk}", "--logits-chunk-tokens", chunk,
                  "positions per chunk (per CP rank)", default=1024)


def trained_drafters(r: Reader, q: ImportedQuery) -> None:
    """What the policy trains beside the model for the engine's speculative decoding:
    ``policy.megatron_cfg.mtp_num_layers`` MTP depths (Megatron-core's multi-token prediction,
    priced by ``--mtp-layers``: :mod:`rlmcost.placement.mtp`; ``mtp_use_repeated_layer`` ->
    ``--mtp-repeated``, ``mtp_detach_heads`` -> ``--mtp-detach-heads``; the Nemotron 3 Super
    recipes at 7ea279abf train 5, repeated, detached) and ``policy.draft`` (an EAGLE-style draft
    model trained on the policy's hidden states, said, not priced)."""
    r.raw("policy.megatron_cfg.mtp_loss_scaling_factor")  # scales a loss: cost-free
    mc = "policy.megatron_cfg"
    n = r.integer(f"{mc}.mtp_num_layers", 0, lo=0) if r.flag(f"{mc}.enabled", False) else 0
    repeated, detached = (r.flag(f"{mc}.{k}", False) for k in ("mtp_use_repeated_layer",
                                                                "mtp_detach_heads"))  # fmt: skip
    if n:
        q.convert(f"{mc}.mtp_num_layers={n}", "--mtp-layers", n,
                  "MTP depths Megatron trains with the policy (each: a projection, one layer "
                  "and the LM head with its loss, on the last pipeline stage)")  # fmt: skip
    if n and repeated:
        q.convert(f"{mc}.mtp_use_repeated_layer=true", "--mtp-repeated", None,
                  "one MTP module's weights at every depth", default=False)
    if n and detached:
        q.convert(f"{mc}.mtp_detach_heads=true", "--mtp-detach-heads", None,
                  "no head or embedding gradient from the MTP losses", default=False)
    for key in ("model_name", "num_layers", "aux_layer_indices", "loss_weight"):
        r.raw(f"policy.draft.{key}")
    if r.flag("policy.draft.enabled", False):
        q.note("policy.draft.enabled: a draft model trained beside the policy for speculative "
               "decoding; rlmcost does not price its training")
