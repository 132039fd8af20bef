"""Launch scripts as `rlmcost import` input: the command a verl, OpenRLHF or slime (miles)
script launches, read by :mod:`rlmcost.frameworks.shell_script` (never run) and imported as if
its overrides or arguments had been typed.

* verl (``python3 -m verl.trainer.main_ppo``): ``--config-path``/``--config-name`` (Hydra's
  ``-cp``/``-cn``) pick the base config, the ``key=value`` words are the overrides. main_ppo.py
  is ``@hydra.main(config_path="config", config_name="ppo_trainer")`` (verl/trainer/main_ppo.py
  @b178a3cd): a relative config path is verl's own verl/trainer/config, whose ppo_trainer
  (the importer's defaults) and ppo_megatron_trainer (the same with
  ``actor_rollout_ref.actor.strategy: megatron``, its Megatron workers) are read; an absolute
  one is a folder whose ``NAME.yaml`` is read, its Hydra ``defaults`` naming either base; one
  under ``$(pwd)`` is taken in the checkout holding the script (:mod:`.shell_checkout`).
* OpenRLHF (``openrlhf.cli.train_ppo_ray``): the words after it are the arguments; its DPO
  trainer's (``openrlhf.cli.train_dpo``, built in a here-document and launched as ``deepspeed
  --module $training_commands``) with the launcher's GPUs (:mod:`.openrlhf_dpo`); its SFT and
  RM scripts are one error naming what they run.
* slime and miles (``train.py`` / ``train_async.py``): the words from it on are the command.

The words with a variable the script does not give are one error naming every such variable
(and the ``--env`` items that give them), except as the
value of a key or argument that changes no cost (a data path: the importer's cost-free list),
an argument the importer does not read (listed as ignored), or a model's folder whose last
part is written out; these keep the variable unexpanded, with a note.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.script_device import script_device
from rlmcost.frameworks.shell_script import MAX_SCRIPT_BYTES, Launch, read_launch

if TYPE_CHECKING:
    from collections.abc import Callable

    from rlmcost.frameworks.result import ImportedQuery
    from rlmcost.specs.model import ModelSpec

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
VERL_ENTRIES = ("verl.trainer.main_ppo",)
OPENRLHF_ENTRIES = ("openrlhf.cli.train_ppo_ray", "openrlhf.cli.train_grpo_ray")
SLIME_ENTRIES = ("train.py", "train_async.py")
OPENRLHF_DPO = ("openrlhf.cli.train_dpo",)
OPENRLHF_OFFLINE = {
    "openrlhf.cli.train_sft": "supervised fine-tuning, which rlmcost does not price",
    "openrlhf.cli.train_rm": "reward-model training, which rlmcost does not price",
    "openrlhf.cli.serve_rm": "a reward model served, no training",
}  # fmt: skip
"""OpenRLHF's entry points that rlmcost does not price (openrlhf/cli @3c3be623): their scripts
are not imported; the error names what each runs."""

VERL_MODEL_PATHS = ("actor_rollout_ref.model.path", "critic.model.path",
                    "reward_model.model.path")
OPENRLHF_MODEL_PATHS = ("pretrain", "reward_pretrain", "critic_pretrain",
                        "actor.model_name_or_path", "reward.model_name_or_path",
                        "critic.model_name_or_path", "remote_rm_url", "reward.remote_url")
"""The keys whose value is a model's folder (or OpenRLHF's reward function file, whose value
the importer reads only as given or not, and ``agent``): a variable in its parent folders is
not read."""

VERL_BUILTIN: dict[str, dict[str, Any]] = {
    "ppo_trainer": {},
    "ppo_megatron_trainer": {"actor_rollout_ref": {"actor": {"strategy": "megatron"}}},
}
"""verl's own trainer configs (verl/trainer/config @b178a3cd) as the keys they set apart from
the importer's defaults (ppo_trainer.yaml's): ppo_megatron_trainer.yaml's actor is
megatron_actor.yaml, ``strategy: megatron``."""


def is_script(path: str | Path, entries: tuple[str, ...]) -> bool:
    """Whether ``path`` is a shell script: a ``.sh``/``.bash`` name, a ``#!`` line naming a
    shell, or (not a ``.py``/YAML/JSON name) text that names one of ``entries``."""
    p = Path(path)
    if p.suffix in (".sh", ".bash"):
        return True
    if p.suffix in (".py", ".yaml", ".yml", ".json") or not p.is_file():
        return False
    try:
        with p.open("rb") as fh:
            head = fh.read(MAX_SCRIPT_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    first = head.split("\n", 1)[0]
    return (first.startswith("#!") and "sh" in first) or any(e in head for e in entries)


def parse_env(items: list[str]) -> dict[str, str]:
    """``--env VAR=VALUE`` items as a mapping; SpecError for an item not of that shape."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise SpecError(f"--env {item!r}: give VAR=VALUE (e.g. --env NUM_GPUS=8)")
        out[name] = value
    return out


