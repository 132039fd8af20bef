"""AReaL's published rows (AReaL v0.3 blog Table 2) as AReaL-boba's recipe runs them, and the
predicted breakdown of an offloading trainer as plain JSON numbers.

Mapping: :mod:`rlmcost.reports.rl_runs_areal`.

References: AReaL-boba's configs of R1-Distill-Qwen-1.5B and -7B on AReaL-boba-106k,
examples/configs/{1.5B,7B}-distill/ppo-*-distill-gpus-128.yaml at inclusionAI/AReaL 23df2682a
(the v0.3 release): ppo.gen.max_new_tokens 27648, dataset.train_bs_n_seqs 512, group_size 16,
max_prompt_len 1024, actor_train.mb_spec.max_tokens_per_mb 30720 (blog/AReaL_v0_2.md: "we set
the maximum generation length to 27K tokens"). Table 2 follows that release ("Following last
release AReaL-boba").
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe

AREAL = [r for r in load_runs()["runs"] if r["framework"] == "areal"]
BOBA_MAX_NEW_TOKENS = 27648  # ppo.gen.max_new_tokens of the boba configs (module docstring)
BOBA_MAX_TOKENS_PER_MB = 30720  # actor_train / actor_inf mb_spec.max_tokens_per_mb


def _flags(argv: list[str]) -> dict[str, str]:
    return {k: v for k, v in zip(argv, [*argv[1:], ""], strict=True) if k.startswith("--")}


def test_there_are_areal_rows():
    assert {r["off_policy_steps"] == 0 for r in AREAL} == {True, False}


@pytest.mark.parametrize("record", AREAL, ids=lambda r: r["id"])
def test_areal_rows_run_the_boba_recipe(record):
    """The generation cap and the micro-batch token budget are AReaL-boba's: the longest
    sequence (1,024 + 27,648 = 28,672) fits the 30,720-token budget, so the budget is the
    config's (a 31K cap, the throughput benchmark's, would have raised it to 32,768)."""
    q = recipe(record).query
    assert q is not None
    flags = _flags(q.argv())
    assert int(flags["--response-len"]) == BOBA_MAX_NEW_TOKENS
    assert (int(flags["--batch"]), int(flags["--group"])) == (512, 16)
    assert int(flags["--prompt-len"]) + BOBA_MAX_NEW_TOKENS < BOBA_MAX_TOKENS_PER_MB
    assert int(flags["--max-tokens-per-gpu"]) == BOBA_MAX_TOKENS_PER_MB
    assert int(flags["--forward-max-tokens-per-gpu"]) == BOBA_MAX_TOKENS_PER_MB
    assert any("27,648" in a for a in record["assumptions"])


@pytest.mark.parametrize("record", AREAL, ids=lambda r: r["id"])
def test_only_asynchronous_areal_recomputes_log_probs(record):
    """training/configs/sync-ppo.yaml at 23df2682a: ppo.recompute_logprob false;
    async-ppo.yaml: true (the decoupled objective's proximal policy)."""
    q = recipe(record).query
    assert q is not None
    flags = _flags(q.argv())
    sync = record["off_policy_steps"] == 0
    assert ("--no-recompute-logprobs" in flags) is sync
    assert ("--recompute-logprobs" in flags) is not sync


def test_offloading_trainer_breakdown_is_plain_numbers():
    """The host-transfer seconds of an offloading trainer (verl's Megatron offload of the
    Qwen3-30B-A3B row) come out as JSON numbers, not as the exact fraction's string."""
    row = next(r for r in load_runs()["runs"] if r["id"].endswith("fully-async-96-32"))
    q = recipe(row).query
    assert q is not None
    res = CliRunner().invoke(app, [q.algorithm, *q.argv(), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    trains = [j for g in out["placement_detail"]["groups"] for j in g["jobs"]
              if "offload_s" in j.get("predicted_breakdown_s", {})]  # fmt: skip
    assert trains
    for job in trains:
        parts = job["predicted_breakdown_s"]
        assert parts["offload_s"] > 0
        assert all(isinstance(v, (int, float)) for v in parts.values()), parts


# arXiv 2505.24298 (assets/paper.pdf at inclusionAI/AReaL 4aef98d8), Figure 5c: effective
# training throughput of the 1.5B math runs, staleness 0 and 4, tokens/s; Table 1: 250 steps.
FIG5C_TOKENS_PER_S = {"1.5b-sync": 128.7e3, "1.5b-async": 356.6e3}
PAPER_TABLE1_STEPS = 250


@pytest.mark.parametrize("record", AREAL, ids=lambda r: r["id"])
def test_areal_steps_are_the_papers_training_steps(record):
    """The blog's 1000 'PPO steps' are the paper's 250 training steps x ppo_n_minibatches 4."""
    from rlmcost.reports.rl_runs import published_step_s
    from rlmcost.reports.rl_runs_areal import AREAL_MINI_BATCHES

    assert record["framework_settings"]["ppo_steps"] * AREAL_MINI_BATCHES == 1000
    assert published_step_s(record) == pytest.approx(record["published"] * 3600 / 250)


@pytest.mark.parametrize("key", FIG5C_TOKENS_PER_S)
def test_areal_1p5b_mean_is_the_papers_tokens_per_step(key):
    """Figure 5c's tokens/s x the row's step seconds / 8,192 sequences, less the prompt, is the
    row's mean response length (both rows: the same 76.0M tokens per step)."""
    from rlmcost.reports.rl_runs import published_step_s

    record = next(r for r in AREAL if key in r["id"])
    seqs = record["prompts_per_step"] * record["samples_per_prompt"]
    per_seq = FIG5C_TOKENS_PER_S[key] * published_step_s(record) / seqs
    assert per_seq - record["prompt_len"] == pytest.approx(record["mean_response_len"], abs=2)
    lo, hi = record["mean_response_len_range"]
    assert lo == record["mean_response_len"]
    assert hi == pytest.approx(per_seq, abs=2)  # no prompt at all


@pytest.mark.parametrize("record", AREAL, ids=lambda r: r["id"])
def test_areal_rows_update_weights_through_storage(record):
    """realhf at v0.3.0: the trainer saves under PARAM_REALLOC_PATH, every SGLang server loads
    it with /update_weights_from_disk (gserver_manager.py): --refit disk on every row."""
    q = recipe(record).query
    assert q is not None
    assert _flags(q.argv())["--refit"] == "disk"


@pytest.mark.parametrize("size", ["1.5b", "7b"])
def test_synchronous_areal_splits_its_gpus_as_the_asynchronous_run(size):
    """Table 2's synchronous 1.5B run is the staleness ablation's eta = 0 run (AIME24 42.0 in the
    blog's Table 2 and Table 3), the asynchronous system with eta = 0: the same groups (3/4
    SGLang, arXiv 2505.24298 §6.1), without the async placement."""
    sync, asyn = (next(r for r in AREAL if f"qwen-{size}-{kind}" in r["id"])
                  for kind in ("sync", "async"))  # fmt: skip
    fs, fa = (_flags(recipe(r).query.argv()) for r in (sync, asyn))  # type: ignore[union-attr]
    assert fs["--groups"] == fa["--groups"]
    rollout = int(fs["--groups"].split("rollout=")[1].split("[")[0])
    assert rollout == sync["gpus"] * 3 // 4
    assert "--placement" not in fs and fa["--placement"] == "async"


# arXiv 2505.24298 Figure 6b: non-interruptible generation of the 1.5B model on 4 nodes, tokens/s
FIG6B_1P5B_TOKENS_PER_S = 207e3


def test_synchronous_1p5b_note_shows_the_papers_bound():
    """By hand: 8,192 x 8,252 response tokens at 207k tokens/s x 12/4 nodes = 108.9 s; plus the
    asynchronous step (14.8 h x 3600 / 250 = 213.1 s) = 322 s < 590.4 s published."""
    record = next(r for r in AREAL if "qwen-1.5b-sync" in r["id"])
    notes = " ".join(recipe(record).query.notes)  # type: ignore[union-attr]
    gen_s = 512 * 16 * 8252 / (FIG6B_1P5B_TOKENS_PER_S * 12 / 4)
    bound = gen_s + 14.8 * 3600 / 250
    assert f"in {gen_s:.0f} s" in notes and f"<= {bound:.0f} s" in notes
    assert bound < 41.0 * 3600 / 250
    assert "8,192" in notes and "9,216" in notes  # the ablation's cap, prompt + cap


@pytest.mark.parametrize("key", FIG5C_TOKENS_PER_S)
def test_1p5b_notes_give_the_papers_steady_side(key):
    """Fig. 5c at unbounded staleness, 396.8k tokens/s: the slower side of AReaL's pipeline takes
    the step's tokens (Fig. 5c x the published step) / 396.8k seconds, by hand."""
    from rlmcost.reports.rl_runs import published_step_s

    record = next(r for r in AREAL if key in r["id"])
    tokens = FIG5C_TOKENS_PER_S[key] * published_step_s(record)
    notes = " ".join(recipe(record).query.notes)  # type: ignore[union-attr]
    assert f"= {tokens / 396.8e3:.0f} s per step" in notes


@pytest.mark.parametrize("record", AREAL, ids=lambda r: r["id"])
def test_areal_notes_give_the_trainer_at_figure_6a(record):
    """The trainer's step at arXiv 2505.24298 Fig. 6a's median rate, 0.40 of the H800's 989.4
    TFLOP/s, in realhf's count (realhf/base/monitor.py; 4 forwards for the update, 1 more for
    the asynchronous run's recomputed log-probs), on the training quarter of the GPUs."""
    from rlmcost.perf.realhf_rate import realhf_forward_flops
    from rlmcost.placement.lengths import parse_length_dist
    from rlmcost.reports.rl_runs import length_dist
    from rlmcost.specs import get_model

    sync = record["off_policy_steps"] == 0
    lens = [1024 + t for t in parse_length_dist(length_dist(record)[0]).lengths(8192, 27648)]
    flops = (4 if sync else 5) * realhf_forward_flops(get_model(record["model"]).arch(), lens)
    gpus = record["gpus"] // 4
    notes = " ".join(recipe(record).query.notes)  # type: ignore[union-attr]
    assert f"{flops / 1e18:.2f} EFLOP" in notes
    assert f"{flops / (gpus * 989.4e12 * 0.40):.0f} s on {gpus} training GPUs" in notes


def test_synchronous_1p5b_note_gives_the_other_synchronous_figures():
    """By hand, sources in rlmcost.reports.rl_runs_areal_checks: AReaL v0.2's synchronous PPO at
    173k tokens/s (blog/AReaL_v0_2.md, thpt_comparison.png, 1.5B-128GPU) takes Fig. 5c's
    128.7k x 590.4 s = 76.0M tokens in 439 s; batched generation at 0.64M / 0.62M tokens/s on
    128 / 64 GPUs (blog/AReaL_v0_3.md Fig. 2) makes 8,192 x 8,252 response tokens in 106-109 s.
    Only the synchronous 1.5B row carries the note."""
    for record in AREAL:
        notes = " ".join(recipe(record).query.notes)  # type: ignore[union-attr]
        if "qwen-1.5b-sync" not in record["id"]:
            assert "other synchronous measurements" not in notes
            continue
        assert "at 173k tokens/s end to end" in notes
        assert "439 s for this step's 76.0M tokens" in notes  # 128.7k x 590.4 / 173k = 439.2
        assert "8,192 x 8,252 response tokens in 106-109 s" in notes  # 67.6M / 0.64M, / 0.62M
