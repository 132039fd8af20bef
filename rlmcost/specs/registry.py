"""Built-in models and hardware, and exact name resolution (names, aliases, Hugging Face ids)."""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path
from typing import TypeVar

from rlmcost.errors import SpecError
from rlmcost.specs.hardware import HardwareSpec
from rlmcost.specs.model import ModelSpec
from rlmcost.specs.validation import build

S = TypeVar("S", ModelSpec, HardwareSpec)


_DATA = Path(__file__).parent / "data"
"""The built-in specs (package data; a path beside this file, as ``prices.py`` reads its own:
``importlib.resources`` would add ~10 ms of imports to every query's start)."""


def _data(name: str) -> dict:
    return json.loads((_DATA / name).read_text())


@cache
def models() -> tuple[ModelSpec, ...]:
    """Every built-in model, in the order of ``data/models.json``."""
    return tuple(
        build(ModelSpec, m, f"models.json:{m['name']}") for m in _data("models.json")["models"]
    )


@cache
def hardware() -> tuple[HardwareSpec, ...]:
    """Every built-in accelerator, in the order of ``data/hardware.json``."""
    return tuple(
        build(HardwareSpec, h, f"hardware.json:{h['name']}")
        for h in _data("hardware.json")["hardware"]
    )


def _norm(s: str) -> str:
    """Case, space, '-' and '_' do not matter; '.' and '/' do ('qwen2.5-7b' is not 'qwen2-57b')."""
    return "".join(ch for ch in s.lower() if ch.isalnum() or ch in "./")


def keys(spec: ModelSpec | HardwareSpec) -> tuple[str, ...]:
    """Every normalized string that resolves to ``spec``: its name, aliases, Hugging Face ids
    and those ids without the organization ('Qwen2.5-7B-Instruct')."""
    names = [spec.name, *spec.aliases]
    for hf_id in getattr(spec, "hf_ids", ()):
        names += [hf_id, hf_id.rsplit("/", 1)[-1]]
    return tuple(dict.fromkeys(_norm(n) for n in names))


def _index(specs: tuple[S, ...], kind: str) -> dict[str, S]:
    index: dict[str, S] = {}
    for spec in specs:
        for key in keys(spec):
            other = index.setdefault(key, spec)
            if other is not spec:
                raise SpecError(f"built-in {kind}s {other.name} and {spec.name} share name {key}")
    return index


@cache
def _model_index() -> dict[str, ModelSpec]:
    return _index(models(), "model")


@cache
def _hardware_index() -> dict[str, HardwareSpec]:
    return _index(hardware(), "hardware")


MOST_CANDIDATES = 8


def _or(names: list[str]) -> str:
    """'a', 'a or b', 'a, b or c'; past MOST_CANDIDATES, '... (and N more)'."""
    more = len(names) - MOST_CANDIDATES
    shown = names[:MOST_CANDIDATES]
    text = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return f"{text} (and {more} more)" if more > 0 else text


def candidates(query: str, specs: tuple[S, ...]) -> list[str]:
    """Names of the specs ``query`` may have meant, for an error message (never resolved).

    Specs one of whose names contains the normalized query, ranked by :func:`_rank`: the
    name starting with it first, then a word of a name starting with it ('1b' in
    'llama-3.2-1b'); a query found only inside a word ('1b' in DeepSeek-V3's '671b') is
    offered only when nothing better is. Failing all, difflib's close matches among names
    and aliases.
    """
    q = _norm(query)
    ranked = sorted((r, i, s) for i, s in enumerate(specs) if (r := _rank(q, s)) is not None)
    best = ranked[0][0] if ranked else 0
    names = [s.name for r, _, s in ranked if r < 2 or best == 2]
    if not names:
        by_key: dict[str, str] = {}
        spec: ModelSpec | HardwareSpec
        for spec in specs:
            for n in (spec.name, *spec.aliases):
                by_key[_norm(n)] = spec.name
        close = difflib.get_close_matches(q, list(by_key), n=3, cutoff=0.6)
        names = list(dict.fromkeys(by_key[c] for c in close))
    return names


def _rank(q: str, spec: ModelSpec | HardwareSpec) -> int | None:
    """How well normalized ``q`` matches ``spec``: 0 its name starts with ``q``, 1 ``q``
    starts a word of one of its names ('-', '_', ' ', '.', '/' or a letter-digit change
    begin a word), 2 ``q`` is found inside a word only, None not found."""
    if not any(q in k for k in keys(spec)):
        return None
    if _norm(spec.name).startswith(q):
        return 0
    for raw in (spec.name, *spec.aliases, *getattr(spec, "hf_ids", ())):
        n = raw.lower()
        for i, ch in enumerate(n):
            prev = n[i - 1] if i else " "
            starts = not prev.isalnum() or prev.isdigit() != ch.isdigit()
            if starts and ch.isalnum() and _norm(n[i:]).startswith(q):
                return 1
    return 2