def import_verl_script(path: str | Path, extra: list[str], env: list[str],
                       verl_version: str | None, hardware: str | None) -> ImportedQuery:
    """The query of a verl launch script (``extra``: the words for its ``$@``; ``env``:
    ``VAR=VALUE`` items)."""
    from rlmcost.frameworks.verl import IGNORED, import_verl_mapping
    from rlmcost.frameworks.verl_split import CONFIG, ENTRY

    launch = read_launch(path, (*VERL_ENTRIES, ENTRY), extra, parse_env(env))
    split = Path(launch.entry).name == ENTRY  # verl's split-placement example (.verl_split)
    overrides: list[str] = []
    options: dict[str, str] = {}
    at: dict[str, int] = {}
    needed: list[int] = []
    words, i = launch.words, 0
    while i < len(words):
        word = words[i]
        name, eq, inline = word.partition("=")
        if name in ("--config-path", "-cp", "--config-name", "-cn"):
            if not eq and i + 1 >= len(words):
                raise SpecError(f"script {launch.script.name}: {name} has no value")
            at[name.lstrip("-")[-4:]] = i if eq else i + 1
            options[name.lstrip("-")[-4:]] = inline if eq else words[i + 1]
            i += 1 if eq else 2
            continue
        if word.startswith("-"):
            raise SpecError(f"script {launch.script.name} line {launch.line}: verl's option "
                            f"{word!r} is not read; give key=value overrides")  # fmt: skip
        needed += _need(launch, i, lambda w: _under(w.split("=", 1)[0].lstrip("+~"), IGNORED)
                        or (w.split("=", 1)[0].lstrip("+") in VERL_MODEL_PATHS and _folder(w)))
        overrides.append(word)
        i += 1
    if "path" in at and (found := _from_start(launch, at["path"], options.get("name"))):
        options["path"] = found
    else:
        needed += _need(launch, at["path"]) if "path" in at else []
    launch.require(needed + (_need(launch, at["name"]) if "name" in at else []))
    _placeholders(launch, overrides, extra)
    folder = options.get("path", str(launch.script.parent / "config") if split else "config")
    if split and not (Path(folder) / f"{options.get('name', CONFIG)}.yaml").is_file():
        raise SpecError(f"script {launch.script.name} runs verl's split-placement example "
                        f"({ENTRY}), whose config {folder}/{CONFIG}.yaml is not there: import "
                        "the script in verl's examples/split_placement folder")  # fmt: skip
    config, notes = _verl_base(launch, folder, options.get("name", CONFIG if split else
                                                           "ppo_trainer"), options)  # fmt: skip
    named = None if hardware is not None else script_device(launch.script)
    hardware = hardware or (named and named[0])
    if split:
        q = _split(launch, config, overrides, notes, (verl_version, hardware))
    else:
        q = import_verl_mapping(config, f"verl script {launch.script.name}",
                                str(launch.script), overrides, verl_version, hardware)
        q.notes[:0] = [*launch.notes, *notes, *_kept(launch), *_ascend(launch, hardware)]
    if named:  # (rlmcost.frameworks.script_device)
        q.imply_hardware(f"its {named[1]}", named[0], "the accelerator the script names")
    return q


_NPU_NAME = re.compile(r"(?:^|[_.-])npu(?:[_.-]|$)", re.IGNORECASE)
_NPU_VARS = re.compile(r"\b(?:ASCEND|HCCL)_[A-Z_]+")


