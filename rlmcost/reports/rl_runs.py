"""The published RL runs of ``rlmcost/perf/data/rl_runs.json``, each as the query a user of its
framework would write (``rlmcost validate --rl``).

A run becomes a :class:`Recipe`: the algorithm command and its flags (``rlmcost grpo --framework
verl ...``), built the way ``rlmcost import`` builds them wherever rlmcost has an importer for
the framework (:mod:`rlmcost.frameworks.nemo_rl`, :mod:`~rlmcost.frameworks.verl`,
:mod:`~rlmcost.frameworks.openrlhf` read the run's ``framework_settings``), and by one explicit
mapping per framework elsewhere (DeepSpeed-Chat, AReaL; :mod:`rlmcost.reports.rl_runs_frameworks`).
The published workload is then set on top, the same for every run:

* B, K, S, T: ``prompts_per_step``, ``samples_per_prompt``, ``prompt_len``,
  ``max_response_len``; the accelerator and GPU count; a prompt length the source does not
  publish but another source gives (``prompt_len_source``) comes with its ``prompt_len_range``,
  whose ends the interval spans;
* response lengths: ``lognormal:MEAN,SIGMA,MAX`` with SIGMA the one global
  :data:`~rlmcost.perf.rl_constants.RESPONSE_LENGTH_LOG_SIGMA` and MAX the maximum response; MEAN
  is the run's ``mean_response_len`` (published by the run's source, or, with its
  ``mean_response_len_source``, by a publication of the same model on the same recipe), or, where
  there is none, the global :data:`~rlmcost.perf.rl_constants.RESPONSE_MEAN_OVER_MAX_FRACTION` of
  the maximum capped at :data:`~rlmcost.perf.rl_constants.RESPONSE_MEAN_CEILING_TOKENS` (long
  caps are not filled); responses published as all of one length (mean = max) are ``fixed``;
  with a cap of at least :data:`LONG_CAP_TOKENS`, a fourth value CLIP, the share of responses
  truncated at the cap: the run's ``response_clip_fraction`` (with its
  ``response_clip_fraction_source``) or the global
  :data:`~rlmcost.perf.rl_constants.RESPONSE_CLIP_FRACTION`, the interval spanning its low and
  high ends (paired with the mean's).

What flags cannot say (a model given only by its config in the data, the training dtype) is an
``overlay`` of Run fields. Every discrete choice a recipe makes beyond the source is one line of
``choices``; no number is fitted to a run. A run rlmcost cannot express keeps its row with the
reason (``unexpressible``).

The Run itself is built from the flags by the CLI's own parser (the caller passes it in:
:func:`rlmcost.cli.validate.run_from_argv`), so a recipe and the same flags typed by hand give
the same Run.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping
from dataclasses import field
from importlib import resources
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frozen import dataclass
from rlmcost.perf.rl_constants import (
    RESPONSE_CLIP_FRACTION,
    RESPONSE_LENGTH_LOG_SIGMA,
    RESPONSE_MEAN_CEILING_TOKENS,
    RESPONSE_MEAN_OVER_MAX_FRACTION,
)
from rlmcost.placement.length_defaults import (  # noqa: F401 - LONG_CAP_TOKENS re-exported
    LONG_CAP_TOKENS,
    clip_used,
    default_clip,
    default_mean_response,
    lognormal_spelling,
)
from rlmcost.specs.hf_dropout import dropout_fields

DSCHAT_EPOCH_PROMPTS = 264_292
"""Prompts in one epoch of DeepSpeed-Chat's step-3 benchmark (DeepSpeedExamples
applications/DeepSpeed-Chat/training/step3_rlhf_finetuning/BenckmarkSetting.md: 135,317,504
tokens of 256 prompt + 256 answer tokens = 264,292 pairs)."""

OPT_POSITION_OFFSET = 2
"""Extra rows of OPT's learned position table (transformers models/opt/modeling_opt.py,
OPTLearnedPositionalEmbedding: ``num_embeddings + offset`` with offset 2)."""

PHASES = {
    "generation_s": "generation",
    "old_logprob_s": "old log-prob",
    "ref_logprob_s": "reference",
    "training_s": "update actor",
    "refit_s": "weight sync",
    "generation_wait_s": None,
}
"""Published phase -> rlmcost's phase name (:data:`rlmcost.placement.jobs.PHASES`). verl's
``timing_s/gen`` is generation, ``old_log_prob`` the recomputed log-probs, ``ref`` the reference
forward, ``update_actor`` training; the fully-async trainer's ``gen`` is its wait for samples,
which rlmcost does not predict (None). NeMo RL's ``Refit`` is the weight sync into its
engines."""

PHASE_SUMS = {
    "logprobs_s": ("old log-prob", "reference"),
}
"""Published phase -> rlmcost's phases it sums: NeMo RL's 'Get logprobs' (v0.3 blog step table)
times the policy's and the reference's log-prob forwards together
(``nemo_rl/algorithms/grpo.py`` at v0.3.0, ``policy_and_reference_logprobs``)."""

STAGE_PHASES = {
    "experience_s": ("generation", "assessment"),
    "train_stage_s": ("training",),
}
"""Published phase -> rlmcost's stages (:class:`rlmcost.placement.stages.Stage`) whose times on
the critical path it sums, for sources that time whole stages rather than single models:
OpenRLHF's ``print_throughput_step3`` (openrlhf/trainer/ppo_trainer.py ``fit`` at commit
dbdd43b0) times 'Generation' from the rollout's start to its last ``make_experience`` (vLLM
generation and every model's forward: rlmcost's generation and assessment stages) and
'Training' over ``ppo_train`` (actor and critic updates side by side, then the weight broadcast:
the training stage)."""


@dataclass(frozen=True)
class Recipe:
    """One published run as an rlmcost query (module docstring).

    ``query``: the algorithm command with its flags (an importer's, or the explicit mapping's),
    the published workload set on it; ``overlay``: Run sections the flags cannot say, merged
    over the Run the flags give (:meth:`rlmcost.run.Run.replace`); ``choices``: each choice
    beyond the source, in words; ``mapping``: how the flags were made; ``unexpressible``: why
    the run has no query (then ``query`` is None); ``untimed``: rlmcost's phases (by the
    name its phase table prints, e.g. ``weight sync``) that the source's step timer leaves
    out, their predicted seconds taken off the predicted iteration (the mapping says why in
    ``choices``)."""

    record: Mapping[str, Any]
    query: ImportedQuery | None
    overlay: Mapping[str, Any] = field(default_factory=dict)
    choices: tuple[str, ...] = ()
    mapping: str = ""
    unexpressible: str | None = None
    untimed: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def framework(self) -> str:
        return str(self.record["framework"])

    @property
    def argv(self) -> list[str]:
        return self.query.argv() if self.query is not None else []

    @property
    def command(self) -> str:
        """The query as a command line (a model the data gives by its config is named by its
        Hugging Face id there and set as a full spec by the overlay)."""
        if self.query is None:
            return ""
        return shlex.join(["rlmcost", self.query.algorithm, *self.argv])


def load_runs() -> dict[str, Any]:
    """The shipped data (``rlmcost/perf/data/rl_runs.json``)."""
    text = resources.files("rlmcost.perf").joinpath("data", "rl_runs.json").read_text()
    return json.loads(text)


def published_step_s(record: Mapping[str, Any]) -> float:
    """The published seconds per RL step: the figure itself, or end-to-end hours over the
    source's step count (DeepSpeed-Chat: ceil(:data:`DSCHAT_EPOCH_PROMPTS` / pairs per step);
    AReaL: ``framework_settings.ppo_steps``), as each run's ``conversion`` states."""
    value = float(record["published"])
    if record["metric"] == "step_time_s":
        return value
    if record["metric"] != "e2e_hours":
        raise SpecError(f"run {record['id']}: unknown metric {record['metric']!r}")
    if record["source"] == "dschat_blog":
        pairs = int(record["prompts_per_step"]) * int(record["samples_per_prompt"])
        steps = math.ceil(DSCHAT_EPOCH_PROMPTS / pairs)
    elif "ppo_steps" in record["framework_settings"]:
        steps = int(record["framework_settings"]["ppo_steps"])
    else:
        raise SpecError(f"run {record['id']}: e2e_hours without a step count; add ppo_steps")
    return value * 3600 / steps


