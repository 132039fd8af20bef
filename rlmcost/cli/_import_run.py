"""What `rlmcost import ...` prints for an imported config: the equivalent query, each setting's
conversion, the deployment it resolves to and, by running that very command in this process,
the estimate (:func:`run_import`; the importers' commands are in :mod:`rlmcost.cli.frameworks`).
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import TYPE_CHECKING, Any, cast

from rlmcost.cli._render import note, print_json, print_table
from rlmcost.run.schema_envelope import versioned

if TYPE_CHECKING:
    from typer.core import TyperGroup


def run_import(framework: str, q: Any, hardware: str | None, json_out: bool) -> None:
    """Print the query, conversions and deployment; the estimate is the query's command
    (``framework``: the subcommand of `rlmcost import`; ``hardware``: -H, else the one the
    importer read from the config, else the default)."""
    from rich.markup import escape

    from rlmcost.algorithms.options import DEFAULT_HARDWARE

    q.set("--hardware", hardware or q.hardware or DEFAULT_HARDWARE)  # each option once
    argv = q.argv()
    for line in q.notes:
        note(f"note: {line}")
    if q.ignored:
        keys = [k + (f" (did you mean {q.near[k]}?)" if k in q.near else "") for k in q.ignored]
        note(f"warning: ignored {len(q.ignored)} key(s) rlmcost does not read: "
             f"{', '.join(keys)}")  # fmt: skip
    estimate = json.loads(_algorithm_command(q.algorithm, [*argv, "--json"], capture=True))
    query = q.to_json()
    if json_out:
        body = {"query": query, "deployment": estimate.get("deployment"), "estimate": estimate}
        print_json(versioned(f"import {framework}", body, run=estimate["run"]))
        return
    print(f"equivalent query:\n  {query['command']}\n")
    print_table(
        f"{q.framework} batch knobs and settings converted",
        ["given", "flag", "value", "units and conversion"],
        [tuple(map(escape, (c.given, c.flag, str(c.value), c.how)))  # a --groups [bracket]
         for c in q.conversions],  # is text, not rich markup  # fmt: skip
    )
    _render_deployment(estimate.get("deployment") or {}, estimate.get("groups"),
                       bool(estimate.get("offline")))  # fmt: skip
    _algorithm_command(q.algorithm, argv, capture=False)


def _algorithm_command(algorithm: str, argv: list[str], capture: bool) -> str:
    """Run `rlmcost ALGORITHM ARGV` in this process (its errors propagate as one line)."""
    import typer.main

    from rlmcost.cli import app

    group = cast("TyperGroup", typer.main.get_command(app))  # the app has subcommands
    cmd = group.get_command(None, algorithm)  # type: ignore[arg-type]  # no context needed
    assert cmd is not None  # the importers name one of the app's algorithm commands
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf) if capture else contextlib.nullcontext():
        cmd.main(args=argv, prog_name=f"rlmcost {algorithm}", standalone_mode=False)
    return buf.getvalue()


def _render_deployment(dep: dict[str, Any], groups: Any, offline: bool) -> None:
    train, engine = dep.get("train", {}), dep.get("engine", {})
    rows = [
        ("trainer", ", ".join(f"{k}={cell(train.get(k))}" for k in
                              ("tp", "pp", "cp", "ep", "etp", "sp", "zero", "ckpt", "micro_batch",
                               "max_tokens_per_gpu", "offload"))),
        ("engine", "- (offline: nothing generated)" if offline else ", ".join(
            f"{k}={cell(engine.get(k))}" for k in ("tp", "pp", "gpu_memory_utilization",
            "max_num_seqs", "sleep") + (("dp_attention",) if engine.get("dp_attention", 1) > 1
                                        else ()))),
        ("lora", cell(dep.get("lora"))),
        ("idle models in host memory", cell(dep.get("offload_idle"))),
        ("model load at start-up", cell(dep.get("init_load"))),
        ("logits", cell(dep.get("logits"))),
    ]  # fmt: skip
    if groups:
        rows.append(("groups", ", ".join(f"{g['name']}={g['gpus']}" for g in groups)))
    print_table("Deployment resolved", ["", "setting"], rows)


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={cell(v)}" for k, v in value.items())
    return str(value)
