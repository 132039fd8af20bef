"""`rlmcost models` and `rlmcost hardware`: the built-in specs."""

from __future__ import annotations

from typing import Annotated

import typer

from rlmcost.cli._render import print_json, print_table
from rlmcost.run.schema_envelope import versioned

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")]


FamilyOpt = Annotated[
    str | None,
    typer.Option(
        "--family", help="Only this family or transformers model_type (qwen3, llama, gemma, ...)."
    ),
]


def models(family: FamilyOpt = None, json_out: JsonOpt = False) -> None:
    """List the built-in models (name, aliases, shape, parameter count)."""
    from rlmcost.reports.listings import model_listing

    rows = model_listing(family)
    if json_out:
        print_json(versioned("models", {"models": rows}))
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
        caption="params = sum of p.numel() (tied weights once). `--model` also takes the "
        "Hugging Face ids in `rlmcost models --json` (hf_ids), or a config.json path of type "
        "llama, mistral, qwen2(_moe), qwen3(_moe), qwen3_next, qwen2(_5)_vl, qwen3_vl(_moe), "
        "qwen3_5(_moe)(_text), mixtral, "
        "glm4(_moe), glm4_moe_lite, glm4v(_moe), gemma2, gemma3, phi3, gpt2, gpt_oss, mimo, "
        "kimi_k2, kimi_k25, olmo2, olmo3, seed_oss, minimax_m2 or deepseek_v2/v3. "
        "heads/MLA: multi-head latent attention (latent KV cache). "
        "Notes on approximations: `--json` (notes).",
        right=(2, 3, 4, 6, 8, 9),
    )


def hardware(json_out: JsonOpt = False) -> None:
    """List the built-in accelerators (dense peaks, memory, links) with their sources."""
    from rlmcost.reports.listings import hardware_listing

    rows = hardware_listing()
    if json_out:
        print_json(versioned("hardware", {"hardware": rows}))
        return
    print_table(
        "Built-in hardware",
        [
            "name",
            "bf16 dense",
            "fp8 dense",
            "HBM",
            "usable",
            "HBM bw",
            "intra-node/dir",
            "NIC/dir",
            "host link/dir",
            "host mem/GPUs",
        ],
        [
            (
                r["name"],
                r["bf16_h"],
                r["fp8_h"],
                r["hbm_h"],
                r["hbm_usable_h"],
                r["hbm_bw_h"],
                r["intra_h"],
                r["inter_h"],
                r["host_link_h"],
                r["host_memory_h"],
            )
            for r in rows
        ],
        caption="Dense (not sparse) peaks; HBM: the datasheet's figure read as decimal GB (in "
        "GiB beside it), which a device's own report exceeds where its datasheet's GB are "
        "nearer GiB; usable = what torch.cuda.get_device_properties reports (fit checks use "
        "it, not the datasheet's figure); links per "
        "direction; host link = CPU<->GPU; host mem = the reference system's host memory per "
        "host of that many GPUs (decimal; - unknown: not checked, --host-memory-gib). "
        "Sources: `rlmcost hardware --json`.",
        right=(1, 2, 3, 4, 5, 6, 7, 8, 9),
    )


def register(app: typer.Typer) -> None:
    app.command("models")(models)
    app.command("hardware")(hardware)
