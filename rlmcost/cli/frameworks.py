"""`rlmcost import verl|openrlhf|trl|nemo-rl|slime|miles` and `rlmcost frameworks`.

``import`` reads a framework's config (``rlmcost.frameworks``), prints the equivalent
algorithm command (so the flags can be learned), each batch knob's unit conversion, the
deployment it resolves to and, by running that very command, the estimate. Keys it does not
know are listed on stderr and ignored; settings rlmcost maps to the nearest are notes.
``frameworks`` lists each preset of ``--framework`` with its sources.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.algorithms.options import DEFAULT_HARDWARE
from rlmcost.cli._app import App
from rlmcost.cli._import_run import cell, run_import
from rlmcost.cli._render import print_json, print_table
from rlmcost.errors import SpecError
from rlmcost.run.schema_envelope import versioned

import_app = App(
    help="Import a framework's config: print the equivalent rlmcost query, the deployment it "
    "resolves to and the estimate.", no_args_is_help=True,
)

Hardware = Annotated[
    str | None,
    typer.Option("--hardware", "-H",
                 help=f"Accelerator (see `rlmcost hardware`). Default: {DEFAULT_HARDWARE}, or "
                      "the one the config implies (NeMo RL's 4-GPU nodes: gb200)."),
]  # fmt: skip
JsonOut = Annotated[bool, typer.Option(
    "--json", help="Print JSON (query, conversions, deployment, estimate).")]  # fmt: skip
Overrides = Annotated[list[str] | None, typer.Argument(
    help="Overrides in the framework's dotted syntax: key=value, +key=value, ~key.")]  # fmt: skip
Env = Annotated[
    list[str] | None,
    typer.Option("--env", metavar="VAR=VALUE",
                 help="A launch script's variable that the script does not give (a command's "
                      "output, the environment): its value throughout the script, which is "
                      "read as data, never run. Repeatable."),
]  # fmt: skip


def _prompt_len(why: str) -> Any:
    """The `--prompt-len` / `-S` option of an importer whose config does not bound the prompt
    alone; ``why``: what the framework gives instead and the default."""
    return typer.Option("--prompt-len", "-S", min=1, help=f"Prompt tokens S {why}")


NEMO_RL_PROMPT_LEN = _prompt_len("(NeMo RL gives only prompt + response, "
                                 "policy.max_total_sequence_length; default: half of it).")
SLIME_PROMPT_LEN = _prompt_len("where --rollout-max-prompt-len is not given (slime does not "
                               "bound prompts otherwise; default: rlmcost's).")


@import_app.command("verl")
def import_verl_command(
    config: Annotated[str, typer.Argument(
        help="verl config YAML (ppo_trainer.yaml keys), or a launch script (.sh) that runs "
             "verl.trainer.main_ppo: its key=value overrides, --config-name and $@ read.")],
    overrides: Overrides = None,
    verl_version: Annotated[
        str | None,
        typer.Option(
            help="The verl you run: a release (0.5.0, v0.6.1) or the day of its code "
            "(YYYY-MM-DD, e.g. a pinned commit's); what that verl hands the engine applies "
            "(rollout.max_num_seqs: 1024 until 2026-01-23, 256 since; vLLM ignored it before "
            "v0.6.0, SGLang too; vLLM's own default there depends on the vLLM that verl "
            "pinned and on --hardware; --vllm-version: setup.py's pin then), each stated "
            "with its PR. Default: the current verl."
        ),
    ] = None,
    env: Env = None,
    hardware: Hardware = None,
    json_out: JsonOut = False,
) -> None:
    """A verl config (keys of verl/trainer/config/ppo_trainer.yaml) and verl's key=value
    overrides, e.g. `rlmcost import verl run.yaml actor_rollout_ref.rollout.n=8`, or verl's
    launch script with the overrides for its $@ (`rlmcost import verl run_qwen3-8b.sh
    trainer.nnodes=2`)."""
    from rlmcost.frameworks.launch_scripts import VERL_ENTRIES, import_verl_script, is_script
    from rlmcost.frameworks.verl import import_verl

    if is_script(config, VERL_ENTRIES):
        q = import_verl_script(config, overrides or [], env or [], verl_version, hardware)
    else:
        _no_env(env)
        q = import_verl(config, overrides or [], verl_version, hardware)
    run_import("verl", q, hardware, json_out)


@import_app.command(
    "openrlhf",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def import_openrlhf_command(
    args: Annotated[
        list[str] | None,
        typer.Argument(help="The train_ppo_ray (or train_grpo_ray, or train_dpo) arguments, "
                            "after `--`; or a launch script (.sh) and the arguments for its $@."),
    ] = None,
    env: Env = None,
    gpus: Annotated[int | None, typer.Option(min=1, help="The GPUs of a train_dpo launch whose "
                    "launcher does not say (deepspeed without --num_gpus or --include runs on "
                    "every GPU of its machine).")] = None,  # fmt: skip
    hardware: Hardware = None,
    json_out: JsonOut = False,
) -> None:
    """OpenRLHF's command line, e.g. `rlmcost import openrlhf -- --pretrain M
    --rollout_batch_size 1024 --n_samples_per_prompt 8 ...` (a `python -m
    openrlhf.cli.train_ppo_ray` prefix is skipped); a DPO launch (`deepspeed --num_gpus 8
    --module openrlhf.cli.train_dpo ...`, or its script) as `rlmcost dpo`."""
    from rlmcost.frameworks.launch_scripts import OPENRLHF_DPO as DPO
    from rlmcost.frameworks.launch_scripts import OPENRLHF_ENTRIES, import_openrlhf_script
    from rlmcost.frameworks.openrlhf_dpo import import_openrlhf_argv

    argv = args or []
    if _script(argv, OPENRLHF_ENTRIES + DPO):
        q = import_openrlhf_script(argv[0], argv[1:], env or [], gpus)
    else:
        _no_env(env)
        q = import_openrlhf_argv(argv, gpus)
    run_import("openrlhf", q, hardware, json_out)


@import_app.command("trl")
def import_trl_command(
    config: Annotated[str, typer.Argument(help="TRL GRPOConfig as YAML or JSON.")],
    overrides: Overrides = None,
    accelerate: Annotated[
        str | None,
        typer.Option(
            help="The accelerate config YAML (num_processes, DeepSpeed ZeRO stage, FSDP, offload)."
        ),  # fmt: skip
    ] = None,
    trl_version: Annotated[
        str | None,
        typer.Option(
            help="The TRL you run: a release (0.14.0, 0.16.1, v0.18.0) or the day of its code "
            "(YYYY-MM-DD, e.g. a pinned commit's); older meanings of GRPOConfig keys apply, "
            "each stated with its PR. Default: the current TRL."
        ),
    ] = None,
    hardware: Hardware = None,
    json_out: JsonOut = False,
) -> None:
    """A TRL GRPO config (GRPOConfig, ModelConfig and ScriptArguments keys, as `trl grpo
    --config` and open-r1's recipes take), with the accelerate config of the launch."""
    from rlmcost.frameworks.trl import import_trl

    q = import_trl(config, overrides or [], accelerate, trl_version)
    run_import("trl", q, hardware, json_out)


@import_app.command("nemo-rl")
def import_nemo_rl_command(
    config: Annotated[str, typer.Argument(help="NeMo RL GRPO config YAML.")],
    overrides: Overrides = None,
    prompt_len: Annotated[int | None, NEMO_RL_PROMPT_LEN] = None,
    nemo_rl_version: Annotated[
        str | None,
        typer.Option(
            help="The NeMo RL release you run, X.Y[.Z] (0.5, v0.6.0): sets --vllm-version to "
            "the vLLM its pyproject.toml pins (v0.3 0.9.0, v0.4 0.10.0, v0.5 0.11.2, v0.6 "
            "0.17.1, v0.7 0.20.0), which sizes the engine's start-up profile (vLLM < 0.17 "
            "sorts the vocabulary, 38 B a logit; 0.17+ 14 B) and so its KV pool; v0.1-v0.2 "
            "pin a vLLM rlmcost does not model (a note); another release is an error. "
            "Default: NeMo RL v0.7's vLLM 0.20.0."
        ),
    ] = None,
    hardware: Hardware = None,
    json_out: JsonOut = False,
) -> None:
    """A NeMo RL GRPO config (examples/configs/grpo_math_1B.yaml keys) with Hydra-style
    key=value overrides."""
    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    q = import_nemo_rl(config, overrides or [], prompt_len, nemo_rl_version)
    run_import("nemo-rl", q, hardware, json_out)


@import_app.command(
    "slime",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def import_slime_command(
    ctx: typer.Context,
    args: Annotated[
        list[str] | None,
        typer.Argument(help="The train.py (or train_async.py) arguments, after `--`; or a "
                            "launch script (.sh; miles's too) and the arguments for its $@."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="The actor's model (built-in name or config.json), where --hf-checkpoint's "
            "folder name is not a built-in model.",
        ),  # fmt: skip
    ] = None,
    prompt_len: Annotated[int | None, SLIME_PROMPT_LEN] = None,
    env: Env = None,
    hardware: Hardware = None,
    json_out: JsonOut = False,
) -> None:
    """slime's command line, e.g. `rlmcost import slime -- python3 train.py --hf-checkpoint
    /root/Qwen3-4B --rollout-batch-size 32 --n-samples-per-prompt 8 --colocate ...`
    (everything up to train.py or train_async.py is skipped; train_async.py trains one step
    behind the rollout)."""
    from rlmcost.frameworks.launch_scripts import SLIME_ENTRIES, import_slime_script
    from rlmcost.frameworks.slime import import_slime

    argv, name = args or [], "miles" if ctx.info_name == "miles" else "slime"
    if not argv:  # nothing to read: say what to give, not the model arguments it lacks
        raise SpecError(f"give the train.py arguments after `--` (`rlmcost import {name} -- "
                        "--hf-checkpoint /root/Qwen3-4B ...`) or a launch script (.sh)")
    if not (script := _script(argv, SLIME_ENTRIES)):
        _no_env(env)
    try:  # slime's importer's words name its command: say the one run here
        q = import_slime_script(argv[0], argv[1:], env or [], model, prompt_len) if script \
            else import_slime(argv, model, prompt_len)  # fmt: skip
    except SpecError as exc:
        raise SpecError(str(exc).replace("import slime", f"import {name}")) from None
    run_import(name, q, hardware, json_out)