def _ascend(launch: Launch, hardware: str | None) -> list[str]:
    """A note where the script is one of verl's Ascend NPU examples (verl's ``*_npu.sh``
    convention, or Ascend's ``ASCEND_*`` / HCCL's ``HCCL_*`` variables in it: verl picks the
    device itself, ``verl/utils/device.py`` ``is_npu_available``, so no key says so): rlmcost
    has no Ascend accelerator and prices the run on ``hardware`` (None: its default)."""
    from rlmcost.algorithms.options import DEFAULT_HARDWARE

    try:
        found = sorted(set(_NPU_VARS.findall(launch.script.read_text(errors="replace"))))
    except OSError:
        found = []
    why = (["its name"] if _NPU_NAME.search(launch.script.stem) else []) + found[:3]
    if not why:
        return []
    return [f"script {launch.script.name} is written for Ascend NPUs ({', '.join(why)}; verl "
            "runs them through torch_npu and vllm-ascend): rlmcost has no Ascend accelerator "
            f"and prices the run on {hardware or DEFAULT_HARDWARE} (--hardware: the GPUs you "
            "will run it on)"]


def _split(launch: Launch, config: dict[str, Any], overrides: list[str], notes: list[str],
           versions: tuple[str | None, str | None]) -> ImportedQuery:
    """The query of verl's split-placement launch (:mod:`.verl_split`): imported with one
    pool's GPUs as the trainer's, then the two pools as ``--groups``."""
    from rlmcost.frameworks.config import Reader, apply_overrides, flatten
    from rlmcost.frameworks.verl import import_verl_mapping
    from rlmcost.frameworks.verl_split import split_groups, split_pools

    where = f"verl script {launch.script.name}"
    r = Reader(apply_overrides(flatten(config, where), overrides, where), where)
    given = (r.integer("trainer.n_gpus_per_node", 8), r.integer("trainer.nnodes", 1))
    pool = split_pools(*given, where)
    q = import_verl_mapping(config, where, str(launch.script), [
        *overrides, f"trainer.n_gpus_per_node={pool[0]}", f"trainer.nnodes={pool[1]}"],
        *versions)  # fmt: skip
    ckpt = [r.flag(f"{k}.enable_gradient_checkpointing", True)
            for k in ("critic.model", "actor_rollout_ref.model")]
    fsdp = r.text("actor_rollout_ref.actor.strategy", "fsdp") != "megatron"
    split_groups(q, pool, given, ("full" if ckpt[0] else "none") if fsdp and
                 ckpt[0] != ckpt[1] else None)  # fmt: skip
    q.notes[:0] = [*launch.notes, *notes, *_kept(launch)]
    return q


_PLACEHOLDER = re.compile(r"|.*<[^>]*>.*|.*\s.*|[A-Za-z_]*(?:path|dir|PATH|DIR)")
"""A model value that names no model but stands for one the user fills in: empty (a variable
set to ``""``: verl examples/router_replay/*.sh @b178a3cd, ``HF_MODEL_PATH=""``), ``<...>``
(grpo_trainer/run_deepseek671b_math_megatron_80gb.sh: ``LLM="<path_to_dsv3_config>"``), words
with blanks (instructions), or a bare variable name (tuning/70b/qwen2-70b_grpo_32_h20_fsdp_
vllm.sh: ``actor_rollout_ref.model.path=model_path`` with the ``$`` left out)."""


def _placeholders(launch: Launch, overrides: list[str], extra: list[str]) -> None:
    """SpecError where the script leaves a model path as a placeholder (:data:`_PLACEHOLDER`)
    and the words for its ``$@`` (``extra``) do not give it: the script is an example to fill
    in, and the error says so and how to give the model."""
    for key in VERL_MODEL_PATHS:
        given = [w.split("=", 1)[1] for w in overrides if w.split("=", 1)[0].lstrip("+") == key]
        if not given or any(w.startswith(f"{key}=") for w in extra) \
                or not _PLACEHOLDER.fullmatch(value := given[-1].strip()):  # fmt: skip
            continue
        text = launch.script.read_text("utf-8", "replace") if launch.script.is_file() else ""
        set_as = re.search(rf"^\s*{re.escape(value)}=(\S+)", text, re.M) if value else None
        why = (f"the variable it sets on its line {text.count(chr(10), 0, set_as.start()) + 1}"
               f" ({value}={set_as.group(1)}) without its $, so verl gets the word {value!r}"
               if set_as else "a placeholder for the model, which the script leaves to be "
               "filled in")  # fmt: skip
        raise SpecError(f"verl script {launch.script.name}: {key}={value!r} is {why}; give the "
                        f"model after the script: {key}=HF_ID (or a config.json)")


