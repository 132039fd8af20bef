"""What an importer returns: the equivalent rlmcost query, the conversions, the notes.

An :class:`ImportedQuery` is an algorithm command with its flags (``rlmcost grpo --framework
verl --model ... --batch 1024 --group 5 ...``): evaluating it is running that command, so an
imported config and the same flags typed by hand give the same Deployment and the same
estimate. Each batch knob's unit conversion is a :class:`Conversion`; settings rlmcost maps
to the nearest it can express are ``notes``; keys it did not read are ``ignored``.
"""

from __future__ import annotations

import shlex
from dataclasses import field
from typing import Any

from rlmcost.frozen import dataclass


@dataclass(frozen=True)
class Conversion:
    """One framework setting turned into an rlmcost flag, with the arithmetic shown.

    ``given``: the framework's keys and values (``data.train_batch_size=1024``); ``flag`` and
    ``value``: what rlmcost takes; ``how``: the units and the conversion in words.
    """

    given: str
    flag: str
    value: Any
    how: str

    def to_json(self) -> dict[str, Any]:
        return {"given": self.given, "flag": self.flag, "value": self.value, "how": self.how}


@dataclass
class ImportedQuery:
    """An algorithm command and its flags, resolved from a framework's config."""

    framework: str
    source: str
    algorithm: str = "grpo"
    flags: list[tuple[str, Any]] = field(default_factory=list)
    conversions: list[Conversion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    near: dict[str, str] = field(default_factory=dict)  # an ignored key -> the key it is near
    hardware: str | None = None  # the accelerator the config implies, where -H is not given

    def set(self, flag: str, value: Any = None) -> None:
        """Add ``flag`` (with ``value``; None for a switch), replacing an earlier setting of
        the same option under any of its names (``--sleep`` replaces ``--no-sleep``:
        :func:`option_key`), so the query states each option once, with the value that wins."""
        key = option_key(flag)
        self.flags = [(f, v) for f, v in self.flags if option_key(f) != key]
        self.flags.append((flag, value))

    def convert(self, given: str, flag: str, value: Any, how: str, default: Any = None) -> None:
        """Set ``flag`` to ``value`` and record the conversion from ``given``; a value equal
        to the command's ``default`` is recorded but leaves the flag out of the query."""
        if value != default:
            self.set(flag, value)
        self.conversions.append(Conversion(given, flag, value, how))

    def imply_hardware(self, given: str, name: str, how: str) -> None:
        """The accelerator ``name`` the config implies (``given``: what says so), kept beside
        the flags so that -H, or a caller's own --hardware, wins (cli._import_run.run_import);
        recorded as a conversion."""
        self.hardware = name
        self.conversions.append(Conversion(given, "--hardware", name, how))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def trainer_roles(self, critic: bool = True) -> str:
        """The models on the policy's trainer GPUs: the actor, with the reference where the
        query keeps a KL penalty (``--kl``), as the frameworks place it, and the critic of a
        PPO-style query unless ``critic`` is False (a caller that gives it GPUs of its own:
        verl's split placement; NeMo RL keeps its value model on the policy's cluster,
        nemo_rl/algorithms/ppo.py), and a distillation teacher where the query names one
        (``--teacher``; NeMo RL's on the training cluster: nemo_rl/algorithms/distillation.py)."""
        beside = critic and self.algorithm in ("ppo", "vapo")
        return ("actor" + ("+critic" if beside else "")
                + ("+reference" if "--kl" in dict(self.flags) else "")
                + ("+teacher" if "--teacher" in dict(self.flags) else ""))

    def engines_apart(self, given: str, rollout: str, train_gpus: int, how: str) -> None:
        """Generation on GPUs of its own (``rollout``: its ``--groups`` entry, e.g.
        ``rollout=8[tp=2]``), training on ``train_gpus`` others: ``--groups`` converted from
        ``given``; the engines never sleep (nothing else runs on their GPUs)."""
        self.set("--no-sleep")
        self.convert(given, "--groups", f"{rollout},{self.trainer_roles()}={train_gpus}", how)

    def vllm_pin(self, given: str, pin: str, how: str, otherwise: str) -> None:
        """``--vllm-version pin`` converted from ``given`` (``how``: why that release runs)
        where rlmcost models ``pin`` (``deployment.vllm_release.modelled``); else the note
        ``otherwise``, the engine keeping the framework's current pin."""
        from rlmcost.deployment.vllm_release import modelled

        if modelled(pin):
            self.convert(given, "--vllm-version", pin, f"{how}: the start-up profile's sampler "
                         "(deployment.vllm_release)")  # fmt: skip
        else:
            self.note(otherwise)

    def argv(self) -> list[str]:
        """The algorithm command's arguments (without the command name): the framework's
        own defaults at any actor size (``--no-sized-defaults``), under the flags the config
        gives, since a field the importer leaves to the preset is the framework's argument
        default, not its larger-model example's."""
        out = ["--framework", self.framework]
        for flag, value in self.flags:
            out.append(flag)
            if value is not None:
                out.append(_text(value))
        return [*out, "--no-sized-defaults"]

    def command(self) -> str:
        """The query as a shell command line."""
        return shlex.join(["rlmcost", self.algorithm, *self.argv()])

    def to_json(self) -> dict[str, Any]:
        return {
            "framework": self.framework,
            "source": self.source,
            "algorithm": self.algorithm,
            "command": self.command(),
            "argv": [self.algorithm, *self.argv()],
            "conversions": [c.to_json() for c in self.conversions],
            "notes": list(self.notes),
            "ignored_keys": list(self.ignored),
        }


OTHER_NAMES = {
    "--cuda-graphs": "--enforce-eager", "-m": "--model", "-B": "--batch", "-K": "--group",
    "-S": "--prompt-len", "-T": "--response-len", "-H": "--hardware",
}  # fmt: skip
"""The algorithm commands' option names that are neither the option's long name nor its
``--no-`` form (rlmcost/cli/_flags.py, rlmcost/cli/_deploy*.py; tests/test_frameworks_import.py
checks :func:`option_key` against the commands' options)."""


def option_key(flag: str) -> str:
    """The option that ``flag`` names, one key for all its spellings: ``--sleep`` and
    ``--no-sleep`` are one option (click's ``--sleep/--no-sleep``), ``-m`` is ``--model``."""
    flag = OTHER_NAMES.get(flag, flag)
    return "--" + flag[5:] if flag.startswith("--no-") else flag


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)