import_app.command(
    "miles",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    help="miles' command line or launch script (radixark/miles, a fork of slime: train.py's "
    "arguments are slime's, with miles' --lora-rank/--target-modules): the same as `rlmcost "
    "import slime`. Its scripts read the model's arguments from a Python helper's output "
    "(read -ra MODEL_ARGS <<< ...): give them with --env MODEL_ARGS=\"$(python3 "
    "miles/utils/external_utils/model_args_utils.py MODEL)\".",
)(import_slime_command)


def _script(argv: list[str], entries: tuple[str, ...]) -> bool:
    """Whether the command line is a launch script's path (and the words for its $@)."""
    from rlmcost.frameworks.launch_scripts import is_script

    return bool(argv) and not argv[0].startswith("-") and is_script(argv[0], entries)


def _no_env(env: list[str] | None) -> None:
    if env:
        raise SpecError("--env sets a launch script's variables; give the script (.sh) first")


def frameworks_command(
    names: Annotated[list[str] | None, typer.Argument(metavar="FRAMEWORK",
        help="The frameworks to list, e.g. slime (default: every preset).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Each framework preset of `--framework`: its defaults, the flags that set the same by
    hand, and where the framework sets them (`rlmcost frameworks slime`: one)."""
    from rlmcost.frameworks.presets import PRESETS, get_preset

    presets = [get_preset(n) for n in names] if names else list(PRESETS.values())
    if json_out:
        print_json(versioned("frameworks", {"frameworks": [
            {"framework": p.framework.value, "summary": p.summary,
             "defaults": [_default_json(d) for d in p.defaults],
             "conventions": list(p.conventions),
             "sized": [{"min_params": s.min_params, "max_params": s.max_params or None,
                        "models": list(s.models), "example": s.example, "actors": _actors(s),
                        "defaults": [_default_json(d) for d in s.defaults],
                        "placement": _placement_json(s.placement)} for s in p.sized]}
            for p in presets]}))  # fmt: skip
        return
    for p in presets:
        tables: list[tuple[str, tuple[Any, ...], Any]] = [
            (f"--framework {p.framework.value}: {p.summary}", p.defaults,
             " ".join(p.conventions))]  # fmt: skip
        tables += [(f"--framework {p.framework.value}, {_ACTORS[_actors(s)]}{_size(s)} "
                    f"(--no-sized-defaults: the table above): {s.example}",
                    s.defaults, _placement_row(s.placement)) for s in p.sized]  # fmt: skip
        for title, defaults, extra in tables:
            rows = [(d.field, cell(list(d.value) if isinstance(d.value, tuple) else d.value),
                     d.flag, d.source) for d in defaults]  # fmt: skip
            caption = extra if isinstance(extra, str) else ""
            if not isinstance(extra, str):
                rows.append(extra)
            print_table(title, ["setting", "value", "flag", "source"], rows, caption=caption)


def _placement_row(p: Any) -> tuple[str, str, str, str] | str:
    """A size tier's device groups as a row of its table (``""``: none, co-located)."""
    if p is None:
        return ""
    from rich.markup import escape  # a group's [brackets] are not rich markup

    from rlmcost.frameworks.tier_placement import RULE

    return ("groups (no --groups, --placement)", escape(f"{p.text} of {p.gpus} GPUs"),
            escape(f"--groups {p.text} --gpus {p.gpus}"),
            f"{p.source}; scaled to --gpus: {RULE}; co-located where that does not hold")


def _placement_json(p: Any) -> dict[str, Any] | None:
    """A size tier's device groups as `rlmcost frameworks --json` lists them."""
    from rlmcost.frameworks.tier_placement import RULE as R

    return None if p is None else {"groups": p.text, "gpus": p.gpus, "rule": R, "source": p.source}


def _default_json(d: Any) -> dict[str, Any]:
    """A preset's Default as `rlmcost frameworks --json` lists it (``layers``: None for any)."""
    return {"field": d.field, "value": d.value, "flag": d.flag, "source": d.source,
            "layers": d.layers or None}


_ACTORS = {"any": "an actor", "dense": "a dense actor", "moe": "a mixture-of-experts actor"}


def _actors(s: Any) -> str:  # ``Sized.dense_only``, ``moe_only``, else any
    return "dense" if s.dense_only else "moe" if s.moe_only else "any"


def _size(s: Any) -> str:
    """' of >= N B parameters' (or any size), and the model_type of a model's own example."""
    own = f", model_type {'/'.join(s.models)} (its own example)" if s.models else ""
    return f"{own} of {f'>= {s.min_params / 1e9:g} B parameters' if s.min_params else 'any size'}"


PANEL = "Frameworks: presets and config import"


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import", rich_help_panel=PANEL)
    app.command("frameworks", rich_help_panel=PANEL)(frameworks_command)
