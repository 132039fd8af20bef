"""Table IX: inter-model parallelism, per stage of one PPO iteration under each configuration."""

from __future__ import annotations

import sympy as sp

from rlmcost.placement.kinds import Config
from rlmcost.placement.symbolic import DEFAULT_STALENESS, Piece, table_ix
from rlmcost.tables import Cell, Table, big_o_cell

NOTES = [
    "PPO (actor pi_theta, critic V_psi, reward R_phi, reference pi_ref), every model the "
    "canonical one (MHA, 2-projection FFN); B prompts, K responses, S prompt and T response "
    "tokens, E_ppo epochs of N_mini mini-batches. Work in FLOPs (add or mul), depth in GEMM "
    "reduction levels, memory in elements; Big-O with d_ff = O(d).",
    "Caption assumptions: Adam without activation checkpointing (a trained model holds 4|M| "
    "and M_Act), frozen models |M| and M_Inf, generation |M| and M_KV; sample-time actor "
    "log-probs come from generation's logits (no extra actor forward).",
    "Peak memory per device group: the models placed on a group stay resident (temporal "
    "multiplexing) plus the running invocation's transient; the stage's peak is the max over "
    "the groups active in it. Within a group depths add, across groups a stage takes the "
    "longest (max).",
    "AC shared: one backbone pi_SH with policy and value heads; the critic's forward and "
    "training disappear, the d x 1 value head runs on the sampled tokens (B K T C_f^tok(h_V)) "
    "and trains with the backbone; one backbone's 4|M| model state less.",
    "Hybrid: TP generation, TP/PP assessment, ZeRO-3 training on one group; global work and "
    "depth do not depend on the layout (Tables VI/VIII) and resharding is a collective whose "
    "log depth Table III suppresses, but the inference copy |pi^TP| (|V^TP,PP|) lives beside "
    "the training states while it runs.",
    "Stage fusion: intra-stage, the actor and critic training pipelines interleave (depths "
    "overlap: max; both M_Act live); inter-stage, assessment buffers live beside the KV cache. "
    "With every response T tokens long all samples finish together, so streaming finished "
    "samples shortens no critical path; its gain comes from length skew (`rlmcost placements "
    "--length-dist`).",
    f"Asynchronous and Combined use staleness k = {DEFAULT_STALENESS}: iteration j + 1's rollout "
    "may start once iteration j - k has trained. M_sh is the persistent inference-side shadow "
    "copy of a trainable model read where it is not trained (the actor on the rollout side; "
    "the critic whose assessment forward runs there too). Combined = asynchronous + one group "
    "per model and side + hybrid layouts.",
    "Iteration row: work sums the stages, memory is the max over stages, depth is the "
    "steady-state period (max cycle mean of the precedence graph): the stages' sum when "
    "synchronous, max(Generation + Assessment, Training) for asynchronous, and for Combined "
    "the longest group or the chain through the stages spread over k + 1 iterations.",
]


def _cell(p: Piece) -> Cell:
    return Cell(p.text, p.latex)


def _big_o(expr: sp.Expr) -> Cell:
    return big_o_cell(expr)


def build() -> list[Table]:
    rows: list[list[Cell | str]] = []
    for cfg, stage_rows in table_ix("ppo").items():
        for r in stage_rows:
            o = r.big_o()
            rows.append(
                [
                    Config(cfg).label,
                    r.label,
                    _cell(r.work),
                    _cell(r.depth),
                    _cell(r.memory),
                    _big_o(o["work"]),
                    _big_o(o["depth"]),
                    _big_o(o["memory"]),
                ]
            )
    return [
        Table(
            name="table_09",
            number="IX",
            title="inter-model parallelism (global work, global depth, peak memory "
            "per device group per stage), PPO",
            columns=[
                "configuration",
                "stage",
                "work",
                "depth",
                "peak memory per device group",
                "Big-O work",
                "Big-O depth",
                "Big-O memory",
            ],
            rows=rows,
            notes=NOTES,
            widths=(0.098, 0.08, 0.118, 0.165, 0.129, 0.135, 0.179, 0.096),
            size="scriptsize",
        )
    ]
