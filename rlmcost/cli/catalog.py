"""`rlmcost models` and `rlmcost hardware`: the built-in specs."""

from __future__ import annotations

from typing import Annotated

import typer

from rlmcost.cli._render import print_json, print_table

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")]


def models(json_out: JsonOpt = False) -> None:
    """List the built-in models (name, aliases, shape, parameter count)."""
    from rlmcost.reports.catalog import model_catalog

    rows = model_catalog()
    if json_out:
        print_json(rows)
        return
    print_table(
        "Built-in models",
        [
            "name",
            "aliases",
            "L",
            "d",
            "FFN width",
            "heads/kv",
            "V",
            "top-k/experts",
            "params",
            "active",
        ],
        [
            (
                r["name"],
                ", ".join(r["aliases"]),
                r["n_layers"],
                r["d_model"],
                f"{r['d_expert']} per expert" if r["n_experts"] else r["d_ff"],
                f"{r['n_heads']}/MLA"
                if r.get("kv_lora_rank")
                else f"{r['n_heads']}/{r['n_kv_heads']}",
                r["vocab"],
                f"{r['top_k']}/{r['n_experts']}" if r["n_experts"] else "-",
                r["params_h"],
                r["params_active_h"],
            )
            for r in rows
        ],
        caption="params = sum of p.numel() (tied weights once); `--model path/config.json` "
        "loads any llama, mistral, qwen2, qwen3(_moe), qwen2_moe, mixtral, gpt2 or "
        "deepseek_v2/v3 config. heads/MLA: multi-head latent attention (latent KV cache).",
        right=(2, 3, 4, 6, 8, 9),
    )


def hardware(json_out: JsonOpt = False) -> None:
    """List the built-in accelerators (dense peaks, memory, links) with their sources."""
    from rlmcost.reports.catalog import hardware_catalog

    rows = hardware_catalog()
    if json_out:
        print_json(rows)
        return
    print_table(
        "Built-in hardware",
        ["name", "bf16 dense", "fp8 dense", "HBM", "HBM bw", "intra-node/dir", "NIC/dir"],
        [
            (
                r["name"],
                r["bf16_h"],
                r["fp8_h"],
                r["hbm_h"],
                r["hbm_bw_h"],
                r["intra_h"],
                r["inter_h"],
            )
            for r in rows
        ],
        caption="Dense (not sparse) peaks; decimal GB as datasheets print them; links per "
        "direction. Sources: `rlmcost hardware --json`.",
        right=(1, 2, 3, 4, 5, 6),
    )


def register(app: typer.Typer) -> None:
    app.command("models")(models)
    app.command("hardware")(hardware)
