"""NeMo RL v0.3 blog rows of rl_runs.json: the step-time table with its phases (NeMo RL blog
'NeMo-RL V0.3: Scalable and Performant Post-training with Nemo-RL via Megatron-Core',
2025-07-21, Results table and Long Sequence Support table), each phase compared with rlmcost's.

Independent reference: the blog's cells, typed here from the page."""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.reports.rl_runs import PHASE_SUMS, PHASES, load_runs
from rlmcost.reports.rl_runs_rows import validate_rl_runs

# model cell -> (nodes, total, policy training, refit, generation, get logprobs, avg tokens)
BLOG = {
    "nemo-rl-v0.3-blog-h100-llama3.1-8b-grpo-megatron": (1, 112, 28, 5, 58, 18, 795),
    "nemo-rl-v0.3-blog-h100-llama3.1-70b-grpo-megatron": (8, 147, 28, 14, 84, 18, 398),
    "nemo-rl-v0.3-blog-h100-qwen3-32b-grpo-megatron": (8, 213, 68, 7, 96, 40, 3283),
    "nemo-rl-v0.3-blog-h100-qwen3-30b-a3b-grpo-megatron": (8, 167, 50, 12, 78, 23, 3251),
    "nemo-rl-v0.3-blog-h100-llama3.1-8b-grpo-dtensor": (1, 122, 38, 4, 57, 19, 777),
    "nemo-rl-v0.3-blog-h100-llama3.1-70b-grpo-dtensor": (8, 230, 97, 15, 82, 28, 395),
    "nemo-rl-v0.3-blog-h100-llama3.3-70b-grpo-16k-cp4": (16, 445, 64, 17, 287, 75, 749),
}
RUNS = {r["id"]: r for r in load_runs()["runs"] if r["source"] == "nemo_rl_v0.3_blog"}


def test_the_blogs_megatron_rows_are_in_with_their_cells() -> None:
    assert set(RUNS) == set(BLOG)
    for rid, (nodes, total, train, refit, gen, lp, avg) in BLOG.items():
        r = RUNS[rid]
        assert r["gpus"] == 8 * nodes and r["published"] == total
        assert r["published_phases"] == {"training_s": train, "refit_s": refit,
                                         "generation_s": gen, "logprobs_s": lp}
        assert r["mean_response_len"] == avg
        # the phases the blog lists leave a few seconds to the controller (2-8 s)
        assert 2 <= total - (train + refit + gen + lp) <= 8
        s = r["framework_settings"]
        assert s["grpo.num_prompts_per_step"] * s["grpo.num_generations_per_prompt"] == 2048
        assert s["policy.train_global_batch_size"] == 512  # the blog's footnote


def test_every_published_phase_maps_to_rlmcost_phases() -> None:
    for r in RUNS.values():
        for key in r["published_phases"]:
            assert key in PHASES or key in PHASE_SUMS
    assert PHASE_SUMS["logprobs_s"] == ("old log-prob", "reference")


@pytest.fixture(scope="module")
def rows():
    return {r.recipe.id: r for r in validate_rl_runs(run_from_argv, "nemo_rl_v0.3_blog").rows}


def test_each_row_runs_fits_and_sums_the_logprob_phases(rows) -> None:
    assert set(rows) == set(BLOG)
    for rid, row in rows.items():
        assert row.status == "ok" and row.fits, rid  # every run ran: none may be 'does not fit'
        predicted = dict(row.predicted_phases_s)
        lp = next(p for p in row.phases if p.published_key == "logprobs_s")
        assert lp.name == "old log-prob+reference"
        assert lp.predicted_s == pytest.approx(predicted["old log-prob"] + predicted["reference"])
        refit = next(p for p in row.phases if p.published_key == "refit_s")
        assert refit.predicted_s == pytest.approx(predicted["weight sync"])


DENSE = ("nemo-rl-v0.3-blog-h100-llama3.1-8b-grpo-megatron",
         "nemo-rl-v0.3-blog-h100-llama3.1-70b-grpo-megatron",
         "nemo-rl-v0.3-blog-h100-qwen3-32b-grpo-megatron")  # fmt: skip
PASSES = ("training_s", "generation_s", "logprobs_s")


@pytest.mark.parametrize("rid", DENSE)
def test_dense_megatron_passes_within_forty_percent(rows, rid: str) -> None:
    """The dense Megatron rows' passes (today: training -25..-36 %, log-probs -24..-36 %,
    generation -2..-33 %): all fast, a bias the median error carries; within 40 % each."""
    for p in rows[rid].phases:
        if p.published_key in PASSES:
            assert p.predicted_s is not None
            assert abs(p.predicted_s / p.published_s - 1) <= 0.40, (rid, p)


@pytest.mark.xfail(strict=True, reason="known gap: Megatron MoE training and log-prob passes "
                   "predicted 2x and 4x faster than NeMo RL v0.3 ran them")  # fmt: skip
def test_moe_megatron_passes_within_forty_percent(rows) -> None:
    """Qwen3-30B-A3B on 64 H100 (TP 2, EP 8): rlmcost predicts about 27 s of training for the
    blog's 50 (10 s before the MoE host floor, rlmcost.perf.moe_host) and 6 s of log-probs for
    its 23 (the 16,384-token forwards outlast the floor's forward share). Strict: passing
    means the gap is closed."""
    for p in rows["nemo-rl-v0.3-blog-h100-qwen3-30b-a3b-grpo-megatron"].phases:
        if p.published_key in PASSES:
            assert abs(p.predicted_s / p.published_s - 1) <= 0.40, p