def clip_fraction(record: Mapping[str, Any], end: str = "value") -> float | None:
    """The share of responses at the cap (module docstring): the run's published
    ``response_clip_fraction``, else the ``end`` of RESPONSE_CLIP_FRACTION for a cap of at least
    LONG_CAP_TOKENS, else None (no share beyond the lognormal's tail)."""
    if record.get("response_clip_fraction") is not None:
        if not record.get("response_clip_fraction_source"):
            raise SpecError(f"run {record.get('id')}: response_clip_fraction without "
                            "response_clip_fraction_source; cite where the share is published")
        return float(record["response_clip_fraction"])
    return default_clip(int(record["max_response_len"]), end)


def assumed_length_dists(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``--length-dist`` at the low and high ends of the mean's and the clip share's
    spreads (the interval spans them): a sourced mean's ``mean_response_len_range``, else the
    sourced mean itself; without one, the low and high ends of :func:`default_mean_response`;
    each end with the same end of RESPONSE_CLIP_FRACTION where it applies. None for a sourced
    mean without a range and no assumed clip share."""
    t_max = int(record["max_response_len"])
    published_clip = record.get("response_clip_fraction") is not None
    clips = (clip_fraction(record, "low"), clip_fraction(record, "high"))
    if record.get("mean_response_len") is not None:
        if int(record["mean_response_len"]) >= t_max:
            return ()
        spread = record.get("mean_response_len_range")
        if spread:
            means = (int(spread[0]), int(spread[1]))
        elif clips[0] is not None and not published_clip:
            means = (int(record["mean_response_len"]),) * 2
        else:
            return ()
    else:
        means = (default_mean_response(t_max, "low"), default_mean_response(t_max, "high"))
    return tuple(lognormal_spelling(m, t_max, c) for m, c in zip(means, clips, strict=True))


def assumed_workloads(record: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The workload at the low and the high end of the row's assumed inputs (the interval spans
    them): the ``--length-dist`` ends of :func:`assumed_length_dists`, each paired with the same
    end of a sourced prompt length's ``prompt_len_range`` where the run gives one."""
    dists = assumed_length_dists(record)
    prompts = record.get("prompt_len_range")
    if not prompts:
        return tuple({"length_dist": d} for d in dists)
    return tuple({"prompt_len": int(p), **({"length_dist": dists[i]} if dists else {})}
                 for i, p in enumerate(prompts))  # fmt: skip


def length_dist(record: Mapping[str, Any]) -> tuple[str, str]:
    """The run's ``--length-dist`` and the choice behind it, in words (module docstring)."""
    t_max = int(record["max_response_len"])
    sigma = RESPONSE_LENGTH_LOG_SIGMA.value
    mean = record.get("mean_response_len")
    if mean is not None and int(mean) >= t_max:
        return "fixed", f"every response has the published {t_max} tokens (mean = max)"
    if mean is None:
        frac, ceiling = RESPONSE_MEAN_OVER_MAX_FRACTION.value, RESPONSE_MEAN_CEILING_TOKENS.value
        mean = default_mean_response(t_max)
        how = (f"mean response length not published: min({frac:g} x max {t_max}, {ceiling:g}) "
               f"= {mean} tokens (RESPONSE_MEAN_OVER_MAX_FRACTION, "
               "RESPONSE_MEAN_CEILING_TOKENS)")  # fmt: skip
    elif record.get("mean_response_len_source"):  # its citation, up to the figure's details
        cite = str(record["mean_response_len_source"]).split(":")[0]
        spread = record.get("mean_response_len_range")
        how = (f"mean response length {mean} (interval {spread[0]}..{spread[1]}) from " if spread
               else f"mean response length {mean} from ") + cite  # fmt: skip
    else:
        how = f"published mean response length {mean}"
    clip = clip_fraction(record)
    text = lognormal_spelling(int(mean), t_max, clip)
    out = f"response lengths {text}: {how}, sigma {sigma:g} (RESPONSE_LENGTH_LOG_SIGMA)"
    if clip is None:
        return text, out + (", capped at the maximum; no truncated share beyond the lognormal "
                            f"tail (cap below LONG_CAP_TOKENS {LONG_CAP_TOKENS})")  # fmt: skip
    if record.get("response_clip_fraction") is not None:
        cite = str(record["response_clip_fraction_source"]).split(":")[0]
        share = f"the published truncated share {clip:g} ({cite})"
    else:
        c = RESPONSE_CLIP_FRACTION
        share = (f"{c.value:g} (interval {c.low:g}..{c.high:g}) of the responses truncated at "
                 f"the cap (RESPONSE_CLIP_FRACTION; cap >= LONG_CAP_TOKENS {LONG_CAP_TOKENS})")
    if clip_used(int(mean), t_max, clip) < clip:
        share += f", limited to {clip_used(int(mean), t_max, clip):g} by the mean"
    return text, out + f", capped at the maximum, with {share}"


def model_name(record: Mapping[str, Any]) -> str:
    """The actor as a user names it: the built-in name, else its Hugging Face id."""
    if record["model_builtin"]:
        return str(record["model"])
    return str(record["model_hf"]).split(" ")[0]


def model_spec(name: str, cfg: Mapping[str, Any], hf_id: str) -> dict[str, Any]:
    """A :class:`~rlmcost.specs.ModelSpec` (as data) from the run's ``model_config``: a llama
    family model as transformers' LlamaConfig builds it (RoPE, gated SiLU FFN, RMSNorm, no
    biases); an OPT model as OPTForCausalLM builds it (learned positions, ReLU FFN of two
    projections, LayerNorm, biases, the output projection tied to the embedding, OPTConfig's
    ``dropout`` and ``attention_dropout``: :mod:`rlmcost.specs.hf_dropout`); a qwen3_5
    model as Qwen3_5TextConfig builds it (:func:`_gated_delta_net`)."""
    family = str(cfg.get("family", ""))
    base = {
        "name": name, "family": family, "source": f"rl_runs.json model_config of {hf_id}",
        "n_layers": cfg["layers"], "d_model": cfg["hidden"], "d_ff": cfg["ffn"],
        "n_heads": cfg["heads"], "n_kv_heads": cfg["kv_heads"],
        "head_dim": cfg.get("head_dim") or cfg["hidden"] // cfg["heads"], "vocab": cfg["vocab"],
        "max_context": cfg.get("max_position", 0),
    }  # fmt: skip
    if family == "llama":
        return {**base, "model_type": "llama", "tie_embeddings": bool(cfg.get("tie_embeddings"))}
    if family == "opt":
        notes: tuple[str, ...] = ()
        if cfg.get("word_embed_proj_dim", cfg["hidden"]) != cfg["hidden"]:
            notes = (f"embeddings of width {cfg['word_embed_proj_dim']} with project_in/out "
                     f"to {cfg['hidden']} counted at width {cfg['hidden']}",)  # fmt: skip
        return {
            **base, "model_type": "opt", "ffn_kind": "plain", "norm": "layernorm",
            "qkv_bias": True, "out_bias": True, "mlp_bias": True, "tie_embeddings": True,
            "n_positions": cfg["max_position"] + OPT_POSITION_OFFSET, "notes": notes,
            **dropout_fields(cfg, "opt", f"rl_runs.json model_config of {hf_id}"),
        }  # fmt: skip
    if family == "qwen3_5":
        return {**base, **_gated_delta_net(cfg)}
    raise SpecError(f"model_config family {family!r} has no mapping; give llama, opt or qwen3_5")


def _gated_delta_net(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A dense Qwen3.5 text model as transformers' Qwen3_5TextConfig builds it
    (models/qwen3_5/configuration_qwen3_5.py): head_dim given (256, not hidden / heads), q/k
    RMSNorms, every ``full_attention_interval``-th layer (4) a full attention layer whose
    q_proj also yields an output gate, the others Gated DeltaNets of ``linear_*`` sizes
    (Qwen3-Next's layers, :mod:`rlmcost.specs.hf_linear`), the gated SiLU FFN, untied
    embeddings."""
    n = int(cfg["layers"])
    k = int(cfg["full_attention_interval"])
    return {
        "model_type": "qwen3_5_text", "head_dim": cfg["head_dim"], "qk_norm": True,
        "tie_embeddings": False, "attn_output_gate": True,
        "linear_layers": sum(1 for i in range(n) if (i + 1) % k),
        "linear_key_heads": cfg["linear_key_heads"],
        "linear_value_heads": cfg["linear_value_heads"],
        "linear_key_head_dim": cfg["linear_head_dim"],
        "linear_value_head_dim": cfg["linear_head_dim"],
        "linear_conv_kernel": cfg["linear_conv_kernel"],
    }  # fmt: skip


def workload(record: Mapping[str, Any], q: ImportedQuery) -> list[str]:
    """Set the published workload on ``q`` (module docstring); the choices it made."""
    dist, how = length_dist(record)
    for flag, key in (("--batch", "prompts_per_step"), ("--group", "samples_per_prompt"),
                      ("--prompt-len", "prompt_len"), ("--response-len", "max_response_len"),
                      ("--hardware", "hardware"), ("--gpus", "gpus")):  # fmt: skip
        q.set(flag, record[key])
    q.set("--length-dist", dist)
    if record.get("prompt_len_source"):  # its citation, up to the figure's details
        lo, hi = record["prompt_len_range"]
        cite = str(record["prompt_len_source"]).split(":")[0]
        return [how, f"prompt length {record['prompt_len']} (interval {lo}..{hi}) from {cite}"]
    return [how]


def recipes(select: str | None = None) -> list[Recipe]:
    """Every run's recipe (``select``: only one framework's or one source's runs)."""
    from rlmcost.reports.rl_runs_frameworks import recipe

    runs = load_runs()["runs"]
    chosen = [r for r in runs if select is None or select in (r["framework"], r["source"])]
    if not chosen:
        have = sorted({r["framework"] for r in runs} | {r["source"] for r in runs})
        raise SpecError(f"no RL runs of {select!r}; give one of {', '.join(have)}")
    return [recipe(r) for r in chosen]