def _resolve(query: str, specs: tuple[S, ...], index: dict[str, S], kind: str, listing: str) -> S:
    """The spec whose name, alias or Hugging Face id is ``query`` (normalized), else a
    SpecError listing the real names it may have meant. Never a partial match."""
    q = _norm(query)
    if not q:
        raise SpecError(f"empty {kind} name; see `rlmcost {listing}`")
    if q in index:
        return index[q]
    names = candidates(query, specs)
    see = f"see `rlmcost {listing}`"
    if len(names) > 1 and all(_names_it(q, s) for s in specs if s.name in names):
        raise SpecError(f"{kind} '{query}' is ambiguous: {_or(names)}? give the full name; {see}")
    hint = f"did you mean {_or(names)}? " if names else ""
    raise SpecError(f"unknown {kind} '{query}'; {hint}{see}")


def _names_it(q: str, spec: ModelSpec | HardwareSpec) -> bool:
    """Normalized ``q`` is in ``spec``'s name or starts a word of one of its names, aliases
    or Hugging Face ids (:func:`_rank` 0 or 1): '0.5b' in 'qwen2.5-0.5b', '671b' in the alias
    'deepseek-v3-671b', so a size both specs answer to is ambiguous either way; a query
    found only inside a word ('71b') is a misspelling, not an ambiguity."""
    return q in _norm(spec.name) or _rank(q, spec) in (0, 1)


REWARD_MODELS: dict[str, tuple[str, int | None, str]] = {
    "Skywork/Skywork-Reward-Llama-3.1-8B": (
        "llama-3.1-8b", 128257,
        "Skywork/Skywork-Reward-Llama-3.1-8B config.json (huggingface.co, main): "
        "LlamaForSequenceClassification with Llama-3.1-8B's decoder and a pad token added "
        "(vocab_size 128257, pad_token_id 128256)"),
    "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2": (
        "llama-3.1-8b", None,
        "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2 model card: Llama-3.1-8B-Instruct under a "
        "sequence-classification head (LlamaForSequenceClassification)"),
    "Skywork/Skywork-Reward-V2-Llama-3.1-8B": (
        "llama-3.1-8b", None,
        "Skywork/Skywork-Reward-V2-Llama-3.1-8B model card: base model "
        "meta-llama/Llama-3.1-8B-Instruct"),
    "Skywork/Skywork-Reward-V2-Llama-3.2-3B": (
        "llama-3.2-3b", None,
        "Skywork/Skywork-Reward-V2-Llama-3.2-3B model card: base model "
        "meta-llama/Llama-3.2-3B-Instruct"),
    "sfairXC/FsfairX-LLaMA3-RM-v0.1": (
        "llama-3-8b-sft-mixture", None,
        "sfairXC/FsfairX-LLaMA3-RM-v0.1 model card: base model meta-llama/Meta-Llama-3-8B-Instruct "
        "(its 8192 positions), LlamaForSequenceClassification"),
}
"""Reward models on a built-in decoder (the frameworks' examples: verl examples/ppo_trainer/
run_qwen2-7b_rm*.sh and grpo_trainer/run_mistral13b_skyworkrm_hhrlhf.sh @b178a3cd): Hugging
Face id -> (the built-in whose decoder it is, its config.json's vocab_size where that differs
from the built-in's, None where it was not read, the source). A reward model's output head is
the role's d x 1 score head (Head.VALUE), never the built-in's LM head, so the decoder and the
embedding table are what its id has to name. Resolved as a spec of its own, named as its id's
name part in lower case, with that source; where the config.json was not read the spec notes
that an added pad token (the first entry's case) would add one d-wide embedding row."""


def _reward_index() -> dict[str, str]:
    """Normalized reward-model id and its name part -> the id (:data:`REWARD_MODELS`)."""
    return {_norm(k): hf for hf in REWARD_MODELS for k in (hf, hf.rsplit("/", 1)[-1])}


def reward_model(hf_id: str) -> ModelSpec:
    """The spec of :data:`REWARD_MODELS` entry ``hf_id``: its built-in decoder under its own
    name, vocab and source."""
    base_name, vocab, source = REWARD_MODELS[hf_id]
    base = get_model(base_name)
    notes = base.notes
    if vocab is None:
        notes = (*notes, f"{hf_id}: the decoder of {base.name} (its model card); its config.json "
                 f"was not read: an added pad token would add {base.d_model:,} parameters (one "
                 "embedding row)")  # fmt: skip
    return base.model_copy(update={
        "name": hf_id.rsplit("/", 1)[-1].lower(), "aliases": (), "hf_ids": (hf_id,),
        "vocab": vocab or base.vocab, "source": source, "notes": notes})


def is_path(query: str) -> bool:
    """A model argument is a config path when it ends with .json or names an existing file or
    checkpoint folder (built-in names and Hugging Face ids are tried before the latter)."""
    return query.endswith(".json") or (bool(query.strip()) and Path(query).exists())


