"""Cross-checks of AReaL's published hours (v0.3 blog Table 2, arXiv 2505.24298 Table 1) against
the paper's own throughput figures, written into each row's notes: they show where the published
step times and the paper's throughputs cannot both hold (split from
:mod:`rlmcost.reports.rl_runs_areal` by purpose; nothing here changes a prediction).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FIG6B_GEN_TOKENS_PER_S = {"1.5B": 207e3, "7B": 111e3}
"""Generation throughput without interruptible generation, tokens/s, on
:data:`FIG6B_NODES` nodes: arXiv 2505.24298 (assets/paper.pdf at inclusionAI/AReaL 4aef98d8)
Figure 6b, "non-interruptible" bars (interruptible: 231k and 130k), the same in
blog/AReaL_v0_3.md Fig. 5 ("Without interruptible generation, the controller must wait for the
longest response")."""

FIG6B_NODES = 4
"""Nodes of the Figure 6b ablation ("on 4 nodes"); taken as all generating, which makes the
generation time an upper end (with 3 of 4 nodes on SGLang the rate per node is 4/3 higher)."""

FIG5C_TOKENS_PER_S = {0: 128.7e3, 4: 356.6e3, -1: 396.8e3}
"""Effective training throughput of the 1.5B math runs by maximum staleness, tokens/s: arXiv
2505.24298 Figure 5c (blog Fig. 7); -1: unbounded staleness (8: 371.7k, 16: 382.4k on the way),
where neither side waits for the other: the steady rate of the slower of trainer and generation."""

ABLATION_MAX_NEW_TOKENS = 8192
"""The staleness ablation's generation cap: blog/AReaL_v0_3.md at tag v0.3.0, the note under
Table 3: "batch_size=512, n_rollouts=16, n_mini_batch=4, max_new_tokens=8192"."""

V02_SYNC_1P5B_TOKENS_PER_S = 173e3
"""End-to-end RL training throughput of AReaL v0.2's synchronous PPO, 1.5B model on 128 H800,
tokens/s: blog/AReaL_v0_2.md "Training Speed Comparison" (assets/figures/thpt_comparison.png at
inclusionAI/AReaL 4aef98d8, bar 1.5B-128GPU, v0.2: 173k). That system is realhf's synchronous
loop of model function calls (training/main_sync_ppo.py at 23df2682a: no rollout workers, no
generation-server manager), AReaL-boba's 128-GPU configs splitting the GPUs in half
(examples/configs/1.5B-distill/ppo-1.5B-distill-gpus-128.yaml: allocation_mode
sglang.d64p1m1+d32p2m1). The figure does not state its workload."""

FIG2_BATCHED_GEN_TOKENS_PER_S = {64: 0.62e6, 128: 0.64e6}
"""Batched generation throughput of a 1.5B LRM by GPU count, tokens/s: blog/AReaL_v0_3.md
Fig. 2 left, "Strong scaling of batched generation throughput" (assets/figures/
gen_scaling_trend.png at 4aef98d8: 0.13, 0.23, 0.40, 0.62, 0.64 M at 8, 16, 32, 64, 128 GPUs),
generation that waits for the longest output ("the generation step must wait until the finish
of the longest output within a batch", the same section). No workload stated."""

ABLATION_AIME24 = {0: 42.0, 4: 42.2}
"""AIME24 of the ablation's eta = 0 and eta = 4 (+ decoupled objective) runs (blog Table 3,
paper Table 2), equal to Table 2's synchronous and asynchronous 1.5B rows."""


def published_checks(record: Mapping[str, Any], size: str, gen_gpus: int, sync: bool) -> list[str]:
    """The notes of one AReaL row (module docstring): the 1.5B pair's generation cap, the
    trainer's step at the paper's measured trainer rate, and the step the paper's generation
    rate (and, for a synchronous row, its asynchronous sibling's published step) allows."""
    from rlmcost.reports.rl_runs import load_runs, published_step_s

    step_s = published_step_s(record)
    seqs = int(record["prompts_per_step"]) * int(record["samples_per_prompt"])
    notes = []
    if size == "1.5B":
        eta = 0 if sync else 4
        tokens = FIG5C_TOKENS_PER_S[eta] * step_s
        cap = int(record["prompt_len"]) + ABLATION_MAX_NEW_TOKENS
        notes.append(
            f"generation cap: this run is the staleness ablation's eta = {eta} run (AIME24 "
            f"{ABLATION_AIME24[eta]} in both tables; 41.0 / 14.8 h = 2.77 = Fig. 5c's 356.6k / "
            f"128.7k tokens/s), which the blog ran with max_new_tokens "
            f"{ABLATION_MAX_NEW_TOKENS:,}; the paper's Appendix B says 27,648. At "
            f"{ABLATION_MAX_NEW_TOKENS:,} the published step cannot hold Fig. 5c's throughput: "
            f"{FIG5C_TOKENS_PER_S[eta] / 1e3:.1f}k tokens/s x {step_s:.1f} s = "
            f"{tokens / 1e6:.1f}M tokens, {tokens / seqs:,.0f} per sequence > {cap:,} (prompt + "
            f"cap); the row keeps 27,648")  # fmt: skip
        trainer_s = tokens / FIG5C_TOKENS_PER_S[-1]
        notes.append(
            f"paper's steady rate: at unbounded staleness Fig. 5c reaches "
            f"{FIG5C_TOKENS_PER_S[-1] / 1e3:.1f}k tokens/s, the rate of the slower of AReaL's "
            f"trainer and generation, so that side takes {tokens / 1e6:.1f}M / "
            f"{FIG5C_TOKENS_PER_S[-1] / 1e3:.1f}k = {trainer_s:.0f} s per step; compare the "
            "predicted generation and old log-prob + update phases")  # fmt: skip
        if sync:
            notes.append(_other_sync_note(tokens, seqs, int(record["mean_response_len"])))
    notes.append(_trainer_rate_note(record, size, int(record["gpus"]) - gen_gpus, sync))
    mean = record.get("mean_response_len")
    assumed = ""
    if mean is None:  # the row's length default (placement/length_defaults.py)
        from rlmcost.placement.length_defaults import default_mean_response

        mean, assumed = default_mean_response(int(record["max_response_len"])), " (assumed)"
    rate = FIG6B_GEN_TOKENS_PER_S[size] * (gen_gpus / 8) / FIG6B_NODES
    gen_s = seqs * int(mean) / rate
    text = (f"paper's generation rate: {FIG6B_GEN_TOKENS_PER_S[size] / 1e3:.0f}k tokens/s on "
            f"{FIG6B_NODES} nodes without interruption (Fig. 6b) on this run's {gen_gpus // 8} "
            f"SGLang nodes generates the step's {seqs:,} x {int(mean):,}{assumed} response "
            f"tokens in {gen_s:.0f} s")  # fmt: skip
    sibling = next((r for r in load_runs()["runs"] if r["framework"] == "areal"
                    and r["model"] == record["model"] and r["off_policy_steps"] != 0),
                   None)  # fmt: skip
    if sync and sibling is not None:
        train_s = published_step_s(sibling)
        bound = gen_s + train_s
        text += (f"; with training no longer than the asynchronous step on the same trainer "
                 f"({train_s:.1f} s, published), a synchronous step takes <= {bound:.0f} s "
                 f"against the published {step_s:.1f} s: {step_s - bound:.0f} s per step "
                 f"({(step_s - bound) / step_s:.0%}) the paper's own throughputs do not "
                 "explain")  # fmt: skip
    notes.append(text)
    return notes


def _trainer_rate_note(record: Mapping[str, Any], size: str, gpus: int, sync: bool) -> str:
    """The trainer's step on its ``gpus`` at Figure 6a's measured rate
    (:mod:`rlmcost.perf.realhf_rate`), in realhf's own FLOP count over the row's lengths: the
    PPO update (4 forwards) and, where the run recomputes them (asynchronous), the old
    log-probs (1 forward)."""
    from rlmcost.choices import Dtype
    from rlmcost.perf.realhf_rate import REALHF_PEAK_FRACTION, realhf_floor_s, realhf_forward_flops
    from rlmcost.placement.lengths import parse_length_dist
    from rlmcost.reports.rl_runs import length_dist, model_name
    from rlmcost.specs import get_hardware, get_model

    seqs = int(record["prompts_per_step"]) * int(record["samples_per_prompt"])
    cap = int(record["max_response_len"])
    lens = [int(record["prompt_len"]) + t
            for t in parse_length_dist(length_dist(record)[0]).lengths(seqs, cap)]  # fmt: skip
    forwards = 4 if sync else 5
    flops = forwards * realhf_forward_flops(get_model(model_name(record)).arch(), lens)
    peak = get_hardware(str(record["hardware"])).peak(Dtype(str(record.get("dtype", "bf16"))))
    return (f"paper's trainer rate: Fig. 6a measures AReaL's trainer at 283-455 TFLOP/s per "
            f"H800 in realhf's own count (REALHF_PEAK_FRACTION {REALHF_PEAK_FRACTION.value} of "
            f"the dense peak, the median); this step's {forwards} forwards per sequence "
            f"({'update' if sync else 'old log-probs + update'}) are {flops / 1e18:.2f} EFLOP "
            f"in that count, {realhf_floor_s(flops, gpus, peak):.0f} s on {gpus} training "
            f"GPUs ({size})")  # fmt: skip


def _other_sync_note(tokens: float, seqs: int, mean: int) -> str:
    """The 1.5B synchronous row's step at :data:`V02_SYNC_1P5B_TOKENS_PER_S` and its generation
    at :data:`FIG2_BATCHED_GEN_TOKENS_PER_S`, over the row's ``tokens`` per step (Fig. 5c) and
    ``seqs`` x ``mean`` response tokens."""
    gen = [seqs * mean / FIG2_BATCHED_GEN_TOKENS_PER_S[g] for g in (128, 64)]
    return (f"other synchronous measurements: AReaL v0.2's synchronous PPO (realhf's loop of "
            f"model function calls, half the 128 GPUs on SGLang) ran this model on 128 H800 at "
            f"{V02_SYNC_1P5B_TOKENS_PER_S / 1e3:.0f}k tokens/s end to end (blog/AReaL_v0_2.md "
            f"'Training Speed Comparison'), {tokens / V02_SYNC_1P5B_TOKENS_PER_S:.0f} s for this "
            f"step's {tokens / 1e6:.1f}M tokens; batched generation of a 1.5B LRM waiting for "
            f"its longest output reaches {FIG2_BATCHED_GEN_TOKENS_PER_S[64] / 1e6:.2f}M tokens/s "
            f"on 64 GPUs and {FIG2_BATCHED_GEN_TOKENS_PER_S[128] / 1e6:.2f}M on 128 "
            f"(blog/AReaL_v0_3.md Fig. 2), this step's {seqs:,} x {mean:,} response tokens in "
            f"{gen[0]:.0f}-{gen[1]:.0f} s; neither figure states its workload")  # fmt: skip
