"""`rlmcost blocks`: every Table III quantity for a model, numeric or symbolic."""

from __future__ import annotations

from typing import Annotated

import typer

from rlmcost.choices import AttnCounting, Dtype
from rlmcost.cli._render import note, print_json, print_table

Pos = dict(min=1)


def blocks(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="Built-in name or alias (see `rlmcost models`), "
            "or a path to a transformers config.json.",
        ),
    ] = None,
    batch: Annotated[int, typer.Option(help="Sequences B in the batch.", **Pos)] = 1,
    seq: Annotated[
        int,
        typer.Option(help="Tokens m per sequence (forward/backward, activations, logits).", **Pos),
    ] = 2048,
    context: Annotated[
        int | None,
        typer.Option(help="KV-cache context c of the decode step (default: --seq).", **Pos),
    ] = None,
    prompt_len: Annotated[
        int, typer.Option(help="Prompt tokens S (prefill, rollout).", **Pos)
    ] = 1024,
    response_len: Annotated[int, typer.Option(help="Response tokens T (rollout).", **Pos)] = 1024,
    dtype: Annotated[
        Dtype, typer.Option(help="Dtype of weights, activations, KV cache (logits are fp32).")
    ] = Dtype.BF16,
    attention: Annotated[
        AttnCounting,
        typer.Option(
            help="Teacher-forced attention FLOPs: "
            "full (what PyTorch counts) or causal (unmasked half)."
        ),
    ] = AttnCounting.FULL,
    symbolic: Annotated[
        bool,
        typer.Option(
            "--symbolic",
            help="Print the expressions (the paper's canonical model) and their Big-O forms.",
        ),
    ] = False,
    latex: Annotated[bool, typer.Option("--latex", help="With --symbolic: LaTeX.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Table III building blocks: params, forward/backward/prefill/decode/rollout FLOPs,
    KV-cache, activation, logits and Adam memory, and depths."""
    if symbolic or latex:
        _symbolic(latex, json_out, attention)
        return
    if model is None:
        raise typer.BadParameter(
            "give --model NAME (see `rlmcost models`) or --symbolic", param_hint="--model"
        )
    from rlmcost.reports.blocks import CONVENTION, building_blocks

    report = building_blocks(model, batch, seq, context, prompt_len, response_len, dtype, attention)
    for message in report.notes:
        note(f"note: {message}")
    if json_out:
        print_json(report.to_json())
        return
    i = report.inputs
    print_table(
        f"{report.model}: Table III building blocks",
        ["quantity", "symbol", "value", "for"],
        report.rows(),
        caption=f"B={i['batch']}, m={i['seq']}, c={i['context']}, S={i['prompt_len']}, "
        f"T={i['response_len']}; {dtype} weights/activations/KV, fp32 logits, "
        f"mixed-precision Adam; attention counted {attention}. {CONVENTION}.",
        right=(2,),
    )


def _symbolic(latex: bool, json_out: bool, attention: AttnCounting) -> None:
    import sympy as sp

    from rlmcost.reports.blocks import symbolic_blocks

    table = symbolic_blocks(counting=attention)
    show = sp.latex if latex else str
    if json_out:
        from rlmcost.run.schema_envelope import versioned

        forms = {
            k: {"label": q.label, "unit": q.unit, "explicit": show(e), "big_o": f"O({show(o)})"}
            for k, (q, e, o) in table.items()
        }
        print_json(versioned("blocks", {"symbolic": True, **forms}))
        return
    if latex:
        for k, (q, e, o) in table.items():
            print(f"% {k} [{q.unit}]\n{q.label}: ${sp.latex(e)}$ = $O({sp.latex(o)})$")
        return
    print_table(
        "Table III (canonical model: MHA, 2-projection FFN, h d_h = d)",
        ["quantity", "symbol", "explicit", "Big-O (d_ff = O(d))"],
        [(k, q.label, show(e), f"O({show(o)})") for k, (q, e, o) in table.items()],
        caption="clog2(x) = ceil(log2 x). Bytes assume bf16 (logits fp32). Workload: B "
        "sequences of m tokens, decode context c, prompt S, response T.",
    )


def register(app: typer.Typer) -> None:
    app.command("blocks")(blocks)