def _from_start(launch: Launch, k: int, name: str | None) -> str | None:
    """The config folder of word ``k`` written ``$DIR/rest``, ``$DIR`` the folder the script is
    started from (``$(pwd)``), in the checkout holding the script where that holds
    ``rest/NAME.yaml`` (:func:`~rlmcost.frameworks.shell_checkout.start_folder`); else None."""
    from rlmcost.frameworks.shell_checkout import start_folder

    why = launch.unresolved.get(k)
    m = re.fullmatch(r"\$(\(pwd\)|\w+)(/[^$]*)", launch.words[k].split("=", 1)[-1])
    if why is None or not why.start or k in launch.many or m is None or m.group(1) != why.var \
            or name is None or "$" in name:  # fmt: skip
        return None
    file = f"{m.group(2).strip('/')}/{name.removesuffix('.yaml')}.yaml"
    if (folder := start_folder(launch.script, file)) is None:
        return None
    give = f"; give --env {why.var}=DIR for another" if _NAME.fullmatch(why.var) else ""
    launch.notes.append(f"${why.var} {why.why}, the folder the script is started from: read as "
                        f"{folder}, the checkout holding the script, which holds {file}{give}")
    del launch.unresolved[k]
    return f"{folder}/{m.group(2).strip('/')}"