def get_model(query: str | ModelSpec) -> ModelSpec:
    """A built-in model by name, alias or Hugging Face id, or a config.json path (a
    checkpoint folder that exists counts, when the argument is not a built-in name).

    Names resolve exactly (case, spaces, '-' and '_' aside) or not at all: an unknown or
    ambiguous name is a SpecError that lists the built-in names it may have meant. Hugging
    Face ids of the same shape (base, instruct, distilled: 'Qwen/Qwen2.5-7B-Instruct',
    'deepseek-ai/DeepSeek-R1-Distill-Qwen-7B') resolve to one spec. Size aliases: 7b ->
    llama-2-7b, 13b -> llama-2-13b, 8b / 70b / 405b -> llama-3.1-*, 175b -> gpt-3-175b.
    ``NAME[max_position_embeddings=N]``: the model with that config.json override, as a
    framework applies it (:mod:`rlmcost.specs.model_overrides`).
    """
    if isinstance(query, ModelSpec):
        return query
    if query.endswith("]"):  # NAME[max_position_embeddings=N]: rlmcost.specs.model_overrides
        return _overridden(query)
    q = _norm(query)
    index = _model_index()
    if query.endswith(".json") or (q not in index and is_path(query)):
        from rlmcost.specs.hf_config import load_config

        return load_config(query)
    if q not in index and q in (rewards := _reward_index()):
        return reward_model(rewards[q])
    if q not in index and ("://" in query or ("<" in query and ">" in query)):
        raise SpecError(f"model {query!r} is a placeholder (instructions or a <...> to fill in), "
                        "not a model: give its Hugging Face id, a built-in name or its "
                        "config.json")  # fmt: skip
    if q not in index:
        from rlmcost.specs.hf_nemotron_h import UNMODELLED_IDS

        if query.strip().lower() in UNMODELLED_IDS:
            raise SpecError(f"model '{query}' is not supported: "
                            f"{UNMODELLED_IDS[query.strip().lower()]}")  # fmt: skip
        if "/" in query and q:
            names = candidates(query.rsplit("/", 1)[-1], models())
            hint = f"did you mean {_or(names)}? " if names else ""
            raise SpecError(
                f"unknown model '{query}': not a built-in name or Hugging Face id, nor an "
                f"existing path; {hint}or pass the checkpoint's config.json (see `rlmcost models`)"
            )
    return _resolve(query, models(), index, "model", "models")


def _overridden(query: str) -> ModelSpec:
    """A reference with config.json overrides: its model with them applied."""
    from rlmcost.specs.model_overrides import split_overrides

    base, fields = split_overrides(query)
    spec = get_model(base)
    if spec.n_positions and fields.get("max_context", 0) > spec.n_positions:
        raise SpecError(f"model {query!r}: {spec.name} has {spec.n_positions} learned position "
                        "embeddings; max_position_embeddings cannot raise them")  # fmt: skip
    return spec.model_copy(update=fields)


def get_hardware(query: str | HardwareSpec) -> HardwareSpec:
    """A built-in accelerator by name or alias, exactly (case and punctuation aside); an
    unknown or ambiguous name is a SpecError listing the candidates ('a100: a100-40gb or
    a100-80gb?')."""
    if isinstance(query, HardwareSpec):
        return query
    return _resolve(query, hardware(), _hardware_index(), "hardware", "hardware")


def hardware_name(query: str) -> str:
    """The canonical name of the built-in accelerator ``query`` names (``h100`` ->
    ``h100-sxm``); a SpecError listing every built-in name otherwise (for a name inside
    another option: ``--groups rollout=8@h20``, ``--price h20=1.2``, a pool)."""
    try:
        return get_hardware(query.strip()).name
    except SpecError:
        known = ", ".join(h.name for h in hardware())
        raise SpecError(f"unknown hardware {query.strip()!r}; use one of: {known}") from None


def pool_hint(text: str) -> str:
    """The error for a pool of accelerators given as one run's hardware: `plan` searches a
    pool; one mixed-hardware run gives each group its device (``--groups ROLE=N@HW``)."""
    items = [i.partition(":") for i in text.replace(" ", "").split(",") if i]
    roles = ("rollout", "actor", "critic", "reference")
    groups = ",".join(f"{r}={n if n.isdigit() else 8}@{hw}"
                      for r, (hw, _, n) in zip(roles, items, strict=False))  # fmt: skip
    if len(items) == 1 and items[0][2].isdigit():
        return (f"hardware {text!r}: one run's accelerator is a name without a count; give "
                f"--hardware {items[0][0]} --gpus {items[0][2]}")
    if len(items) < 2:
        groups = "rollout=8@h20,actor=8@h100"
    return (f"hardware {text!r} is a pool of accelerators, which `rlmcost plan ALGORITHM "
            f"--hardware {text}` searches; one run names one --hardware, or each group's "
            f"device with --groups \"{groups}\"")