def _verl_base(launch: Launch, folder: str, name: str,
               given: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The base config of ``--config-path folder --config-name name`` (``given``: the options
    the script gives) and its notes."""
    from rlmcost.frameworks.config import load_mapping

    name = name.removesuffix(".yaml")
    if not Path(folder).is_absolute():  # relative to verl/trainer/main_ppo.py: verl's own
        if name not in VERL_BUILTIN:
            raise SpecError(f"script {launch.script.name}: --config-name {name} in verl's own "
                            f"config folder is not one rlmcost reads ({', '.join(VERL_BUILTIN)})"
                            "; import that config's YAML: rlmcost import verl FILE.yaml")
        how = f"--config-name {name}" if "name" in given else "no --config-name (main_ppo.py's " \
            "default)"  # fmt: skip
        return VERL_BUILTIN[name], [f"{how}: verl's own {name}.yaml (verl/trainer/config "
                                    "@b178a3cd)"]  # fmt: skip
    file = Path(folder) / f"{name}.yaml"
    if not file.is_file():
        raise SpecError(f"script {launch.script.name}: its config {file} is not there; give the "
                        "folder with --env (the variable of --config-path) or import the YAML")
    data = dict(load_mapping(file, "verl config"))
    data.pop("hydra", None)
    defaults = data.pop("defaults", None) or []
    bases = [d for d in defaults if isinstance(d, str) and d in VERL_BUILTIN]
    base = VERL_BUILTIN[bases[0]] if bases else {}
    merged = _merge(base, data)
    return merged, [f"--config-path {folder} --config-name {name}: {file} read over verl's "
                    f"{bases[0] if bases else 'ppo_trainer'}.yaml (its Hydra defaults)"]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def import_openrlhf_script(path: str | Path, extra: list[str], env: list[str],
                           gpus: int | None = None) -> ImportedQuery:
    """The query of an OpenRLHF launch script (train_ppo_ray, or train_dpo on the launcher's
    GPUs, else ``gpus``)."""
    from rlmcost.frameworks.openrlhf import ARGS, IGNORED, import_openrlhf
    from rlmcost.frameworks.openrlhf_layouts import DOTTED, DOTTED_COST_FREE

    try:
        launch = read_launch(path, OPENRLHF_ENTRIES + OPENRLHF_DPO, extra, parse_env(env))
    except SpecError as exc:
        head = Path(path).read_text("utf-8", "replace")[:MAX_SCRIPT_BYTES] \
            if "no command runs" in str(exc) else ""  # fmt: skip
        other = next((e for e in OPENRLHF_OFFLINE if e in head), None)
        if other is None:
            raise
        raise SpecError(f"script {Path(path).name} runs {other}: {OPENRLHF_OFFLINE[other]}; "
                        "rlmcost import openrlhf reads the RL trainer's scripts "
                        f"({', '.join(OPENRLHF_ENTRIES + OPENRLHF_DPO)})") from None
    if launch.entry in OPENRLHF_DPO:
        return _openrlhf_dpo(launch, gpus)
    if gpus is not None:
        raise SpecError(f"script {launch.script.name}: --gpus is for a DPO script's launcher; "
                        f"{launch.entry}'s arguments give each model's GPUs")  # fmt: skip
    _need_argv(launch, lambda n: DOTTED.get(n, n) in IGNORED or n in DOTTED_COST_FREE or
               DOTTED.get(n, n) not in ARGS, OPENRLHF_MODEL_PATHS)  # fmt: skip
    q = import_openrlhf(launch.words)
    q.source = str(launch.script)
    q.notes[:0] = [*launch.notes, *_kept(launch)]
    return q


def _openrlhf_dpo(launch: Launch, gpus: int | None) -> ImportedQuery:
    """A train_dpo launch: its arguments, and its GPUs from the launcher's words or ``gpus``
    (:func:`~rlmcost.frameworks.openrlhf_dpo.dpo_gpus`)."""
    from rlmcost.frameworks.openrlhf_dpo import dpo_gpus, import_openrlhf_dpo, reads

    _need_argv(launch, lambda n: not reads(n), ("model.model_name_or_path", "pretrain",
               "ref.model_name_or_path", "ref_pretrain"))  # fmt: skip
    count, how = dpo_gpus(launch.launcher, gpus, f"script {launch.script.name} line {launch.line}")
    q = import_openrlhf_dpo(launch.words, count, how)
    q.source = str(launch.script)
    q.notes[:0] = [*launch.notes, *_kept(launch)]
    return q


def import_slime_script(path: str | Path, extra: list[str], env: list[str],
                        model: str | ModelSpec | None, prompt_len: int | None) -> ImportedQuery:
    """The query of a slime (or miles) launch script (train.py / train_async.py)."""
    from rlmcost.frameworks.slime import import_slime
    from rlmcost.frameworks.slime_args import ARGS, COST_FREE

    launch = read_launch(path, SLIME_ENTRIES, extra, parse_env(env))
    _need_argv(launch, lambda n: n in COST_FREE or n not in ARGS, ("hf-checkpoint",))
    q = import_slime([launch.entry, *launch.words], model, prompt_len)
    q.source = str(launch.script)
    q.notes[:0] = [*launch.notes, *_kept(launch)]
    return q


def _need(launch: Launch, i: int, cost_free: Callable[[str], bool] | None = None) -> list[int]:
    """``[i]`` where word ``i`` kept a variable unexpanded and is not ``cost_free`` (or stands
    for an unknown number of words), else ``[]``."""
    if i not in launch.unresolved:
        return []
    cheap = i not in launch.many and cost_free is not None and cost_free(launch.words[i])
    return [] if cheap else [i]


def _need_argv(launch: Launch, cost_free: Callable[[str], bool], paths: tuple[str, ...]) -> None:
    """:func:`_need` for ``--name value`` words (a value is cost-free by its option's name, or
    a model's folder, an option of ``paths``, whose name is known); one error for them all."""
    needed: list[int] = []
    for i in launch.unresolved:
        word = launch.words[i]
        owner = next((w for w in reversed(launch.words[:i]) if w.startswith("-")), "")
        if word.startswith("--") and "=" in word:  # --name=$VALUE
            name = word[2:].split("=", 1)[0]
        elif word.startswith("-") or not owner.startswith("--") or "=" in owner:
            needed += _need(launch, i)  # an option itself, or a word no option takes
            continue
        else:
            name = owner[2:]
        needed += _need(launch, i, lambda w, n=name: cost_free(n) or  # type: ignore[misc]
                        (n in paths and _folder(w)))  # fmt: skip
    launch.require(needed)


def _folder(word: str) -> bool:
    """A path whose last part is known (``$HOME/models/Qwen3-4B``): the importers read a
    model's folder name (:mod:`rlmcost.frameworks.model_path`)."""
    return "$" not in word.rstrip("/").rsplit("/", 1)[-1].rsplit("=", 1)[-1]


def _kept(launch: Launch) -> list[str]:
    if not launch.unresolved:
        return []
    names = sorted({f"${e.var}" for e in launch.unresolved.values()})
    return [f"{', '.join(names)} not given: kept unexpanded in "
            f"{', '.join(launch.words[i] for i in sorted(launch.unresolved))} (values rlmcost "
            "does not read)"]


def _under(key: str, prefixes: tuple[str, ...]) -> bool:
    return any(key == p or key.startswith(p + ".") for p in prefixes)
